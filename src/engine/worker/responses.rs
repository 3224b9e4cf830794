//! The reading half of a worker: responses parsed, matched to their
//! requests, recorded; connections that fail are dropped.

use super::sampler::Sampler;
use super::{Due, Source, Worker};
use crate::engine::conn::{InFlight, ReadOutcome, UdpState, UDP_TIMEOUT_NS};
use crate::net::clock_ns;
use crate::stats::{ErrorClass, Recorder, Sample};
use crate::workload::{Check, OpKind, Request, Workload};
use mcbench_proto::{Protocol, Response, ResponseClass};

/// How often UDP requests are checked for expiry, ns: 1 % of the timeout.
const UDP_CHECK_NS: u64 = UDP_TIMEOUT_NS / 100;

impl Worker {
    pub(super) fn on_readable(&mut self, c: usize) {
        if !self.conns[c].alive {
            return;
        }
        // A group draws (and so remembers) with its lead's cursor.
        let ci = self.cursor_index(c);
        let rec = &mut *self.recorder;
        let sampler = &mut self.sampler;
        let getset = self.shared.workload.getset && self.sending;
        // A replay's keys are its own: every miss of one is filled.
        let replaying = self.replay.is_some();
        let workload = &self.shared.workload;
        let keys = &workload.keys;
        let protocol = self.shared.spec.protocol;
        let successful = self.shared.spec.successful;
        let fills = &mut self.fills;
        let cursor = &mut self.cursors[ci];
        let mut last_now = 0;
        let window = &mut self.miss_window;
        let from = self.record_from;
        let conn = &mut self.conns[c];
        let server = conn.server;
        let before = conn.in_flight.len();
        let mut bytes_rx = 0;
        let outcome = conn.receive(
            &mut self.scratch,
            clock_ns,
            &mut bytes_rx,
            |req, resp, reply, now| {
                last_now = now;
                rec.conns.response_size.record(reply.len() as u64);
                if req.measured {
                    record_response(rec, sampler, server, req, resp, now, successful);
                    if let Some(w) = window.as_mut() {
                        w.count(rec, &req, resp, now.saturating_sub(from));
                    }
                    if keys.replicas().is_some() {
                        count_replica_read(rec, keys, server, &req, resp);
                    }
                }
                match req.check {
                    Check::Nothing => {}
                    Check::ExpiringSet { kept: Some(slot) }
                        if resp.class == ResponseClass::Stored =>
                    {
                        cursor
                            .expiring
                            .stored(slot.into(), req.key, req.sent_ns, now);
                    }
                    Check::ExpiringSet { .. } => {}
                    _ if req.measured => {
                        check_answer(rec, workload, protocol, &req, resp, reply, now)
                    }
                    _ => {}
                }
                workload.written(cursor, req.op, req.key, resp.class);
                // The unique a later cas on this connection will send.
                if req.op.cmd().wants_cas() && resp.values > 0 {
                    cursor.cas = Some((req.key, resp.cas));
                }
                // A planned miss stays a miss: only the key space is filled.
                if getset
                    && req.op == OpKind::Get
                    && resp.class == ResponseClass::End
                    && (replaying || keys.contains(req.key))
                {
                    fills.push(req.key);
                }
            },
        );
        rec.bytes_rx += bytes_rx;
        if let Some(udp) = conn.udp.as_deref_mut() {
            drain_udp(rec, server, udp);
        }
        let answered = before - conn.in_flight.len();
        self.in_flight -= answered;
        if answered > 0 {
            self.reopening.works(c);
            // A UDP reply that did not parse leaves the flight unanswered
            // (`last_now` unset): still a sign of life from the server.
            self.last_progress_ns = if last_now > 0 {
                self.last_answer_ns = last_now;
                if self.shared.spec.moderate {
                    self.conns[c].quiet_until = last_now + super::open_loop::MODERATE_NS;
                }
                last_now
            } else {
                clock_ns()
            };
        }
        // The codec refuses a reply that cannot answer its request
        // (`Broken`); over UDP that is counted where the datagram is read.
        match outcome {
            ReadOutcome::Open => {}
            ReadOutcome::Broken => {
                rec.server_error(server, ErrorClass::Protocol, 1);
                self.lose(c);
            }
            ReadOutcome::Closed => self.lose(c),
        }
        let mut fills = std::mem::take(&mut self.fills);
        if self.conns[c].alive && !fills.is_empty() {
            // Due when the miss is seen, not when (stamped) it came.
            let seen = self.conns[c].read_at;
            for &key in &fills {
                let req = Request::new(OpKind::Fill, key);
                self.issue(
                    c,
                    Due {
                        req: Some(req),
                        intended_ns: seen,
                        measured: seen >= self.record_from,
                    },
                );
            }
        }
        fills.clear();
        self.fills = fills;
        if answered > 0 && self.conns[c].alive {
            // A closed loop's freed slot is taken, and its request
            // intended, when the answer is seen: a stamped one came earlier.
            self.refill(c, self.conns[c].read_at);
        }
    }

    /// UDP: gives up on requests whose reply is overdue, and refills.
    /// Every `UDP_CHECK_NS` at most: the scan covers every connection, and
    /// a 1 s timeout need not be exact to the microsecond.
    pub(super) fn expire_datagrams(&mut self, now: u64) {
        if now < self.next_udp_check {
            return;
        }
        self.next_udp_check = now + UDP_CHECK_NS;
        for c in 0..self.conns.len() {
            let conn = &mut self.conns[c];
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
            self.in_flight -= expired;
            let server = conn.server;
            if let Some(udp) = conn.udp.as_deref_mut() {
                drain_udp(&mut self.recorder, server, udp);
            }
            if expired > 0 {
                self.refill(c, now);
            }
        }
    }

    /// Drops a connection that failed; its requests are lost.
    pub(super) fn lose(&mut self, c: usize) {
        if !self.conns[c].alive {
            return;
        }
        if self.churning() {
            return self.lose_churned(c, clock_ns());
        }
        self.drop_conn(c);
        self.lose_group(c);
        // A group that goes on without the socket may have had every
        // request on it: no answer would come to refill it.
        if self.can_send(c) {
            self.refill(c, clock_ns());
        }
    }

    /// `lose` for one socket, its group left alone.
    pub(super) fn drop_conn(&mut self, c: usize) {
        if !self.conns[c].alive {
            return;
        }
        let lost = self.close_socket(c);
        self.recorder.connections_lost += 1;
        let server = self.conns[c].server;
        self.recorder
            .server_error(server, ErrorClass::ConnectionLost, lost);
        if self.shared.spec.reconnect {
            self.reopening.schedule(c, clock_ns());
        }
        if self.alive_on[server] == 0 {
            self.strand(server, ErrorClass::NoConnection);
        }
    }

    /// Closes live connection `c` and takes it off the books (in flight,
    /// alive, per server, the run's open count); returns how many of its
    /// requests were measured, for the caller to count as it must.
    pub(super) fn close_socket(&mut self, c: usize) -> u64 {
        let lost = self.measured_in_flight(c);
        let conn = &mut self.conns[c];
        self.in_flight -= conn.close();
        self.alive -= 1;
        self.alive_on[conn.server] -= 1;
        self.shared.conn_closed();
        lost
    }

    /// Measured requests in flight on connection `c`.
    pub(super) fn measured_in_flight(&self, c: usize) -> u64 {
        self.conns[c]
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
        let stranded = self.backlog[server]
            .drain(..)
            .filter(|d| d.measured)
            .count() as u64;
        self.recorder.server_error(server, class, stranded);
        if let Source::Load(ranges) = &mut self.source {
            for (_, range) in ranges.iter_mut().filter(|(s, _)| *s == Some(server)) {
                self.recorder.server_error(
                    server,
                    ErrorClass::NoConnection,
                    range.end - range.start,
                );
                *range = range.end..range.end;
            }
        }
    }
}

/// `--verify` and `--exp-verify`: is the answer what this run stored, and
/// does a key with a short expiry hit and miss when it must?
fn check_answer(
    rec: &mut Recorder,
    workload: &Workload,
    protocol: Protocol,
    req: &InFlight,
    resp: Response,
    reply: &[u8],
    now: u64,
) {
    let hit = resp.values > 0;
    let counts = &mut rec.checks;
    if let Some(must_hit) = workload.checks.expected_hit(req.check, req.sent_ns, now) {
        counts.exp_checked += 1;
        if must_hit && !hit {
            counts.unexpired_unget += 1;
            counts.example(|| {
                format!(
                    "unexpired_unget: {} missed before its expiry",
                    key_text(workload, req.key)
                )
            });
        } else if !must_hit && hit {
            counts.expired_get += 1;
            counts.example(|| {
                format!(
                    "expired_get: {} found after its expiry",
                    key_text(workload, req.key)
                )
            });
        }
    }
    if !hit {
        if req.check == (Check::Value { must_hit: true }) {
            counts.verify_misses += 1;
            counts.example(|| format!("verify_misses: {} not found", key_text(workload, req.key)));
        }
        return;
    }
    counts.verified += 1;
    let got = protocol.first_value(reply).unwrap_or_default();
    // A value longer than any this run stores has no expected bytes.
    let expected = workload.values.value_for(req.key, got.len());
    if expected != Some(got) {
        counts.verify_failed += 1;
        let expected = expected.unwrap_or_default();
        counts.example(|| {
            format!(
                "verify_failed: {}: expected {} B {}, got {} B {}",
                key_text(workload, req.key),
                expected.len(),
                preview(expected),
                got.len(),
                preview(got)
            )
        });
    }
}

fn key_text(workload: &Workload, key: u64) -> String {
    let mut buf = [0u8; crate::workload::MAX_KEY_LEN];
    String::from_utf8_lossy(workload.keys.key(key, &mut buf)).into_owned()
}

/// The first bytes of a value, quoted, for a failure message.
fn preview(bytes: &[u8]) -> String {
    const SHOWN: usize = 24;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)]);
    let more = if bytes.len() > SHOWN { "…" } else { "" };
    format!("{text:?}{more}")
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

/// A replication run: a read of a loaded key that `server` answered
/// though the key was written to another (its home) is a replica read,
/// and its miss a replication miss.
fn count_replica_read(
    rec: &mut Recorder,
    keys: &crate::workload::KeySpace,
    server: usize,
    req: &InFlight,
    resp: Response,
) {
    let answered = matches!(resp.class, ResponseClass::Value | ResponseClass::End);
    if !req.op.is_retrieval() || !answered || !keys.contains(req.key) {
        return;
    }
    if keys.server_of(req.key) == server {
        return;
    }
    rec.replica.reads += 1;
    rec.replica.misses += u64::from(resp.values == 0);
}

fn record_response(
    rec: &mut Recorder,
    sampler: &mut Sampler,
    server: usize,
    req: InFlight,
    resp: mcbench_proto::Response,
    now: u64,
    successful: bool,
) {
    let latency_ns = now.saturating_sub(req.intended_ns);
    let service_ns = now.saturating_sub(req.sent_ns);
    let err = ErrorClass::of_reply(resp.class);
    // `--successful` (the mutilate fork's): an error reply is counted as
    // an error only, outside every latency and every throughput.
    if let (true, Some(err)) = (successful, err) {
        rec.responses[resp.class.index()] += 1;
        rec.server_error(server, err, 1);
        rec.leave_out(req.op);
        return;
    }
    let op = rec.record_op(req.op, latency_ns, service_ns);
    let (hits, misses) = lookups(&req, resp);
    op.hits += hits;
    op.misses += misses;
    op.errors += u64::from(err.is_some());
    rec.hits += hits;
    rec.misses += misses;
    rec.responses[resp.class.index()] += 1;
    rec.server_answer(server, latency_ns, (hits, misses), err.is_some());
    if let Some(err) = err {
        rec.server_error(server, err, 1);
    }
    if sampler.keep() {
        rec.samples.push(Sample {
            intended_ns: req.intended_ns,
            op: req.op,
            latency_ns,
            service_ns,
            reply: resp.class,
        });
    }
}

/// A retrieval's keys found and not found (0, 0 for anything else).
fn lookups(req: &InFlight, resp: mcbench_proto::Response) -> (u64, u64) {
    if !(req.op.is_retrieval() && matches!(resp.class, ResponseClass::Value | ResponseClass::End)) {
        return (0, 0);
    }
    let keys = req.expect.keys;
    let hits = u64::from(resp.values.min(keys));
    (hits, u64::from(keys) - hits)
}

/// `--miss-window`: a worker's current window of measured answers.
#[derive(Debug, Clone)]
pub(super) struct MissCount {
    pub(super) size: u64,
    pub(super) open: crate::stats::MissWindow,
}

impl MissCount {
    pub(super) fn new(size: u64, worker: usize) -> Self {
        MissCount {
            size,
            open: crate::stats::MissWindow {
                worker,
                ..Default::default()
            },
        }
    }

    /// Counts one answer; a full window goes to the interval's recorder.
    fn count(
        &mut self,
        rec: &mut Recorder,
        req: &InFlight,
        resp: mcbench_proto::Response,
        since_start_ns: u64,
    ) {
        let w = &mut self.open;
        w.requests += 1;
        let (hits, misses) = lookups(req, resp);
        w.hits += hits;
        w.misses += misses;
        if w.requests == self.size {
            self.close(rec, since_start_ns);
        }
    }

    /// Closes the open window (the last one of a run may be short).
    pub(super) fn close(&mut self, rec: &mut Recorder, since_start_ns: u64) {
        let w = &mut self.open;
        if w.requests == 0 {
            return;
        }
        w.time_s = since_start_ns as f64 / 1e9;
        rec.miss_windows.push(*w);
        *w = crate::stats::MissWindow {
            worker: w.worker,
            index: w.index + 1,
            ..Default::default()
        };
    }
}
