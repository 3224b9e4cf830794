//! `--reconnect` (memaslap's `-R`): a lost connection is opened again after
//! a pause that doubles while reopening keeps failing, instead of the run
//! going on without it.
//!
//! Reopening blocks the worker for the connect and any authentication
//! exchange: answers that arrive meanwhile on its other connections are
//! timed late. On loopback that is tens of microseconds; a host that
//! drops connection attempts costs at most `REOPEN_TIMEOUT` per attempt,
//! once per pause. When a worker has had no connection up for `--timeout`,
//! it gives up (every connection lost).

use super::Worker;
use crate::engine::transport::Dial;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// The first pause before a lost connection is opened again, ns.
const FIRST_PAUSE_NS: u64 = 100_000_000;
/// Pauses double up to this, ns.
const LONGEST_PAUSE_NS: u64 = 1_600_000_000;
/// Reopenings per loop turn at most.
const REOPENS_PER_TURN: usize = 4;
/// The longest a reopening may block the worker (each of connect and
/// authentication), unless `--timeout` is shorter.
const REOPEN_TIMEOUT: Duration = Duration::from_millis(250);

/// The lost connections waiting to be reopened, and per connection how
/// long its next pause is. The event loop asks every turn, and a worker may
/// hold ten thousand connections, all lost when a server goes: a min-heap
/// keeps each question O(log n) at most.
pub struct Reopening {
    /// (when to reopen, connection), earliest first. An entry whose time
    /// is no longer its connection's `due` is stale and skipped.
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    /// Per connection: when it is due to be reopened, if lost.
    due: Vec<Option<u64>>,
    waiting: usize,
    pause_ns: Vec<u64>,
}

impl Reopening {
    pub fn new(conns: usize) -> Self {
        Reopening {
            queue: BinaryHeap::new(),
            due: vec![None; conns],
            waiting: 0,
            pause_ns: vec![FIRST_PAUSE_NS; conns],
        }
    }

    /// Room for connections up to `conns` (`--num-conns` adds slots).
    pub fn grow(&mut self, conns: usize) {
        self.due.resize(conns, None);
        self.pause_ns.resize(conns, FIRST_PAUSE_NS);
    }

    /// Connection `c` was lost at `now`: reopen it after its pause, and
    /// double the pause for the time after.
    pub fn schedule(&mut self, c: usize, now: u64) {
        self.schedule_after(c, now, self.pause_ns[c]);
    }

    /// Connection `c` was closed on purpose (`--timeout`): reopen it at
    /// once; should that fail, the pauses follow.
    pub fn schedule_now(&mut self, c: usize, now: u64) {
        self.schedule_after(c, now, 0);
    }

    fn schedule_after(&mut self, c: usize, now: u64, pause_ns: u64) {
        let at = now + pause_ns;
        if self.due[c].replace(at).is_none() {
            self.waiting += 1;
        }
        self.queue.push(Reverse((at, c)));
        self.pause_ns[c] = (self.pause_ns[c] * 2).min(LONGEST_PAUSE_NS);
    }

    /// Connection `c` is not to be reopened after all (its group is lost).
    pub fn cancel(&mut self, c: usize) {
        if self.due[c].take().is_some() {
            self.waiting -= 1;
        }
    }

    /// A connection whose pause is over at `now`, taken off the list.
    fn take_due(&mut self, now: u64) -> Option<usize> {
        let at = self.next_at()?;
        if at > now {
            return None;
        }
        let Reverse((_, c)) = self.queue.pop()?;
        self.due[c] = None;
        self.waiting -= 1;
        Some(c)
    }

    /// Connection `c` answered: it works again, so its next loss waits
    /// the first pause.
    pub fn works(&mut self, c: usize) {
        self.pause_ns[c] = FIRST_PAUSE_NS;
    }

    pub fn pending(&self) -> bool {
        self.waiting > 0
    }

    /// The earliest reopening, ns (dropping stale entries on the way).
    pub fn next_at(&mut self) -> Option<u64> {
        while let Some(&Reverse((at, c))) = self.queue.peek() {
            if self.due[c] == Some(at) {
                return Some(at);
            }
            self.queue.pop();
        }
        None
    }
}

impl Worker {
    /// Opens again the lost connections whose pause is over.
    pub(super) fn reopen_due(&mut self, now: u64) {
        // Bounded per turn: each may block up to REOPEN_TIMEOUT, and
        // answers, the schedule and a stop request must still be seen.
        for _ in 0..REOPENS_PER_TURN {
            let Some(c) = self.reopening.take_due(now) else {
                return;
            };
            self.reopen(c);
        }
    }

    pub(super) fn reopen(&mut self, c: usize) {
        let server = self.io.conns[c].server;
        let spec = &self.shared.spec;
        let timeout = spec.connect_timeout().min(REOPEN_TIMEOUT);
        let began = self.now();
        // Its number among the run's connections picks its source address,
        // as at the first connect.
        let nth = self.lane_of(c);
        let stop = Some(&*self.shared.stop);
        let dial = Dial {
            target: &self.shared.addrs[server],
            server,
            nth,
            token: c,
            protocol: spec.target.protocol,
            max_pending: self.io.max_pending,
        };
        let conn = &mut self.io.conns[c];
        let registered = self.io.transport.reopen(conn, &dial, spec, timeout, stop);
        let handshake_ns = *registered.as_ref().unwrap_or(&0);
        if registered.is_err() {
            // Still down: try again after a longer pause, counted from now
            // (the attempt itself may have taken a while). A preload cannot
            // wait for it: that server's keys are given up on, as when its
            // last connection is lost.
            self.recorder.reopen_failures += 1;
            self.reopening.schedule(c, self.now());
            if self.io.alive_on[server] == 0 && self.requests.preloading() {
                self.strand(server, crate::stats::ErrorClass::NoConnection);
            }
            return;
        }
        // The connect alone; the TLS handshake has its own histogram.
        let took = self.now() - began;
        self.recorder
            .conns
            .record_connect(took - handshake_ns.min(took));
        if handshake_ns > 0 {
            self.recorder.conns.record_handshake(handshake_ns);
        }
        self.shared.conn_opened();
        self.io.alive += 1;
        self.io.alive_on[server] += 1;
        self.recorder.connections_reopened += 1;
        // Its requests are due from now, after the (blocking) reopening,
        // and go out at once.
        let now = self.now();
        self.refill(c, now);
        self.flush(c, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_come_due_after_doubling_pauses() {
        let mut r = Reopening::new(10_000);
        assert!(!r.pending());
        assert_eq!(r.next_at(), None);
        r.schedule(7, 1_000);
        r.schedule(3, 2_000);
        assert!(r.pending());
        assert_eq!(r.next_at(), Some(1_000 + FIRST_PAUSE_NS));
        assert_eq!(r.take_due(1_000 + FIRST_PAUSE_NS - 1), None);
        assert_eq!(r.take_due(2_000 + FIRST_PAUSE_NS), Some(7));
        assert_eq!(r.take_due(2_000 + FIRST_PAUSE_NS), Some(3));
        assert_eq!(r.take_due(u64::MAX), None);
        // Failing again waits twice as long; a second loss replaces the first.
        r.schedule(7, 0);
        r.schedule(7, 0);
        assert_eq!(r.next_at(), Some(4 * FIRST_PAUSE_NS));
        r.works(7);
        r.take_due(u64::MAX);
        r.schedule(7, 0);
        assert_eq!(r.next_at(), Some(FIRST_PAUSE_NS));
    }
}
