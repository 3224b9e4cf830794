//! `--num-conns`: twemperf's connection generator. Connections open on a
//! schedule (`--conn-rate`), each sends `--num-calls` requests on its own
//! schedule (`--call-rate`), then closes.
//!
//! Latency still counts from the intended send: a connection's first call
//! is intended when the connection was, so the connect (and any lateness
//! in opening it) is part of that call's latency. Connects never block the
//! worker: each is started non-blocking and finished when its socket turns
//! writable.

use super::{Due, Worker, MAX_DISPATCH};
use crate::engine::conn::Conn;
use crate::engine::poller::{READABLE, WRITABLE};
use crate::engine::transport::Dial;
use crate::net::connect;
use crate::spec::{Churn, Gaps};
use crate::stats::{ConnError, ErrorClass};
use crate::workload::Cursor;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One worker's share of the connection schedule.
pub struct Schedule {
    conn_gaps: Gaps,
    call_gaps: Gaps,
    calls: u64,
    /// Connections this worker has yet to open.
    left: u64,
    /// When the next connection is due, ns; `None` while one after another
    /// waits for the previous to close.
    next_open: Option<u64>,
    /// Per connection slot: the life of the connection in it.
    lives: Vec<Life>,
    /// Slots free for the next connection.
    free: Vec<usize>,
    /// Paced calls: (intended send, slot, generation), earliest first.
    paced: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Connections opening or open.
    live: usize,
    /// Of them, still connecting.
    connecting: usize,
    /// Connections this worker has started, for the server and source
    /// address in turn.
    started: usize,
    /// This worker's number and the run's workers: its connections are
    /// `index`, `index + workers`, ... of the run's.
    index: usize,
    workers: usize,
}

/// What a slot's current connection is doing.
#[derive(Debug, Clone, Copy, Default)]
struct Life {
    /// When the schedule wanted it opened, ns.
    intended_open_ns: u64,
    /// When its connect was started, and when it completed, ns.
    connect_start_ns: u64,
    connected_ns: u64,
    /// Calls not yet sent.
    calls_left: u64,
    /// Over `--tls`: the TCP connect is done and the handshake under way
    /// (the slot still counts as connecting).
    handshaking: bool,
    /// Bumped when the slot takes a new connection: paced calls of an
    /// older one are stale.
    generation: u32,
}

/// Quiet calls sent one after another before their one fence (see
/// `Worker::send_calls`).
const QUIET_BATCH: usize = 64;

impl Schedule {
    pub fn new(churn: &Churn, index: usize, workers: usize) -> Self {
        let share = crate::engine::share(churn.conns, workers, index);
        Schedule {
            conn_gaps: churn.conn_gaps.shared_by(workers),
            call_gaps: churn.call_gaps,
            calls: churn.calls,
            left: share,
            next_open: None,
            lives: Vec::new(),
            free: Vec::new(),
            paced: BinaryHeap::new(),
            live: 0,
            connecting: 0,
            started: 0,
            index,
            workers,
        }
    }

    /// Connections still connecting (waited for like requests in flight).
    pub fn connecting(&self) -> usize {
        self.connecting
    }

    /// Every connection was opened, and every one is closed.
    pub fn done(&self) -> bool {
        self.left == 0 && self.live == 0
    }

    /// When the schedule next needs the worker: a connection or a paced
    /// call due, ns.
    pub fn next_at(&self) -> Option<u64> {
        let open = self.next_open.filter(|_| self.left > 0);
        let call = self.paced.peek().map(|Reverse((at, _, _))| *at);
        match (open, call) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Worker {
    fn conn_schedule(&mut self) -> &mut Schedule {
        self.schedule.churn_mut()
    }

    /// Closes the held connections (they did the preload): the schedule's
    /// connections are the only ones measured.
    pub(super) fn close_held(&mut self) {
        for c in 0..self.io.conns.len() {
            if self.io.conns[c].alive {
                self.close_socket(c);
            }
        }
        let slots = self.io.conns.len();
        // Reopenings the preload queued are for held connections: their
        // slots now belong to the schedule.
        self.reopening = super::reconnect::Reopening::new(slots);
        let s = self.conn_schedule();
        s.lives = vec![Life::default(); slots];
        s.free = (0..slots).rev().collect();
    }

    pub(super) fn start_churn(&mut self, start: u64) {
        self.conn_schedule().next_open = Some(start);
    }

    /// Opens every connection that is due, and sends every paced call.
    pub(super) fn churn_due(&mut self, now: u64) {
        for _ in 0..MAX_DISPATCH {
            let s = self.schedule.churn_mut();
            let Some(at) = s.next_open.filter(|&t| t <= now && s.left > 0) else {
                break;
            };
            s.left -= 1;
            s.next_open = s
                .conn_gaps
                .next_ns(&mut self.rng)
                .map(|gap| at.saturating_add(gap));
            self.open_scheduled(at, now);
        }
        for _ in 0..MAX_DISPATCH {
            let Some(&Reverse((at, c, generation))) = self.conn_schedule().paced.peek() else {
                break;
            };
            if at > now {
                break;
            }
            self.conn_schedule().paced.pop();
            let life = self.conn_schedule().lives[c];
            if life.generation == generation
                && self.io.conns[c].alive
                && !self.io.conns[c].connecting
            {
                self.send_call(c, at, now);
            }
        }
    }

    /// Starts connection `intended_ns` of the schedule.
    fn open_scheduled(&mut self, intended_ns: u64, now: u64) {
        let nservers = self.shared.addrs.len();
        let s = self.conn_schedule();
        let nth = s.started * s.workers + s.index;
        s.started += 1;
        let server = nth % nservers;
        let c = match s.free.pop() {
            Some(c) => c,
            None => {
                s.lives.push(Life::default());
                s.lives.len() - 1
            }
        };
        let dial = Dial {
            target: &self.shared.addrs[server],
            server,
            nth,
            token: c,
            protocol: self.shared.spec.target.protocol,
            max_pending: self.io.max_pending,
        };
        let (conn, pending) = match self.io.transport.start_connect(&dial, &self.shared.spec) {
            Ok(started) => started,
            Err(class) => {
                self.conn_schedule().free.push(c);
                self.connect_failed(server, class, now);
                return;
            }
        };
        self.install(c, conn, server, nth);
        let s = self.conn_schedule();
        s.live += 1;
        let life = &mut s.lives[c];
        life.generation = life.generation.wrapping_add(1);
        life.intended_open_ns = intended_ns;
        life.connect_start_ns = now;
        life.calls_left = s.calls;
        life.handshaking = false;
        s.connecting += 1;
        self.io.conns[c].connecting = true;
        if !pending {
            self.tcp_up(c, now);
        }
    }

    /// Puts a new connection in slot `c`.
    fn install(&mut self, c: usize, conn: Conn, server: usize, nth: usize) {
        let cursor = Cursor::starting_at(nth, self.first_rank(nth));
        if c == self.io.conns.len() {
            self.io.conns.push(conn);
            self.keys.cursors.push(cursor);
            self.reopening.grow(self.io.conns.len());
        } else {
            self.io.conns[c] = conn;
            self.keys.cursors[self.keys.open_cursors + c] = cursor;
        }
        self.io.alive += 1;
        self.io.alive_on[server] += 1;
        self.shared.conn_opened();
    }

    /// Where the `nth` connection of the run starts its sequential keys:
    /// after every call of the connections before it, so that the run
    /// walks one key sequence, as twemperf's one call counter does, and
    /// wraps only at the key space's end. (Workers' connections are
    /// numbered apart, agents' key spaces are disjoint slices.)
    fn first_rank(&mut self, nth: usize) -> u64 {
        let keys = self.shared.workload.keys.ids();
        let count = (keys.end - keys.start).max(1);
        let calls = self.conn_schedule().calls;
        (nth as u128 * calls as u128 % count as u128) as u64
    }

    /// A connection that never opened: counted by class, and its calls as
    /// requests that found no connection. One after another, the next
    /// connection is due now.
    fn connect_failed(&mut self, server: usize, class: ConnError, now: u64) {
        self.recorder.conns.error(class);
        // Counted while measuring (the recorder starts afresh after the
        // warm-up): the calls would have been sent from now on.
        if now >= self.progress.record_from {
            let calls = self.conn_schedule().calls;
            self.recorder
                .server_error(server, ErrorClass::NoConnection, calls);
        }
        self.next_after_close(now);
    }

    /// Closes slot `c`'s connection, and (one after another) the next
    /// connection is due now.
    pub(super) fn retire(&mut self, c: usize, now: u64) {
        self.end_connection(c, now);
        self.next_after_close(now);
    }

    fn next_after_close(&mut self, now: u64) {
        let s = self.conn_schedule();
        if s.conn_gaps == Gaps::AfterPrevious && s.left > 0 {
            s.next_open = Some(now);
        }
    }

    /// Slot `c`'s socket turned ready while connecting: the connect is
    /// done, one way or the other, or the TLS handshake can go on.
    pub(super) fn on_connect_done(&mut self, c: usize, now: u64) {
        if self.conn_schedule().lives[c].handshaking {
            self.advance_handshake(c, now);
            return;
        }
        let Some(fd) = self.io.conns[c].socket() else {
            return;
        };
        let conn = &self.io.conns[c];
        let result =
            connect::finish_connect(fd).and_then(|()| self.io.transport.modify(conn, c, READABLE));
        match result {
            Ok(()) => self.tcp_up(c, now),
            Err(e) => self.fail_connecting(c, ConnError::of(&e), now),
        }
    }

    /// Slot `c`'s TCP connect completed at `now`: over TLS its handshake
    /// begins, else its first call goes.
    fn tcp_up(&mut self, c: usize, now: u64) {
        let life = &mut self.conn_schedule().lives[c];
        life.connected_ns = now;
        let started = life.connect_start_ns;
        self.recorder
            .conns
            .record_connect(now.saturating_sub(started));
        if self.io.conns[c].handshaking() {
            self.conn_schedule().lives[c].handshaking = true;
            self.advance_handshake(c, now);
        } else {
            self.connected(c);
        }
    }

    /// Takes slot `c`'s TLS handshake as far as it goes without waiting;
    /// once done, the first call goes. A refused handshake is its own
    /// failure class, never a connection lost.
    fn advance_handshake(&mut self, c: usize, now: u64) {
        let step = self.io.conns[c].handshake(&mut self.io.scratch);
        let done = match step {
            Ok(done) => done,
            Err(_) => return self.fail_connecting(c, ConnError::TlsHandshake, now),
        };
        let mut interest = READABLE;
        if self.io.conns[c].has_output() {
            interest |= WRITABLE;
        }
        if self
            .io
            .transport
            .modify(&self.io.conns[c], c, interest)
            .is_err()
        {
            return self.fail_connecting(c, ConnError::Other, now);
        }
        self.io.conns[c].write_armed = interest & WRITABLE != 0;
        if done {
            let now = self.now();
            let life = &mut self.conn_schedule().lives[c];
            life.handshaking = false;
            // Read after the step: it may have taken the whole handshake
            // (the server's flight already in), long after `now`.
            let took = now.saturating_sub(life.connected_ns);
            self.recorder.conns.record_handshake(took);
            self.connected(c);
        }
    }

    /// Slot `c`'s connect failed or took longer than `--timeout`.
    pub(super) fn fail_connecting(&mut self, c: usize, class: ConnError, now: u64) {
        self.recorder.conns.error(class);
        self.retire(c, now);
    }

    /// When slot `c`'s connect started, if it is still connecting.
    pub(super) fn connect_started(&self, c: usize) -> Option<u64> {
        let s = self.schedule.churn()?;
        self.io.conns[c]
            .connecting
            .then(|| s.lives.get(c).map(|l| l.connect_start_ns))
            .flatten()
    }

    /// A connection is up (over TLS, its handshake done): its first call
    /// is intended when the connection was, so the wait for it counts as
    /// latency.
    fn connected(&mut self, c: usize) {
        self.conn_schedule().connecting -= 1;
        self.io.conns[c].connecting = false;
        let life = self.conn_schedule().lives[c];
        let (started, intended) = (life.connect_start_ns, life.intended_open_ns);
        // The client's own lateness is when it started the connect; the
        // connect itself is the server's (and the network's) time.
        self.send_calls(c, intended, started);
    }

    /// Sends slot `c`'s next call, and where calls follow one another and
    /// it went quiet without a fence of its own, the next ones at once, up
    /// to `QUIET_BATCH`: as twemperf's `-q` sends a call once the last is
    /// written. The turn's write fences the last (`Conn::fence_quiet`).
    fn send_calls(&mut self, c: usize, intended_ns: u64, reached_ns: u64) {
        self.send_call(c, intended_ns, reached_ns);
        if self.conn_schedule().call_gaps != Gaps::AfterPrevious {
            return;
        }
        for _ in 1..QUIET_BATCH {
            let quiet = self.io.conns[c]
                .in_flight
                .back()
                .is_some_and(|r| r.expect.unfenced);
            if !quiet || !self.io.conns[c].alive || self.conn_schedule().lives[c].calls_left == 0 {
                return;
            }
            // Sent in this same turn, at the time the first was.
            self.send_call(c, reached_ns, reached_ns);
        }
    }

    /// Sends the next call of slot `c`, intended at `intended_ns`, which
    /// the worker got to at `reached_ns` (the send lag); paced calls
    /// schedule the one after.
    fn send_call(&mut self, c: usize, intended_ns: u64, reached_ns: u64) {
        if !self.progress.sending {
            return;
        }
        let measured = intended_ns >= self.progress.record_from;
        if measured && self.shared.spec.has_schedule() {
            self.recorder
                .record_lag(reached_ns.saturating_sub(intended_ns));
        }
        self.issue(c, Due::new(None, intended_ns, measured));
        let gap = self.conn_schedule().call_gaps.next_ns(&mut self.rng);
        let s = self.conn_schedule();
        let life = &mut s.lives[c];
        life.calls_left -= 1;
        if let (Some(gap), true) = (gap, life.calls_left > 0) {
            s.paced.push(Reverse((
                intended_ns.saturating_add(gap),
                c,
                life.generation,
            )));
        }
    }

    /// Slot `c` got answers: one after another sends the next call; a
    /// connection with nothing left to send or await closes.
    pub(super) fn churn_refill(&mut self, c: usize, now: u64) {
        if !self.io.conns[c].alive || !self.io.conns[c].in_flight.is_empty() {
            return;
        }
        let life = self.conn_schedule().lives[c];
        if life.calls_left == 0 || !self.progress.sending {
            self.retire(c, now);
        } else if self.conn_schedule().call_gaps == Gaps::AfterPrevious {
            self.send_calls(c, now, now);
        }
    }

    /// Closes slot `c`'s connection and frees the slot. Requests still in
    /// flight are the caller's to count; calls not yet sent are counted as
    /// finding no connection.
    fn end_connection(&mut self, c: usize, now: u64) {
        let server = self.io.conns[c].server;
        if self.io.conns[c].alive {
            let connected = !self.io.conns[c].connecting;
            self.close_socket(c);
            let s = self.schedule.churn_mut();
            if !connected {
                s.connecting -= 1;
            }
            let life = s.lives[c];
            s.live -= 1;
            s.free.push(c);
            if connected {
                self.recorder
                    .conns
                    .record_close(now.saturating_sub(life.connected_ns));
            }
            if self.progress.sending && now >= self.progress.record_from {
                self.recorder
                    .server_error(server, ErrorClass::NoConnection, life.calls_left);
            }
            self.conn_schedule().lives[c].calls_left = 0;
        }
    }

    /// Slot `c`'s connection failed (reset, closed by the server, or a
    /// broken stream): its requests are lost, and the schedule goes on.
    pub(super) fn lose_churned(&mut self, c: usize, now: u64) {
        let lost = self.measured_in_flight(c);
        let server = self.io.conns[c].server;
        self.recorder
            .server_error(server, ErrorClass::ConnectionLost, lost);
        self.recorder.conns.error(ConnError::ConnReset);
        self.retire(c, now);
    }
}
