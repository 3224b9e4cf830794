//! What the kernel's transmit stamps tell a worker: each request's
//! transmit time (kept on it for the latency's parts), and, in an open
//! loop, the send lag and the gaps between sends as they left the socket
//! layer rather than as the send call began.
//!
//! Stamps are read once a turn's writes are out (on loopback and most
//! drivers the stamp is queued before `send` returns: `writes`), when a
//! socket's error queue wakes the poll, and before answers are parsed.

use super::Worker;
use crate::net::clock_ns;

impl Worker {
    /// Reads connection `c`'s transmit stamps and records what they say.
    /// A socket whose error queue fails is left to the next read, which
    /// sees the same failure.
    pub(super) fn take_tx_stamps(&mut self, c: usize) {
        let _ = self.conns[c].take_tx_stamps(clock_ns);
        self.note_stamped_sends(c);
    }

    /// Records the sends connection `c` learnt were transmitted: in an
    /// open loop, each measured one's send lag (`InFlight::send_lag`),
    /// and the gap since the previous send.
    pub(super) fn note_stamped_sends(&mut self, c: usize) {
        let open = self.open_loop();
        let record_from = self.progress.record_from;
        let sends = &mut self.conns[c].stamped_sends;
        for s in sends.drain(..) {
            if !open {
                continue;
            }
            if s.measured {
                self.recorder.record_lag(s.lag_ns);
            }
            if s.tx_ns >= record_from {
                // The first send of the phase has no gap before it.
                let (gap, count) = self.arrivals.sent(s.tx_ns, 1);
                self.recorder.send_gaps.record(gap, count);
            }
        }
    }

    /// Whether an open loop's send lag comes from transmit stamps (else
    /// from when the arrival was taken).
    pub(super) fn lag_from_tx(&self) -> bool {
        self.tx_stamped
    }

    /// Issues `due`, which waited in the client for a free connection,
    /// on `c`; the request keeps how long it waited.
    pub(super) fn issue_waited(&mut self, c: usize, due: super::Due) {
        if self.issue(c, due) {
            if let Some(req) = self.conns[c].in_flight.back_mut() {
                req.waited_ns = clock_ns().saturating_sub(due.queued_at);
            }
        }
    }
}
