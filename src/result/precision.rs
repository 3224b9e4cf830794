//! How far a run's numbers can be trusted: a 95 % interval on every
//! printed percentile of every op type, and the verdict printed last (was
//! the run long enough, did its intervals look alike, was the rate held).

use super::{OpSummary, ResultError, RunResult};
use crate::precision::{
    estimate, judge, trend, Batches, Estimate, Samples, Shortfall, Stationarity, CONFIDENCE,
    MIN_BATCHES, MIN_INDEPENDENT_TAIL,
};
use crate::spec::precision::DEFAULT_TARGET;
use crate::stats::{ErrorClass, IntervalSummary};
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
    /// Why not met: each way it falls short (`precision::judge`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_of: Vec<Shortfall>,
    /// How many times longer the run would need to be, about, when not met.
    pub longer: Option<f64>,
    /// mcbench's own share of the latency at the percentile, µs: the
    /// client queue (less any wait for a free connection) and the client
    /// receive of the requests there, from the kernel's stamps. Null
    /// where no request was stamped: the share was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share_us: Option<f64>,
}

impl PercentileCheck {
    /// Whether mcbench's own share exceeds the interval's half-width: the
    /// interval is then about the server and mcbench together.
    pub fn client_share_exceeds_interval(&self) -> bool {
        match (self.client_share_us, self.estimate.absolute_half_width()) {
            (Some(share), Some(half)) => share > half,
            _ => false,
        }
    }
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
    pub fn attach_precision(&mut self) -> Result<(), ResultError> {
        let censored = censored(self);
        let timeout_ns = timeout_ns(self);
        let pcts = self.percentiles.clone();
        for s in self.ops.values_mut() {
            fill(s, &pcts, (0, timeout_ns))?;
        }
        fill(&mut self.total, &pcts, (censored, timeout_ns))?;
        if let Some(m) = &mut self.measure {
            for s in m.ops.values_mut() {
                fill(s, &pcts, (0, timeout_ns))?;
            }
            fill(&mut m.total, &pcts, (0, timeout_ns))?;
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
    (censored, timeout_ns): (u64, u64),
) -> Result<(), ResultError> {
    let lat = s.latency_hdr.decode()?;
    if let Some(parts) = s.latency_parts.as_mut() {
        parts.at = parts.at_percentiles(&lat, pcts);
    }
    let batch_s = s.batches.as_ref().map_or(0.0, |b| b.batch_s);
    let lat_batches = s.batches.as_ref().map(|b| b.latency_hists()).transpose()?;
    s.latency_ci = estimates(
        &lat,
        (lat_batches.as_deref(), batch_s),
        pcts,
        (censored, timeout_ns),
    );
    let svc = s.service_time_hdr.decode()?;
    let svc_batches = s.batches.as_ref().map(|b| b.service_hists()).transpose()?;
    // A service time is censored just as its latency is.
    s.service_time_ci = estimates(
        &svc,
        (svc_batches.as_deref(), batch_s),
        pcts,
        (censored, timeout_ns),
    );
    Ok(())
}

fn estimates(
    all: &Histogram<u64>,
    (batches, batch_s): (Option<&[Histogram<u64>]>, f64),
    pcts: &[f64],
    (censored, censored_at_ns): (u64, u64),
) -> Vec<Estimate> {
    let s = Samples {
        all,
        batches: batches.map(|hists| Batches { hists, batch_s }),
        censored,
        censored_at_ns,
    };
    pcts.iter().map(|p| estimate(&s, *p)).collect()
}

/// The run's full intervals, in time order: those as long as
/// `--interval`, give or take 10 %.
///
/// The last interval, cut short where sending stopped, is left out: it
/// holds the drain, another regime than the run's (the samples stay in
/// the whole-run histogram all the same).
fn full_intervals(intervals: &[IntervalSummary], interval: Duration) -> Vec<&IntervalSummary> {
    let want = interval.as_secs_f64();
    intervals
        .iter()
        .filter(|s| s.duration_s >= 0.9 * want)
        .collect()
}

impl RunResult {
    /// A percentile of the SLO latency (the measurement group's, else
    /// every request's, with its batches and censored requests) with its
    /// 95 % interval.
    pub fn slo_estimate(&self, percent: f64) -> Result<Estimate, ResultError> {
        Ok(self.slo_estimates(&[percent])?.remove(0))
    }

    fn slo_estimates(&self, percents: &[f64]) -> Result<Vec<Estimate>, ResultError> {
        let (whose, op) = self.slo_op();
        let all = op.latency_hdr.decode()?;
        let batches = op.batches.as_ref().map(|b| b.latency_hists()).transpose()?;
        let batch_s = op.batches.as_ref().map_or(0.0, |b| b.batch_s);
        let censored = if whose == "load" { censored(self) } else { 0 };
        Ok(estimates(
            &all,
            (batches.as_deref(), batch_s),
            percents,
            (censored, timeout_ns(self)),
        ))
    }

    /// The op summary an SLO reads: the measurement group's total when
    /// there is one, else the run's.
    fn slo_op(&self) -> (&'static str, &OpSummary) {
        match &self.measure {
            Some(m) => ("measure", &m.total),
            None => ("load", &self.total),
        }
    }
}

fn timeout_ns(r: &RunResult) -> u64 {
    r.spec.load.timeout.as_nanos().min(u64::MAX as u128) as u64
}

/// The verdict on the SLO latency (the measurement group's, else every
/// request's): targets, stationarity, warm-up and rate.
fn verdict(r: &RunResult) -> Result<PrecisionVerdict, ResultError> {
    let wanted = targets(r);
    let percents: Vec<f64> = wanted.iter().map(|(p, _, _)| *p).collect();
    let (_, slo) = r.slo_op();
    let checks = r
        .slo_estimates(&percents)?
        .into_iter()
        .zip(wanted)
        .map(|(e, (_, target, named))| {
            let share = client_share_us(slo, e.percentile);
            check(e, target, named, share)
        })
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

/// mcbench's own share of the latency at `percentile` of `op`, µs: its
/// queue (less waits for a free connection, the server's pace) and its
/// receive, where the kernel stamped requests there.
fn client_share_us(op: &OpSummary, percentile: f64) -> Option<f64> {
    let at = op
        .latency_parts
        .as_ref()?
        .at
        .iter()
        .find(|a| a.percentile == percentile)
        .filter(|a| a.requests > 0)?;
    let m = &at.mean_us;
    Some(((m.client_queue - at.waited_us).max(0.0) + m.client_receive).max(0.0))
}

/// (percentile, target, named): the `--precision` targets, then the
/// printed percentiles not named, at the default.
fn targets(r: &RunResult) -> Vec<(f64, f64, bool)> {
    let mut out: Vec<(f64, f64, bool)> = r
        .spec
        .load
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

fn check(e: Estimate, target: f64, named: bool, client_share_us: Option<f64>) -> PercentileCheck {
    let half = e.relative_half_width();
    let short_of = judge(&e, target);
    let met = short_of.is_empty();
    PercentileCheck {
        longer: (!met).then(|| longer(&e, half, target, &short_of)),
        relative_half_width: half,
        target,
        named,
        met,
        short_of,
        client_share_us,
        estimate: e,
    }
}

/// About how many times longer the run must be for `e` to meet `target`,
/// the most any shortfall asks: a half-width shrinks as 1/√n; without a
/// bound, the rule of thumb of (1.96/target)² independent samples beyond
/// the percentile; episodes and batches grow with the run.
fn longer(e: &Estimate, half: Option<f64>, target: f64, short_of: &[Shortfall]) -> f64 {
    let tail = e.independent_tail().max(1.0);
    let by_tail = (1.96 / target).powi(2) / tail;
    let factor = |s: &Shortfall| match s {
        // An interval that reaches the largest sample does not shrink as
        // 1/√n at first: no more than the independent tail asks.
        Shortfall::TooWide => half.map_or(1.0, |h| (h / target).powi(2).min(by_tail.max(1.0))),
        Shortfall::NoBound => by_tail,
        Shortfall::FewEpisodes => MIN_INDEPENDENT_TAIL / tail,
        // Batches correlated at a length that leaves 20 to 39 need
        // twice as many; too few need 20.
        Shortfall::CannotTellDrift if e.batches >= MIN_BATCHES => {
            2.0 * MIN_BATCHES as f64 / e.batches as f64
        }
        Shortfall::CannotTellDrift => MIN_BATCHES as f64 / e.batches.max(1) as f64,
    };
    let most = short_of.iter().map(factor).fold(1.0, f64::max);
    (most * 10.0).ceil() / 10.0
}

/// The full intervals that carried requests, with their total's p99, µs,
/// in time order.
fn busy_intervals(r: &RunResult) -> Vec<(&IntervalSummary, f64)> {
    full_intervals(&r.intervals, r.spec.recording.interval)
        .into_iter()
        .filter_map(|s| s.ops.get("total").map(|t| (s, t)))
        .filter(|(_, t)| t.count > 0)
        .map(|(s, t)| (s, t.p99_us))
        .collect()
}

/// The stationarity of the full intervals' total latency.
/// Decoded one interval at a time: a saved run of thousands of intervals
/// would otherwise hold thousands of histograms at once.
fn stationarity(r: &RunResult) -> Result<Stationarity, ResultError> {
    let mut kept = Vec::new();
    for (s, _) in busy_intervals(r) {
        let hdr = &s.ops["total"].latency_hdr;
        if hdr.count()? > 0 {
            kept.push(hdr);
        }
    }
    let mut next = kept.iter();
    crate::precision::stationarity_of(kept.len(), || match next.next() {
        Some(hdr) => Ok(hdr.decode()?),
        None => Err(ResultError::FewerHistograms),
    })
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
