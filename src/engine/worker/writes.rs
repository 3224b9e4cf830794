//! The writing half of a worker: each connection's encoded requests
//! written, one write per connection per loop turn, and where the kernel
//! stamps them, their transmit stamps read back once the turn's writes
//! are out (so that the turn's sends go out back to back).

use super::Worker;
use crate::engine::poller::{READABLE, WRITABLE};

impl Worker {
    /// Writes every connection that has output: one write per connection
    /// per loop turn, however many requests it holds; then reads back the
    /// transmit stamps of those that wrote.
    pub(super) fn flush_dirty(&mut self, now: u64) {
        // By index: a write that loses its connection refills its group,
        // which may mark more connections dirty.
        let mut i = 0;
        while i < self.io.dirty.len() {
            let c = self.io.dirty[i];
            i += 1;
            if self.write_out(c, now) {
                self.io.stamped_writes.push(c);
            }
        }
        self.io.dirty.clear();
        let mut stamped = std::mem::take(&mut self.io.stamped_writes);
        for &c in &stamped {
            self.take_tx_stamps(c, false);
        }
        stamped.clear();
        self.io.stamped_writes = stamped;
    }

    /// Writes connection `c`'s output now, and reads back its transmit
    /// stamps.
    pub(super) fn flush(&mut self, c: usize, now: u64) {
        if self.write_out(c, now) {
            self.take_tx_stamps(c, false);
        }
    }

    /// One write of connection `c`'s output. Whether it is stamped by the
    /// kernel and wrote something (its stamps are then to be read).
    fn write_out(&mut self, c: usize, now: u64) -> bool {
        let conn = &mut self.io.conns[c];
        conn.dirty = false;
        if !conn.alive {
            return false;
        }
        conn.fence_quiet();
        let unsent = conn.unsent();
        let stamped = conn.stamps_next_write();
        // Stamped, a request's send path starts at the send call itself,
        // not at the turn's clock: the turn's other work is the client's.
        // Every write of a stamped connection is timed so, sampled or not,
        // so that its requests' send times are all of one clock.
        let send_call = if conn.kernel_stamped() {
            self.shared.clock.now()
        } else {
            now
        };
        let gaps_from_stamps = conn.stamps_every_write();
        let n = match conn.flush(send_call, stamped) {
            Ok(n) => n,
            Err(_) => {
                self.lose(c);
                return false;
            }
        };
        self.recorder.bytes_tx += n as u64;
        let sent = unsent - conn.unsent();
        // Every write stamped, the gaps come from the transmit stamps
        // (`stamps`); a sample of them has gaps of its own, not the
        // schedule's.
        if !gaps_from_stamps {
            self.note_sends(now, sent);
        }
        let conn = &mut self.io.conns[c];
        let want_write = conn.has_output();
        if want_write != conn.write_armed {
            let interest = if want_write {
                READABLE | WRITABLE
            } else {
                READABLE
            };
            conn.write_armed = want_write;
            if self.io.transport.modify(conn, c, interest).is_err() {
                self.lose(c);
                return false;
            }
        }
        stamped && n > 0
    }
}
