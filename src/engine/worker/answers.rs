//! What each answer read updates, apart from the socket it came on: its
//! latency and lookups recorded, `--verify`'s checks, `--miss-window`,
//! replica reads, the key cursor's memory, and `--getset`'s fills.
//!
//! Pure: an answer is its request, its parsed response and when it came,
//! so the rules are tested below without a clock or a socket.

use super::sampler::Sampler;
use crate::engine::conn::InFlight;
use crate::stats::parts::{split, Moments};
use crate::stats::{ErrorClass, Recorder, Sample};
use crate::workload::{Check, Cursor, Named, OpKind, Workload};
use mcbench_proto::{Protocol, Response, ResponseClass};

/// The parts of a worker one connection's answers update, borrowed for
/// one read.
pub(super) struct Answers<'a> {
    pub(super) rec: &'a mut Recorder,
    pub(super) sampler: &'a mut Sampler,
    pub(super) window: &'a mut Option<MissCount>,
    /// The cursor the connection draws with (its group lead's).
    pub(super) cursor: &'a mut Cursor,
    /// Keys whose gets missed, to set now (`--getset`).
    pub(super) fills: &'a mut Vec<Named>,
    pub(super) workload: &'a Workload,
    pub(super) server: usize,
    /// When measuring began, ns: a window's time is counted from it.
    pub(super) record_from: u64,
    pub(super) protocol: Protocol,
    /// `--successful`: error replies are errors only.
    pub(super) successful: bool,
    /// `--getset`, while sending.
    pub(super) getset: bool,
    /// An open loop's send lag comes from transmit stamps: a request of a
    /// stamped write answered without one takes its lag from its send call.
    pub(super) lag_unstamped: bool,
    /// When the last answer came, ns (0: none yet).
    pub(super) last_now: u64,
}

impl Answers<'_> {
    /// `req` was answered with `resp` (the bytes `reply`) at `now`.
    pub(super) fn take(&mut self, req: InFlight, resp: Response, reply: &[u8], now: u64) {
        self.last_now = now;
        let rec = &mut *self.rec;
        let keys = &self.workload.keys;
        rec.conns.response_size.record(reply.len() as u64);
        // A stamped write whose stamp never came: its lag from the send
        // call. A request of an unstamped write is outside the sample.
        if req.measured && self.lag_unstamped && req.tx_wanted && req.tx_ns == 0 {
            rec.record_lag(req.send_lag(req.sent_ns));
        }
        if req.measured {
            record_response(
                rec,
                self.sampler,
                self.server,
                req,
                resp,
                now,
                self.successful,
            );
            if let Some(w) = self.window.as_mut() {
                w.count(rec, &req, resp, now.saturating_sub(self.record_from));
            }
            if let (Some(key), Some(_)) = (req.named.key_id(), keys.replicas()) {
                count_replica_read(rec, keys, self.server, (&req, key), resp);
            }
        }
        // Only the generated workload checks answers (a trace's are not
        // this run's values) and follows what it wrote.
        let Some(key) = req.named.key_id() else {
            self.fill_miss(&req, resp, keys);
            return;
        };
        match req.check {
            Check::Nothing => {}
            Check::ExpiringSet { kept: Some(slot) } if resp.class == ResponseClass::Stored => {
                self.cursor
                    .expiring
                    .stored(slot.into(), key, req.sent_ns, now);
            }
            Check::ExpiringSet { .. } => {}
            _ if req.measured => {
                let answer = Answer {
                    req: &req,
                    key,
                    resp,
                    reply,
                };
                check_answer(rec, self.workload, self.protocol, answer, now)
            }
            _ => {}
        }
        self.workload.written(self.cursor, req.op, key, resp.class);
        // The unique a later cas on this connection will send.
        if req.op.cmd().wants_cas() && resp.values > 0 {
            self.cursor.cas = Some((key, resp.cas));
        }
        self.fill_miss(&req, resp, keys);
    }

    /// `--getset`: a get's miss is set. A planned miss stays a miss: of
    /// the keys asked, only the key space's are filled (a trace's records
    /// all are).
    fn fill_miss(&mut self, req: &InFlight, resp: Response, keys: &crate::workload::KeySpace) {
        let ours = req.named.key_id().is_none_or(|k| keys.contains(k));
        if self.getset && req.op == OpKind::Get && resp.class == ResponseClass::End && ours {
            self.fills.push(req.named);
        }
    }
}

/// `--verify` and `--exp-verify`: is the answer what this run stored, and
/// does a key with a short expiry hit and miss when it must?
fn check_answer(
    rec: &mut Recorder,
    workload: &Workload,
    protocol: Protocol,
    answer: Answer,
    now: u64,
) {
    let Answer {
        req,
        key,
        resp,
        reply,
    } = answer;
    let hit = resp.values > 0;
    let counts = &mut rec.checks;
    if let Some(must_hit) = workload.checks.expected_hit(req.check, req.sent_ns, now) {
        counts.exp_checked += 1;
        if must_hit && !hit {
            counts.unexpired_unget += 1;
            counts.example(|| {
                format!(
                    "unexpired_unget: {} missed before its expiry",
                    key_text(workload, key)
                )
            });
        } else if !must_hit && hit {
            counts.expired_get += 1;
            counts.example(|| {
                format!(
                    "expired_get: {} found after its expiry",
                    key_text(workload, key)
                )
            });
        }
    }
    if !hit {
        if req.check == (Check::Value { must_hit: true }) {
            counts.verify_misses += 1;
            counts.example(|| format!("verify_misses: {} not found", key_text(workload, key)));
        }
        return;
    }
    counts.verified += 1;
    let got = protocol.first_value(reply).unwrap_or_default();
    // A value longer than any this run stores has no expected bytes.
    let expected = workload.values.value_for(key, got.len());
    if expected != Some(got) {
        counts.verify_failed += 1;
        let expected = expected.unwrap_or_default();
        counts.example(|| {
            format!(
                "verify_failed: {}: expected {} B {}, got {} B {}",
                key_text(workload, key),
                expected.len(),
                preview(expected),
                got.len(),
                preview(got)
            )
        });
    }
}

/// An answer to a request for a key of the key space, as its checks read
/// it: the request, its key's id, and the reply.
struct Answer<'a> {
    req: &'a InFlight,
    key: u64,
    resp: Response,
    reply: &'a [u8],
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

/// A replication run: a read of a loaded key that `server` answered
/// though the key was written to another (its home) is a replica read,
/// and its miss a replication miss.
fn count_replica_read(
    rec: &mut Recorder,
    keys: &crate::workload::KeySpace,
    server: usize,
    (req, key): (&InFlight, u64),
    resp: Response,
) {
    let answered = matches!(resp.class, ResponseClass::Value | ResponseClass::End);
    if !req.op.is_retrieval() || !answered || !keys.contains(key) {
        return;
    }
    if keys.server_of(key) == server {
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
    rec.answered_at(now);
    // `--successful` (the mutilate fork's): an error reply is counted as
    // an error only, outside every latency and every throughput.
    if let (true, Some(err)) = (successful, err) {
        rec.responses[resp.class.index()] += 1;
        rec.server_error(server, err, 1);
        rec.leave_out(req.op);
        return;
    }
    let op = rec.record_op(req.op, latency_ns, service_ns);
    // Taken apart where the kernel stamped both ends.
    let parts = (req.tx_ns != 0 && req.rx_ns != 0).then(|| {
        split(Moments {
            intended: req.intended_ns,
            send_call: req.sent_ns,
            tx: req.tx_ns,
            rx: req.rx_ns,
            answered: now,
        })
    });
    if let Some(p) = parts {
        op.record_parts(p, req.waited_ns);
    }
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
            parts,
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

#[cfg(test)]
mod tests {
    use super::*;
    use mcbench_proto::Expect;

    /// A workload of 100 keys on one server, made as a run makes it.
    fn workload(args: &[&str]) -> Workload {
        let mut argv = vec!["-s", "127.0.0.1:1", "-r", "100"];
        argv.extend(args);
        let spec = crate::cli::run_spec(&argv);
        let keys = spec.key_space(crate::placement::Router::Single).unwrap();
        spec.workload(keys)
    }

    fn asked(op: OpKind, key: u64, measured: bool) -> InFlight {
        InFlight {
            op,
            named: Named::key(key),
            expect: Expect {
                cmd: op.cmd(),
                keys: 1,
                noreply: false,
                unfenced: false,
                opaque: 0,
                max_value: u32::MAX,
                hash: false,
            },
            intended_ns: 1_000,
            waited_ns: 0,
            sent_ns: 3_000,
            tx_ns: 0,
            tx_wanted: false,
            rx_ns: 0,
            measured,
            check: Check::Nothing,
            end_byte: 0,
            asked: 0,
        }
    }

    fn hit() -> Response {
        Response {
            class: ResponseClass::Value,
            values: 1,
            cas: 0,
        }
    }

    /// Runs `answers` (request, response) through an `Answers` at 5 µs:
    /// the recorder and the fills they leave.
    fn take(
        w: &Workload,
        successful: bool,
        answers: &[(InFlight, Response)],
    ) -> (Recorder, Vec<Named>) {
        let mut rec = Recorder::default();
        let mut fills = Vec::new();
        let mut a = Answers {
            rec: &mut rec,
            sampler: &mut Sampler::new(None, 0),
            window: &mut None,
            cursor: &mut Cursor::new(0),
            fills: &mut fills,
            workload: w,
            server: 0,
            record_from: 0,
            protocol: Protocol::Ascii,
            successful,
            getset: w.getset,
            lag_unstamped: true,
            last_now: 0,
        };
        for &(req, resp) in answers {
            a.take(req, resp, b"", 5_000);
        }
        assert_eq!(a.last_now, 5_000);
        (rec, fills)
    }

    #[test]
    fn latency_runs_from_the_intended_send_and_service_time_from_the_send() {
        let w = workload(&[]);
        let (rec, _) = take(&w, false, &[(asked(OpKind::Get, 1, true), hit())]);
        let get = rec.op(OpKind::Get).unwrap();
        assert_eq!(get.latency.len(), 1);
        assert!(get.latency.equivalent(get.latency.max(), 4_000));
        assert!(get.service.equivalent(get.service.max(), 2_000));
        assert_eq!((get.hits, get.misses, rec.hits), (1, 0, 1));
    }

    /// Stamped at both ends, an answer's latency is taken apart (4 µs:
    /// 2 queued, 0.5 on the send path, 1 away, 0.5 received); of a stamped
    /// write whose stamp never came, it is not, and its send lag comes
    /// from its send call; of a write outside the sample, it has neither.
    #[test]
    fn stamped_answers_are_taken_apart_and_unstamped_ones_lag_from_the_send() {
        let w = workload(&[]);
        let stamped = InFlight {
            tx_ns: 3_500,
            tx_wanted: true,
            rx_ns: 4_500,
            ..asked(OpKind::Get, 1, true)
        };
        let (rec, _) = take(&w, false, &[(stamped, hit())]);
        let parts = rec.op(OpKind::Get).unwrap().stamped_parts().unwrap();
        // Each part within its histogram's 1 %.
        for (h, want) in parts.hists.iter().zip([2_000, 500, 1_000, 500]) {
            assert!(h.equivalent(h.max(), want), "{} for {want}", h.max());
        }
        assert_eq!(rec.send_lag.len(), 0);
        let lost = InFlight {
            tx_wanted: true,
            ..asked(OpKind::Get, 1, true)
        };
        let (rec, _) = take(&w, false, &[(lost, hit())]);
        assert!(rec.op(OpKind::Get).unwrap().stamped_parts().is_none());
        assert_eq!((rec.send_lag.len(), rec.send_lag.max()), (1, 2_000));
        let (rec, _) = take(&w, false, &[(asked(OpKind::Get, 1, true), hit())]);
        assert!(rec.op(OpKind::Get).unwrap().stamped_parts().is_none());
        assert_eq!(rec.send_lag.len(), 0);
    }

    #[test]
    fn an_unmeasured_answer_is_not_recorded() {
        let w = workload(&[]);
        let (rec, _) = take(&w, false, &[(asked(OpKind::Get, 1, false), hit())]);
        assert_eq!(rec.total_ops(), 0);
        assert_eq!(rec.hits, 0);
    }

    #[test]
    fn successful_keeps_error_replies_out_of_latency_and_throughput() {
        let w = workload(&[]);
        let error = Response::of(ResponseClass::ServerError);
        let answers = [(asked(OpKind::Set, 1, true), error)];
        let (rec, _) = take(&w, true, &answers);
        assert_eq!(rec.total_ops(), 0);
        assert_eq!(rec.error_count(ErrorClass::ServerError), 1);
        // Without it, the error reply is an answer, and an error too.
        let (rec, _) = take(&w, false, &answers);
        assert_eq!(rec.total_ops(), 1);
        assert_eq!(rec.op(OpKind::Set).unwrap().errors, 1);
    }

    #[test]
    fn getset_fills_the_misses_of_its_key_space_and_of_trace_records() {
        let w = workload(&["--getset"]);
        let miss = Response::of(ResponseClass::End);
        let record = InFlight {
            named: Named::record(7),
            ..asked(OpKind::Get, 0, true)
        };
        let (_, fills) = take(
            &w,
            false,
            &[
                (asked(OpKind::Get, 7, true), miss),
                (asked(OpKind::Get, 8, false), miss),
                (asked(OpKind::Get, 9, true), hit()),
                (asked(OpKind::Get, 1_000_000, true), miss),
                (record, miss),
            ],
        );
        assert_eq!(fills, [Named::key(7), Named::key(8), Named::record(7)]);
        let (_, fills) = take(
            &workload(&[]),
            false,
            &[(asked(OpKind::Get, 7, true), miss)],
        );
        assert!(fills.is_empty());
    }
}
