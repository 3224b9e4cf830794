//! Per-worker, per-interval recording: histograms and counters. Recording is
//! a few array increments; nothing allocates after construction.

use super::batches::{SlotClock, Slots};
use super::error_class::ErrorClass;
use super::parts::PartsRecorder;
use crate::workload::OpKind;
use hdrhistogram::Histogram;
use mcbench_proto::ResponseClass;
use serde::{Deserialize, Serialize};

/// Histogram range: 1 ns .. 1 hour, 3 significant digits. Larger values are
/// clamped to the top (a request that took over an hour is not a latency).
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGFIGS: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIGS).expect("static histogram bounds are valid")
}

/// A histogram of requests in flight on a connection: 1 to 2^20, exact
/// to 3 digits, a few KB where a latency histogram is ~270 KB.
pub fn new_depth_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 20, 3).expect("static histogram bounds are valid")
}

/// The value at quantile `q` of a histogram of ns, in µs; 0 when empty.
pub fn quantile_us(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1e3
    }
}

/// The largest value of a histogram of ns, in µs; 0 when empty.
pub fn max_us(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / 1e3
    }
}

/// Latency, service time and outcomes of one op type.
#[derive(Debug, Clone)]
pub struct OpRecorder {
    /// Intended send → response parsed, ns.
    pub latency: Histogram<u64>,
    /// Actual send → response parsed, ns.
    pub service: Histogram<u64>,
    /// Keys found / not found (retrievals).
    pub hits: u64,
    pub misses: u64,
    /// Error replies (`ERROR`, `CLIENT_ERROR`, ...) to this op.
    pub errors: u64,
    /// `--successful`: error replies to this op left out of its histograms
    /// (and so of its count and `errors`).
    pub left_out: u64,
    /// The latencies the kernel's stamps took apart (none: no stamps).
    pub parts: Option<Box<PartsRecorder>>,
    /// The interval's latencies and service times by slot (a worker's
    /// interval recorder; none in totals).
    pub slots: Option<Box<Slots>>,
}

impl Default for OpRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl OpRecorder {
    pub fn new() -> Self {
        OpRecorder {
            latency: new_histogram(),
            service: new_histogram(),
            hits: 0,
            misses: 0,
            errors: 0,
            left_out: 0,
            parts: None,
            slots: None,
        }
    }

    pub fn count(&self) -> u64 {
        self.latency.len()
    }

    pub fn reset(&mut self) {
        self.latency.reset();
        self.service.reset();
        self.hits = 0;
        self.misses = 0;
        self.errors = 0;
        self.left_out = 0;
        if let Some(p) = self.parts.as_deref_mut() {
            p.reset();
        }
        if let Some(s) = self.slots.as_deref_mut() {
            s.reset();
        }
    }

    /// Adds `other`; its slots too when `slots` (one interval's
    /// snapshots), not into a total.
    fn merge(&mut self, other: &OpRecorder, slots: bool) {
        self.latency.add(&other.latency).expect("same bounds");
        self.service.add(&other.service).expect("same bounds");
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
        self.left_out += other.left_out;
        if let Some(b) = other.parts.as_deref() {
            self.parts.get_or_insert_with(Box::default).merge(b);
        }
        if let (true, Some(b)) = (slots, other.slots.as_deref()) {
            self.slots.get_or_insert_with(Box::default).merge(b);
        }
    }

    /// Records one request's latency parts (`stats::parts::split`), of
    /// whose client queue it `waited` ns for a free connection.
    pub fn record_parts(&mut self, parts: [u64; 4], waited: u64) {
        self.parts
            .get_or_insert_with(Box::default)
            .record(parts, waited);
    }

    /// The parts recorded, if any request had them.
    pub fn stamped_parts(&self) -> Option<&PartsRecorder> {
        self.parts.as_deref().filter(|p| p.requests() > 0)
    }

    /// Error replies, whether or not their latency was kept.
    pub fn error_replies(&self) -> u64 {
        self.errors + self.left_out
    }
}

/// One measured request as `--save` writes it.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Intended send, ns on the worker clock (`net::clock_ns`).
    pub intended_ns: u64,
    pub op: OpKind,
    pub latency_ns: u64,
    pub service_ns: u64,
    pub reply: ResponseClass,
    /// The latency's four parts, where the kernel stamped the request.
    pub parts: Option<[u64; 4]>,
}

/// Everything one worker measured over one interval.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Per op type, created at its first request: a run uses a few of the
    /// sixteen op types, and each pair of histograms is ~0.5 MB (1.2 MB with
    /// an interval recorder's slots).
    ops: [Option<Box<OpRecorder>>; OpKind::COUNT],
    /// Open loop: intended send → the worker got to it, ns.
    pub send_lag: Histogram<u64>,
    /// Open loop: the gaps between measured sends as they went out.
    pub send_gaps: super::SendGaps,
    /// Requests in flight on a measured request's connection when it was
    /// sent, itself included (mutilate's `op_q`). A count, not ns.
    pub op_queue: Histogram<u64>,
    pub hits: u64,
    pub misses: u64,
    pub responses: [u64; ResponseClass::ALL.len()],
    pub errors: [u64; ErrorClass::ALL.len()],
    pub bytes_tx: u64,
    pub bytes_rx: u64,
    /// Requests that found every connection at its depth and waited.
    pub client_waits: u64,
    /// `--skip`: arrivals dropped unsent because the client was behind.
    pub skips: u64,
    pub connections_lost: u64,
    /// Lost connections opened again (`--reconnect`).
    pub connections_reopened: u64,
    /// Attempts to reopen a lost connection that failed (its server still
    /// down, or refusing).
    pub reopen_failures: u64,
    /// Connects, lifetimes, connection failures, request sizes.
    pub conns: super::ConnStats,
    /// `--verify`, `--exp-verify`.
    pub checks: super::CheckCounts,
    /// Per server, with several servers (empty with one).
    pub servers: Vec<super::ServerRecorder>,
    /// `--rep-write`: reads answered by a server the key was not written to.
    pub replica: super::ReplicaReads,
    /// `--save`: the requests of this interval chosen to be written.
    pub samples: Vec<Sample>,
    /// `--miss-window`: the windows this interval closed.
    pub miss_windows: Vec<MissWindow>,
    /// Which slot of the interval an answer recorded now falls in.
    pub slot_clock: SlotClock,
}

/// `--miss-window`: one window of a worker's measured answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MissWindow {
    pub worker: usize,
    /// The window's number in its worker, from 0.
    pub index: u64,
    /// When its last answer came, s since the start of measurement.
    pub time_s: f64,
    /// Answers in the window (`--miss-window`, but the last may be short).
    pub requests: u64,
    /// Retrieval keys found and not found.
    pub hits: u64,
    pub misses: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            ops: std::array::from_fn(|_| None),
            send_lag: new_histogram(),
            send_gaps: super::SendGaps::default(),
            op_queue: new_depth_histogram(),
            hits: 0,
            misses: 0,
            responses: [0; ResponseClass::ALL.len()],
            errors: [0; ErrorClass::ALL.len()],
            bytes_tx: 0,
            bytes_rx: 0,
            client_waits: 0,
            skips: 0,
            connections_lost: 0,
            connections_reopened: 0,
            reopen_failures: 0,
            conns: super::ConnStats::default(),
            checks: super::CheckCounts::default(),
            servers: Vec::new(),
            replica: super::ReplicaReads::default(),
            samples: Vec::new(),
            miss_windows: Vec::new(),
            slot_clock: SlotClock::default(),
        }
    }
}

impl Recorder {
    /// Records one completed request, in the slot of the last
    /// `answered_at`. Times in ns.
    #[inline]
    pub fn record_op(&mut self, op: OpKind, latency_ns: u64, service_ns: u64) -> &mut OpRecorder {
        let slot = self.slot_clock.slot();
        let r = self.ops[op.index()].get_or_insert_with(|| Box::new(OpRecorder::new()));
        r.latency.saturating_record(latency_ns.max(1));
        r.service.saturating_record(service_ns.max(1));
        if let Some(s) = r.slots.as_deref_mut() {
            s.record(slot, latency_ns, service_ns);
        }
        r
    }

    /// An answer came at `now` (worker clock, ns): the slot what is
    /// recorded next falls in.
    #[inline]
    pub fn answered_at(&mut self, now: u64) {
        self.slot_clock.at(now);
    }

    /// `--successful`: an error reply to `op`, kept out of its histograms.
    pub fn leave_out(&mut self, op: OpKind) {
        let r = self.ops[op.index()].get_or_insert_with(|| Box::new(OpRecorder::new()));
        r.left_out += 1;
    }

    /// A measured request was sent with `depth` requests in flight on its
    /// connection, itself included.
    #[inline]
    pub fn record_op_queue(&mut self, depth: usize) {
        self.op_queue.saturating_record(depth.max(1) as u64);
    }

    #[inline]
    pub fn record_lag(&mut self, lag_ns: u64) {
        self.send_lag.saturating_record(lag_ns.max(1));
    }

    /// Counts `n` of `class` in the run's totals only: for what belongs
    /// to no server (`cut_off`, `client_overload`, UDP datagram counts).
    /// A failed request of a known server goes through `server_error`.
    #[inline]
    pub fn error(&mut self, class: ErrorClass, n: u64) {
        self.errors[class as usize] += n;
    }

    /// `error`, counted against `server` too (when failed requests).
    #[inline]
    pub fn server_error(&mut self, server: usize, class: ErrorClass, n: u64) {
        self.error(class, n);
        if let (Some(s), true) = (self.servers.get_mut(server), class.is_failure()) {
            s.failures += n;
        }
    }

    /// An answered request of `server`: its latency, lookups, and whether
    /// the answer was an error reply.
    #[inline]
    pub fn server_answer(
        &mut self,
        server: usize,
        latency_ns: u64,
        lookups: (u64, u64),
        error: bool,
    ) {
        if let Some(s) = self.servers.get_mut(server) {
            s.latency.saturating_record(latency_ns.max(1));
            s.hits += lookups.0;
            s.misses += lookups.1;
            s.error_replies += u64::from(error);
        }
    }

    pub fn error_count(&self, class: ErrorClass) -> u64 {
        self.errors[class as usize]
    }

    /// Requests that failed, of every class but `packet_disorder` and
    /// `packet_drop` (datagram counts) and `cut_off` (stopped by a signal,
    /// not failed).
    pub fn failures(&self) -> u64 {
        ErrorClass::ALL
            .iter()
            .filter(|c| c.is_failure())
            .map(|c| self.error_count(*c))
            .sum()
    }

    /// Requests answered with an error reply.
    pub fn reply_errors(&self) -> u64 {
        ErrorClass::ALL
            .iter()
            .filter(|c| c.is_reply())
            .map(|c| self.error_count(*c))
            .sum()
    }

    /// Failed requests that got no reply at all (lost, timed out, ...).
    pub fn failures_without_reply(&self) -> u64 {
        self.failures() - self.reply_errors()
    }

    /// Requests that failed, and requests the server was asked: arrivals
    /// the client dropped (`client_overload`) were never sent and are in
    /// neither.
    pub fn failed_of_attempted(&self) -> (u64, u64) {
        let dropped = self.error_count(ErrorClass::ClientOverload);
        let failed = self.failures() - dropped;
        let attempted = self.total_ops() + self.failures_without_reply() - dropped;
        (failed, attempted)
    }

    /// `auth 100, timeout 3`: the failures by class.
    pub fn failure_summary(&self) -> String {
        self.summary_of(ErrorClass::is_failure)
    }

    /// `server_error 120, client_error 3`: the error replies by class.
    pub fn reply_summary(&self) -> String {
        self.summary_of(ErrorClass::is_reply)
    }

    fn summary_of(&self, counted: fn(ErrorClass) -> bool) -> String {
        ErrorClass::ALL
            .iter()
            .filter(|c| counted(**c) && self.error_count(**c) > 0)
            .map(|c| format!("{} {}", c.name(), self.error_count(*c)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Creates the histograms of `ops` now, so that recording never
    /// allocates inside a worker's loop.
    /// Makes room for `ops`, and per-server counts when `servers` > 1.
    pub fn prepare(&mut self, ops: &[OpKind], servers: usize) {
        for op in ops {
            let r = self.ops[op.index()].get_or_insert_with(|| Box::new(OpRecorder::new()));
            r.slots.get_or_insert_with(Box::default);
        }
        if servers > 1 {
            self.servers.resize_with(servers, Default::default);
        }
    }

    /// The histograms of `op`, if it was ever recorded.
    pub fn op(&self, op: OpKind) -> Option<&OpRecorder> {
        self.ops[op.index()].as_deref()
    }

    /// The op types recorded, with their histograms.
    pub fn ops(&self) -> impl Iterator<Item = (OpKind, &OpRecorder)> {
        OpKind::ALL
            .into_iter()
            .filter_map(|op| self.op(op).map(|r| (op, r)))
    }

    /// Completed requests of `op`.
    pub fn count(&self, op: OpKind) -> u64 {
        self.op(op).map_or(0, OpRecorder::count)
    }

    /// All completed requests.
    pub fn total_ops(&self) -> u64 {
        self.ops().map(|(_, r)| r.count()).sum()
    }

    /// Empties every histogram and counter, keeping the memory.
    pub fn reset(&mut self) {
        for op in self.ops.iter_mut().flatten() {
            op.reset();
        }
        self.send_lag.reset();
        self.send_gaps = super::SendGaps::default();
        self.op_queue.reset();
        self.hits = 0;
        self.misses = 0;
        self.responses = [0; ResponseClass::ALL.len()];
        self.errors = [0; ErrorClass::ALL.len()];
        self.bytes_tx = 0;
        self.bytes_rx = 0;
        self.client_waits = 0;
        self.skips = 0;
        self.connections_lost = 0;
        self.connections_reopened = 0;
        self.reopen_failures = 0;
        self.conns.reset();
        self.checks.reset();
        for s in &mut self.servers {
            s.reset();
        }
        self.replica = super::ReplicaReads::default();
        self.samples.clear();
        self.miss_windows.clear();
        self.slot_clock = SlotClock::default();
    }

    /// Adds `other` into `self`, losslessly (but for slots: a total has
    /// none).
    pub fn merge(&mut self, other: &Recorder) {
        self.merge_ops(other, false);
        self.merge_rest(other);
    }

    /// Adds another worker's snapshot of the same interval, slots too.
    pub fn merge_interval(&mut self, other: &Recorder) {
        self.merge_ops(other, true);
        self.merge_rest(other);
    }

    fn merge_ops(&mut self, other: &Recorder, slots: bool) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            let Some(b) = b else { continue };
            a.get_or_insert_with(|| Box::new(OpRecorder::new()))
                .merge(b, slots);
        }
    }

    fn merge_rest(&mut self, other: &Recorder) {
        self.send_lag.add(&other.send_lag).expect("same bounds");
        self.send_gaps.merge(&other.send_gaps);
        self.op_queue.add(&other.op_queue).expect("same bounds");
        self.hits += other.hits;
        self.misses += other.misses;
        add_all(&mut self.responses, &other.responses);
        add_all(&mut self.errors, &other.errors);
        self.bytes_tx += other.bytes_tx;
        self.bytes_rx += other.bytes_rx;
        self.client_waits += other.client_waits;
        self.skips += other.skips;
        self.connections_lost += other.connections_lost;
        self.connections_reopened += other.connections_reopened;
        self.reopen_failures += other.reopen_failures;
        self.conns.merge(&other.conns);
        self.checks.merge(&other.checks);
        self.replica.merge(&other.replica);
        self.miss_windows.extend_from_slice(&other.miss_windows);
        if self.servers.len() < other.servers.len() {
            self.servers
                .resize_with(other.servers.len(), Default::default);
        }
        for (a, b) in self.servers.iter_mut().zip(&other.servers) {
            a.merge(b);
        }
    }
}

fn add_all(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_lossless() {
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        for v in 1..=1000u64 {
            a.record_op(OpKind::Get, v * 1000, v * 500);
            b.record_op(OpKind::Get, v * 2000, v * 700);
        }
        b.record_op(OpKind::Set, 5, 5);
        b.hits = 3;
        b.error(ErrorClass::Timeout, 2);
        let mut both = a.clone();
        both.merge(&b);
        let get = |r: &Recorder| r.op(OpKind::Get).unwrap().latency.clone();
        let lat = get(&both);
        assert_eq!(lat.len(), 2000);
        assert_eq!(lat.max(), get(&b).max());
        assert_eq!(lat.min(), get(&a).min());
        assert_eq!(both.count(OpKind::Set), 1);
        assert!(both.op(OpKind::Delete).is_none());
        assert_eq!(both.hits, 3);
        assert_eq!(both.error_count(ErrorClass::Timeout), 2);
        assert_eq!(both.total_ops(), 2001);
    }
}
