//! The main thread's part of a run: wait for the barrier, release the
//! workers, gather their snapshots and ends into the run's `Outcome`.

use super::summariser::Summariser;
use super::*;
use crate::error::Failure;
use crate::net::{clock_ns, RunEnd};
use crate::spec::{LoadMode, RunSpec};
use crate::stats::cpu::CpuTimes;
use crate::stats::Recorder;
use mcbench_proto::trace::TraceCommand;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The main thread's part: wait for the barrier, release the workers,
/// gather their snapshots until each has finished.
pub(super) fn collect(
    spec: &RunSpec,
    rx: &crossbeam_channel::Receiver<Message>,
    go: crossbeam_channel::Sender<()>,
    observer: &mut dyn Observer,
    connections: usize,
    summariser: Summariser,
    shared: &Shared,
) -> Result<Outcome, Failure> {
    let mut g = Gathered::new(spec);
    let mut go = Some(go);
    let mut watch = precise::PrecisionWatch::new(spec);
    while g.ends.iter().any(Option::is_none) {
        let wait = g.baseline_at.map_or(Duration::from_millis(100), |t| {
            t.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100))
        });
        if g.baseline_at.is_some_and(|t| Instant::now() >= t) {
            g.warmed_up(spec, shared);
        }
        if observer.enough() {
            shared.precise.store(true, Ordering::Relaxed);
        }
        let msg = crossbeam_channel::select! {
            recv(rx) -> msg => match msg {
                Ok(m) => m,
                Err(_) => break,
            },
            recv(summariser.back) -> back => {
                // Disconnected only if the thread died: `finish` says why.
                let Ok(back) = back else { break };
                if let Some(summary) = summariser.take_back(back) {
                    observer.interval(&summary);
                    if watch.as_mut().is_some_and(|w| w.add(&summary)) {
                        shared.precise.store(true, Ordering::Relaxed);
                        watch = None;
                    }
                }
                continue;
            },
            default(wait) => continue,
        };
        g.take(msg, observer, &summariser);
        if go.is_some() && g.reached.iter().all(|r| *r) {
            g.release(spec, shared, &summariser);
            go = None; // dropping the sender releases every worker
        }
    }
    if spec.request.trace_commands && go.is_none() {
        g.noticed.extend(trace_commands::send(
            spec,
            &shared.addrs,
            TraceCommand::Stop,
            &shared.stop,
        ));
    }
    Ok(outcome(g, summariser, observer, connections, shared))
}

/// What the workers' messages add up to, once the statistics thread has
/// closed the last intervals (`observer` sees them).
fn outcome(
    g: Gathered,
    summariser: Summariser,
    observer: &mut dyn Observer,
    connections: usize,
    shared: &Shared,
) -> Outcome {
    let workers = g.ends.len();
    let intervals_behind = (summariser.most_waiting() / workers.max(1)) as u64;
    let ((collector, measure), last_closed) = summariser.finish();
    for summary in &last_closed {
        observer.interval(summary);
    }
    // After the last intervals are closed: that work is the client's too.
    let cpu = CpuTimes::process().since(g.cpu_start);
    let collected = collector.finish();
    let measured = measure.map(|m| m.finish());
    let ends: Vec<PhaseEnd> = g
        .ends
        .into_iter()
        .map(|e| e.unwrap_or_else(|| PhaseEnd::Failed("worker exited without a report".into())))
        .collect();
    Outcome {
        total: collected.total,
        intervals: collected.intervals,
        batches: collected.batches,
        duration_s: g.duration_ns as f64 / 1e9,
        drain_s: g.longest_drain_ns as f64 / 1e9,
        started_unix_s: g.started_unix_s,
        cpu,
        worker_busy: g.busy,
        ends,
        connections,
        max_open: shared.open_max.load(Ordering::Relaxed),
        preloaded: g.ran_preload.then_some(g.preload_failure.is_none()),
        preload_failure: g.preload_failure,
        replication_lag: None,
        server_logs: None,
        measure_batches: measured.as_ref().map(|m| m.batches.clone()),
        measure: measured.map(|m| m.total),
        noticed: (shared.noticed.lock().map(|n| n.clone()).unwrap_or_default())
            .into_iter()
            .chain(g.noticed)
            .collect(),
        intervals_behind,
        trace: None,
    }
}

/// What the main thread gathers from the workers' messages while they run.
struct Gathered {
    /// Per worker (the measurement group's after the load's): whether it
    /// is ready to measure, how its measured phase ended, how busy it was.
    reached: Vec<bool>,
    ends: Vec<Option<PhaseEnd>>,
    busy: Vec<f64>,
    duration_ns: u64,
    longest_drain_ns: u64,
    load_failure: Option<PhaseEnd>,
    preload: Recorder,
    preload_failure: Option<String>,
    /// Whether every worker finished its preload (not stopped by a signal).
    ran_preload: bool,
    noticed: Vec<crate::warnings::Warning>,
    cpu_start: CpuTimes,
    /// When the warm-up ends: process CPU is counted from there, like
    /// everything else.
    baseline_at: Option<Instant>,
    start_ns: u64,
    started_unix_s: f64,
}

impl Gathered {
    fn new(spec: &RunSpec) -> Gathered {
        let workers = spec.load.threads + usize::from(spec.measure.is_some());
        Gathered {
            reached: vec![false; workers],
            ends: vec![None; workers],
            busy: vec![0.0; workers],
            duration_ns: 0,
            longest_drain_ns: 0,
            load_failure: None,
            preload: Recorder::default(),
            preload_failure: None,
            ran_preload: spec.key_space.preload == LoadMode::Load
                && spec.key_space.window.is_none(),
            noticed: Vec::new(),
            cpu_start: CpuTimes::process(),
            baseline_at: None,
            start_ns: 0,
            started_unix_s: 0.0,
        }
    }

    /// The warm-up is over: CPU counts from now, and after a warm-up the
    /// trace starts with the measured phase.
    fn warmed_up(&mut self, spec: &RunSpec, shared: &Shared) {
        self.cpu_start = CpuTimes::process();
        self.baseline_at = None;
        if spec.request.trace_commands && !spec.load.warmup.is_zero() {
            self.noticed.extend(trace_commands::send(
                spec,
                &shared.addrs,
                TraceCommand::Start,
                &shared.stop,
            ));
        }
    }

    /// One worker's message.
    fn take(&mut self, msg: Message, observer: &mut dyn Observer, summariser: &Summariser) {
        match msg {
            Message::Interval(snap) => {
                if !snap.recorder.samples.is_empty() {
                    observer.samples(&snap.recorder.samples, self.start_ns);
                }
                summariser.add(snap);
            }
            Message::Ready { worker } => self.reached[worker] = true,
            Message::Done {
                worker,
                phase: PhaseKind::Load,
                end,
                counts,
                ..
            } if !self.reached[worker] => {
                self.ran_preload &= end != PhaseEnd::Stopped;
                if end != PhaseEnd::Completed && end != PhaseEnd::Stopped {
                    self.load_failure.get_or_insert(end);
                }
                if let Some(c) = counts {
                    self.preload.merge(&c);
                }
            }
            Message::Done {
                worker,
                end,
                cpu_ns,
                elapsed_ns,
                drain_ns,
                ..
            } => {
                self.reached[worker] = true;
                // A thread uses one CPU at most; a phase of microseconds
                // (no ops) can show the CPU of its setup as more.
                self.busy[worker] = (cpu_ns as f64 / elapsed_ns.max(1) as f64).clamp(0.0, 1.0);
                self.duration_ns = self.duration_ns.max(elapsed_ns);
                self.longest_drain_ns = self.longest_drain_ns.max(drain_ns);
                self.ends[worker] = Some(end);
            }
        }
    }

    /// Every worker is ready: the preload is judged, `-W` waited, the
    /// trace and the baselines started; the caller then releases them.
    fn release(&mut self, spec: &RunSpec, shared: &Shared, summariser: &Summariser) {
        self.preload_failure = judge_preload(self.load_failure.take(), &self.preload);
        shared
            .abort
            .store(self.preload_failure.is_some(), Ordering::Relaxed);
        // A signal during the wait ends it: the workers then stop at once.
        wait_before_measuring(spec.load.wait, &shared.stop);
        if spec.request.trace_commands && spec.load.warmup.is_zero() {
            self.noticed.extend(trace_commands::send(
                spec,
                &shared.addrs,
                TraceCommand::Start,
                &shared.stop,
            ));
        }
        self.cpu_start = CpuTimes::process();
        // The most open at once counts from here.
        let open = shared.open_now.load(Ordering::Relaxed);
        shared.open_max.store(open, Ordering::Relaxed);
        self.baseline_at = Some(Instant::now() + spec.load.warmup);
        self.start_ns = clock_ns() + spec.load.warmup.as_nanos() as u64;
        self.started_unix_s = unix_now_s() + spec.load.warmup.as_secs_f64();
        if let Some(b) = &shared.baseline {
            let exchange = spec.connect_timeout() + spec.load.timeout;
            b.take(exchange + Duration::from_secs(1), &shared.stop);
        }
        // The preload took recorders of its own: one ready per worker
        // for the first interval's end, before any traffic.
        summariser.fill_pool(self.ends.len());
    }
}

/// `-W/--wait`: a pause between the preload and the measured phase with
/// nothing sent, cut short by a signal.
fn wait_before_measuring(wait: Duration, stop: &Arc<AtomicUsize>) {
    let end = RunEnd {
        done: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        stop: stop.clone(),
    };
    end.pause_until(clock_ns().saturating_add(wait.as_nanos() as u64));
}

/// Why the preload failed: a worker's phase failed, or its replies did
/// (`preload::failure`).
fn judge_preload(end: Option<PhaseEnd>, counts: &Recorder) -> Option<String> {
    match end {
        Some(PhaseEnd::Failed(why)) => Some(why),
        Some(PhaseEnd::AllLost) => {
            Some("preload: every connection was lost while preloading the keys".into())
        }
        _ => preload::failure(counts),
    }
}

/// Wall-clock time, s since the Unix epoch.
fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
