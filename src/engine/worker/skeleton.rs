//! The fixed skeleton of a phase: set up, then turns (stop, warm-up end,
//! sending, intervals, expiry, reconnects, the end judged) and a wait
//! until the next thing due, then the close. What is sent, and how, is
//! the parts' (`open_loop`, `closed_loop`, `churn`, `replay`); the rules
//! in time are `phase`'s.

use super::{phase, Worker, MAX_WAIT_NS};
use crate::engine::{PhaseEnd, PhaseKind};

/// What one phase's loop keeps between turns.
pub(super) struct Phase {
    kind: PhaseKind,
    /// Whether the phase reports intervals (the measured one).
    report: bool,
    time_bounded: bool,
    warming: bool,
    bounds: phase::Bounds,
    intervals: phase::Intervals,
    /// When sending stopped, and when the drain then ends.
    sending_stopped: u64,
    drain_deadline: u64,
    /// When this worker last had no connection up.
    all_down_since: Option<u64>,
}

impl Phase {
    /// Whether servers that stop answering fail the phase (a stall): in a
    /// phase without an end in time, and in any phase whose servers never
    /// answered, which leaves nothing to measure.
    fn gives_up(&self, last_answer_ns: u64) -> bool {
        !self.time_bounded || last_answer_ns == self.bounds.start
    }
}

impl Worker {
    /// One phase of the loop. `report` phases send interval snapshots.
    pub(super) fn run_phase(&mut self, kind: PhaseKind, report: bool) -> PhaseEnd {
        let mut phase = self.begin_phase(kind, report);
        let end = loop {
            let now = self.now();
            if let Some(end) = self.turn(&mut phase, now) {
                break end;
            }
            let wake = self.next_wake(&phase, now);
            if let Err(e) = self.poll(wake.saturating_sub(now)) {
                break PhaseEnd::Failed(format!("event loop: {e}"));
            }
        };
        self.finish_phase(&phase, end)
    }

    /// Sets the worker up for a phase starting now, and sends its first
    /// requests.
    fn begin_phase(&mut self, kind: PhaseKind, report: bool) -> Phase {
        self.start_measuring();
        self.sampler.active = report;
        let start = self.now();
        let bounds = phase::Bounds::new(&self.shared.spec, kind, start, self.io.has_udp);
        let measured = bounds.measured;
        self.progress.begin(start, bounds.record_from);
        self.start_slots(bounds.record_from);
        self.requests.begin_phase(measured, self.replay.is_some());
        if let (true, Some(replay)) = (measured, &mut self.replay) {
            replay.start_ns = start;
        }
        self.start_schedule(measured, start);
        Phase {
            kind,
            report,
            time_bounded: bounds.time_bounded(self.schedule.ends_on_its_own()),
            warming: bounds.record_from > start,
            intervals: phase::Intervals::new(
                bounds.record_from,
                self.shared.spec.recording.interval.as_nanos() as u64,
            ),
            bounds,
            sending_stopped: u64::MAX,
            drain_deadline: u64::MAX,
            all_down_since: None,
        }
    }

    /// One turn of the loop at `now`: sends what is due, closes what is
    /// over; the phase's end once it has one.
    fn turn(&mut self, ph: &mut Phase, now: u64) -> Option<PhaseEnd> {
        if self.stopped() {
            self.cut_off();
            return Some(PhaseEnd::Stopped);
        }
        if ph.kind == PhaseKind::Load && self.progress.sending {
            if let Some(why) = self.preload_doomed() {
                self.cut_off();
                return Some(PhaseEnd::Failed(why));
            }
        }
        // `--precision` met: sending ends now, as it would at `-t`.
        if ph.report
            && self
                .shared
                .precise
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            ph.bounds.send_until = ph.bounds.send_until.min(now);
        }
        if ph.warming && now >= self.progress.record_from {
            ph.warming = false;
            self.start_measuring();
        }
        self.stop_sending_when_over(ph, now);
        self.send_scheduled(now, self.progress.sending);
        // Once sending stops, the rest (the drain) belongs to the last interval.
        if ph.report && self.progress.sending {
            if let Some((index, end_ns)) = ph.intervals.closed_by(now, self.progress.record_from) {
                self.emit(index, end_ns);
            }
        }
        // Expiry may refill connections: before the flush, so that what
        // it queues goes out in this turn (reopening flushes its own).
        if self.io.has_udp {
            self.expire_datagrams(now);
        }
        let give_up = ph.gives_up(self.progress.last_answer_ns);
        let stalled =
            give_up && self.outstanding() > 0 && self.progress.stalled(now, ph.bounds.stall_after);
        // Not while answers wait unread: those that came in time would
        // look overdue. They are read in this very turn.
        if !stalled && !self.reads.answers_waiting() {
            self.expire_overdue(now);
        }
        if self.progress.sending && self.schedule.holds_connections() {
            self.reopen_due(now);
        }
        self.flush_dirty(now);
        self.judge_end(ph, now, give_up)
    }

    /// Stops sending once the phase's time, quota or source is over; what
    /// is in flight then drains for at most `--timeout`.
    fn stop_sending_when_over(&mut self, ph: &mut Phase, now: u64) {
        let send_until = ph.bounds.send_until;
        if !self.progress.sending
            || (now < send_until && !self.requests.quota_spent() && !self.source_exhausted())
        {
            return;
        }
        self.progress.sending = false;
        // The feed goes on with the other workers.
        if let Some(r) = &mut self.replay {
            r.close_feed();
        }
        ph.sending_stopped = now;
        ph.drain_deadline = now.saturating_add(ph.bounds.drain);
        // `-t` bounds sending: requests still waiting for a connection
        // then are never sent; the drain is for those in flight.
        if now >= send_until {
            self.drop_unsent(send_until);
        }
    }

    /// The phase's end at `now`, if it has come: all answered, every
    /// connection lost, stalled, or the drain over.
    fn judge_end(&mut self, ph: &mut Phase, now: u64, give_up: bool) -> Option<PhaseEnd> {
        if !self.progress.sending && self.outstanding() == 0 {
            return Some(PhaseEnd::Completed);
        }
        if self.any_up() || !self.schedule.holds_connections() {
            ph.all_down_since = None;
        } else {
            // With --reconnect, keep trying for --timeout; then give up.
            let since = *ph.all_down_since.get_or_insert(now);
            let retrying = self.progress.sending && self.reopening.pending();
            if !retrying || now - since >= ph.bounds.timeout {
                return Some(PhaseEnd::AllLost);
            }
        }
        if self.outstanding() == 0 {
            self.progress.last_progress_ns = now;
        } else if give_up && self.progress.stalled(now, ph.bounds.stall_after) {
            let why = self.stall_message(ph.kind, ph.report, now);
            self.time_out_waiting();
            return Some(PhaseEnd::Failed(why));
        }
        if now >= ph.drain_deadline {
            self.time_out_waiting();
            return Some(PhaseEnd::Completed);
        }
        None
    }

    /// When the loop must look again, at the latest: the next send, the
    /// next interval, timeout check, reconnect, drain end or stall.
    fn next_wake(&mut self, ph: &Phase, now: u64) -> u64 {
        let mut wake = ph.drain_deadline.min(now + MAX_WAIT_NS);
        // A stall ends only a phase that gives up on silent servers; in
        // another, a silence past its time would wake the loop at once,
        // again and again, until the next timeout check.
        if ph.gives_up(self.progress.last_answer_ns) {
            let stall_at = self
                .progress
                .last_progress_ns
                .saturating_add(ph.bounds.stall_after);
            wake = wake.min(stall_at);
        }
        if self.progress.sending {
            wake = wake.min(ph.bounds.send_until);
            if ph.report {
                wake = wake.min(ph.intervals.next_end());
            }
            if let Some(at) = self.reopening.next_at() {
                wake = wake.min(at);
            }
        }
        self.schedule_wake(wake, now)
    }

    /// Closes the phase: where its measured time ends, its drain, and
    /// (reporting) its last interval, the drain included.
    fn finish_phase(&mut self, ph: &Phase, end: PhaseEnd) -> PhaseEnd {
        let now = self.now();
        self.progress.finish(&end, ph.sending_stopped, now);
        if ph.report {
            let end_ns = self.progress.measured_ns();
            if let Some(w) = self.miss_window.as_mut() {
                w.close(&mut self.recorder, end_ns);
            }
            self.emit(ph.intervals.index, end_ns);
        }
        self.end_phase();
        end
    }
}
