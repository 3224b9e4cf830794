//! The load engine: worker threads, their connections and event loops,
//! the main thread's part (connect, barrier, collect) and the thread that
//! closes intervals (`summariser`).
//!
//! Knows sockets and timing; hands bytes to the codec and asks the workload
//! what to send.

pub mod clock;
mod collect;
mod conn;
mod error;
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
use crate::spec::RunSpec;
use crate::stats::batches::BatchSeries;
use crate::stats::cpu::CpuTimes;
use crate::stats::{IntervalSummary, Recorder, Sample, Snapshot};
use crate::workload::Workload;
use collect::collect;
pub use plan::share;
use plan::{plan_measure, plan_workers, start_feed};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use summariser::Summariser;
use worker::{Worker, WorkerPlan};

use crate::net::{connect, sidecar, RunEnd};
use crate::os;
pub use error::EngineError;
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
    summariser.fill_pool(2 * spec.load.threads);
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
                    let _ = tx.send(done_failed(index, e.to_string()));
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
