//! Merges the workers' interval snapshots into a time series and a total.

use super::batches::{BatchSeries, SlotHdrs, SLOTS};
use super::hdr::Hdr;
use super::recorder::{max_us, quantile_us, OpRecorder, Recorder};
use super::ErrorClass;
use super::StatsError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One worker's measurements over one interval.
#[derive(Debug)]
pub struct Snapshot {
    pub worker: usize,
    /// Interval number, from 0 at the start of measurement.
    pub index: u64,
    /// Interval end, ns since the worker's measurement start.
    pub end_ns: u64,
    /// The worker thread's CPU time over the interval, ns.
    pub cpu_ns: u64,
    pub recorder: Box<Recorder>,
}

/// One interval of the whole run, as reported live and in JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalSummary {
    pub index: u64,
    /// End of the interval, seconds since measurement start.
    pub time_s: f64,
    pub duration_s: f64,
    /// Per op type (and `total`): rate, latency quantiles, histograms.
    pub ops: BTreeMap<String, IntervalOp>,
    pub hits: u64,
    pub misses: u64,
    /// Failed requests of the interval (every error class but
    /// `packet_disorder`, whose replies were reassembled).
    pub errors: u64,
    /// The interval's failures and datagram counts by class (the
    /// classes of the run's `errors`), those not zero.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_classes: BTreeMap<String, u64>,
    /// CPU time the load's worker threads used over the interval, s (user
    /// + system); divided by `duration_s`, the cores they kept busy.
    #[serde(default)]
    pub client_cpu_s: f64,
    /// Bytes written and read over the interval.
    #[serde(default)]
    pub bytes_tx: u64,
    #[serde(default)]
    pub bytes_rx: u64,
    /// Intended send → the worker got to it, ns (open loop; empty in
    /// closed loop).
    pub send_lag_hdr: Hdr,
    /// With several servers, per server in the run's order: where the
    /// load went this interval (an outage and a failover show here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<IntervalServer>,
    /// `--rep-write`: reads a replica answered, and their misses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<super::ReplicaReads>,
}

impl IntervalSummary {
    /// Answers without an error reply per second, all ops together, as the
    /// run's `ok_rate` counts them: `total` counts answered requests, and each
    /// op's `errors` its error replies (`--successful` leaves those out of
    /// the counts already); failures without a reply are in neither.
    pub fn ok_rate(&self, successful: bool) -> f64 {
        let Some(total) = self.ops.get("total") else {
            return 0.0;
        };
        let replies: u64 = self
            .ops
            .iter()
            .filter(|(name, _)| *name != "total")
            .map(|(_, o)| o.errors)
            .sum();
        let ok = match successful {
            true => total.count,
            false => total.count.saturating_sub(replies),
        };
        ok as f64 / self.duration_s.max(1e-9)
    }

    /// Refuses what no run records: a CPU time that is negative or not
    /// finite, an error class mcbench does not have (an agent's interval
    /// and a saved result are untrusted).
    pub fn check(&self) -> Result<(), StatsError> {
        if !(self.client_cpu_s.is_finite() && self.client_cpu_s >= 0.0) {
            return Err(StatsError::CpuTime {
                index: self.index,
                secs: self.client_cpu_s,
            });
        }
        let known = |c: &String| ErrorClass::ALL.iter().any(|k| k.name() == c);
        if let Some(class) = self.error_classes.keys().find(|c| !known(c)) {
            return Err(StatsError::ErrorClass {
                index: self.index,
                class: class.clone(),
            });
        }
        for (name, op) in &self.ops {
            op.parts().map_err(|e| StatsError::OpParts {
                index: self.index,
                op: name.clone(),
                source: Box::new(e),
            })?;
        }
        Ok(())
    }
}

/// One server over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalServer {
    /// Answered requests (error replies included).
    pub count: u64,
    /// Answered without an error reply.
    #[serde(default)]
    pub ok: u64,
    pub hits: u64,
    pub misses: u64,
    /// Failed requests: error replies, lost, timed out, no connection.
    pub errors: u64,
}

impl IntervalServer {
    pub fn of(r: &super::ServerRecorder) -> Self {
        IntervalServer {
            count: r.latency.len(),
            ok: r.latency.len().saturating_sub(r.error_replies),
            hits: r.hits,
            misses: r.misses,
            errors: r.failures,
        }
    }

    pub fn add(&mut self, other: &IntervalServer) {
        self.count += other.count;
        self.ok += other.ok;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
    }
}

/// One op type (or `total`) over one interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalOp {
    pub count: u64,
    pub rate: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Keys found / not found; error replies (`total`: every error).
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
    /// Latency and service time, ns, HdrHistogram V2 compressed.
    pub latency_hdr: Hdr,
    pub service_time_hdr: Hdr,
    /// The latency's parts (`stats::parts::PART_NAMES` order), ns, where
    /// the kernel stamped requests; empty where it stamped none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts_hdr: Vec<Hdr>,
    /// The interval cut in `SLOTS` by answer time: in memory and on the
    /// agents' wire, not in JSON (the run keeps them as its batches).
    #[serde(skip)]
    pub slots: Option<Box<SlotHdrs>>,
}

struct Pending {
    reported: usize,
    end_ns: u64,
    cpu_ns: u64,
    recorder: Recorder,
}

/// Collects snapshots until every worker has reported an interval, then
/// summarises it and adds it to the run's total.
pub struct Collector {
    workers: usize,
    interval_ns: u64,
    pending: BTreeMap<u64, Pending>,
    total: Recorder,
    series: Vec<IntervalSummary>,
    replicated: bool,
    /// Recorders of closed intervals, emptied for the next ones, and the
    /// all-ops histograms a summary adds up: an interval allocates no
    /// histogram after the first. Fresh ones cost page faults (~0.3 ms
    /// per latency histogram here), on a thread that, in a closed loop,
    /// may hold a CPU a worker waits for.
    spare: Vec<Recorder>,
    all: OpRecorder,
    /// Per op type (and `total`), the run's slots as batches...
    batches: BTreeMap<String, BatchSeries>,
    /// ...but for those an interval answered without slots (snapshots
    /// made by hand): their batches would not add up.
    slotless: std::collections::BTreeSet<String>,
}

/// What a collector ends with: the run's total, its intervals, and each
/// op type's batches.
pub struct Collected {
    pub total: Recorder,
    pub intervals: Vec<IntervalSummary>,
    pub batches: BTreeMap<String, BatchSeries>,
}

impl Collector {
    /// A collector of `workers`' snapshots; `replicated` for a
    /// `--rep-write` run, whose intervals count replica reads.
    pub fn new(workers: usize, interval_ns: u64, replicated: bool) -> Self {
        Collector {
            workers,
            interval_ns,
            replicated,
            pending: BTreeMap::new(),
            total: Recorder::default(),
            series: Vec::new(),
            spare: Vec::new(),
            all: OpRecorder::new(),
            batches: BTreeMap::new(),
            slotless: Default::default(),
        }
    }

    /// Takes one snapshot; returns the interval it completed, if any.
    pub fn add(&mut self, snap: &Snapshot) -> Option<IntervalSummary> {
        let spare = &mut self.spare;
        let entry = self.pending.entry(snap.index).or_insert_with(|| Pending {
            reported: 0,
            end_ns: 0,
            cpu_ns: 0,
            recorder: spare.pop().unwrap_or_default(),
        });
        entry.reported += 1;
        entry.end_ns = entry.end_ns.max(snap.end_ns);
        entry.cpu_ns += snap.cpu_ns;
        entry.recorder.merge_interval(&snap.recorder);
        if entry.reported < self.workers {
            return None;
        }
        let done = self.pending.remove(&snap.index)?;
        Some(self.close(snap.index, done))
    }

    fn close(&mut self, index: u64, mut done: Pending) -> IntervalSummary {
        let start_ns = index * self.interval_ns;
        let mut summary = summarise(
            index,
            start_ns,
            done.end_ns.max(start_ns + 1),
            &done.recorder,
            self.replicated,
            &mut self.all,
        );
        summary.client_cpu_s = done.cpu_ns as f64 / 1e9;
        self.total.merge(&done.recorder);
        self.add_batches(&summary);
        let mut kept = summary.clone();
        for op in kept.ops.values_mut() {
            op.slots = None;
        }
        self.series.push(kept);
        done.recorder.reset();
        self.spare.push(done.recorder);
        summary
    }

    /// Appends the interval's slots to each op's batches; an op first
    /// seen now starts with empty batches for the intervals before.
    fn add_batches(&mut self, summary: &IntervalSummary) {
        let slot_s = self.interval_ns as f64 / SLOTS as f64 / 1e9;
        for name in summary.ops.keys() {
            self.batches.entry(name.clone()).or_insert_with(|| {
                let mut series = BatchSeries::new(slot_s);
                for _ in 0..summary.index {
                    series.push(None).expect("empty slots add up");
                }
                series
            });
        }
        for (name, series) in self.batches.iter_mut() {
            let op = summary.ops.get(name);
            if op.is_some_and(|o| o.count > 0 && o.slots.is_none()) {
                self.slotless.insert(name.clone());
            }
            let slots = op.and_then(|o| o.slots.as_deref());
            // Slots the collector encoded itself always decode.
            series.push(slots).expect("the collector's own slots");
        }
    }

    /// Closes what is still open (intervals not every worker reached) and
    /// returns the total, the time series and the batches.
    pub fn finish(mut self) -> Collected {
        let rest = std::mem::take(&mut self.pending);
        for (index, p) in rest {
            self.close(index, p);
        }
        self.series.sort_by_key(|s| s.index);
        let slotless = self.slotless;
        self.batches.retain(|name, _| !slotless.contains(name));
        Collected {
            total: self.total,
            intervals: self.series,
            batches: self.batches,
        }
    }
}

fn summarise(
    index: u64,
    start_ns: u64,
    end_ns: u64,
    r: &Recorder,
    replicated: bool,
    all: &mut OpRecorder,
) -> IntervalSummary {
    let secs = (end_ns - start_ns) as f64 / 1e9;
    let mut ops = BTreeMap::new();
    all.reset();
    // The op types this interval saw; `total` always.
    for (op, rec) in r.ops().filter(|(_, rec)| rec.count() > 0) {
        all.latency.add(&rec.latency).expect("same bounds");
        all.service.add(&rec.service).expect("same bounds");
        if let Some(p) = rec.stamped_parts() {
            all.parts.get_or_insert_with(Box::default).merge(p);
        }
        if let Some(slots) = rec.slots.as_deref() {
            all.slots.get_or_insert_with(Box::default).merge(slots);
        }
        ops.insert(op.name().to_string(), interval_op(rec, secs));
    }
    all.hits = r.hits;
    all.misses = r.misses;
    all.errors = r.failures();
    ops.insert("total".to_string(), interval_op(all, secs));
    IntervalSummary {
        index,
        time_s: end_ns as f64 / 1e9,
        duration_s: secs,
        ops,
        hits: r.hits,
        misses: r.misses,
        errors: all.errors,
        error_classes: ErrorClass::ALL
            .iter()
            .map(|c| (c.name().to_string(), r.error_count(*c)))
            .filter(|(_, n)| *n > 0)
            .collect(),
        client_cpu_s: 0.0,
        bytes_tx: r.bytes_tx,
        bytes_rx: r.bytes_rx,
        send_lag_hdr: Hdr::encode(&r.send_lag),
        servers: r.servers.iter().map(IntervalServer::of).collect(),
        replica: replicated.then_some(r.replica),
    }
}

fn interval_op(r: &OpRecorder, secs: f64) -> IntervalOp {
    IntervalOp::new(r, secs)
}

impl IntervalOp {
    /// The summary of one op type's histograms and counts over `secs`.
    pub fn new(r: &OpRecorder, secs: f64) -> IntervalOp {
        let h = &r.latency;
        IntervalOp {
            count: h.len(),
            rate: h.len() as f64 / secs,
            p50_us: quantile_us(h, 0.5),
            p99_us: quantile_us(h, 0.99),
            max_us: max_us(h),
            hits: r.hits,
            misses: r.misses,
            errors: r.error_replies(),
            latency_hdr: Hdr::encode(h),
            service_time_hdr: Hdr::encode(&r.service),
            parts_hdr: r
                .stamped_parts()
                .map_or(Vec::new(), |p| p.hists.iter().map(Hdr::encode).collect()),
            slots: r.slots.as_deref().map(|s| Box::new(s.encode())),
        }
    }

    /// The parts' histograms as a recorder (without bands), checked: four
    /// of them, each of as many requests, at most `count`.
    pub fn parts(&self) -> Result<Option<super::parts::PartsRecorder>, StatsError> {
        if self.parts_hdr.is_empty() {
            return Ok(None);
        }
        super::parts::PartsRecorder::of_hdrs(&self.parts_hdr, self.count).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::OpKind;

    fn snap(worker: usize, index: u64, n: u64) -> Snapshot {
        let mut r = Recorder::default();
        for _ in 0..n {
            r.record_op(OpKind::Get, 1000, 500);
        }
        Snapshot {
            worker,
            index,
            end_ns: (index + 1) * 1_000_000_000,
            cpu_ns: 1_000 * n,
            recorder: Box::new(r),
        }
    }

    #[test]
    fn intervals_close_when_every_worker_reported() {
        let mut c = Collector::new(2, 1_000_000_000, false);
        assert!(c.add(&snap(0, 0, 10)).is_none());
        let s = c.add(&snap(1, 0, 5)).expect("complete");
        assert_eq!(s.ops["get"].count, 15);
        assert!((s.ops["get"].rate - 15.0).abs() < 1e-9);
        assert!((s.client_cpu_s - 15e-6).abs() < 1e-12, "both workers' CPU");
        assert!(s.error_classes.is_empty(), "no error, no class");
        let mut failing = snap(0, 1, 7);
        failing.recorder.error(ErrorClass::ConnectionLost, 3);
        assert!(c.add(&failing).is_none());
        let Collected {
            total,
            intervals: series,
            batches,
        } = c.finish();
        // No slots in snapshots made by hand: no batches either.
        assert!(batches.is_empty());
        assert_eq!(total.total_ops(), 22);
        assert_eq!(series.len(), 2);
        assert_eq!(series[1].error_classes.get("connection_lost"), Some(&3));
    }

    /// 10 gets answered, 2 of them with an error reply; 3 more lost with
    /// their connection (in the total's errors, in no count).
    fn interval() -> IntervalSummary {
        let mut get = OpRecorder::new();
        for _ in 0..10 {
            get.latency.record(1_000).unwrap();
        }
        get.errors = 2;
        let mut total = IntervalOp::new(&get, 2.0);
        total.errors = 5;
        let ops = [
            ("get".to_string(), IntervalOp::new(&get, 2.0)),
            ("total".to_string(), total),
        ];
        IntervalSummary {
            index: 0,
            time_s: 2.0,
            duration_s: 2.0,
            ops: ops.into_iter().collect(),
            hits: 0,
            misses: 0,
            errors: 5,
            error_classes: Default::default(),
            client_cpu_s: 0.0,
            bytes_tx: 0,
            bytes_rx: 0,
            send_lag_hdr: Hdr::encode(&crate::stats::new_histogram()),
            servers: Vec::new(),
            replica: None,
        }
    }

    #[test]
    fn ok_is_answered_less_error_replies() {
        assert_eq!(interval().ok_rate(false), 4.0);
        // --successful: the error replies were never counted.
        assert_eq!(interval().ok_rate(true), 5.0);
    }
}
