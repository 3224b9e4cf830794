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
use crate::engine::poller::READABLE;
use crate::engine::{clock_ns, connect};
use std::time::Duration;

/// The first pause before a lost connection is opened again, ns.
const FIRST_PAUSE_NS: u64 = 100_000_000;
/// Pauses double up to this, ns.
const LONGEST_PAUSE_NS: u64 = 1_600_000_000;
/// The longest a reopening may block the worker (each of connect and
/// authentication), unless `--timeout` is shorter.
const REOPEN_TIMEOUT: Duration = Duration::from_millis(250);

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
                self.reopen(c);
            }
        }
    }

    fn reopen(&mut self, c: usize) {
        let server = self.conns[c].server;
        let spec = &self.shared.spec;
        let timeout = spec.timeout.min(REOPEN_TIMEOUT);
        let opened = connect::connect_one(&self.shared.addrs[server], spec, timeout);
        let registered = opened.and_then(|socket| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
            self.poller
                .add(fd, c as u64, READABLE)
                .map(|()| socket)
                .map_err(|e| e.to_string())
        });
        let Ok(socket) = registered else {
            // Still down: try again after a longer pause, counted from now
            // (the attempt itself may have taken a while).
            self.reopening.schedule(c, clock_ns());
            return;
        };
        self.conns[c].reopen(socket);
        self.alive += 1;
        self.alive_on[server] += 1;
        self.recorder.connections_reopened += 1;
        // Its requests are due from now, after the (blocking) reopening,
        // and go out at once.
        let now = clock_ns();
        self.refill(c, now);
        self.flush(c, now);
    }
}
