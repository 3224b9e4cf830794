//! `--reconnect` (memaslap's `-R`): a lost connection is opened again after
//! a pause that doubles while reopening keeps failing, instead of the run
//! going on without it.
//!
//! Reopening blocks the worker for the connect and any authentication
//! exchange: answers that arrive meanwhile on its other connections are
//! timed late. On loopback that is tens of microseconds, and it happens
//! only on a failure path.

use super::Worker;
use crate::engine::connect;
use crate::engine::poller::READABLE;

/// The first pause before a lost connection is opened again, ns.
const FIRST_PAUSE_NS: u64 = 100_000_000;
/// Pauses double up to this, ns.
const LONGEST_PAUSE_NS: u64 = 1_600_000_000;

/// Per connection: when to reopen it (if lost) and how long the next
/// pause is.
pub struct Reopening {
    at: Vec<Option<u64>>,
    pause_ns: Vec<u64>,
}

impl Reopening {
    pub fn new(conns: usize) -> Self {
        Reopening {
            at: vec![None; conns],
            pause_ns: vec![FIRST_PAUSE_NS; conns],
        }
    }

    /// Connection `c` was lost at `now`: reopen it after its pause, and
    /// double the pause for the time after.
    pub fn schedule(&mut self, c: usize, now: u64) {
        self.at[c] = Some(now + self.pause_ns[c]);
        self.pause_ns[c] = (self.pause_ns[c] * 2).min(LONGEST_PAUSE_NS);
    }

    /// Connection `c` answered: it works again, so its next loss waits
    /// the first pause.
    pub fn works(&mut self, c: usize) {
        self.pause_ns[c] = FIRST_PAUSE_NS;
    }

    pub fn pending(&self) -> bool {
        self.at.iter().any(Option::is_some)
    }

    /// The earliest reopening, ns.
    pub fn next_at(&self) -> Option<u64> {
        self.at.iter().flatten().min().copied()
    }
}

impl Worker {
    /// Opens again the lost connections whose pause is over.
    pub(super) fn reopen_due(&mut self, now: u64) {
        for c in 0..self.conns.len() {
            if self.reopening.at[c].is_some_and(|at| at <= now) {
                self.reopening.at[c] = None;
                self.reopen(c, now);
            }
        }
    }

    fn reopen(&mut self, c: usize, now: u64) {
        let server = self.conns[c].server;
        let opened = connect::connect_one(&self.shared.addrs[server], &self.shared.spec);
        let socket = match opened {
            Ok(socket) => socket,
            Err(_) => {
                // Still down: try again after a longer pause.
                self.reopening.schedule(c, now);
                return;
            }
        };
        let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
        if self.poller.add(fd, c as u64, READABLE).is_err() {
            self.reopening.schedule(c, now);
            return;
        }
        self.conns[c].reopen(socket);
        self.alive += 1;
        self.alive_on[server] += 1;
        self.recorder.connections_reopened += 1;
        self.refill(c, now);
    }
}
