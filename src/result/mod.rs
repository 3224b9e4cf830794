//! `RunResult`: everything a run measured, in the shape of the JSON schema
//! (`docs/json-schema.md`). Every report renders from this one value, and
//! a saved one loads back whole, histograms included, so that a report,
//! a comparison or a merge can be made again from it.

mod agents;
pub mod checked;
mod connections;
pub mod curve;
mod error;
mod load;
mod measure;
mod merge;
pub mod parts;
mod precision;
mod replication;
mod run_set;
mod server_stats;
mod servers;
mod trace;
mod verdict;

use crate::engine::{Outcome, PhaseEnd};
use crate::spec::RunSpec;
use crate::stats::batches::BatchSeries;
use crate::stats::{cpu, quantile_us, ErrorClass, Hdr, IntervalSummary, OpRecorder};
use crate::warnings::Warning;
use crate::workload::OpKind;
use hdrhistogram::Histogram;
use mcbench_proto::ResponseClass;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use agents::AgentSummary;
pub use connections::{Connections, SizeSummary};
pub use curve::{decide, Curve, CurveKind, CurvePoint, Slo, Verdict};
pub use error::ResultError;
pub use measure::MeasureSummary;
pub use merge::{
    add_intervals, merge, merge_interval, merge_unless, ops_of_intervals, start_spread_s,
};
pub use parts::LatencyParts;
pub use precision::{PercentileCheck, PrecisionVerdict, RateHeld};
pub use replication::{ReplicationLag, ReplicationSummary};
pub use run_set::{differences, spreads, Difference, Metric, RunSet, Spread, RUN_SET_SCHEMA};
pub use server_stats::{ServerInterval, ServerStatsRow};
pub use servers::ServerSummary;
pub use trace::TraceSummary;

pub const SCHEMA: &str = "mcbench.run/2";

/// The percentiles reports print unless told otherwise (`--percentiles`).
pub const DEFAULT_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub version: String,
    pub spec: RunSpec,
    /// Addresses the run used.
    pub servers: Vec<String>,
    /// The memcached started for the run, if any (its `-V`).
    pub embedded_server: Option<String>,
    /// `--tls`: the version and cipher suite negotiated, and what the
    /// handshakes came to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<crate::net::tls::TlsReport>,
    /// Measured time, s (after warm-up, until the last answer).
    pub duration_s: f64,
    /// Start of the measured phase, s since the Unix epoch.
    pub started_unix_s: f64,
    /// True when the run ran to its end (not stopped, not failed).
    pub completed: bool,
    /// Why the run failed (exit 1), if it did: the preload failed, the
    /// servers stopped answering, nearly every request failed.
    pub failure: Option<String>,
    /// Whether the keys were preloaded: null when no preload ran (`--no-load`,
    /// `--window`, `--load-only`, or stopped before it), false when it failed.
    pub preloaded: Option<bool>,
    /// `SIGINT`/`SIGTERM` when a signal stopped the run.
    pub stopped_by: Option<String>,
    /// The percentiles the text report, live line and CSV print.
    pub percentiles: Vec<f64>,
    pub ops: BTreeMap<String, OpSummary>,
    pub total: OpSummary,
    pub gets: Gets,
    pub responses: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    pub bytes: Bytes,
    pub connections: Connections,
    /// memaslap's checks (`--verify`, `--exp-verify`), under its names.
    #[serde(default)]
    pub checks: crate::stats::CheckCounts,
    /// With several servers: one row per server, in `servers` order.
    #[serde(default)]
    pub per_server: Vec<ServerSummary>,
    /// `--rep-write`: replica reads, replication misses and lag.
    #[serde(default)]
    pub replication: Option<ReplicationSummary>,
    /// `--server-stats`: each server's own counters, in `servers` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_stats: Vec<ServerStatsRow>,
    pub client: Client,
    pub warnings: Vec<Warning>,
    pub intervals: Vec<IntervalSummary>,
    /// `--measure-connections`: the measurement group, apart from the
    /// load (whose figures are everything above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<MeasureSummary>,
    /// `--miss-window`: the miss ratio per window of answers, per worker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub miss_windows: Vec<MissWindowRow>,
    /// `--trace`, `--read-file`: what the replay read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    /// `--agent`: a row per agent; the rest of the result is their merge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentSummary>,
    /// Whether the run was long enough for its percentiles: filled as the
    /// result is written (`attach_precision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<PrecisionVerdict>,
}

/// One `--miss-window` window, with its miss ratio (of the retrieval keys
/// it looked up; null with none).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MissWindowRow {
    #[serde(flatten)]
    pub window: crate::stats::MissWindow,
    pub miss_ratio: Option<f64>,
}

impl MissWindowRow {
    fn rows(windows: &[crate::stats::MissWindow]) -> Vec<Self> {
        let mut rows: Vec<Self> = windows
            .iter()
            .map(|w| MissWindowRow {
                window: *w,
                miss_ratio: (w.hits + w.misses > 0)
                    .then(|| w.misses as f64 / (w.hits + w.misses) as f64),
            })
            .collect();
        rows.sort_by_key(|r| (r.window.worker, r.window.index));
        rows
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpSummary {
    pub count: u64,
    /// ops/s over `duration_s`.
    pub rate: f64,
    /// Requests answered without an error reply, and their rate.
    pub ok: u64,
    pub ok_rate: f64,
    /// `errors` per second.
    pub error_rate: f64,
    /// Keys found / not found (retrievals; `total`: every get).
    pub hits: u64,
    pub misses: u64,
    /// Error replies to this op type (`total`: every error of the run).
    pub errors: u64,
    pub latency_us: Quantiles,
    pub service_time_us: Quantiles,
    /// The histograms the quantiles come from, ns.
    pub latency_hdr: Hdr,
    pub service_time_hdr: Hdr,
    /// Each of `percentiles` with its 95 % interval (`precision`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_ci: Vec<crate::precision::Estimate>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_time_ci: Vec<crate::precision::Estimate>,
    /// The latency taken apart by the kernel's stamps (none where it
    /// stamped no request: `RunSpec::latency_parts_blocker`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_parts: Option<LatencyParts>,
    /// The latencies and service times in short batches, in time order:
    /// what the intervals' design effect and episodes are read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<BatchSeries>,
}

/// Summary of one histogram, µs.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Quantiles {
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gets {
    pub hits: u64,
    pub misses: u64,
    /// hits / (hits + misses); 0 with no gets.
    pub hit_ratio: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bytes {
    pub tx: u64,
    pub rx: u64,
    /// MB/s (10^6 bytes).
    pub tx_mb_s: f64,
    pub rx_mb_s: f64,
}

impl Bytes {
    /// The bytes a recorder counted, and their rates over `secs`.
    fn of(t: &crate::stats::Recorder, secs: f64) -> Self {
        Bytes {
            tx: t.bytes_tx,
            rx: t.bytes_rx,
            tx_mb_s: t.bytes_tx as f64 / 1e6 / secs,
            rx_mb_s: t.bytes_rx as f64 / 1e6 / secs,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Client {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// (user + sys) / completed ops, ns.
    pub cpu_ns_per_op: f64,
    /// Per worker thread: its CPU time / measured time.
    pub worker_busy: Vec<f64>,
    /// True when the results measure the client rather than the server.
    pub client_bound: bool,
    /// Intended send → the worker got to it (open loop; 0 in closed loop,
    /// where a request is intended when it is sent).
    pub send_lag_us: LagSummary,
    /// The send-lag histogram, ns.
    pub send_lag_hdr: Hdr,
    /// Whether the run had a schedule (and so a meaningful send lag).
    pub open_loop: bool,
    /// Open loop: the gaps between sends as they went out (moments, ns).
    #[serde(default)]
    pub send_gaps: crate::stats::SendGaps,
    /// Open loop: those gaps' coefficient of variation. A Poisson
    /// schedule's is 1; above it, requests went out in bursts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_gap_cv: Option<f64>,
    /// Requests that waited in the client for a free connection slot.
    pub waits: u64,
    /// `--skip`: arrivals dropped unsent while the client was behind.
    #[serde(default)]
    pub skips: u64,
    pub peak_rss_bytes: u64,
    /// Requests in flight on a measured request's connection when it was
    /// sent, itself included (mutilate's `op_q`): counts, not ns.
    #[serde(default = "Hdr::empty")]
    pub op_queue_hdr: Hdr,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LagSummary {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl LagSummary {
    /// The p50, p99 and max of a send lag histogram, µs.
    pub(crate) fn of(lag: &hdrhistogram::Histogram<u64>) -> Self {
        LagSummary {
            p50: quantile_us(lag, 0.5),
            p99: quantile_us(lag, 0.99),
            max: crate::stats::max_us(lag),
        }
    }
}

impl Client {
    /// The client's self-measurement over the measured phase.
    fn build(
        out: &Outcome,
        warnings: &[Warning],
        send_lag_us: LagSummary,
        open_loop: bool,
    ) -> Client {
        let t = &out.total;
        Client {
            cpu_user_s: out.cpu.user_ns as f64 / 1e9,
            cpu_sys_s: out.cpu.sys_ns as f64 / 1e9,
            cpu_ns_per_op: out.cpu.total_ns() as f64 / t.total_ops().max(1) as f64,
            worker_busy: out.worker_busy.clone(),
            client_bound: warnings.iter().any(Warning::client_bound),
            send_lag_us,
            send_lag_hdr: Hdr::encode(&t.send_lag),
            open_loop,
            send_gaps: t.send_gaps,
            send_gap_cv: t.send_gaps.cv().filter(|_| open_loop),
            waits: t.client_waits,
            skips: t.skips,
            peak_rss_bytes: cpu::peak_rss_bytes(),
            op_queue_hdr: Hdr::encode(&t.op_queue),
        }
    }
}

/// What the caller knows beyond the engine's outcome.
pub struct RunContext {
    pub servers: Vec<String>,
    pub embedded_server: Option<String>,
    pub tls: Option<crate::net::tls::TlsReport>,
    pub stopped_by: Option<String>,
    /// The percentiles to print.
    pub percentiles: Vec<f64>,
}

impl RunResult {
    pub fn build(spec: &RunSpec, out: &Outcome, ctx: RunContext) -> Self {
        let secs = out.duration_s.max(1e-9);
        let t = &out.total;
        let (ops, total) = op_summary_table(spec, t, &out.batches, secs);
        let open_loop = spec.has_schedule();
        let send_lag_us = LagSummary::of(&t.send_lag);
        let warnings = verdict::warnings(spec, out, open_loop.then_some(&send_lag_us));
        let failure = verdict::failure(spec, out, ctx.stopped_by.is_some());
        let server_stats = ServerStatsRow::rows(out, &ctx.servers);
        let mut warnings = warnings;
        let client_counts = server_stats::client_counts(out);
        warnings.extend(server_stats::cross_check(&server_stats, &client_counts));
        let per_server = ServerSummary::rows(&t.servers, &ctx.servers, secs);

        RunResult {
            schema: SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            spec: spec.clone(),
            servers: ctx.servers,
            embedded_server: ctx.embedded_server,
            tls: ctx.tls,
            duration_s: out.duration_s,
            started_unix_s: out.started_unix_s,
            completed: ctx.stopped_by.is_none()
                && failure.is_none()
                && out.ends.iter().all(|e| *e == PhaseEnd::Completed),
            failure,
            preloaded: out.preloaded,
            stopped_by: ctx.stopped_by,
            percentiles: ctx.percentiles,
            ops,
            total,
            miss_windows: MissWindowRow::rows(&t.miss_windows),
            trace: out
                .trace
                .as_ref()
                .and_then(|f| TraceSummary::build(spec, f, t.hits, t.misses)),
            measure: out.measure.as_ref().zip(spec.measure).map(|(r, group)| {
                let batches = out.measure_batches.clone().unwrap_or_default();
                MeasureSummary::build(spec, group, (r, &batches), secs)
            }),
            gets: Gets {
                hits: t.hits,
                misses: t.misses,
                hit_ratio: merge::ratio(t.hits, t.hits + t.misses),
            },
            responses: ResponseClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), t.responses[c.index()]))
                .collect(),
            errors: ErrorClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), t.error_count(*c)))
                .collect(),
            bytes: Bytes::of(t, secs),
            connections: Connections::build(out, secs),
            checks: t.checks.clone(),
            per_server,
            replication: ReplicationSummary::build(
                spec,
                &t.replica,
                t.misses,
                out.replication_lag.as_ref(),
            ),
            server_stats,
            client: Client::build(out, &warnings, send_lag_us, open_loop),
            warnings,
            intervals: out.intervals.clone(),
            agents: Vec::new(),
            verdict: None,
        }
    }
}

/// Per op type sent (or in the mix), and every op together, over `secs`,
/// each with its batches.
pub(crate) fn op_summary_table(
    spec: &RunSpec,
    t: &crate::stats::Recorder,
    batches: &BTreeMap<String, BatchSeries>,
    secs: f64,
) -> (BTreeMap<String, OpSummary>, OpSummary) {
    let mut ops = BTreeMap::new();
    let mut all = OpRecorder::new();
    let empty = OpRecorder::new();
    for op in OpKind::ALL {
        let r = t.op(op).unwrap_or(&empty);
        all.latency.add(&r.latency).expect("same bounds");
        all.service.add(&r.service).expect("same bounds");
        if let Some(p) = r.stamped_parts() {
            all.parts.get_or_insert_with(Box::default).merge(p);
        }
        if r.count() > 0 || spec.workload.mix.share_of(op) > 0.0 {
            let batches = batches.get(op.name()).cloned();
            ops.insert(
                op.name().to_string(),
                OpSummary {
                    batches,
                    ..op_summary(r, secs)
                },
            );
        }
    }
    all.hits = t.hits;
    all.misses = t.misses;
    all.errors = t.failures();
    // `--successful` leaves error replies out of the counts already.
    let ok = if spec.workload.successful {
        all.count()
    } else {
        all.count().saturating_sub(t.reply_errors())
    };
    let total = OpSummary {
        ok,
        ok_rate: ok as f64 / secs,
        batches: batches.get("total").cloned(),
        ..op_summary(&all, secs)
    };
    (ops, total)
}

impl OpSummary {
    /// Nothing measured.
    pub fn empty() -> Self {
        op_summary(&OpRecorder::new(), 1.0)
    }
}

fn op_summary(r: &OpRecorder, secs: f64) -> OpSummary {
    OpSummary {
        count: r.count(),
        rate: r.count() as f64 / secs,
        ok: r.count().saturating_sub(r.errors),
        ok_rate: r.count().saturating_sub(r.errors) as f64 / secs,
        // With `--successful`, error replies are out of `count`, not out
        // of the errors.
        error_rate: r.error_replies() as f64 / secs,
        hits: r.hits,
        misses: r.misses,
        errors: r.error_replies(),
        latency_us: quantiles(&r.latency),
        service_time_us: quantiles(&r.service),
        latency_hdr: Hdr::encode(&r.latency),
        service_time_hdr: Hdr::encode(&r.service),
        latency_ci: Vec::new(),
        service_time_ci: Vec::new(),
        latency_parts: r.stamped_parts().and_then(LatencyParts::of),
        batches: None,
    }
}

/// The value at `percent` (0..=100) of a histogram of ns, in µs.
pub fn percentile_us(h: &Histogram<u64>, percent: f64) -> f64 {
    quantile_us(h, percent / 100.0)
}

impl RunResult {
    /// The latency an SLO reads, and whose it is: the measurement
    /// group's when there is one (`measure`), else every request's
    /// (`load`).
    pub fn slo_latency(&self) -> (&'static str, &Hdr) {
        match &self.measure {
            Some(m) => ("measure", &m.total.latency_hdr),
            None => ("load", &self.total.latency_hdr),
        }
    }
}

/// A percentile's column name: `p50`, `p99.9`, `p99.99`.
pub fn percentile_label(percent: f64) -> String {
    format!("p{}", percent_text(percent))
}

/// A percent as the user wrote it: `50`, `99.9` (no trailing zeros).
pub fn percent_text(percent: f64) -> String {
    let s = format!("{percent:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(crate) fn quantiles(h: &Histogram<u64>) -> Quantiles {
    if h.is_empty() {
        return Quantiles::default();
    }
    Quantiles {
        min: h.min() as f64 / 1e3,
        mean: h.mean() / 1e3,
        stdev: h.stdev() / 1e3,
        p50: quantile_us(h, 0.5),
        p90: quantile_us(h, 0.9),
        p99: quantile_us(h, 0.99),
        p999: quantile_us(h, 0.999),
        p9999: quantile_us(h, 0.9999),
        max: h.max() as f64 / 1e3,
    }
}
