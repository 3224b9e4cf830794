//! The load engine: worker threads, their connections and event loops,
//! the main thread's part (connect, barrier, collect) and the thread that
//! closes intervals (`summariser`).
//!
//! Knows sockets and timing; hands bytes to the codec and asks the workload
//! what to send.

pub mod clock;
mod conn;
mod lag_probe;
mod pacer;
mod plan;
mod poller;
pub mod precise;
pub mod preload;
mod request;
mod summariser;
mod trace_commands;
pub mod trace_feed;
mod transport;
mod worker;

use crate::error::Failure;
use crate::spec::{LoadMode, RunSpec};
use crate::stats::batches::BatchSeries;
use crate::stats::cpu::CpuTimes;
use crate::stats::{IntervalSummary, Recorder, Sample, Snapshot};
use crate::workload::Workload;
use mcbench_proto::trace::TraceCommand;
pub use plan::share;
use plan::{plan_measure, plan_workers, start_feed};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use summariser::Summariser;
use worker::{Worker, WorkerPlan};

use crate::net::{clock_ns, connect, sidecar, RunEnd};
use crate::os;
pub use lag_probe::LagRecorder;

/// Read-only state every worker shares.
pub struct Shared {
    pub spec: RunSpec,
    pub workload: Workload,
    /// The servers, by number (`--reconnect` opens lost connections again).
    pub addrs: Vec<crate::net::Target>,
    /// 0 while running; the signal number once asked to stop.
    pub stop: Arc<AtomicUsize>,
    /// Empty recorders for the next interval. Creating one zeroes ~4 MB,
    /// which would stall a worker's loop for a millisecond: the statistics
    /// thread (`summariser`) empties used ones, and the main thread puts
    /// them back here, or fresh ones when that thread falls behind.
    pub recorders: crossbeam_channel::Receiver<Box<Recorder>>,
    /// The op types the run sends, whose histograms every recorder holds.
    pub ops: Vec<crate::workload::OpKind>,
    /// Set before the workers are released when the preload failed: they
    /// then measure nothing.
    pub abort: std::sync::atomic::AtomicBool,
    /// Connections open (or opening) now, over every worker.
    pub open_now: AtomicUsize,
    /// The most open at once since the measured phase began.
    pub open_max: AtomicUsize,
    /// `--server-stats`: the servers' first `stats`, read just before the
    /// release when there is no warm-up.
    pub baseline: Option<crate::server_stats::sampler::Baseline>,
    /// The preload's sets over every worker, and those that failed so far:
    /// once failures pass the share that fails the preload, it stops.
    pub preload_sets: std::sync::atomic::AtomicU64,
    pub preload_failed: std::sync::atomic::AtomicU64,
    /// `--precision`: set once the run is precise enough; the workers then
    /// stop sending as at the end of `-t`.
    pub precise: std::sync::atomic::AtomicBool,
    /// What the run noticed before the workers began (servers down at the
    /// start), for the outcome.
    pub noticed: std::sync::Mutex<Vec<crate::warnings::Warning>>,
    /// The workers' clock: the monotonic one in a run.
    pub clock: clock::Clock,
}

impl Shared {
    /// A connection was opened (or began to open).
    pub fn conn_opened(&self) {
        let now = self.open_now.fetch_add(1, Ordering::Relaxed) + 1;
        self.open_max.fetch_max(now, Ordering::Relaxed);
    }

    /// A connection was closed.
    pub fn conn_closed(&self) {
        self.open_now.fetch_sub(1, Ordering::Relaxed);
    }

    /// An empty recorder: a recycled one if there is one.
    pub fn empty_recorder(&self) -> Box<Recorder> {
        let mut recorder = self.recorders.try_recv().unwrap_or_default();
        recorder.prepare(&self.ops, self.addrs.len());
        recorder
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// Preloading the key space.
    Load,
    /// The measured mix.
    Measure,
}

/// How a worker's phase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseEnd {
    Completed,
    /// A signal asked to stop.
    Stopped,
    /// Every connection of the worker was lost.
    AllLost,
    Failed(String),
}

pub enum Message {
    Interval(Snapshot),
    /// The worker reached the barrier before the reported phase.
    Ready {
        worker: usize,
    },
    Done {
        worker: usize,
        phase: PhaseKind,
        end: PhaseEnd,
        /// Thread CPU time over the phase, ns.
        cpu_ns: u64,
        /// Measured time, ns (from the end of warm-up).
        elapsed_ns: u64,
        /// Of it, the wait for answers after sending stopped, ns.
        drain_ns: u64,
        /// The preload's replies (an unreported load phase).
        counts: Option<Box<Recorder>>,
    },
}

/// What the caller sees while the run goes on (the main thread calls it).
pub trait Observer {
    /// An interval closed: every worker reported it.
    fn interval(&mut self, summary: &IntervalSummary);
    /// Requests chosen by `--save`. `start_ns` is the start of the
    /// measured phase on the worker clock (`clock_ns`).
    fn samples(&mut self, samples: &[Sample], start_ns: u64);
    /// Whether the run is precise enough by a judge outside it (an
    /// agent's master, over every agent's intervals): sending then ends
    /// as at `-t`. Asked about every 100 ms.
    fn enough(&self) -> bool {
        false
    }
}

/// What the engine measured. `Default` is a run that measured nothing
/// (an `--agent` master's base when every agent was lost).
#[derive(Default)]
pub struct Outcome {
    pub total: Recorder,
    pub intervals: Vec<IntervalSummary>,
    /// Per op type (and `total`), the run's latencies in short batches.
    pub batches: BTreeMap<String, BatchSeries>,
    /// Length of the measured phase, s.
    pub duration_s: f64,
    /// Of it, the longest wait of a worker for answers after sending
    /// stopped, s.
    pub drain_s: f64,
    /// Start of the measured phase, s since the Unix epoch (wall clock).
    pub started_unix_s: f64,
    /// Process CPU over the reported phase.
    pub cpu: CpuTimes,
    /// Per worker: thread CPU time / measured time.
    pub worker_busy: Vec<f64>,
    /// How each worker's reported phase ended.
    pub ends: Vec<PhaseEnd>,
    pub connections: usize,
    /// The most connections open at once while measuring.
    pub max_open: usize,
    /// Why the preload failed, if it did (then nothing was measured).
    pub preload_failure: Option<String>,
    /// Whether a preload ran to its end (`None`: none ran).
    pub preloaded: Option<bool>,
    /// `--rep-write`: what the replication-lag probe measured.
    pub replication_lag: Option<LagRecorder>,
    /// `--server-stats`: what each server said, in `addrs` order.
    pub server_logs: Option<Vec<crate::server_stats::ServerLog>>,
    /// `--measure-connections`: what the measurement group recorded (the
    /// load group's is `total`).
    pub measure: Option<Recorder>,
    /// Its batches, per op type and `total`.
    pub measure_batches: Option<BTreeMap<String, BatchSeries>>,
    /// What the engine noticed about the servers: those down at the start
    /// (`--rep-write`), those that refused `--trace-commands`.
    pub noticed: Vec<crate::warnings::Warning>,
    /// The most intervals whose snapshots waited for the statistics thread
    /// at once.
    pub intervals_behind: u64,
    /// `--trace`: what the trace's reader saw.
    pub trace: Option<trace_feed::FeedReport>,
}

/// Runs the whole benchmark against `addrs`. `observer` sees each interval
/// once it is closed (the last ones after every worker is done), and the
/// samples `--save` keeps.
pub fn run(
    spec: &RunSpec,
    addrs: &[crate::net::Target],
    stop: Arc<AtomicUsize>,
    observer: &mut dyn Observer,
) -> Result<Outcome, Failure> {
    // RunSpec::validate has checked connections, keys and descriptors.
    let nservers = addrs.len();
    let total_conns = spec.total_connections(nservers);
    let keys = spec.key_space(spec.router()).map_err(Failure::usage)?;
    let (pool, recorders) = crossbeam_channel::unbounded();
    let ops = spec.ops_sent();
    // Before any worker: one that cannot start fails the run before traffic.
    let summariser = Summariser::spawn(spec, pool, ops.clone(), nservers)
        .map_err(|e| Failure::run(format!("cannot start the statistics thread: {e}")))?;
    summariser.fill_pool(2 * spec.threads);
    let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(0);
    let end = RunEnd {
        done: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        stop: stop.clone(),
    };
    // Before anything can fail: a sampler never released ends with the
    // channels it waits on.
    let (sampler, baseline) =
        match crate::server_stats::sampler::spawn(spec, addrs, go_rx.clone(), end.clone()) {
            Some(s) => (Some(s.thread), Some(s.baseline)),
            None => (None, None),
        };
    let shared = Arc::new(Shared {
        workload: spec.workload(keys),
        spec: spec.clone(),
        addrs: addrs.to_vec(),
        stop,
        recorders,
        ops,
        abort: std::sync::atomic::AtomicBool::new(false),
        open_now: AtomicUsize::new(0),
        open_max: AtomicUsize::new(0),
        baseline,
        preload_sets: std::sync::atomic::AtomicU64::new(0),
        preload_failed: std::sync::atomic::AtomicU64::new(0),
        precise: std::sync::atomic::AtomicBool::new(false),
        noticed: std::sync::Mutex::new(Vec::new()),
        clock: clock::Clock::Monotonic,
    });
    // A signal before any request: nothing measured, the outputs still
    // written (the caller reads the signal from the flag).
    let Some(mut plans) = plan_all(&shared)? else {
        return Ok(Outcome::default());
    };
    let feed = start_feed(spec, &mut plans, shared.stop.clone()).map_err(Failure::run)?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let handles = spawn_workers(plans, &shared, tx, &go_rx)?;
    let probe = lag_probe::spawn(spec, addrs, go_rx.clone(), end.clone());
    drop(go_rx);
    let outcome = collect(spec, &rx, go_tx, observer, total_conns, summariser, &shared);
    for h in handles {
        let _ = h.join();
    }
    end.done.store(true, Ordering::Relaxed);
    let lag = probe.and_then(|p| sidecar::join_side(p, &shared.stop));
    let server_logs = sampler.and_then(|s| sidecar::join_side(s, &shared.stop));
    let trace = feed.map(trace_feed::joined);
    outcome.map(|o| Outcome {
        replication_lag: lag,
        server_logs,
        trace,
        ..o
    })
}

/// Connects and plans every worker, the measurement group's last; `None`
/// if a signal came meanwhile.
fn plan_all(shared: &Shared) -> Result<Option<Vec<WorkerPlan>>, Failure> {
    let (spec, addrs) = (&shared.spec, &shared.addrs);
    let stopped = || shared.stop.load(Ordering::Relaxed) != 0;
    let connected = match connect::connect_all(addrs, spec, &shared.stop) {
        Ok(connected) => connected,
        Err(_) if stopped() => return Ok(None),
        Err(e) => return Err(Failure::run(e)),
    };
    let conns = connected.conns;
    let open = conns.iter().filter(|o| o.link.is_some()).count();
    shared.open_now.store(open, Ordering::Relaxed);
    if let Ok(mut noticed) = shared.noticed.lock() {
        noticed.extend(connected.down.into_iter().map(|(server, why)| {
            crate::warnings::Warning::DownAtStart {
                server: addrs[server].to_string(),
                why,
            }
        }));
    }
    let mut plans = plan_workers(spec, &shared.workload.keys, conns, addrs.len());
    let preload_sets = plans
        .iter()
        .flat_map(|p| &p.load)
        .map(|(_, r)| r.end - r.start);
    (shared.preload_sets).store(preload_sets.sum(), Ordering::Relaxed);
    let measure = plan_measure(spec, addrs, &shared.stop);
    if measure.is_err() && stopped() {
        return Ok(None);
    }
    if let Some(plan) = measure.map_err(Failure::run)? {
        shared
            .open_now
            .fetch_add(plan.conns.len(), Ordering::Relaxed);
        plans.push(plan);
    }
    Ok(Some(plans))
}

/// One thread per plan, each reporting on `tx` and released by `go`.
fn spawn_workers(
    plans: Vec<WorkerPlan>,
    shared: &Arc<Shared>,
    tx: crossbeam_channel::Sender<Message>,
    go: &crossbeam_channel::Receiver<()>,
) -> Result<Vec<std::thread::JoinHandle<()>>, Failure> {
    let mut handles = Vec::new();
    for plan in plans {
        let (shared, tx, go) = (shared.clone(), tx.clone(), go.clone());
        let handle = std::thread::Builder::new()
            .name(format!("mcbench-w{}", plan.index))
            .spawn(move || worker_main(plan, shared, tx, go))
            .map_err(|e| Failure::run(format!("cannot start a worker thread: {e}")))?;
        handles.push(handle);
    }
    Ok(handles)
}

/// A worker thread's body: never panics out, always reports.
fn worker_main(
    plan: WorkerPlan,
    shared: Arc<Shared>,
    tx: crossbeam_channel::Sender<Message>,
    go: crossbeam_channel::Receiver<()>,
) {
    let index = plan.index;
    if let Some(cpu) = plan.cpu {
        if let Err(e) = os::pin_to_cpu(cpu) {
            crate::stderr_line!("warning: cannot pin worker {index} to CPU {cpu}: {e}");
        }
    }
    os::tight_timer_slack();
    let fail_tx = tx.clone();
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            match Worker::new(plan, shared, tx.clone()) {
                Ok(w) => w.run(go),
                Err(e) => {
                    let _ = tx.send(done_failed(index, e));
                }
            }
        }));
    if result.is_err() {
        let _ = fail_tx.send(done_failed(index, "worker thread panicked".into()));
    }
}

fn done_failed(worker: usize, why: String) -> Message {
    Message::Done {
        worker,
        phase: PhaseKind::Measure,
        end: PhaseEnd::Failed(why),
        cpu_ns: 0,
        elapsed_ns: 0,
        drain_ns: 0,
        counts: None,
    }
}

/// The main thread's part: wait for the barrier, release the workers,
/// gather their snapshots until each has finished.
fn collect(
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
    if spec.trace_commands && go.is_none() {
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
        let workers = spec.threads + usize::from(spec.measure.is_some());
        Gathered {
            reached: vec![false; workers],
            ends: vec![None; workers],
            busy: vec![0.0; workers],
            duration_ns: 0,
            longest_drain_ns: 0,
            load_failure: None,
            preload: Recorder::default(),
            preload_failure: None,
            ran_preload: spec.load == LoadMode::Load && spec.window.is_none(),
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
        if spec.trace_commands && !spec.warmup.is_zero() {
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
        wait_before_measuring(spec.wait, &shared.stop);
        if spec.trace_commands && spec.warmup.is_zero() {
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
        self.baseline_at = Some(Instant::now() + spec.warmup);
        self.start_ns = clock_ns() + spec.warmup.as_nanos() as u64;
        self.started_unix_s = unix_now_s() + spec.warmup.as_secs_f64();
        if let Some(b) = &shared.baseline {
            let exchange = spec.connect_timeout() + spec.timeout;
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
