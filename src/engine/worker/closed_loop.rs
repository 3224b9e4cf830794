//! The closed-loop half of a worker (and the preload's): a connection's
//! freed slots are refilled at once, from the preload's keys, the mix, a
//! trace, or `--delete90`'s deletes.

use super::{Due, Source, Worker};

/// Closed loop refills a connection once at most this many of its `cap`
/// requests are still unanswered: `--refill-batch` answered. With a batch
/// of 1 (the default) every read's answers are replaced in the turn's one
/// write, so `cap` stay in flight, as `-d` means in the seed tools; a
/// larger batch sends bigger writes for less CPU per request
/// (bench/README.md). A preload, whose latency is not measured, refills
/// at half its depth.
fn low_water(cap: usize, batch: usize) -> usize {
    cap - batch.clamp(1, cap)
}
/// Draws per free slot after which a closed loop whose keys keep landing
/// on a server that is down stops trying until its next answer.
const MAX_UNROUTED: usize = 64;

impl Worker {
    /// Closed loop and preload: fills `lead`'s group to its cap (`depth`,
    /// or `depth` per server for a client of several), once it is down to
    /// its low water.
    pub(super) fn refill_closed(&mut self, lead: usize, now: u64) {
        let depth = self.depth;
        let cap = self.router.cap(depth);
        // Only `issue` changes the group's load here, one request at a time.
        let batch = match self.requests.preloading() {
            true => cap / 2,
            false => self.shared.spec.load.refill_batch,
        };
        let mut load = self.load_of(lead);
        if load > low_water(cap, batch) || !self.can_send(lead) {
            return;
        }
        // A preload's keys: this connection's server's, or where they live.
        let by_key = self.router.by_key();
        let server = (!by_key).then_some(self.io.conns[lead].server);
        let mut unrouted = 0;
        while load < cap {
            let Some(due) = self.next_closed(lead, server, now) else {
                return;
            };
            if self.issue(lead, due) {
                load += 1;
                continue;
            }
            // A key whose server is down fails alone; a client whose
            // draws keep landing there waits for its next answer, and one
            // with none to wait for is done (else nothing would wake it).
            unrouted += 1;
            if unrouted >= MAX_UNROUTED * cap {
                if load == 0 {
                    self.give_up_group(lead);
                }
                return;
            }
        }
    }

    /// Closed loop and load: the next request, sent now on `lead`; a
    /// preload's next key of `server`'s ranges (`None`: of the ranges
    /// whose keys are placed).
    fn next_closed(&mut self, lead: usize, server: Option<usize>, now: u64) -> Option<Due> {
        if !self.progress.sending || self.requests.quota_spent() {
            return None;
        }
        let measured = now >= self.progress.record_from;
        if let Some(req) = self.requests.next_delete(server, measured) {
            return Some(Due::new(Some(req), now, measured));
        }
        let req = match &self.requests.source {
            Source::Load(_) => Some(self.requests.next_preload(server)?),
            Source::Mix | Source::Delete(_) => None,
            Source::Trace => Some(self.next_traced(lead)?),
        };
        if measured {
            self.requests.spend();
        }
        Some(Due::new(req, now, measured))
    }
}
