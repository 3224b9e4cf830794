//! The reading half of a worker: responses parsed, matched to their
//! requests, recorded; connections that fail are dropped.

use super::answers::Answers;
use super::{Due, Worker};
use crate::engine::conn::{ReadOutcome, UdpState, UDP_TIMEOUT_NS};
use crate::stats::{ErrorClass, Recorder};
use crate::workload::{OpKind, Request};

/// How often UDP requests are checked for expiry, ns: 1 % of the timeout.
const UDP_CHECK_NS: u64 = UDP_TIMEOUT_NS / 100;

impl Worker {
    /// Reads what connection `c` holds: each answer matched to its
    /// request and recorded; then its freed slots refilled and its misses
    /// filled (`--getset`), or the connection lost.
    pub(super) fn on_readable(&mut self, c: usize) {
        if !self.io.conns[c].alive {
            return;
        }
        let (answered, last_now, outcome) = self.read_answers(c);
        self.note_stamped_sends(c);
        self.io.in_flight -= answered;
        if answered > 0 {
            self.answered_on(c, last_now);
        }
        // The codec refuses a reply that cannot answer its request
        // (`Broken`); over UDP that is counted where the datagram is read.
        match outcome {
            ReadOutcome::Open => {}
            ReadOutcome::Broken => {
                let server = self.io.conns[c].server;
                self.recorder.server_error(server, ErrorClass::Protocol, 1);
                self.lose(c);
            }
            ReadOutcome::Closed => self.lose(c),
        }
        self.send_fills(c);
        if answered > 0 && self.io.conns[c].alive {
            // A closed loop's freed slot is taken, and its request
            // intended, when the answer is seen: a stamped one came earlier.
            self.refill(c, self.io.conns[c].read_at);
        }
    }

    /// Reads connection `c`'s answers into the recorder: how many were
    /// answered, when the last came (0: none parsed), and the socket's
    /// state.
    fn read_answers(&mut self, c: usize) -> (usize, u64, ReadOutcome) {
        // A group draws (and so remembers) with its lead's cursor.
        let ci = self.cursor_index(c);
        let lag_unstamped = self.lag_at_answer();
        let spec = &self.shared.spec;
        let clock = &self.shared.clock;
        let conn = &mut self.io.conns[c];
        let mut answers = Answers {
            rec: &mut self.recorder,
            sampler: &mut self.sampler,
            window: &mut self.miss_window,
            cursor: &mut self.keys.cursors[ci],
            fills: &mut self.keys.fills,
            workload: &self.shared.workload,
            server: conn.server,
            record_from: self.progress.record_from,
            protocol: spec.target.protocol,
            successful: spec.workload.successful,
            getset: self.shared.workload.getset && self.progress.sending,
            // A replay's keys are its own: every miss of one is filled.
            lag_unstamped,
            last_now: 0,
        };
        let before = conn.in_flight.len();
        let mut bytes_rx = 0;
        let outcome = conn.receive(
            &mut self.io.scratch,
            || clock.now(),
            &mut bytes_rx,
            |req, resp, reply, now| answers.take(req, resp, reply, now),
        );
        let last_now = answers.last_now;
        self.recorder.bytes_rx += bytes_rx;
        if let Some(udp) = conn.udp.as_deref_mut() {
            drain_udp(&mut self.recorder, conn.server, udp);
        }
        (before - conn.in_flight.len(), last_now, outcome)
    }

    /// Connection `c` answered, the last answer at `last_now` (0: a UDP
    /// reply that did not parse, still a sign of life from the server).
    fn answered_on(&mut self, c: usize, last_now: u64) {
        self.reopening.works(c);
        self.progress.last_progress_ns = if last_now > 0 {
            self.progress.last_answer_ns = last_now;
            self.moderate_after_answer(c, last_now);
            last_now
        } else {
            self.now()
        };
    }

    /// `--getset`: the keys whose gets missed are set on connection `c`,
    /// due when the miss was seen, not when (stamped) it came.
    fn send_fills(&mut self, c: usize) {
        let mut fills = std::mem::take(&mut self.keys.fills);
        if self.io.conns[c].alive {
            let seen = self.io.conns[c].read_at;
            for &named in &fills {
                let fill = Some(Request::naming(OpKind::Fill, named));
                let due = Due::new(fill, seen, seen >= self.progress.record_from);
                self.issue(c, due);
            }
        }
        fills.clear();
        self.keys.fills = fills;
    }

    /// UDP: gives up on requests whose reply is overdue, and refills.
    /// Every `UDP_CHECK_NS` at most: the scan covers every connection, and
    /// a 1 s timeout need not be exact to the microsecond.
    pub(super) fn expire_datagrams(&mut self, now: u64) {
        if now < self.checks.udp_at {
            return;
        }
        self.checks.udp_at = now + UDP_CHECK_NS;
        for c in 0..self.io.conns.len() {
            let conn = &mut self.io.conns[c];
            if !conn.alive {
                continue;
            }
            let Some(front) = conn.in_flight.front() else {
                continue;
            };
            if now.saturating_sub(front.sent_ns) < UDP_TIMEOUT_NS {
                continue;
            }
            let expired = conn.expire_datagrams(now);
            self.io.in_flight -= expired;
            let server = conn.server;
            if let Some(udp) = conn.udp.as_deref_mut() {
                drain_udp(&mut self.recorder, server, udp);
            }
            if expired > 0 {
                self.refill(c, now);
            }
        }
    }

    /// Drops held connection `c`, which failed (`lose`); its requests are
    /// lost, and its group goes on without it.
    pub(super) fn lose_held(&mut self, c: usize) {
        self.drop_conn(c);
        self.lose_group(c);
        // A group that goes on without the socket may have had every
        // request on it: no answer would come to refill it.
        if self.can_send(c) {
            self.refill(c, self.now());
        }
    }

    /// `lose` for one socket, its group left alone.
    pub(super) fn drop_conn(&mut self, c: usize) {
        if !self.io.conns[c].alive {
            return;
        }
        let lost = self.close_socket(c);
        self.recorder.connections_lost += 1;
        let server = self.io.conns[c].server;
        self.recorder
            .server_error(server, ErrorClass::ConnectionLost, lost);
        if self.shared.spec.conns.reconnect {
            self.reopening.schedule(c, self.now());
        }
        if self.io.alive_on[server] == 0 {
            self.strand(server, ErrorClass::NoConnection);
        }
    }

    /// Closes live connection `c` and takes it off the books (in flight,
    /// alive, per server, the run's open count); returns how many of its
    /// requests were measured, for the caller to count as it must.
    pub(super) fn close_socket(&mut self, c: usize) -> u64 {
        let lost = self.measured_in_flight(c);
        let conn = &mut self.io.conns[c];
        self.io.in_flight -= conn.close();
        self.io.alive -= 1;
        self.io.alive_on[conn.server] -= 1;
        self.shared.conn_closed();
        lost
    }

    /// Measured requests in flight on connection `c`.
    pub(super) fn measured_in_flight(&self, c: usize) -> u64 {
        self.io.conns[c]
            .in_flight
            .iter()
            .filter(|r| r.measured)
            .count() as u64
    }

    /// `server` has no connection up: requests waiting for one, and keys
    /// left to preload on it, cannot be sent now. The waiting ones are
    /// counted as `class`: `no_connection`, or `timeout` when the run has
    /// stopped sending and was only waiting for answers.
    pub(super) fn strand(&mut self, server: usize, class: ErrorClass) {
        let stranded = self.schedule.backlog_mut().map_or(0, |b| b.take(server));
        self.recorder.server_error(server, class, stranded);
        let unloaded = self.requests.strand_preload(server);
        if unloaded > 0 {
            self.recorder
                .server_error(server, ErrorClass::NoConnection, unloaded);
        }
    }
}

/// Moves a UDP connection's loss counts into the recorder.
fn drain_udp(rec: &mut Recorder, server: usize, udp: &mut UdpState) {
    rec.error(ErrorClass::PacketDrop, std::mem::take(&mut udp.packet_drop));
    rec.error(
        ErrorClass::PacketDisorder,
        std::mem::take(&mut udp.packet_disorder),
    );
    let timed_out = std::mem::take(&mut udp.udp_timeout);
    rec.server_error(server, ErrorClass::UdpTimeout, timed_out);
    let garbled = std::mem::take(&mut udp.garbled);
    rec.server_error(server, ErrorClass::Protocol, garbled);
}
