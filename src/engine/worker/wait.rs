//! Where a worker blocks: the wait for readiness, `--read-delay`'s pause
//! between a wake-up and the reads it brings, and `--read-answers late`'s
//! sleep to the next arrival; and, where answers are stamped, the bound
//! each poll puts on when what it finds came.

use super::read_policy::Wait;
use super::{Worker, EVENTS};
use crate::engine::poller::{ERROR, HANGUP, READABLE, WRITABLE};

impl Worker {
    /// Waits for readiness and handles every event, as the read policy
    /// says. With `--read-delay`, a wake-up is followed by the pause and a
    /// second look, so that the reads find every answer that came
    /// meanwhile.
    pub(super) fn poll(&mut self, timeout_ns: u64) -> std::io::Result<()> {
        let mut events = std::mem::take(&mut self.io.events);
        // Requests waiting for a slot are never left behind answers that
        // would free one.
        let how = self
            .reads
            .wait(timeout_ns, self.progress.sending, self.awaiting_slots());
        // When the poll whose events this turn handles began.
        let mut polled = None;
        match how {
            Wait::Spin => {
                // No wake-up latency, a whole CPU.
                polled = self.reads.poll_start(self.now());
                let until = self.now().saturating_add(timeout_ns);
                loop {
                    self.wait_into(&mut events, 0)?;
                    if !events.is_empty() || self.now() >= until {
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
            Wait::Sleep if self.sleep_to_arrival(timeout_ns) => {
                // The arrival goes out first; the answers are read next
                // turn (or at once by the arrival itself if it finds no
                // free slot: `harvest`).
                events.clear();
            }
            Wait::Sleep | Wait::Look | Wait::Block => {
                polled = self.reads.poll_start(self.now());
                let wait = if how == Wait::Block { timeout_ns } else { 0 };
                self.wait_into(&mut events, wait)?;
            }
        }
        if self.should_pause(&events) {
            let delay = self.reads.delay().as_nanos();
            self.shared
                .clock
                .sleep_ns(u64::try_from(delay).unwrap_or(u64::MAX));
            polled = self.reads.poll_start(self.now());
            self.wait_into(&mut events, 0)?;
        }
        self.handle_events(&events, polled);
        self.io.events = events;
        Ok(())
    }

    /// Reads, without waiting, every answer already in the sockets: an
    /// arrival that finds no free slot takes those first, so that it never
    /// waits for a connection whose answer is in (whatever the read
    /// policy).
    pub(super) fn harvest(&mut self) -> std::io::Result<()> {
        let mut events = std::mem::take(&mut self.io.events);
        let polled = self.reads.poll_start(self.now());
        let looked = self.wait_into(&mut events, 0);
        if looked.is_ok() {
            self.handle_events(&events, polled);
        }
        self.io.events = events;
        looked
    }

    /// Handles the events of a poll that began at `polled` (where answers
    /// are stamped).
    fn handle_events(&mut self, events: &[(usize, u32)], polled: Option<u64>) {
        if let Some(at) = polled {
            self.reads.note_poll(at);
        }
        self.reads.start_turn(events.len() == EVENTS);
        for &(c, flags) in events {
            if self.io.conns[c].connecting {
                self.on_connect_done(c, self.now());
                continue;
            }
            if flags & WRITABLE != 0 {
                self.flush(c, self.now());
            }
            // A transmit stamp waits in the error queue (level-triggered:
            // it wakes every poll until read).
            if flags & ERROR != 0 && self.io.conns[c].kernel_stamped() {
                self.take_tx_stamps(c, true);
            }
            if flags & (READABLE | HANGUP) != 0 {
                self.io.conns[c].stamps.arrived_after =
                    self.reads.arrived_after(self.io.conns[c].unread);
                self.on_readable(c);
                if self.io.conns[c].unread {
                    self.reads.left_bytes();
                }
            }
        }
    }

    /// Whether this wake-up's events call for `--read-delay`'s pause.
    fn should_pause(&self, events: &[(usize, u32)]) -> bool {
        if self.reads.delay().is_zero() {
            return false;
        }
        let readable = events
            .iter()
            .any(|&(_, flags)| flags & (READABLE | HANGUP) != 0);
        let mid_answer = events.iter().any(|&(c, _)| self.io.conns[c].mid_answer());
        self.reads.should_pause(readable, mid_answer)
    }

    /// `--read-answers late`: answers wait in their sockets, stamped by the
    /// kernel as they come, while the worker sleeps through them to its
    /// next wake-up. Whether an arrival is then due, to go out before the
    /// answers are read.
    fn sleep_to_arrival(&mut self, timeout_ns: u64) -> bool {
        self.shared.clock.sleep_ns(timeout_ns);
        let due = self.next_arrival_at().is_some_and(|at| at <= self.now());
        self.reads.woke(due)
    }

    fn wait_into(
        &mut self,
        events: &mut Vec<(usize, u32)>,
        timeout_ns: u64,
    ) -> std::io::Result<()> {
        let clock = &self.shared.clock;
        self.io.transport.wait_into(events, timeout_ns, clock)
    }
}
