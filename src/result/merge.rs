//! Results of several processes (or machines) that ran at the same time,
//! merged into one: histograms are added, never their percentiles, so the
//! merged percentiles are those of one run that recorded every request.

use super::{Bytes, Client, Connections, Gets, LagSummary, OpSummary, ResultError, RunResult};
use crate::stats::batches::{BatchSeries, SlotHdrs};
use crate::stats::{Hdr, IntervalOp, IntervalSummary, OpRecorder};
use std::collections::BTreeMap;

/// One result of every request of `runs`. The spec, percentiles and
/// version are the first run's; counts and histograms are sums; times are
/// the longest.
pub fn merge(runs: &[RunResult]) -> Result<RunResult, ResultError> {
    merge_unless(runs, &|| false)
}

/// `merge`, given up with `STOPPED` once `stopped()` says so between
/// two intervals: saved runs of thousands of intervals take seconds to
/// merge, and a signal must not wait for them (`report --merge`). A
/// master of agents merges to the end whatever comes: its results are
/// what a signal must not lose.
pub fn merge_unless(
    runs: &[RunResult],
    stopped: &dyn Fn() -> bool,
) -> Result<RunResult, ResultError> {
    let first = runs.first().ok_or(ResultError::NothingToMerge)?;
    if let Some(r) = runs
        .iter()
        .find(|r| r.spec.recording.interval != first.spec.recording.interval)
    {
        return Err(ResultError::Intervals(
            first.spec.recording.interval,
            r.spec.recording.interval,
        ));
    }
    let secs = runs.iter().map(|r| r.duration_s).fold(0.0, f64::max);
    let hits: u64 = runs.iter().map(|r| r.gets.hits).sum();
    let misses: u64 = runs.iter().map(|r| r.gets.misses).sum();
    Ok(RunResult {
        schema: first.schema.clone(),
        version: first.version.clone(),
        spec: first.spec.clone(),
        servers: union(runs.iter().flat_map(|r| r.servers.iter())),
        embedded_server: first.embedded_server.clone(),
        tls: crate::net::tls::TlsReport::merge(runs.iter().filter_map(|r| r.tls.as_ref())),
        duration_s: secs,
        started_unix_s: runs
            .iter()
            .map(|r| r.started_unix_s)
            .fold(f64::INFINITY, f64::min),
        completed: runs.iter().all(|r| r.completed),
        stopped_by: runs.iter().find_map(|r| r.stopped_by.clone()),
        failure: runs.iter().find_map(|r| r.failure.clone()),
        preloaded: preloaded(runs),
        percentiles: first.percentiles.clone(),
        ops: merge_ops(runs, secs)?,
        total: merge_op(&each(runs, |r| &r.total), secs)?,
        gets: Gets {
            hits,
            misses,
            hit_ratio: ratio(hits, hits + misses),
        },
        responses: sum_maps(runs.iter().map(|r| &r.responses)),
        errors: sum_maps(runs.iter().map(|r| &r.errors)),
        bytes: merge_bytes(runs, secs),
        connections: Connections::merge(&each(runs, |r| &r.connections), secs)?,
        checks: merge_checks(runs),
        per_server: super::ServerSummary::merge(&each(runs, |r| r.per_server.as_slice()), secs)?,
        replication: super::ReplicationSummary::merge(&each_some(runs, |r| {
            r.replication.as_ref()
        }))?,
        // Processes that read the same servers: the first one's reading
        // (each read the servers' totals).
        server_stats: if same_servers(runs) {
            first.server_stats.clone()
        } else {
            Vec::new()
        },
        client: merge_client(runs)?,
        warnings: runs.iter().flat_map(|r| r.warnings.clone()).collect(),
        intervals: merge_intervals(
            runs.iter().flat_map(|r| &r.intervals),
            same_servers(runs),
            stopped,
        )?,
        trace: super::TraceSummary::merge(
            &runs.iter().map(|r| r.trace.as_ref()).collect::<Vec<_>>(),
            hits,
            misses,
        ),
        // Rows of agents belong to one master's run, not to a merge.
        agents: Vec::new(),
        verdict: None,
        // Each run's windows as they were (worker numbers are per run).
        miss_windows: runs.iter().flat_map(|r| r.miss_windows.clone()).collect(),
        measure: super::MeasureSummary::merge(&each_some(runs, |r| r.measure.as_ref()), secs)?,
    })
}

/// Preloaded when every run's preload finished; null when one ran none.
fn preloaded(runs: &[RunResult]) -> Option<bool> {
    let each: Option<Vec<bool>> = runs.iter().map(|r| r.preloaded).collect();
    each.map(|all| all.iter().all(|p| *p))
}

/// Each run's part.
fn each<'a, T: ?Sized>(runs: &'a [RunResult], part: impl Fn(&'a RunResult) -> &'a T) -> Vec<&'a T> {
    runs.iter().map(part).collect()
}

/// The parts the runs have.
fn each_some<'a, T>(
    runs: &'a [RunResult],
    part: impl Fn(&'a RunResult) -> Option<&'a T>,
) -> Vec<&'a T> {
    runs.iter().filter_map(part).collect()
}

/// Every op type of any run, each merged from the runs that have it.
fn merge_ops(runs: &[RunResult], secs: f64) -> Result<BTreeMap<String, OpSummary>, ResultError> {
    let mut names: Vec<&String> = runs.iter().flat_map(|r| r.ops.keys()).collect();
    names.sort();
    names.dedup();
    let mut ops = BTreeMap::new();
    for name in names {
        let parts = each_some(runs, |r| r.ops.get(name));
        ops.insert(name.clone(), merge_op(&parts, secs)?);
    }
    Ok(ops)
}

/// The ops (and `total`) of a run cut short, summed from the intervals
/// it sent: counts and histograms exact, rates over `secs`.
pub fn ops_of_intervals(
    intervals: &[IntervalSummary],
    secs: f64,
) -> Result<BTreeMap<String, OpSummary>, ResultError> {
    let mut names: Vec<&String> = intervals.iter().flat_map(|s| s.ops.keys()).collect();
    names.sort();
    names.dedup();
    let mut out = BTreeMap::new();
    for name in names {
        let r = added(intervals.iter().filter_map(|s| s.ops.get(name)))?;
        out.insert(name.clone(), super::op_summary(&r, secs.max(1e-9)));
    }
    Ok(out)
}

/// Folds what a run cut short sent in its intervals into `into` (the
/// merge of the runs that finished): ops, total, hits, misses, bytes and
/// the intervals themselves. What intervals do not carry (CPU,
/// connections, error classes) stays as `into` has it.
pub fn add_intervals(
    into: &mut RunResult,
    intervals: &[IntervalSummary],
) -> Result<(), ResultError> {
    let last = intervals.iter().map(|s| s.time_s).fold(0.0, f64::max);
    let secs = into.duration_s.max(last).max(1e-9);
    into.duration_s = secs;
    let mut part = ops_of_intervals(intervals, secs)?;
    if let Some(total) = part.remove("total") {
        into.total = merge_op(&[&into.total, &total], secs)?;
    }
    for (name, op) in part {
        let merged = match into.ops.get(&name) {
            Some(have) => merge_op(&[have, &op], secs)?,
            None => op,
        };
        into.ops.insert(name, merged);
    }
    let hits = into.gets.hits + intervals.iter().map(|s| s.hits).sum::<u64>();
    let misses = into.gets.misses + intervals.iter().map(|s| s.misses).sum::<u64>();
    into.gets = Gets {
        hits,
        misses,
        hit_ratio: ratio(hits, hits + misses),
    };
    let tx = into.bytes.tx + intervals.iter().map(|s| s.bytes_tx).sum::<u64>();
    let rx = into.bytes.rx + intervals.iter().map(|s| s.bytes_rx).sum::<u64>();
    into.bytes = Bytes {
        tx,
        rx,
        tx_mb_s: tx as f64 / 1e6 / secs,
        rx_mb_s: rx as f64 / 1e6 / secs,
    };
    into.intervals = merge_intervals(into.intervals.iter().chain(intervals), false, &|| false)?;
    Ok(())
}

/// How far apart the runs started, s: intervals of the same number are
/// the same stretch of time only when this is well under an interval.
pub fn start_spread_s(runs: &[RunResult]) -> f64 {
    let starts = runs.iter().map(|r| r.started_unix_s);
    starts.clone().fold(f64::NEG_INFINITY, f64::max) - starts.fold(f64::INFINITY, f64::min)
}

/// The parts' sum, summarised as a run's op is. `ok` is summed rather
/// than derived: on `total`, `errors` counts failures without a reply too.
pub(super) fn merge_op(parts: &[&OpSummary], secs: f64) -> Result<OpSummary, ResultError> {
    let all = OpRecorder {
        latency: Hdr::sum(parts.iter().map(|p| &p.latency_hdr))?,
        service: Hdr::sum(parts.iter().map(|p| &p.service_time_hdr))?,
        hits: parts.iter().map(|p| p.hits).sum(),
        misses: parts.iter().map(|p| p.misses).sum(),
        errors: parts.iter().map(|p| p.errors).sum(),
        // Summaries' errors hold any left out already.
        left_out: 0,
        parts: merged_parts(parts.iter().filter_map(|p| {
            let kept = p.latency_parts.as_ref()?;
            Some(kept.recorder(p.count))
        }))?,
        slots: None,
    };
    let secs = secs.max(1e-9);
    let ok: u64 = parts.iter().map(|p| p.ok).sum();
    // Batches only where every part has them: else they would not add up
    // to the merged count.
    let batches = match parts
        .iter()
        .map(|p| p.batches.as_ref())
        .collect::<Option<Vec<_>>>()
    {
        Some(all) => BatchSeries::merge(&all)?,
        None => None,
    };
    Ok(OpSummary {
        ok,
        ok_rate: ok as f64 / secs,
        batches,
        ..super::op_summary(&all, secs)
    })
}

fn merge_bytes(runs: &[RunResult], secs: f64) -> Bytes {
    let tx: u64 = runs.iter().map(|r| r.bytes.tx).sum();
    let rx: u64 = runs.iter().map(|r| r.bytes.rx).sum();
    let secs = secs.max(1e-9);
    Bytes {
        tx,
        rx,
        tx_mb_s: tx as f64 / 1e6 / secs,
        rx_mb_s: rx as f64 / 1e6 / secs,
    }
}

fn merge_client(runs: &[RunResult]) -> Result<Client, ResultError> {
    let lag = Hdr::sum(runs.iter().map(|r| &r.client.send_lag_hdr))?;
    let user: f64 = runs.iter().map(|r| r.client.cpu_user_s).sum();
    let sys: f64 = runs.iter().map(|r| r.client.cpu_sys_s).sum();
    let ops: u64 = runs.iter().map(|r| r.total.count).sum();
    let mut send_gaps = crate::stats::SendGaps::default();
    for r in runs {
        send_gaps.merge(&r.client.send_gaps);
    }
    let open_loop = runs.iter().any(|r| r.client.open_loop);
    Ok(Client {
        cpu_user_s: user,
        cpu_sys_s: sys,
        cpu_ns_per_op: (user + sys) * 1e9 / ops.max(1) as f64,
        worker_busy: runs
            .iter()
            .flat_map(|r| r.client.worker_busy.clone())
            .collect(),
        client_bound: runs.iter().any(|r| r.client.client_bound),
        send_lag_us: LagSummary {
            p50: super::percentile_us(&lag, 50.0),
            p99: super::percentile_us(&lag, 99.0),
            max: crate::stats::max_us(&lag),
        },
        send_lag_hdr: Hdr::encode(&lag),
        open_loop,
        send_gaps,
        send_gap_cv: send_gaps.cv().filter(|_| open_loop),
        waits: runs.iter().map(|r| r.client.waits).sum(),
        skips: runs.iter().map(|r| r.client.skips).sum(),
        peak_rss_bytes: runs
            .iter()
            .map(|r| r.client.peak_rss_bytes)
            .max()
            .unwrap_or(0),
        op_queue_hdr: Hdr::encode(&Hdr::sum(runs.iter().map(|r| &r.client.op_queue_hdr))?),
    })
}

/// Whether every run had the same server list, in the same order: then
/// their intervals' per-server rows add up row by row.
fn same_servers(runs: &[RunResult]) -> bool {
    runs.windows(2).all(|w| w[0].servers == w[1].servers)
}

/// Intervals of the same number are the same stretch of time in every run.
/// Why `merge_unless` gave up.
pub const STOPPED: &str = "stopped by a signal while merging";

fn merge_intervals<'a>(
    all: impl Iterator<Item = &'a IntervalSummary>,
    same_servers: bool,
    stopped: &dyn Fn() -> bool,
) -> Result<Vec<IntervalSummary>, ResultError> {
    let mut by_index: BTreeMap<u64, Vec<&IntervalSummary>> = BTreeMap::new();
    for s in all {
        by_index.entry(s.index).or_default().push(s);
    }
    by_index
        .into_iter()
        .map(|(index, parts)| match stopped() {
            true => Err(ResultError::Stopped),
            false => merge_interval_rows(index, &parts, same_servers),
        })
        .collect()
}

/// Intervals of one number from processes with servers of their own
/// order, as one (no per-server rows).
pub fn merge_interval(
    index: u64,
    parts: &[&IntervalSummary],
) -> Result<IntervalSummary, ResultError> {
    merge_interval_rows(index, parts, false)
}

fn merge_interval_rows(
    index: u64,
    parts: &[&IntervalSummary],
    same_servers: bool,
) -> Result<IntervalSummary, ResultError> {
    let secs = parts.iter().map(|p| p.duration_s).fold(0.0, f64::max);
    let mut names: Vec<&String> = parts.iter().flat_map(|p| p.ops.keys()).collect();
    names.sort();
    names.dedup();
    let mut ops = BTreeMap::new();
    for name in names {
        let merged = added(parts.iter().filter_map(|p| p.ops.get(name)))?;
        let mut op = IntervalOp::new(&merged, secs.max(1e-9));
        op.slots = added_slots(parts.iter().filter_map(|p| p.ops.get(name)))?;
        ops.insert(name.clone(), op);
    }
    Ok(IntervalSummary {
        index,
        time_s: parts.iter().map(|p| p.time_s).fold(0.0, f64::max),
        duration_s: secs,
        ops,
        hits: parts.iter().map(|p| p.hits).sum(),
        misses: parts.iter().map(|p| p.misses).sum(),
        errors: parts.iter().map(|p| p.errors).sum(),
        error_classes: parts.iter().flat_map(|p| &p.error_classes).fold(
            BTreeMap::new(),
            |mut all, (class, n)| {
                *all.entry(class.clone()).or_default() += n;
                all
            },
        ),
        client_cpu_s: parts.iter().map(|p| p.client_cpu_s).sum(),
        bytes_tx: parts.iter().map(|p| p.bytes_tx).sum(),
        bytes_rx: parts.iter().map(|p| p.bytes_rx).sum(),
        send_lag_hdr: Hdr::encode(&Hdr::sum(parts.iter().map(|p| &p.send_lag_hdr))?),
        servers: if same_servers {
            merge_server_rows(parts)
        } else {
            Vec::new()
        },
        replica: parts.iter().filter_map(|p| p.replica).reduce(|mut a, b| {
            a.merge(&b);
            a
        }),
    })
}

/// The parts' slots added slot by slot, where every part has them.
fn added_slots<'a>(
    parts: impl Iterator<Item = &'a IntervalOp>,
) -> Result<Option<Box<SlotHdrs>>, ResultError> {
    let Some(all) = parts
        .map(|p| p.slots.as_deref())
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    Ok(Some(Box::new(SlotHdrs::add(&all)?)))
}

/// One op type's interval parts as one recorder: histograms and counts
/// added.
fn added<'a>(parts: impl Iterator<Item = &'a IntervalOp>) -> Result<OpRecorder, ResultError> {
    let ps: Vec<&IntervalOp> = parts.collect();
    Ok(OpRecorder {
        latency: Hdr::sum(ps.iter().map(|p| &p.latency_hdr))?,
        service: Hdr::sum(ps.iter().map(|p| &p.service_time_hdr))?,
        hits: ps.iter().map(|p| p.hits).sum(),
        misses: ps.iter().map(|p| p.misses).sum(),
        errors: ps.iter().map(|p| p.errors).sum(),
        left_out: 0,
        parts: merged_parts(ps.iter().filter_map(|p| p.parts().transpose()))?,
        slots: None,
    })
}

/// The latency parts of several runs or intervals added (none where none
/// was stamped); the first that does not check refuses them all.
fn merged_parts<E>(
    parts: impl Iterator<Item = Result<crate::stats::parts::PartsRecorder, E>>,
) -> Result<Option<Box<crate::stats::parts::PartsRecorder>>, ResultError>
where
    ResultError: From<E>,
{
    let mut all: Option<Box<crate::stats::parts::PartsRecorder>> = None;
    for p in parts {
        all.get_or_insert_with(Box::default).merge(&p?);
    }
    Ok(all)
}

/// Per-server rows of the same servers, added row by row.
fn merge_server_rows(parts: &[&IntervalSummary]) -> Vec<crate::stats::IntervalServer> {
    let mut rows = vec![
        crate::stats::IntervalServer::default();
        parts.iter().map(|p| p.servers.len()).max().unwrap_or(0)
    ];
    for p in parts {
        for (row, s) in rows.iter_mut().zip(&p.servers) {
            row.add(s);
        }
    }
    rows
}

pub(super) fn sum_maps<'a>(
    maps: impl Iterator<Item = &'a BTreeMap<String, u64>>,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

fn union<'a>(items: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in items {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// `a / b`; 0 when `b` is.
pub(super) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Checks add up; the first examples are kept.
fn merge_checks(runs: &[RunResult]) -> crate::stats::CheckCounts {
    let mut all = crate::stats::CheckCounts::default();
    for r in runs {
        all.merge(&r.checks);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::merge_op;
    use crate::stats::{new_histogram, OpRecorder};

    /// A part of known latencies, ns: `n` draws between `lo` and `hi`
    /// from a fixed linear congruential sequence.
    fn samples(n: usize, lo: u64, hi: u64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                lo + (x >> 33) % (hi - lo)
            })
            .collect()
    }

    /// The raw samples' nearest-rank percentile, µs, as the range of its
    /// neighbouring ranks: quantile definitions differ by a rank.
    fn raw_percentile_us(sorted: &[u64], p: f64) -> (f64, f64) {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        let at = |r: usize| sorted[r.clamp(1, sorted.len()) - 1] as f64 / 1e3;
        (at(rank - 1), at(rank + 1))
    }

    #[test]
    fn merged_percentiles_are_those_of_the_raw_samples() {
        // Three agents unlike each other: fast and many, slow and few,
        // and a middle one.
        let parts = [
            samples(20_000, 100_000, 200_000, 1),
            samples(1_000, 1_000_000, 5_000_000, 2),
            samples(5_000, 50_000, 60_000, 3),
        ];
        let summaries: Vec<_> = parts
            .iter()
            .map(|p| {
                let mut r = OpRecorder::new();
                r.latency = new_histogram();
                for v in p {
                    r.latency.record(*v).unwrap();
                    r.service.record(*v).unwrap();
                }
                super::super::op_summary(&r, 1.0)
            })
            .collect();
        let merged = merge_op(&summaries.iter().collect::<Vec<_>>(), 1.0).unwrap();
        let mut all: Vec<u64> = parts.concat();
        all.sort_unstable();
        assert_eq!(merged.count, all.len() as u64);
        let q = &merged.latency_us;
        for (p, got) in [(50.0, q.p50), (90.0, q.p90), (99.0, q.p99), (99.9, q.p999)] {
            let (lo, hi) = raw_percentile_us(&all, p);
            // HdrHistogram with 3 significant digits: within 0.1 %.
            assert!(
                got >= lo * (1.0 - 1e-3) && got <= hi * (1.0 + 1e-3),
                "p{p}: merged {got} µs, raw samples {lo}..{hi} µs"
            );
        }
        // Averaging the parts' p99s, as some tools do, is far off: the
        // check above would catch a merge that did that.
        let averaged = summaries.iter().map(|s| s.latency_us.p99).sum::<f64>() / 3.0;
        assert!(
            (averaged - q.p99).abs() > q.p99 * 0.2,
            "{averaged} vs {}",
            q.p99
        );
    }
}

#[cfg(test)]
mod stop_tests {
    use super::{merge_intervals, STOPPED};
    use crate::stats::{new_histogram, Hdr, IntervalSummary};
    use std::cell::Cell;

    fn interval(index: u64) -> IntervalSummary {
        IntervalSummary {
            index,
            time_s: index as f64,
            duration_s: 1.0,
            ops: Default::default(),
            hits: 0,
            misses: 0,
            errors: 0,
            error_classes: Default::default(),
            client_cpu_s: 0.0,
            bytes_tx: 0,
            bytes_rx: 0,
            send_lag_hdr: Hdr::encode(&new_histogram()),
            servers: Vec::new(),
            replica: None,
        }
    }

    #[test]
    fn a_merge_asked_to_stop_gives_up_before_the_next_interval() {
        let parts: Vec<IntervalSummary> = (1..=10).map(interval).collect();
        let asked = Cell::new(0);
        // Stop once three intervals are merged.
        let stopped = || {
            asked.set(asked.get() + 1);
            asked.get() > 3
        };
        let r = merge_intervals(parts.iter().chain(&parts), false, &stopped);
        assert_eq!(r.unwrap_err().to_string(), STOPPED);
        assert_eq!(asked.get(), 4);
        let whole = merge_intervals(parts.iter().chain(&parts), false, &|| false).unwrap();
        assert_eq!(whole.len(), 10);
    }
}
