//! The trace feed: a thread that reads the trace (`crate::trace`), gives
//! each record its intended send time, and hands records to the workers
//! in batches over bounded channels, so that the trace is never in memory
//! whole and a slow run holds the reader back.
//!
//! Timestamps are whole seconds in every format; the records of one
//! second are spread evenly over it, so that a replay is not a burst at
//! each second's start. `--trace-speed` divides the times.

use super::EngineError;
use crate::trace::{Record, ScheduleJudge, TraceFormat, TraceOp, TraceReader};
use crossbeam_channel::{Receiver, SendTimeoutError, Sender};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Requests per batch.
const BATCH: usize = 1024;
/// Batches waiting per worker: the most the reader runs ahead.
const QUEUED: usize = 8;
/// A worker's partial batch goes out once the reader has moved this far
/// past its first request in schedule time, ns, so that a worker with few
/// requests of its own (`--trace-clients`) is not held back.
const FLUSH_AFTER_NS: u64 = 10_000_000;
/// ... or once this many requests were read since it began.
const FLUSH_AFTER_REQS: u64 = 8 * BATCH as u64;
/// The most requests of one trace second held to be spread over it; a
/// second with more is spread in parts (`Feed::flush_tick`).
const TICK_CAP: usize = 1 << 20;
/// How often a blocked reader looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// One request of the trace, as the feed hands it over.
#[derive(Debug, Clone, Copy)]
pub struct TraceReq {
    /// Intended send time after the replay's start, ns (0 when the
    /// trace's timing is not used).
    pub at_ns: u64,
    pub op: TraceOp,
    /// Its key: bytes of `Batch::keys`.
    pub key: (u32, u32),
    /// Value size, bytes (`None`: the run's `--value-size`).
    pub value_len: Option<u32>,
    pub ttl: u32,
    pub client: u32,
}

/// Requests and the bytes of their keys.
#[derive(Debug, Default)]
pub struct Batch {
    pub reqs: Vec<TraceReq>,
    pub keys: Vec<u8>,
}

impl Batch {
    pub fn key(&self, req: &TraceReq) -> &[u8] {
        &self.keys[req.key.0 as usize..req.key.1 as usize]
    }

    fn push(&mut self, req: TraceReq, key: &[u8]) {
        let start = self.keys.len() as u32;
        self.keys.extend_from_slice(key);
        self.reqs.push(TraceReq {
            key: (start, self.keys.len() as u32),
            ..req
        });
    }
}

/// What the replay is told to do.
#[derive(Debug, Clone)]
pub struct FeedPlan {
    pub path: std::path::PathBuf,
    pub format: TraceFormat,
    /// Replay the trace's times (divided by this), or `None`: the run's
    /// own rate or closed loop.
    pub speed: Option<f64>,
    /// `--trace-clients`: the worker of each of the run's connections,
    /// by lane; a request goes to the connection `client % lanes`.
    pub client_lanes: Option<Vec<usize>>,
    pub workers: usize,
    /// Values longer than this are cut to it, bytes.
    pub max_value: u32,
    /// The run ends by a time of its own (`--time-limit`), or nothing is
    /// replayed (`trace-stat`): a gap of any length is read. Otherwise a
    /// gap over a day of replay time stops the reader with an error.
    pub bounded: bool,
    /// `--ops` with a trace: replay its first N requests.
    pub limit: Option<u64>,
}

/// What the reader saw, for the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedReport {
    /// Records read (a Meta KV record may stand for several requests).
    pub records: u64,
    /// Requests the records made (handed to the workers; at most
    /// `--ops`).
    pub requests: u64,
    /// Records with nothing to send (op 0).
    pub nops: u64,
    /// Values cut to `--max-value-size`.
    pub values_cut: u64,
    /// Gets whose hit or miss the trace records, and its hits.
    pub recorded_lookups: u64,
    pub recorded_hits: u64,
    /// The trace's own span, s (last timestamp minus first).
    pub span_s: u64,
    /// The reader reached the trace's end.
    pub ended: bool,
    /// Why reading stopped early: a malformed record or a read error.
    pub error: Option<String>,
}

/// Starts the reader: one receiver per worker, and the thread, which
/// returns its report.
pub fn spawn(
    plan: FeedPlan,
    stop: Arc<AtomicUsize>,
) -> Result<(Vec<Receiver<Batch>>, std::thread::JoinHandle<FeedReport>), EngineError> {
    let reader = TraceReader::open(&plan.path, Some(plan.format))?;
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..plan.workers)
        .map(|_| crossbeam_channel::bounded(QUEUED))
        .unzip();
    let feed = Feed::new(plan, txs, stop);
    let handle = std::thread::Builder::new()
        .name("mcbench-trace".into())
        .spawn(move || feed.run(reader))
        .map_err(EngineError::FeedThread)?;
    Ok((rxs, handle))
}

struct Feed {
    plan: FeedPlan,
    txs: Vec<Sender<Batch>>,
    stop: Arc<AtomicUsize>,
    /// Per worker: the batch being filled, and the request count when its
    /// first request was routed.
    pending: Vec<Batch>,
    pending_since: Vec<u64>,
    /// Per worker: it has stopped taking batches (its run ended).
    gone: Vec<bool>,
    /// Round robin: the worker being filled.
    turn: usize,
    /// The current trace second's requests, waiting to be spread over it.
    tick: Batch,
    tick_s: u64,
    /// The share of the current second already given to requests (a
    /// second over `TICK_CAP` is spread in parts).
    tick_used: f64,
    first_s: Option<u64>,
    schedule: ScheduleJudge,
    report: FeedReport,
}

impl Feed {
    fn new(plan: FeedPlan, txs: Vec<Sender<Batch>>, stop: Arc<AtomicUsize>) -> Self {
        Feed {
            pending: (0..plan.workers).map(|_| Batch::default()).collect(),
            pending_since: vec![0; plan.workers],
            gone: vec![false; plan.workers],
            report: FeedReport::default(),
            plan,
            txs,
            stop,
            turn: 0,
            tick: Batch::default(),
            tick_s: 0,
            tick_used: 0.0,
            first_s: None,
            schedule: ScheduleJudge::default(),
        }
    }

    /// Whether reading should stop: every worker gone, an error, a stop,
    /// or `--ops` requests taken.
    fn done(&self) -> bool {
        self.gone.iter().all(|g| *g)
            || self.report.error.is_some()
            || self.stop.load(Ordering::Relaxed) != 0
            || self.plan.limit.is_some_and(|n| self.report.requests >= n)
    }

    fn run(mut self, mut reader: TraceReader) -> FeedReport {
        let mut rec = Record::default();
        while !self.done() {
            match reader.next(&mut rec) {
                Ok(true) => self.take(&rec),
                Ok(false) => {
                    self.report.ended = true;
                    break;
                }
                Err(e) => {
                    self.report.error = Some(format!("{}: {e}", self.plan.path.display()));
                    break;
                }
            }
        }
        self.flush_tick(true);
        for w in 0..self.pending.len() {
            self.send(w);
        }
        self.report
    }

    /// One record: counted, then queued (timed: into its second).
    fn take(&mut self, rec: &Record) {
        self.report.records += 1;
        if rec.op == TraceOp::Nop {
            self.report.nops += 1;
            return;
        }
        if let Some(hits) = rec.hits {
            self.report.recorded_lookups += u64::from(rec.repeat);
            self.report.recorded_hits += u64::from(hits);
        }
        let value_len = rec.value_len.map(|v| {
            if v > self.plan.max_value {
                self.report.values_cut += 1;
            }
            v.min(self.plan.max_value)
        });
        let req = TraceReq {
            at_ns: 0,
            op: rec.op,
            key: (0, 0),
            value_len,
            ttl: rec.ttl,
            client: rec.client,
        };
        let timed = self.plan.speed.is_some();
        if timed && rec.time_s.is_none() {
            self.report.error = Some(format!(
                "{}: record {} has no timestamp to replay: add --trace-timing ignore",
                self.plan.path.display(),
                self.report.records
            ));
            return;
        }
        if let Some(t) = rec.time_s {
            if let Some(error) = self.judge(t) {
                self.report.error = Some(error);
                return;
            }
            let first = *self.first_s.get_or_insert(t);
            // A trace is in time order; a step back joins the current second.
            let t = t.max(self.tick_s).max(first);
            self.report.span_s = t - first;
            if timed && t != self.tick_s {
                self.flush_tick(true);
                self.tick_s = t;
                self.tick_used = 0.0;
            }
        }
        for _ in 0..rec.repeat {
            if self.plan.limit.is_some_and(|n| self.report.requests >= n) {
                return;
            }
            self.report.requests += 1;
            if !timed {
                self.route(req, &rec.key);
                continue;
            }
            if self.tick.reqs.len() >= TICK_CAP {
                self.flush_tick(false);
            }
            self.tick.push(req, &rec.key);
        }
    }

    /// A gap the replay must not wait out (`FeedPlan::bounded`), judged
    /// before any request after it is handed over.
    fn judge(&mut self, time_s: u64) -> Option<String> {
        let gap = self.schedule.see(time_s)?;
        let speed = self.plan.speed.filter(|_| !self.plan.bounded)?;
        let why = ScheduleJudge::refuses(gap, speed, None)?;
        Some(format!("{}: {why}", self.plan.path.display()))
    }

    /// Spreads the second's requests evenly over what is left of it (all
    /// of it, unless it held over `TICK_CAP`: then each part but the last
    /// takes half of what is left, so that times never go back) and
    /// routes them.
    fn flush_tick(&mut self, last: bool) {
        let (Some(speed), Some(first)) = (self.plan.speed, self.first_s) else {
            return;
        };
        if self.tick.reqs.is_empty() {
            return;
        }
        let mut tick = std::mem::take(&mut self.tick);
        let left = 1.0 - self.tick_used;
        let share = if last { left } else { left / 2.0 };
        let n = tick.reqs.len() as f64;
        let start = (self.tick_s.saturating_sub(first)) as f64 + self.tick_used;
        for (i, req) in tick.reqs.iter().enumerate() {
            let at_s = (start + share * i as f64 / n) / speed;
            let timed = TraceReq {
                at_ns: (at_s * 1e9) as u64,
                ..*req
            };
            self.route(timed, tick.key(req));
        }
        self.tick_used += share;
        // Keep the buffers.
        tick.reqs.clear();
        tick.keys.clear();
        self.tick = tick;
    }

    /// Puts a request into its worker's batch, sending full ones. With
    /// `--trace-clients` a request whose worker is gone is dropped.
    fn route(&mut self, req: TraceReq, key: &[u8]) {
        let w = match &self.plan.client_lanes {
            Some(owners) => owners[req.client as usize % owners.len()],
            None => self.turn,
        };
        if self.gone[w] {
            return;
        }
        if self.pending[w].reqs.is_empty() {
            self.pending_since[w] = self.report.requests;
        }
        self.pending[w].push(req, key);
        if self.pending[w].reqs.len() >= BATCH {
            self.send(w);
            if self.plan.client_lanes.is_none() {
                self.next_turn();
            }
            self.flush_stale(req.at_ns);
        }
    }

    /// Round robin: the next worker still taking batches.
    fn next_turn(&mut self) {
        let n = self.pending.len();
        for step in 1..=n {
            let w = (self.turn + step) % n;
            if !self.gone[w] {
                self.turn = w;
                return;
            }
        }
    }

    /// Sends partial batches that have waited too long: their first
    /// request is `FLUSH_AFTER_NS` behind `at_ns` in the schedule, or
    /// `FLUSH_AFTER_REQS` requests were read since.
    fn flush_stale(&mut self, at_ns: u64) {
        for w in 0..self.pending.len() {
            let Some(first) = self.pending[w].reqs.first() else {
                continue;
            };
            let behind = at_ns.saturating_sub(first.at_ns) > FLUSH_AFTER_NS;
            let waited = self.report.requests - self.pending_since[w] > FLUSH_AFTER_REQS;
            if behind || waited {
                self.send(w);
            }
        }
    }

    /// Sends worker `w`'s batch, waiting while its queue is full; a worker
    /// that has stopped taking batches is gone (its run ended), and a stop
    /// ends the wait.
    fn send(&mut self, w: usize) {
        if self.pending[w].reqs.is_empty() || self.gone[w] {
            return;
        }
        let mut batch = std::mem::take(&mut self.pending[w]);
        batch.reqs.reserve(BATCH);
        loop {
            match self.txs[w].send_timeout(batch, STOP_CHECK) {
                Ok(()) => return,
                Err(SendTimeoutError::Timeout(b)) => {
                    if self.stop.load(Ordering::Relaxed) != 0 {
                        return;
                    }
                    batch = b;
                }
                Err(SendTimeoutError::Disconnected(_)) => {
                    self.gone[w] = true;
                    if self.turn == w {
                        self.next_turn();
                    }
                    return;
                }
            }
        }
    }
}

/// What `drain` counted: the reader's report, requests per op (the
/// trace's names: `get`, ... and `access` for records naming none, `mix`
/// for keys whose op the run's mix picks), and the time taken.
pub struct Drained {
    pub report: FeedReport,
    pub ops: std::collections::BTreeMap<&'static str, u64>,
    pub elapsed: Duration,
}

/// Reads a whole trace through the feed (decoding, timing and batching,
/// as a replay does) into one consumer that only counts: `trace-stat`,
/// and the measure of how fast a replay can be fed.
pub fn drain(plan: FeedPlan, stop: Arc<AtomicUsize>) -> Result<Drained, EngineError> {
    let started = std::time::Instant::now();
    let (rxs, handle) = spawn(FeedPlan { workers: 1, ..plan }, stop)?;
    let mut ops = std::collections::BTreeMap::new();
    for batch in rxs[0].iter() {
        for req in &batch.reqs {
            let name = match req.op {
                TraceOp::Op(op) => op.name(),
                TraceOp::Access => "access",
                TraceOp::Mix => "mix",
                TraceOp::Nop => "nop",
            };
            *ops.entry(name).or_insert(0) += 1;
        }
    }
    let report = joined(handle);
    Ok(Drained {
        report,
        ops,
        elapsed: started.elapsed(),
    })
}

/// The feed's report; a reader that panicked is a failed one.
pub fn joined(handle: std::thread::JoinHandle<FeedReport>) -> FeedReport {
    handle.join().unwrap_or_else(|_| FeedReport {
        error: Some("the trace reader failed unexpectedly (it panicked)".into()),
        ..FeedReport::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the records judged before the run, the reader itself stops at
    /// a gap over a day, before it hands over the record after it.
    #[test]
    fn a_gap_over_a_day_stops_the_reader_unless_the_run_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let lines = "1,a,1,10,0,get,0\n2,b,1,10,0,get,0\n4000000002,c,1,10,0,get,0\n";
        std::fs::write(&path, lines).unwrap();
        let plan = |bounded| FeedPlan {
            path: path.clone(),
            format: TraceFormat::Twitter,
            speed: Some(1.0),
            client_lanes: None,
            workers: 1,
            max_value: u32::MAX,
            bounded,
            limit: None,
        };
        let stop = Arc::new(AtomicUsize::new(0));
        let drained = drain(plan(false), stop.clone()).unwrap();
        let error = drained.report.error.expect("refused");
        assert!(
            error.contains("127 years between records 2 and 3"),
            "{error}"
        );
        assert_eq!(drained.ops.values().sum::<u64>(), 2);
        let drained = drain(plan(true), stop).unwrap();
        assert_eq!(drained.report.error, None);
        assert_eq!(drained.report.span_s, 4_000_000_001);
        assert_eq!(drained.ops.values().sum::<u64>(), 3);
    }
}
