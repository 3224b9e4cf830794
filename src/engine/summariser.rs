//! Closing intervals off the main thread. The workers' snapshots are
//! merged, summarised (percentiles, encoded histograms) and emptied for
//! reuse on a thread of their own; the main thread forwards them, hands
//! each closed interval to the observer and puts the emptied recorders
//! back in the workers' pool.
//!
//! Why a thread: closing an interval walks every histogram several times
//! (1.2-4 ms at 60k ops/s on one worker, bench/README.md). On a CPU it
//! shares with a worker (`taskset` of the whole process) the kernel lets
//! that work run on while the worker's next arrival waits (EEVDF lets a
//! task that just woke run to parity): sends went out up to 4-5 ms late
//! at every interval end.
//! In an open loop this thread runs at `SCHED_IDLE`, so a worker that
//! wakes takes the CPU from it at once. Where the workers may keep every
//! CPU busy (a closed loop, `--busy-poll`) it stays at normal priority, or
//! it would fall behind. It shares no channel with a worker, so a worker
//! never waits on it: an idle thread preempted inside a channel operation
//! would hold up whoever waits on the other end.

use crate::os;
use crate::spec::RunSpec;
use crate::stats::{Collector, IntervalSummary, Recorder, Snapshot};
use crate::workload::OpKind;
use crossbeam_channel::{Receiver, Sender};
use std::cell::Cell;
use std::thread::JoinHandle;

/// The collectors a run ends with: the load's and the measurement
/// group's (`--measure-connections`), if any.
pub type Collected = (Collector, Option<Collector>);

/// What the thread sends back to the main thread.
pub enum Back {
    /// A load interval every worker has reported, in order.
    Closed(IntervalSummary),
    /// A snapshot's recorder, emptied for the workers' pool.
    Emptied(Box<Recorder>),
}

pub struct Summariser {
    snapshots: Sender<Snapshot>,
    pub back: Receiver<Back>,
    thread: JoinHandle<Collected>,
    /// The workers' pool of empty recorders, and what each must hold.
    pool: Sender<Box<Recorder>>,
    ops: Vec<OpKind>,
    servers: usize,
    /// The most snapshots that waited for the thread at once.
    most_waiting: Cell<usize>,
}

impl Summariser {
    /// Starts the thread; emptied recorders go back to the workers through
    /// `pool`, prepared for `ops` and `servers`.
    pub fn spawn(
        spec: &RunSpec,
        pool: Sender<Box<Recorder>>,
        ops: Vec<OpKind>,
        servers: usize,
    ) -> std::io::Result<Summariser> {
        let interval_ns = spec.recording.interval.as_nanos() as u64;
        let collector = Collector::new(
            spec.load.threads,
            interval_ns,
            spec.server.replication.is_some(),
        );
        let measure = spec.measure.map(|_| Collector::new(1, interval_ns, false));
        // The measurement group's worker comes after the load's.
        let group_worker = spec.load.threads;
        let idle = spec.summary_yields_to_load();
        let (snapshots, from_main) = crossbeam_channel::unbounded::<Snapshot>();
        let (to_main, back) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new()
            // At most 15 bytes: Linux keeps no more of a thread's name.
            .name("mcbench-summary".into())
            .spawn(move || {
                if idle {
                    // Without it the intervals still close, only sooner.
                    let _ = os::run_only_when_idle();
                }
                let mut collected = (collector, measure);
                for snap in from_main {
                    if let Some(summary) = close_into(&mut collected, &snap, group_worker) {
                        let _ = to_main.send(Back::Closed(summary));
                    }
                    let mut recorder = snap.recorder;
                    recorder.reset();
                    let _ = to_main.send(Back::Emptied(recorder));
                }
                collected
            })?;
        Ok(Summariser {
            snapshots,
            back,
            thread,
            pool,
            ops,
            servers,
            most_waiting: Cell::new(0),
        })
    }

    /// Hands over one worker's snapshot of an interval. A thread that
    /// falls behind (every CPU busy) leaves the pool empty: the main thread
    /// then adds a recorder of its own, so that no worker has to make one
    /// (zeroing ~4 MB on its own time).
    pub fn add(&self, snap: Snapshot) {
        // The thread ends only once this sender is dropped.
        let _ = self.snapshots.send(snap);
        let waiting = self.snapshots.len();
        self.most_waiting.set(self.most_waiting.get().max(waiting));
        self.fill_pool(1);
    }

    /// The most snapshots that waited for the thread at once.
    pub fn most_waiting(&self) -> usize {
        self.most_waiting.get()
    }

    /// Adds fresh recorders until the pool holds `at_least`.
    pub fn fill_pool(&self, at_least: usize) {
        while self.pool.len() < at_least {
            let mut recorder = Box::<Recorder>::default();
            recorder.prepare(&self.ops, self.servers);
            let _ = self.pool.send(recorder);
        }
    }

    /// Takes what the thread sent back: an emptied recorder goes to the
    /// pool; a closed interval is returned.
    pub fn take_back(&self, back: Back) -> Option<IntervalSummary> {
        match back {
            Back::Closed(summary) => Some(summary),
            Back::Emptied(recorder) => {
                let _ = self.pool.send(recorder);
                None
            }
        }
    }

    /// Waits until every snapshot handed over is summarised; returns the
    /// collectors and the intervals closed since `back` was last read.
    pub fn finish(self) -> (Collected, Vec<IntervalSummary>) {
        drop(self.snapshots);
        let collected = match self.thread.join() {
            Ok(c) => c,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let closed = self
            .back
            .try_iter()
            .filter_map(|b| match b {
                Back::Closed(summary) => Some(summary),
                Back::Emptied(_) => None,
            })
            .collect();
        (collected, closed)
    }
}

/// Adds `snap` to its collector: the load interval it closes, if any.
fn close_into(
    (collector, measure): &mut Collected,
    snap: &Snapshot,
    group_worker: usize,
) -> Option<IntervalSummary> {
    match measure.as_mut() {
        Some(m) if snap.worker == group_worker => {
            m.add(snap);
            None
        }
        _ => collector.add(snap),
    }
}
