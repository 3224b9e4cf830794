//! What the kernel's transmit stamps tell a worker: each request's
//! transmit time (kept on it for the latency's parts), and, in an open
//! loop, the send lag and the gaps between sends as they left the socket
//! layer rather than as the send call began.
//!
//! Stamps are read once a turn's writes are out (on loopback and most
//! drivers the stamp is queued before `send` returns: `writes`), when a
//! socket's error queue wakes the poll, and before answers are parsed.

use super::Worker;

impl Worker {
    /// Reads connection `c`'s transmit stamps and records what they say:
    /// until every stamped write's stamp is in, or (`whole`: the error
    /// queue woke the poll, which it does until emptied) to the queue's
    /// end. A socket whose error queue fails is left to the next read,
    /// which sees the same failure.
    pub(super) fn take_tx_stamps(&mut self, c: usize, whole: bool) {
        let clock = &self.shared.clock;
        let _ = self.io.conns[c].take_tx_stamps(|| clock.now(), whole);
        self.note_stamped_sends(c);
    }

    /// Whether an open loop's send lag comes from transmit stamps (else
    /// from when the arrival was taken).
    pub(super) fn lag_from_tx(&self) -> bool {
        self.io.tx_stamped
    }
}
