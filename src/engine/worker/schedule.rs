//! When a phase's requests are due. The run's schedule is chosen once, as
//! the worker is set up (`WorkerSchedule`), and holds that mode's state;
//! each phase then runs it (the measured phase) or a closed loop (the
//! preload). The rest of the worker calls the schedule's parts below and
//! never asks which one it is: this file is where the mode is looked at.
//!
//! The modes' parts are `closed_loop.rs`, `open_loop.rs` (with
//! `backlog.rs`) and `churn.rs`.

use super::backlog::Backlog;
use super::open_loop::OpenLoop;
use super::{churn, replay, Worker};
use crate::workload::Request;

/// The run's schedule, and the state its mode keeps.
pub(super) enum WorkerSchedule {
    /// A freed slot is refilled at once.
    Closed,
    /// Arrivals from a pacer (or a timed trace's records) wait in the
    /// client for a free slot.
    Open(Box<OpenLoop>),
    /// `--num-conns`: connections open and close on a schedule.
    Churn(Box<churn::Schedule>),
}

/// How the phase under way sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Closed,
    Open,
    Churn,
}

/// The run's schedule and the phase's mode.
pub(super) struct Schedule {
    run: WorkerSchedule,
    mode: Mode,
}

impl Schedule {
    /// A schedule whose phases start closed until `begin` says otherwise.
    pub(super) fn new(run: WorkerSchedule) -> Self {
        Schedule {
            run,
            mode: Mode::Closed,
        }
    }

    /// The phase under way runs the run's schedule (`measured`), or a
    /// closed loop (a preload, which sends its keys as fast as answered).
    fn begin(&mut self, measured: bool) -> Mode {
        self.mode = match (&self.run, measured) {
            (WorkerSchedule::Open(_), true) => Mode::Open,
            (WorkerSchedule::Churn(_), true) => Mode::Churn,
            _ => Mode::Closed,
        };
        self.mode
    }

    pub(super) fn mode(&self) -> Mode {
        self.mode
    }

    /// The open loop's state, if the run has one (whatever the phase).
    pub(super) fn open_loop(&self) -> Option<&OpenLoop> {
        match &self.run {
            WorkerSchedule::Open(o) => Some(o),
            _ => None,
        }
    }

    /// `open_loop`, to change.
    pub(super) fn open_loop_mut(&mut self) -> Option<&mut OpenLoop> {
        match &mut self.run {
            WorkerSchedule::Open(o) => Some(o),
            _ => None,
        }
    }

    /// The open loop's state, in one of its own parts.
    pub(super) fn open(&mut self) -> &mut OpenLoop {
        self.open_loop_mut().expect("an open loop")
    }

    /// The open loop's state, where the phase runs it.
    pub(super) fn running_open(&mut self) -> Option<&mut OpenLoop> {
        match (self.mode, &mut self.run) {
            (Mode::Open, WorkerSchedule::Open(o)) => Some(o),
            _ => None,
        }
    }

    /// The connection schedule's state, if the run has one.
    pub(super) fn churn(&self) -> Option<&churn::Schedule> {
        match &self.run {
            WorkerSchedule::Churn(s) => Some(s),
            _ => None,
        }
    }

    /// The connection schedule's state, in one of its own parts.
    pub(super) fn churn_mut(&mut self) -> &mut churn::Schedule {
        match &mut self.run {
            WorkerSchedule::Churn(s) => s,
            _ => unreachable!("a connection schedule's part without one"),
        }
    }

    /// Requests waiting in the client for a free slot.
    pub(super) fn backlog(&self) -> Option<&Backlog> {
        self.open_loop().map(|o| &o.backlog)
    }

    pub(super) fn backlog_mut(&mut self) -> Option<&mut Backlog> {
        self.open_loop_mut().map(|o| &mut o.backlog)
    }

    /// How many requests wait in the client for a free slot.
    pub(super) fn waiting(&self) -> usize {
        self.backlog().map_or(0, Backlog::len)
    }

    /// Connects under way (waited for like requests in flight).
    pub(super) fn connecting(&self) -> usize {
        self.churn().map_or(0, churn::Schedule::connecting)
    }

    /// The mix's schedule has nothing left to send: every scheduled
    /// connection was opened and closed (other schedules end in time or
    /// by the quota).
    pub(super) fn exhausted(&self) -> bool {
        self.churn().is_some_and(churn::Schedule::done)
    }

    /// What a phase leaves waiting is dropped (it was counted).
    pub(super) fn end_phase(&mut self) {
        if let Some(b) = self.backlog_mut() {
            b.clear();
        }
    }

    /// The phase's end is its schedule's, not only its time's: every
    /// scheduled connection done.
    pub(super) fn ends_on_its_own(&self) -> bool {
        self.mode == Mode::Churn
    }

    /// The phase holds its connections for its whole length (a schedule of
    /// connections opens and closes them, and may have none up).
    pub(super) fn holds_connections(&self) -> bool {
        self.mode != Mode::Churn
    }
}

impl Worker {
    /// The phase starts at `start`: its mode chosen, its reads set, and
    /// its first requests (or connections) sent.
    pub(super) fn start_schedule(&mut self, measured: bool, start: u64) -> Mode {
        let mode = self.schedule.begin(measured);
        let open = mode == Mode::Open;
        self.reads.begin_phase(&self.shared.spec, measured, open);
        match mode {
            Mode::Open => self.start_open_loop(start),
            Mode::Churn => self.start_churn(start),
            Mode::Closed => {
                for c in 0..self.io.conns.len() {
                    self.refill(c, start);
                }
            }
        }
        mode
    }

    /// The held connections did the preload; a connection schedule's are
    /// the only ones measured.
    pub(super) fn hand_over_connections(&mut self) {
        if self.schedule.churn().is_some() {
            self.close_held();
        }
    }

    /// Fills the free slots of connection `c`: in a closed loop (and a
    /// preload) its group's; in an open loop, hands them to waiting
    /// requests or the ready list.
    pub(super) fn refill(&mut self, c: usize, now: u64) {
        match self.schedule.mode() {
            Mode::Churn => self.churn_refill(c, now),
            Mode::Open => self.list_free_slots(c),
            Mode::Closed => self.refill_closed(self.lead(c), now),
        }
    }

    /// Sends what the phase's schedule has due at `now` (`sending`: the
    /// phase still sends; an open loop's moderated requests go out in the
    /// drain too).
    pub(super) fn send_scheduled(&mut self, now: u64, sending: bool) {
        match self.schedule.mode() {
            Mode::Open => {
                if self.schedule.open().moderate {
                    self.release_moderated(now);
                }
                if sending {
                    self.dispatch_due(now);
                }
            }
            Mode::Churn if sending => self.churn_due(now),
            Mode::Closed if sending && self.requests.replaying() => self.service_trace(now),
            Mode::Churn | Mode::Closed => {}
        }
    }

    /// `wake`, brought forward to when the schedule next needs the loop:
    /// an arrival, a scheduled connect or call, a moderated connection's
    /// quiet time's end, a timeout check.
    pub(super) fn schedule_wake(&self, mut wake: u64, now: u64) -> u64 {
        let open = self.schedule.mode() == Mode::Open;
        if self.progress.sending {
            if open {
                if let Some(at) = self.arrival_wake() {
                    wake = wake.min(at);
                }
            }
            if self.trace_starved() {
                wake = wake.min(now + replay::STARVED_WAKE_NS);
            }
            if let Some(at) = self.schedule.churn().and_then(churn::Schedule::next_at) {
                wake = wake.min(at);
            }
        }
        if self.io.in_flight > 0 || self.schedule.churn().is_some() {
            wake = wake.min(self.checks.timeout_at.max(now));
        }
        if self
            .schedule
            .open_loop()
            .is_some_and(|o| open && o.moderate)
        {
            wake = wake.min(self.moderated_wake().max(now));
        }
        wake
    }

    /// The cursor a request on connection `c` draws with and tells: an
    /// open loop's draws each arrival before it has a connection.
    pub(super) fn cursor_index(&self, c: usize) -> usize {
        match self.schedule.mode() {
            Mode::Open => self.open_cursor(self.io.conns[c].server),
            Mode::Closed | Mode::Churn => self.keys.open_cursors + self.lead(c),
        }
    }

    /// The socket `req`, due on connection `c`, goes out on: `c` itself in
    /// an open loop (its slot was taken for it), else the router's pick in
    /// `c`'s group (`route_in_group`).
    pub(super) fn route(&mut self, c: usize, req: &Request, measured: bool) -> Option<usize> {
        match self.schedule.mode() {
            Mode::Open => Some(c),
            Mode::Closed | Mode::Churn => self.route_in_group(c, req, measured),
        }
    }

    /// Drops a connection that failed; its requests are lost.
    pub(super) fn lose(&mut self, c: usize) {
        if !self.io.conns[c].alive {
            return;
        }
        match self.schedule.mode() {
            Mode::Churn => self.lose_churned(c, self.now()),
            Mode::Closed | Mode::Open => self.lose_held(c),
        }
    }

    /// Connection `c`'s oldest request timed out and its requests were
    /// counted: a scheduled connection is done, a held one closed and
    /// opened again.
    pub(super) fn end_timed_out(&mut self, c: usize, now: u64) {
        match self.schedule.mode() {
            Mode::Churn => self.retire(c, now),
            Mode::Closed | Mode::Open => self.reopen_timed_out(c, now),
        }
    }
}
