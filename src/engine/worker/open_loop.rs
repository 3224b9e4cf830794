//! The open-loop half of a worker: arrivals from the pacer become requests
//! on connections with a free slot, or wait in the client for one.

use super::{Due, Worker, MAX_BACKLOG, MAX_DISPATCH};
use crate::engine::pacer::Pacer;
use crate::stats::ErrorClass;
use rand::Rng;

impl Worker {
    pub(super) fn start_open_loop(&mut self, start: u64) {
        for q in &mut self.ready {
            q.clear();
        }
        for conn in &mut self.conns {
            conn.listed = 0;
        }
        for c in 0..self.conns.len() {
            self.refill(c, start);
        }
        if let Some(p) = &mut self.pacer {
            p.restart(start, &mut self.rng);
        }
    }

    /// Open loop: turns every arrival that is due into a request.
    pub(super) fn dispatch_due(&mut self, now: u64) {
        // Bounded per loop turn, so that a rate beyond the client's reach
        // still leaves time to read answers and to see a stop request.
        for _ in 0..MAX_DISPATCH {
            if !self.sending || self.quota_left == 0 {
                return;
            }
            let Some(intended) = self.pacer.as_ref().map(Pacer::next) else {
                return;
            };
            if intended > now {
                return;
            }
            self.pacer
                .as_mut()
                .expect("open loop")
                .advance(&mut self.rng);
            let measured = intended >= self.record_from;
            if measured {
                self.quota_left -= 1;
                self.recorder.record_lag(now - intended);
            }
            let server = self.pick_server();
            let due = Due {
                req: None,
                intended_ns: intended,
                measured,
            };
            match self.take_slot(server) {
                Some(c) => self.issue(c, due),
                None if self.backlog[server].len() >= MAX_BACKLOG => {
                    if measured {
                        self.recorder.error(ErrorClass::ClientOverload, 1);
                    }
                }
                None if self.alive_on[server] > 0 => {
                    if measured {
                        self.recorder.client_waits += 1;
                    }
                    self.backlog[server].push_back(due);
                }
                None => {
                    if measured {
                        self.recorder.error(ErrorClass::NoConnection, 1);
                    }
                }
            }
        }
    }

    /// A server, in proportion to this worker's connections to it (so that
    /// every server gets its share of the run's rate).
    fn pick_server(&mut self) -> usize {
        match self.conns.len() {
            1 => self.conns[0].server,
            n => self.conns[self.rng.gen_range(0..n)].server,
        }
    }

    /// A connection to `server` with a free slot.
    fn take_slot(&mut self, server: usize) -> Option<usize> {
        while let Some(c) = self.ready[server].pop_front() {
            self.conns[c].listed -= 1;
            if self.conns[c].alive {
                return Some(c);
            }
        }
        None
    }
}
