//! Where a worker blocks: the wait for readiness, `--read-delay`'s pause
//! between a wake-up and the reads it brings, and `--read-answers late`'s
//! sleep to the next arrival; and, where answers are stamped, the bound
//! each poll puts on when what it finds came.

use super::{Worker, EVENTS};
use crate::engine::poller::{HANGUP, READABLE, WRITABLE};
use crate::net::clock_ns;

impl Worker {
    /// Waits for readiness and handles every event. With `--read-delay`,
    /// a wake-up is followed by the pause and a second look, so that the
    /// reads find every answer that came meanwhile (see `should_pause`).
    pub(super) fn poll(&mut self, timeout_ns: u64) -> std::io::Result<()> {
        let mut events = std::mem::take(&mut self.events);
        // Requests waiting for a slot are never left behind answers that
        // would free one: while any wait, answers are read as they come.
        let late = self.read_late && self.sending && !self.awaiting_slots();
        // When the poll whose events this turn handles began.
        let mut polled = None;
        if self.shared.spec.busy_poll {
            // --busy-poll: ask without sleeping until something is ready or
            // the wait is over; no wake-up latency, a whole CPU.
            polled = self.poll_start();
            let until = clock_ns().saturating_add(timeout_ns);
            loop {
                self.wait_into(&mut events, 0)?;
                if !events.is_empty() || clock_ns() >= until {
                    break;
                }
                std::hint::spin_loop();
            }
        } else if late && self.sleep_to_arrival(timeout_ns) {
            // The arrival goes out first; the answers are read next turn
            // (or at once by the arrival itself if it finds no free slot:
            // `harvest`).
            events.clear();
        } else {
            if !late {
                self.reads_waiting = false;
            }
            // A late reader has slept already: it only looks. (The drain
            // reads at once: no arrival would wake it.)
            polled = self.poll_start();
            self.wait_into(&mut events, if late { 0 } else { timeout_ns })?;
        }
        if self.should_pause(&events) {
            std::thread::sleep(self.read_delay);
            polled = self.poll_start();
            self.wait_into(&mut events, 0)?;
        }
        self.handle_events(&events, polled);
        self.events = events;
        Ok(())
    }

    /// Reads, without waiting, every answer already in the sockets: an
    /// arrival that finds no free slot takes those first, so that it never
    /// waits for a connection whose answer is in (whatever the read
    /// policy).
    pub(super) fn harvest(&mut self) -> std::io::Result<()> {
        let mut events = std::mem::take(&mut self.events);
        let polled = self.poll_start();
        let looked = self.wait_into(&mut events, 0);
        if looked.is_ok() {
            self.handle_events(&events, polled);
        }
        self.events = events;
        looked
    }

    /// Handles the events of a poll that began at `polled` (where answers
    /// are stamped).
    fn handle_events(&mut self, events: &[(usize, u32)], polled: Option<u64>) {
        if let Some(at) = polled {
            self.note_poll(at);
        }
        self.left_unread = events.len() == EVENTS;
        for &(c, flags) in events {
            if self.conns[c].connecting {
                self.on_connect_done(c, clock_ns());
                continue;
            }
            if flags & WRITABLE != 0 {
                self.flush(c, clock_ns());
            }
            if flags & (READABLE | HANGUP) != 0 {
                // A read that emptied its socket last time finds only what
                // came since: not before the previous complete poll.
                self.conns[c].arrived_after = if self.conns[c].unread {
                    0
                } else {
                    self.readable_since
                };
                self.on_readable(c);
                self.left_unread |= self.conns[c].unread;
            }
        }
    }

    /// `--read-delay` pauses before reads that start answers, and only
    /// those: not when the last turn left bytes unread (a read that filled
    /// its buffer, more ready sockets than one wait returns), nor when a
    /// waking socket holds the rest of an answer already begun, nor for a
    /// socket that only became writable. So no answer waits for more than
    /// one pause.
    fn should_pause(&self, events: &[(usize, u32)]) -> bool {
        !self.read_delay.is_zero()
            && !self.left_unread
            && events
                .iter()
                .any(|&(_, flags)| flags & (READABLE | HANGUP) != 0)
            && !events.iter().any(|&(c, _)| self.conns[c].mid_answer())
    }

    /// `--read-answers late`: answers wait in their sockets, stamped by the
    /// kernel as they come, while the worker sleeps through them to its
    /// next wake-up. Whether an arrival is then due, to go out before the
    /// answers are read. Bytes the last turn left unread are read at once,
    /// not one buffer per wake-up.
    fn sleep_to_arrival(&mut self, timeout_ns: u64) -> bool {
        if timeout_ns > 0 && !self.reads_waiting && !self.left_unread {
            sleep_ns(timeout_ns);
            if self.next_arrival_at().is_some_and(|at| at <= clock_ns()) {
                self.reads_waiting = true;
                return true;
            }
        }
        self.reads_waiting = false;
        false
    }

    /// Now, where answers are stamped (a poll's start bounds what it finds).
    fn poll_start(&self) -> Option<u64> {
        self.stamped.then(clock_ns)
    }

    /// A poll started at `polled` whose events this turn handles. A socket
    /// it finds readable was not at the previous such poll, if that one saw
    /// every ready socket and left none unread: a stamp earlier than that
    /// (merged segments, a retransmission waited for) is raised to it.
    fn note_poll(&mut self, polled: u64) {
        self.readable_since = if self.left_unread {
            0
        } else {
            self.last_poll_ns
        };
        self.last_poll_ns = polled;
    }

    fn wait_into(
        &mut self,
        events: &mut Vec<(usize, u32)>,
        timeout_ns: u64,
    ) -> std::io::Result<()> {
        events.clear();
        events.extend(
            self.poller
                .wait(timeout_ns)?
                .map(|ev| (ev.token as usize, ev.flags)),
        );
        Ok(())
    }
}

/// Sleeps `ns` on the monotonic clock (a signal may end it early, as it
/// ends an epoll wait).
fn sleep_ns(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    };
    // SAFETY: a valid relative timespec; the remainder is not wanted.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}
