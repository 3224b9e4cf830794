//! The open-loop half of a worker: arrivals from the pacer (or a timed
//! trace) become requests on connections with a free slot, or wait in the
//! client for one (`backlog.rs`); that wait counts as latency.

use super::backlog::Backlog;
use super::{Due, Worker, MAX_DISPATCH};
use crate::engine::pacer::Pacer;
use crate::stats::ErrorClass;
use rand::Rng;
use std::collections::VecDeque;

/// `--moderate`: how long a connection stays quiet after an answer
/// (mutilate's code: 250 µs after the connection's last answer; its help
/// text says "~1/lambda").
pub(super) const MODERATE_NS: u64 = 250_000;

/// An open loop's schedule and what waits on it.
pub(super) struct OpenLoop {
    /// When arrivals are due (`None`: a timed trace's records say).
    pub(super) pacer: Option<Pacer>,
    /// How late the worker may wake for an arrival, ns (`--coalesce`).
    coalesce_ns: u64,
    /// When the worker last wrote a measured request, ns.
    last_send_ns: Option<u64>,
    /// `--moderate`: a connection stays quiet `MODERATE_NS` after an
    /// answer.
    pub(super) moderate: bool,
    /// `--skip`: arrivals far behind are skipped, as mutilate does.
    skip: bool,
    /// Free slots per server (a connection appears once per slot).
    pub(super) ready: Vec<VecDeque<usize>>,
    /// Due requests waiting for a slot.
    pub(super) backlog: Backlog,
    /// Per connection: its free slots in `ready`.
    listed: Vec<usize>,
    /// Per connection, `--moderate`: it sends nothing before this, ns.
    quiet_until: Vec<u64>,
}

impl OpenLoop {
    /// An open loop over `conns` connections of `depth` slots each, to
    /// `servers` servers.
    pub(super) fn new(
        pacer: Option<Pacer>,
        coalesce_ns: u64,
        servers: usize,
        conns: usize,
        depth: usize,
    ) -> Self {
        OpenLoop {
            pacer,
            coalesce_ns,
            last_send_ns: None,
            moderate: false,
            skip: false,
            ready: vec![VecDeque::with_capacity(conns * depth); servers],
            backlog: Backlog::new(servers),
            listed: vec![0; conns],
            quiet_until: vec![0; conns],
        }
    }

    /// The same, with mutilate's `--moderate` and `--skip` as asked.
    pub(super) fn moderated(self, moderate: bool, skip: bool) -> Self {
        OpenLoop {
            moderate,
            skip,
            ..self
        }
    }

    /// A phase starts: no slot is listed yet, and its first send has no
    /// gap before it.
    fn restart(&mut self) {
        self.ready.iter_mut().for_each(VecDeque::clear);
        self.listed.iter_mut().for_each(|n| *n = 0);
        self.last_send_ns = None;
    }

    /// `sent` measured requests were written at `now`: the gap to record
    /// and how many sends it counts for. The first send of a phase has no
    /// gap before it; those written with it, a gap of 0.
    pub(super) fn sent(&mut self, now: u64, sent: usize) -> (u64, usize) {
        match self.last_send_ns.replace(now) {
            Some(prev) => (now.saturating_sub(prev), sent),
            None => (0, sent - 1),
        }
    }

    /// When to wake for an arrival due at `at`: `--coalesce` sleeps on
    /// past it by up to W, and an answer that wakes the worker sooner
    /// sends it then.
    fn wake_for(&self, at: u64) -> u64 {
        at.saturating_add(self.coalesce_ns)
    }
}

impl Worker {
    pub(super) fn start_open_loop(&mut self, start: u64) {
        self.schedule.open().restart();
        for c in 0..self.io.conns.len() {
            self.refill(c, start);
        }
        if let Some(p) = &mut self.schedule.open().pacer {
            p.restart(start, &mut self.rng);
        }
    }

    /// Connection `c`'s free slots go to requests waiting for its server,
    /// then to the ready list.
    pub(super) fn list_free_slots(&mut self, c: usize) {
        let server = self.io.conns[c].server;
        let depth = self.depth;
        if self.schedule.open().skip {
            let now = self.now();
            let skipped = self.schedule.open().backlog.skip_late(server, now);
            self.recorder.skips += skipped;
        }
        // `--moderate`: a quiet connection lists its slots; the waiting
        // requests go out on it once its quiet time is over.
        // The clock is read only then: this runs on every answer.
        let quiet =
            self.schedule.open().moderate && self.schedule.open().quiet_until[c] > self.now();
        loop {
            let ol = self.schedule.open();
            if !self.io.conns[c].alive || self.io.conns[c].in_flight.len() + ol.listed[c] >= depth {
                return;
            }
            let waiting = if quiet { None } else { ol.backlog.pop(server) };
            match waiting {
                Some(due) => self.issue_waited(c, due),
                None => {
                    ol.ready[server].push_back(c);
                    ol.listed[c] += 1;
                }
            }
        }
    }

    /// Issues `due`, which waited in the client for a free connection,
    /// on `c`; the request keeps how long it waited.
    fn issue_waited(&mut self, c: usize, due: Due) {
        if self.issue(c, due) {
            let now = self.now();
            if let Some(req) = self.io.conns[c].in_flight.back_mut() {
                req.waited_ns = now.saturating_sub(due.queued_at);
            }
        }
    }

    /// `--moderate`: connection `c` answered at `at`, and stays quiet for
    /// a while.
    pub(super) fn moderate_after_answer(&mut self, c: usize, at: u64) {
        if let Some(ol) = self.schedule.open_loop_mut().filter(|o| o.moderate) {
            ol.quiet_until[c] = at + MODERATE_NS;
        }
    }

    /// `sent` measured requests were written at `now` on a socket the
    /// kernel does not stamp: the open loop's gaps between sends.
    pub(super) fn note_sends(&mut self, now: u64, sent: usize) {
        let record_from = self.progress.record_from;
        let Some(ol) = self.schedule.running_open() else {
            return;
        };
        if now >= record_from && sent > 0 {
            let (gap, count) = ol.sent(now, sent);
            self.recorder.send_gaps.record(gap, count);
        }
    }

    /// Records the sends connection `c` learnt were transmitted: in an
    /// open loop, each measured one's send lag (`InFlight::send_lag`),
    /// and where every write is stamped, the gap since the previous send
    /// (a sample's gaps are the sample's: `note_sends` times them all).
    pub(super) fn note_stamped_sends(&mut self, c: usize) {
        let record_from = self.progress.record_from;
        let every_write = self.io.conns[c].stamps_every_write();
        let sends = &mut self.io.conns[c].stamps.sends;
        let Some(ol) = self.schedule.running_open() else {
            sends.clear();
            return;
        };
        for s in sends.drain(..) {
            if s.measured {
                self.recorder.record_lag(s.lag_ns);
            }
            if every_write && s.tx_ns >= record_from {
                // The first send of the phase has no gap before it.
                let (gap, count) = ol.sent(s.tx_ns, 1);
                self.recorder.send_gaps.record(gap, count);
            }
        }
    }

    /// Whether an answer whose request has no transmit stamp gives the
    /// open loop's send lag (taken from its send call).
    pub(super) fn lag_at_answer(&self) -> bool {
        self.io.tx_stamped && self.schedule.mode() == super::schedule::Mode::Open
    }

    /// Open loop: turns every arrival that is due into a request.
    pub(super) fn dispatch_due(&mut self, now: u64) {
        // Looks at the sockets stop for the turn once one frees no slot:
        // under overload, every arrival would otherwise ask again in vain.
        let mut may_harvest = true;
        // Bounded per loop turn, so that a rate beyond the client's reach
        // still leaves time to read answers and to see a stop request.
        for _ in 0..MAX_DISPATCH {
            let Some((intended, measured)) = self.take_arrival(now) else {
                return;
            };
            // An arrival that cannot wait is dropped before its request
            // is drawn: under overload, drawing is most of the cost. (A
            // full backlog means its server has no free slot.)
            let hint = self.server_hint();
            if self.schedule.open().backlog.cannot_wait(hint) {
                self.overloaded(measured);
                // A replayed arrival is dropped with its record.
                if self.replay.is_some() {
                    let _ = self.next_traced(0);
                }
                continue;
            }
            let Some((req, server)) = self.draw_arrival(hint, intended) else {
                // A paced replay whose feed has not kept up: the client
                // could not offer this arrival.
                self.overloaded(measured);
                continue;
            };
            let due = Due::new(Some(req), intended, measured);
            may_harvest = self.place(due, server, now, may_harvest);
        }
    }

    /// The next arrival due by `now`, taken from the schedule: when it was
    /// intended, and whether it is measured (then counted against the
    /// quota, with its send lag).
    fn take_arrival(&mut self, now: u64) -> Option<(u64, bool)> {
        if !self.progress.sending || self.requests.quota_spent() {
            return None;
        }
        let intended = self.next_arrival().filter(|&at| at <= now)?;
        // A paced replay ends with its trace: no arrival after it.
        if self.replay.is_some() && !self.traced_ready() && self.source_exhausted() {
            return None;
        }
        if let Some(p) = self.schedule.open().pacer.as_mut() {
            p.advance(&mut self.rng);
        }
        let measured = intended >= self.progress.record_from;
        if measured {
            self.requests.spend();
            // Else taken from the request's transmit stamp (`stamps`).
            if !self.lag_from_tx() {
                self.recorder.record_lag(now - intended);
            }
        }
        Some((intended, measured))
    }

    /// An arrival the client could not offer.
    fn overloaded(&mut self, measured: bool) {
        if measured {
            self.recorder.error(ErrorClass::ClientOverload, 1);
        }
    }

    /// `due` goes out on a free slot to `server`, or waits for one. With
    /// no slot free, answers already in are read first (`may_harvest`),
    /// so that it never waits for a connection whose answer is in.
    /// Whether the next arrival of the turn may look again.
    fn place(&mut self, due: Due, server: usize, now: u64, may_harvest: bool) -> bool {
        let mut slot = self.take_slot(server, now);
        let mut harvest_again = may_harvest;
        if slot.is_none() && may_harvest {
            // This turn's arrivals so far go out first; then answers
            // already in free their slots (a failed look is the next
            // poll's error).
            self.flush_dirty(now);
            let _ = self.harvest();
            slot = self.take_slot(server, now);
            harvest_again = slot.is_some();
        }
        let measured = due.measured;
        match slot {
            Some(c) => {
                self.issue(c, due);
            }
            None if self.schedule.open().backlog.full(server) => self.overloaded(measured),
            None if self.io.alive_on[server] > 0 => {
                self.recorder.client_waits += u64::from(measured);
                self.schedule.open().backlog.push(server, due.queued(now));
            }
            None if measured => {
                self.recorder
                    .server_error(server, ErrorClass::NoConnection, 1);
            }
            None => {}
        }
        harvest_again
    }

    /// Sending is over (`-t`, at `send_until`): the requests waiting for a
    /// slot are never sent, nor the arrivals due before then that a
    /// lagging worker never got to (`unsent`).
    pub(super) fn drop_unsent(&mut self, send_until: u64) {
        let Some(ol) = self.schedule.open_loop_mut() else {
            return;
        };
        let mut unsent = ol.backlog.take_all();
        if let Some(p) = ol.pacer.as_mut() {
            // The warm-up's are not counted.
            p.skip_to(self.progress.record_from, &mut self.rng);
            unsent += p.skip_to(send_until, &mut self.rng);
        }
        self.recorder.error(ErrorClass::Unsent, unsent);
    }

    /// Whether some request waits in the client for a free slot.
    pub(super) fn awaiting_slots(&self) -> bool {
        self.schedule.backlog().is_some_and(Backlog::any)
    }

    /// When the next arrival is due: the pacer's schedule, or a replay's
    /// next record (`None`: none now).
    fn next_arrival(&mut self) -> Option<u64> {
        match &self.schedule.open().pacer {
            Some(p) => Some(p.next()),
            None => self.next_traced_at(),
        }
    }

    /// When the loop must wake for the next arrival, without taking one
    /// from the feed.
    pub(super) fn arrival_wake(&self) -> Option<u64> {
        let ol = self.schedule.open_loop()?;
        self.next_arrival_at().map(|at| ol.wake_for(at))
    }

    /// When the next arrival is due, without taking it from the feed.
    pub(super) fn next_arrival_at(&self) -> Option<u64> {
        let pacer = self.schedule.open_loop().and_then(|o| o.pacer.as_ref());
        match (pacer, &self.replay) {
            (Some(p), _) => Some(p.next()),
            (None, Some(r)) => r.next_at(),
            (None, None) => None,
        }
    }

    /// The server of the next arrival when keys are not placed (`None`:
    /// its key decides): one in proportion to this worker's connections.
    fn server_hint(&mut self) -> Option<usize> {
        (!self.shared.workload.keys.placed()).then(|| self.pick_server())
    }

    /// An arrival's request, drawn before it has a connection, and its
    /// server: `hint`, or where its key lives.
    fn draw_arrival(
        &mut self,
        hint: Option<usize>,
        intended: u64,
    ) -> Option<(crate::workload::Request, usize)> {
        if self.replay.is_some() {
            let req = self.next_traced(0)?;
            let home = self.replay.as_ref().and_then(|r| r.server_of(req.named));
            return Some((req, hint.or(home).unwrap_or(0)));
        }
        let workload = &self.shared.workload;
        let ci = self.open_cursor(hint.unwrap_or(0));
        let req = workload.next(&mut self.rng, &mut self.keys.cursors[ci], intended);
        let server = match hint {
            Some(s) => s,
            None => self.target_of(&req),
        };
        Some((req, server))
    }

    /// The server of an arrival whose key decides: where it lives, or in
    /// a replication run the server `Replicas::target` picks among those
    /// this worker has a connection up to (its home when none is up, for
    /// the request to fail as `no_connection`).
    fn target_of(&mut self, req: &crate::workload::Request) -> usize {
        let keys = &self.shared.workload.keys;
        let home = req.key_id().map_or(0, |k| keys.server_of(k));
        let Some(r) = keys.replicas() else {
            return home;
        };
        let turn = self.rng.gen::<u32>() as usize;
        let alive_on = &self.io.alive_on;
        r.target(!req.op.is_retrieval(), home, turn, |s| alive_on[s] > 0)
            .unwrap_or(home)
    }

    /// A server, in proportion to this worker's connections to it (so that
    /// every server gets its share of the run's rate).
    fn pick_server(&mut self) -> usize {
        match self.io.conns.len() {
            1 => self.io.conns[0].server,
            n => self.io.conns[self.rng.gen_range(0..n)].server,
        }
    }

    /// A connection to `server` with a free slot (with `--moderate`, one
    /// not kept quiet at `now`).
    fn take_slot(&mut self, server: usize, now: u64) -> Option<usize> {
        if self.schedule.open().moderate {
            return self.take_moderated(server, now);
        }
        let ol = self.schedule.open();
        while let Some(c) = ol.ready[server].pop_front() {
            ol.listed[c] -= 1;
            if self.io.conns[c].alive {
                return Some(c);
            }
        }
        None
    }

    fn take_moderated(&mut self, server: usize, now: u64) -> Option<usize> {
        let conns = &self.io.conns;
        let ol = self.schedule.open();
        let listed = &mut ol.listed;
        ol.ready[server].retain(|&c| {
            if !conns[c].alive {
                listed[c] -= 1;
            }
            conns[c].alive
        });
        let at = ol.ready[server]
            .iter()
            .position(|&c| ol.quiet_until[c] <= now)?;
        let c = ol.ready[server].remove(at)?;
        ol.listed[c] -= 1;
        Some(c)
    }

    /// `--moderate`: requests waiting for a server go out on its
    /// connections whose quiet time is over.
    pub(super) fn release_moderated(&mut self, now: u64) {
        for server in 0..self.schedule.open().backlog.servers() {
            while self.schedule.open().backlog.waits_for(server) {
                let Some(c) = self.take_slot(server, now) else {
                    break;
                };
                let due = self.schedule.open().backlog.pop(server).expect("waits");
                self.issue_waited(c, due);
            }
        }
    }

    /// `--moderate`: when the first connection with a free slot for a
    /// server with waiting requests ends its quiet time (`u64::MAX`: none).
    pub(super) fn moderated_wake(&self) -> u64 {
        let Some(ol) = self.schedule.open_loop() else {
            return u64::MAX;
        };
        ol.backlog
            .waiting_servers()
            .flat_map(|s| ol.ready[s].iter().map(|&c| ol.quiet_until[c]))
            .min()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_send_of_a_phase_has_no_gap_before_it() {
        let mut o = OpenLoop::new(None, 0, 1, 1, 4);
        // Three requests in the first write: two gaps of 0.
        assert_eq!(o.sent(1_000, 3), (0, 2));
        assert_eq!(o.sent(1_500, 1), (500, 1));
        assert_eq!(o.sent(1_500, 2), (0, 2));
        o.restart();
        assert_eq!(o.sent(9_000, 1), (0, 0));
    }

    #[test]
    fn coalesce_wakes_up_to_its_window_after_the_arrival() {
        assert_eq!(OpenLoop::new(None, 0, 1, 1, 1).wake_for(700), 700);
        assert_eq!(OpenLoop::new(None, 50, 1, 1, 1).wake_for(700), 750);
        assert_eq!(
            OpenLoop::new(None, 50, 1, 1, 1).wake_for(u64::MAX),
            u64::MAX
        );
    }
}
