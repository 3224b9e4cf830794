//! The engine's clock, as tokio's time driver has one: the monotonic clock
//! in a run, or a manual clock in tests that only moves when it is moved
//! (by the test, or by the in-memory transport when the worker would
//! otherwise wait). A worker reads the time and sleeps only through it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where a worker's time comes from, ns.
#[derive(Clone, Default)]
pub enum Clock {
    /// `CLOCK_MONOTONIC` (`net::clock_ns`).
    #[default]
    Monotonic,
    /// A time that moves only when told (`advance_to`): a worker's rules
    /// in time are then exact and independent of the machine's speed.
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// A manual clock at `start` ns.
    pub fn manual(start: u64) -> Clock {
        Clock::Manual(Arc::new(AtomicU64::new(start)))
    }

    /// The time now, ns.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self {
            Clock::Monotonic => crate::net::clock_ns(),
            Clock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }

    /// Moves a manual clock on to `at` (never back); the monotonic clock
    /// moves by itself.
    pub fn advance_to(&self, at: u64) {
        if let Clock::Manual(t) = self {
            t.fetch_max(at, Ordering::Relaxed);
        }
    }

    /// Sleeps `ns`: the thread on the monotonic clock (a signal may end it
    /// early, as it ends an epoll wait); a manual clock moves on instead.
    pub fn sleep_ns(&self, ns: u64) {
        match self {
            Clock::Monotonic => sleep_monotonic(ns),
            Clock::Manual(_) => self.advance_to(self.now().saturating_add(ns)),
        }
    }
}

/// Sleeps `ns` on the monotonic clock.
fn sleep_monotonic(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    };
    // SAFETY: a valid relative timespec; the remainder is not wanted.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_forward_and_only_when_told() {
        let clock = Clock::manual(1_000);
        assert_eq!(clock.now(), 1_000);
        clock.advance_to(5_000);
        clock.advance_to(4_000);
        assert_eq!(clock.now(), 5_000);
        clock.sleep_ns(250);
        assert_eq!(clock.now(), 5_250);
    }
}
