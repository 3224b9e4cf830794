//! How far a run's numbers can be trusted: a 95 % interval on every
//! printed percentile of every op type, and the verdict printed last (was
//! the run long enough, did its intervals look alike, was the rate held).

use super::{OpSummary, RunResult};
use crate::precision::{estimate, trend, Estimate, Samples, Stationarity, CONFIDENCE};
use crate::spec::precision::DEFAULT_TARGET;
use crate::stats::{ErrorClass, Hdr, IntervalSummary};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An interval's rate may stray from the offered rate by this share, or
/// by 3 Poisson standard deviations, whichever is more.
const RATE_SLACK: f64 = 0.02;

/// The verdict on a run, from its total (or measurement group's) latency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrecisionVerdict {
    pub confidence: f64,
    /// Each printed percentile and each `--precision` target.
    pub checks: Vec<PercentileCheck>,
    pub stationarity: Stationarity,
    /// MSER's suggested warm-up cut, s, when the start differs from the rest.
    pub warmup_cut_s: Option<f64>,
    pub rate: RateHeld,
    /// Every named target met (every printed percentile's default when
    /// none is named) and the intervals stationary (or too few to tell).
    pub long_enough: bool,
}

/// One percentile against its target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PercentileCheck {
    #[serde(flatten)]
    pub estimate: Estimate,
    /// Larger distance to a bound over the value; null without an upper bound.
    pub relative_half_width: Option<f64>,
    pub target: f64,
    /// Named with `--precision` (else the default for printed ones).
    pub named: bool,
    pub met: bool,
    /// How many times longer the run would need to be, about, when not met.
    pub longer: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RateHeld {
    /// The offered rate, /s (open loop).
    pub offered: Option<f64>,
    /// The interval farthest from it: its rate over the offered, less one.
    pub worst: Option<f64>,
    pub held: Option<bool>,
}

impl RunResult {
    /// Fills every op's intervals and the verdict; run after a result is
    /// built, merged or read back from a file that lacks them.
    pub fn attach_precision(&mut self) -> Result<(), String> {
        let censored = censored(self);
        let timeout_ns = timeout_ns(self);
        let pcts = self.percentiles.clone();
        let full = full_intervals(&self.intervals, self.spec.interval);
        for (name, s) in self.ops.iter_mut() {
            fill(s, &pcts, &full, name, (0, timeout_ns))?;
        }
        fill(
            &mut self.total,
            &pcts,
            &full,
            "total",
            (censored, timeout_ns),
        )?;
        if let Some(m) = &mut self.measure {
            for s in m.ops.values_mut() {
                fill(s, &pcts, &[], "", (0, timeout_ns))?;
            }
            fill(&mut m.total, &pcts, &[], "", (0, timeout_ns))?;
        }
        self.verdict = Some(verdict(self)?);
        Ok(())
    }
}

/// Requests whose latency was never measured: above every recorded one.
fn censored(r: &RunResult) -> u64 {
    ErrorClass::ALL
        .iter()
        .filter(|c| c.censors_latency())
        .filter_map(|c| r.errors.get(c.name()))
        .sum()
}

/// The intervals of one op's latency and service time.
fn fill(
    s: &mut OpSummary,
    pcts: &[f64],
    full: &[&IntervalSummary],
    op: &str,
    (censored, timeout_ns): (u64, u64),
) -> Result<(), String> {
    let series = |pick: fn(&crate::stats::IntervalOp) -> &Hdr| series_of(full, op, pick);
    let lat = s.latency_hdr.decode()?;
    if let Some(parts) = s.latency_parts.as_mut() {
        parts.at = parts.at_percentiles(&lat, pcts);
    }
    let lat_parts = series(|o| &o.latency_hdr)?;
    s.latency_ci = estimates(&lat, &lat_parts, pcts, (censored, timeout_ns));
    let svc = s.service_time_hdr.decode()?;
    let svc_parts = series(|o| &o.service_time_hdr)?;
    // A service time is censored just as its latency is.
    s.service_time_ci = estimates(&svc, &svc_parts, pcts, (censored, timeout_ns));
    Ok(())
}

fn estimates(
    all: &Histogram<u64>,
    parts: &[Histogram<u64>],
    pcts: &[f64],
    (censored, censored_at_ns): (u64, u64),
) -> Vec<Estimate> {
    let s = Samples {
        all,
        intervals: parts,
        censored,
        censored_at_ns,
    };
    pcts.iter().map(|p| estimate(&s, *p)).collect()
}

/// The run's full intervals, in time order: those as long as
/// `--interval`, give or take 10 %.
///
/// The last interval, cut short where sending stopped, is left out: it
/// holds the drain, another regime than the run's, and merged into the
/// last batch it moved a p99 interval from ±4 % to ±12 % (the samples
/// stay in the whole-run histogram all the same).
fn full_intervals(intervals: &[IntervalSummary], interval: Duration) -> Vec<&IntervalSummary> {
    let want = interval.as_secs_f64();
    intervals
        .iter()
        .filter(|s| s.duration_s >= 0.9 * want)
        .collect()
}

/// One op's histograms over the full intervals (empty when the op is
/// not in them).
fn series_of(
    full: &[&IntervalSummary],
    op: &str,
    pick: fn(&crate::stats::IntervalOp) -> &Hdr,
) -> Result<Vec<Histogram<u64>>, String> {
    full.iter()
        .filter_map(|s| s.ops.get(op))
        .map(|o| pick(o).decode())
        .collect()
}

impl RunResult {
    /// A percentile of the SLO latency (the measurement group's, else
    /// every request's, with its intervals and censored requests) with
    /// its 95 % interval.
    pub fn slo_estimate(&self, percent: f64) -> Result<Estimate, String> {
        Ok(self.slo_estimates(&[percent])?.remove(0))
    }

    fn slo_estimates(&self, percents: &[f64]) -> Result<Vec<Estimate>, String> {
        let (whose, hdr) = self.slo_latency();
        let all = hdr.decode()?;
        let load = whose == "load";
        let parts = if load {
            let full = full_intervals(&self.intervals, self.spec.interval);
            series_of(&full, "total", |o| &o.latency_hdr)?
        } else {
            Vec::new()
        };
        let samples = Samples {
            all: &all,
            intervals: &parts,
            censored: if load { censored(self) } else { 0 },
            censored_at_ns: timeout_ns(self),
        };
        Ok(percents.iter().map(|p| estimate(&samples, *p)).collect())
    }
}

fn timeout_ns(r: &RunResult) -> u64 {
    r.spec.timeout.as_nanos().min(u64::MAX as u128) as u64
}

/// The verdict on the SLO latency (the measurement group's, else every
/// request's): targets, stationarity, warm-up and rate.
fn verdict(r: &RunResult) -> Result<PrecisionVerdict, String> {
    let wanted = targets(r);
    let percents: Vec<f64> = wanted.iter().map(|(p, _, _)| *p).collect();
    let checks = r
        .slo_estimates(&percents)?
        .into_iter()
        .zip(wanted)
        .map(|(e, (_, target, named))| check(e, target, named))
        .collect::<Vec<_>>();
    let stationarity = stationarity(r)?;
    let judged: Vec<&PercentileCheck> = if checks.iter().any(|c| c.named) {
        checks.iter().filter(|c| c.named).collect()
    } else {
        checks.iter().collect()
    };
    let long_enough = judged.iter().all(|c| c.met) && stationarity.stationary != Some(false);
    Ok(PrecisionVerdict {
        confidence: CONFIDENCE,
        checks,
        warmup_cut_s: warmup_cut(r),
        rate: rate_held(r),
        stationarity,
        long_enough,
    })
}

/// (percentile, target, named): the `--precision` targets, then the
/// printed percentiles not named, at the default.
fn targets(r: &RunResult) -> Vec<(f64, f64, bool)> {
    let mut out: Vec<(f64, f64, bool)> = r
        .spec
        .precision
        .iter()
        .map(|t| (t.percentile, t.relative, true))
        .collect();
    for p in &r.percentiles {
        if *p < 100.0 && !out.iter().any(|(q, _, _)| q == p) {
            out.push((*p, DEFAULT_TARGET, false));
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn check(e: Estimate, target: f64, named: bool) -> PercentileCheck {
    let half = e.relative_half_width();
    let met = e.estimable && half.is_some_and(|h| h <= target);
    PercentileCheck {
        longer: (!met).then(|| longer(&e, half, target)),
        relative_half_width: half,
        target,
        named,
        met,
        estimate: e,
    }
}

/// About how many times longer the run must be for `e` to meet `target`:
/// a half-width shrinks as 1/√n; without a bound, the rule of thumb of
/// (1.96/target)² samples beyond the percentile.
fn longer(e: &Estimate, half: Option<f64>, target: f64) -> f64 {
    let n = (e.tail_samples as f64 / (1.0 - e.percentile / 100.0)).max(1.0);
    let need_tail = (1.96 / target).powi(2);
    let by_tail = need_tail / (n * (1.0 - e.percentile / 100.0)).max(1.0);
    let factor = match half {
        Some(h) if e.estimable => (h / target).powi(2),
        _ => by_tail,
    };
    (factor.max(1.0) * 10.0).ceil() / 10.0
}

/// The full intervals that carried requests, with their total's p99, µs,
/// in time order.
fn busy_intervals(r: &RunResult) -> Vec<(&IntervalSummary, f64)> {
    full_intervals(&r.intervals, r.spec.interval)
        .into_iter()
        .filter_map(|s| s.ops.get("total").map(|t| (s, t)))
        .filter(|(_, t)| t.count > 0)
        .map(|(s, t)| (s, t.p99_us))
        .collect()
}

/// The stationarity of the full intervals' total latency.
fn stationarity(r: &RunResult) -> Result<Stationarity, String> {
    let parts = busy_intervals(r)
        .iter()
        .map(|(s, _)| s.ops["total"].latency_hdr.decode())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::precision::stationarity(&parts))
}

/// MSER over the full intervals' p99: the warm-up worth cutting, s.
fn warmup_cut(r: &RunResult) -> Option<f64> {
    let full = busy_intervals(r);
    let p99s: Vec<f64> = full.iter().map(|(_, p)| *p).collect();
    let cut = trend::mser_cut(&p99s)?;
    (cut > 0).then(|| full[..cut].iter().map(|(s, _)| s.duration_s).sum())
}

/// Whether each full interval carried the offered rate (open loop).
fn rate_held(r: &RunResult) -> RateHeld {
    let Some(offered) = r.spec.rate() else {
        return RateHeld::default();
    };
    let full = busy_intervals(r);
    let mut worst: Option<f64> = None;
    let mut held = true;
    for (s, _) in &full {
        let expected = offered * s.duration_s;
        let got = s.ops["total"].count as f64;
        let off = got / expected.max(1.0) - 1.0;
        let slack = RATE_SLACK.max(3.0 / expected.max(1.0).sqrt());
        held &= off.abs() <= slack;
        if worst.is_none_or(|w: f64| off.abs() > w.abs()) {
            worst = Some(off);
        }
    }
    RateHeld {
        offered: Some(offered),
        worst,
        held: (!full.is_empty()).then_some(held),
    }
}
