//! What the threads beside the workers (the replication-lag probe, the
//! server-stats sampler) share: whether the run is over, and a sleep that
//! ends when it is.

use super::clock_ns;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest a side thread sleeps before it looks again.
const STEP_NS: u64 = 10_000_000;

#[derive(Clone)]
pub struct RunEnd {
    /// Set once the workers are done.
    pub done: Arc<AtomicBool>,
    /// A signal's number once one asked to stop.
    pub stop: Arc<AtomicUsize>,
}

impl RunEnd {
    pub fn over(&self) -> bool {
        self.done.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed) != 0
    }

    /// Sleeps until `at` (the worker clock, ns) in short steps; false once
    /// the run is over.
    pub fn pause_until(&self, at: u64) -> bool {
        loop {
            if self.over() {
                return false;
            }
            let now = clock_ns();
            if now >= at {
                return true;
            }
            std::thread::sleep(Duration::from_nanos((at - now).min(STEP_NS)));
        }
    }

    /// Waits (at most `limit`) until the workers are done: after a
    /// signal, they still end their phase.
    pub fn wait_done(&self, limit: Duration) {
        let until = std::time::Instant::now() + limit;
        while !self.done.load(Ordering::Relaxed) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Joins a side thread (the server-stats sampler, the lag probe). Once a
/// signal has asked to stop, it is waited for [`SIGNAL_JOIN`] at most: a
/// thread still in a wait on a server must not hold up the results, which
/// go on without its part.
pub fn join_side<T>(handle: std::thread::JoinHandle<T>, stop: &AtomicUsize) -> Option<T> {
    let mut deadline = None;
    while !handle.is_finished() {
        if stop.load(Ordering::Relaxed) != 0 {
            let until = *deadline.get_or_insert_with(|| std::time::Instant::now() + SIGNAL_JOIN);
            if std::time::Instant::now() >= until {
                return None;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    handle.join().ok()
}

/// How long a side thread is waited for after a signal.
pub const SIGNAL_JOIN: Duration = Duration::from_millis(800);
