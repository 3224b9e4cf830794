//! A percentile with its confidence interval: the order-statistic interval
//! over every sample, the batch-means interval over the run's intervals,
//! and the wider of the two; censored samples (timed out, cut off) counted
//! above every recorded one.

use super::order::{ranks, value_at_ranks};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The confidence of every interval mcbench prints.
pub const CONFIDENCE: f64 = 0.95;

/// Batch means need at least this many batches...
const MIN_BATCHES: usize = 5;
/// ...and use at most this many (research: 20-30).
const MAX_BATCHES: usize = 30;
/// Expected samples beyond the percentile in each batch, at least: with
/// fewer, a batch's percentile is biased low and the spread says nothing.
const MIN_TAIL_PER_BATCH: f64 = 20.0;
/// The batch interval replaces the binomial one when it is this much
/// wider: with 30 batches their spread is itself uncertain by ~13 %, and
/// taking the wider of two equals would cover more than the 95 % said.
const CORRELATED_RATIO: f64 = 1.25;

/// Which interval a percentile carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Order statistics of every sample (exact binomial ranks).
    Binomial,
    /// Batch means over the run's intervals: over 1.25× as wide as the
    /// binomial one, so the samples were correlated in time.
    BatchMeans,
}

/// One percentile of one histogram, µs, with its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub percentile: f64,
    /// The value at the percentile (the histogram's, as reports print it).
    pub value_us: f64,
    pub lower_us: f64,
    /// None: no finite upper bound; the percentile is at least `lower_us`.
    pub upper_us: Option<f64>,
    pub method: Method,
    /// Samples beyond the percentile.
    pub tail_samples: u64,
    /// False when no finite interval exists (too few samples beyond the
    /// percentile, or it falls among the censored requests).
    pub estimable: bool,
    /// The percentile lies among requests that never got an answer: it is
    /// at least `lower_us` (the timeout), whatever was recorded.
    pub censored: bool,
}

impl Estimate {
    /// The larger distance from the value to a bound, over the value;
    /// None without a finite upper bound.
    pub fn relative_half_width(&self) -> Option<f64> {
        let upper = self.upper_us?;
        let v = self.value_us.max(f64::MIN_POSITIVE);
        Some(
            (upper - self.value_us)
                .max(self.value_us - self.lower_us)
                .max(0.0)
                / v,
        )
    }

    /// `[205.1, 221.3]`, or `≥ 205.1` without an upper bound.
    pub fn interval_text(&self) -> String {
        match self.upper_us {
            Some(u) => format!("[{}, {}]", us(self.lower_us), us(u)),
            None => format!("≥ {}", us(self.lower_us)),
        }
    }
}

/// µs with a precision that suits the magnitude.
pub fn us(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// What a percentile is estimated from.
pub struct Samples<'a> {
    /// Every recorded sample, ns.
    pub all: &'a Histogram<u64>,
    /// The same samples in time order, one histogram per interval (may be
    /// empty: then only the binomial interval is given).
    pub intervals: &'a [Histogram<u64>],
    /// Requests with no latency, above every recorded one: timed out, cut
    /// off, lost.
    pub censored: u64,
    /// What a censored request is known to exceed, ns (the timeout).
    pub censored_at_ns: u64,
}

/// `percent` (0 < percent ≤ 100) of `s`, with its interval.
pub fn estimate(s: &Samples, percent: f64) -> Estimate {
    let p = (percent / 100.0).clamp(0.0, 1.0);
    let recorded = s.all.len();
    let n = recorded + s.censored;
    let tail_samples = ((n as f64) * (1.0 - p)).round() as u64;
    let us_of = |ns: u64| ns as f64 / 1e3;
    let value_rank = ((p * n as f64).ceil() as u64).max(1);
    if n == 0 {
        return Estimate {
            percentile: percent,
            value_us: 0.0,
            lower_us: 0.0,
            upper_us: None,
            method: Method::Binomial,
            tail_samples: 0,
            estimable: false,
            censored: false,
        };
    }
    if value_rank > recorded {
        // Among the censored: at least the timeout, never the largest
        // finite latency.
        let at = s.censored_at_ns.max(s.all.max());
        return Estimate {
            percentile: percent,
            value_us: us_of(at),
            lower_us: us_of(at),
            upper_us: None,
            method: Method::Binomial,
            tail_samples,
            estimable: false,
            censored: true,
        };
    }
    // Ranks count the censored requests too: p of n, among the recorded.
    let value = if s.censored == 0 {
        s.all.value_at_quantile(p)
    } else {
        s.all.value_at_quantile(value_rank as f64 / recorded as f64)
    };
    let binomial = binomial_interval(s, n, p, value);
    let mut e = Estimate {
        percentile: percent,
        value_us: us_of(value),
        lower_us: binomial.0 / 1e3,
        upper_us: binomial.1.map(|u| u / 1e3),
        method: Method::Binomial,
        tail_samples,
        estimable: binomial.1.is_some(),
        censored: false,
    };
    if let (Some(upper), Some((lo, hi))) = (binomial.1, batch_interval(s, p, value)) {
        if (hi - lo) as f64 > CORRELATED_RATIO * (upper - binomial.0) {
            e.lower_us = us_of(lo);
            e.upper_us = Some(us_of(hi));
            e.method = Method::BatchMeans;
        }
    }
    e
}

/// The order-statistic interval, ns: (lower, upper if finite), holding
/// `value`. Ranks beyond the recorded samples fall among the censored
/// ones: no finite upper bound.
fn binomial_interval(s: &Samples, n: u64, p: f64, value: u64) -> (f64, Option<f64>) {
    let r = ranks(n, p, CONFIDENCE);
    let recorded = s.all.len();
    let wanted = [r.lower.unwrap_or(1), r.upper.unwrap_or(u64::MAX)];
    let at = value_at_ranks(s.all, &wanted);
    // No lower rank: the interval starts at the smallest possible value.
    let lower = match (r.lower, at[0]) {
        (Some(_), Some(v)) => v,
        _ => s.all.lowest_equivalent(s.all.min()) as f64,
    };
    let upper = match r.upper {
        Some(u) if u <= recorded => at[1],
        _ => None,
    };
    let value = value as f64;
    (lower.min(value), upper.map(|u| u.max(value)))
}

/// The batch-means interval, ns: the run's intervals grouped into 5-30
/// batches of consecutive intervals, each holding enough samples beyond
/// the percentile; centred on the run's own value (sectioning), its
/// half-width t·s/√b from the batches' percentiles. None when the
/// intervals cannot make 5 such batches, or when requests were censored
/// (the batches would not see them).
fn batch_interval(s: &Samples, p: f64, value: u64) -> Option<(u64, u64)> {
    if s.censored > 0 || s.intervals.is_empty() {
        return None;
    }
    let quantiles = batch_quantiles(s.intervals, p)?;
    let b = quantiles.len() as f64;
    let mean = quantiles.iter().sum::<f64>() / b;
    let var = quantiles.iter().map(|q| (q - mean).powi(2)).sum::<f64>() / (b - 1.0);
    let t = StudentsT::new(0.0, 1.0, b - 1.0)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
    let half = t * (var / b).sqrt();
    let v = value as f64;
    let lo = (v - half).max(0.0) as u64;
    let hi = (v + half).ceil() as u64;
    Some((s.all.lowest_equivalent(lo), s.all.highest_equivalent(hi)))
}

/// The percentile of each batch of `m` consecutive intervals (the last
/// takes any left over), ns; None with fewer than 5 batches. `m` is the
/// fewest intervals that hold 20 expected samples beyond the percentile
/// and make at most 30 batches: fixed by the intervals' counts, so one
/// more interval adds to the last batch rather than cutting every batch
/// anew (a run that stops once precise must not see its batches reshuffled).
fn batch_quantiles(intervals: &[Histogram<u64>], p: f64) -> Option<Vec<f64>> {
    let k = intervals.len();
    let n: u64 = intervals.iter().map(|h| h.len()).sum();
    let tail_per_interval = n as f64 * (1.0 - p) / k.max(1) as f64;
    if tail_per_interval <= 0.0 {
        return None;
    }
    let m = k
        .div_ceil(MAX_BATCHES)
        .max((MIN_TAIL_PER_BATCH / tail_per_interval).ceil() as usize)
        .max(1);
    let b = k / m;
    if b < MIN_BATCHES {
        return None;
    }
    let mut out = Vec::with_capacity(b);
    let mut batch = intervals.first()?.clone();
    for i in 0..b {
        let end = if i + 1 == b { k } else { (i + 1) * m };
        batch.reset();
        for h in &intervals[i * m..end] {
            batch.add(h).ok()?;
        }
        if !batch.is_empty() {
            out.push(batch.value_at_quantile(p) as f64);
        }
    }
    (out.len() >= MIN_BATCHES).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist() -> Histogram<u64> {
        Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap()
    }

    #[test]
    fn a_percentile_among_the_censored_is_at_least_the_timeout() {
        let mut all = hist();
        for v in 1..=990u64 {
            all.record(v * 1000).unwrap();
        }
        let s = Samples {
            all: &all,
            intervals: &[],
            censored: 10,
            censored_at_ns: 1_000_000_000,
        };
        let p999 = estimate(&s, 99.9);
        assert!(p999.censored && !p999.estimable);
        assert_eq!(p999.value_us, 1e6);
        assert_eq!(p999.interval_text(), "≥ 1000000");
        let p50 = estimate(&s, 50.0);
        assert!(!p50.censored && p50.estimable);
        assert!(p50.lower_us <= 500.0 && p50.upper_us.unwrap() >= 500.0);
    }

    #[test]
    fn too_few_samples_beyond_leave_no_upper_bound() {
        let mut all = hist();
        for v in 1..=1000u64 {
            all.record(v * 1000).unwrap();
        }
        let s = Samples {
            all: &all,
            intervals: &[],
            censored: 0,
            censored_at_ns: 0,
        };
        let e = estimate(&s, 99.99);
        assert!(!e.estimable && e.upper_us.is_none() && !e.censored);
        assert_eq!(e.relative_half_width(), None);
        assert!(estimate(&s, 99.0).estimable);
    }

    #[test]
    fn batches_that_disagree_widen_the_interval() {
        // Ten intervals whose levels drift apart: the batch interval is the
        // wider one.
        let mut intervals = Vec::new();
        let mut all = hist();
        for i in 0..10u64 {
            let mut h = hist();
            for v in 0..10_000u64 {
                let x = 100_000 + i * 20_000 + v % 1000;
                h.record(x).unwrap();
                all.record(x).unwrap();
            }
            intervals.push(h);
        }
        let s = Samples {
            all: &all,
            intervals: &intervals,
            censored: 0,
            censored_at_ns: 0,
        };
        let e = estimate(&s, 50.0);
        assert_eq!(e.method, Method::BatchMeans);
        assert!(e.upper_us.unwrap() - e.lower_us > 50.0, "{e:?}");
    }
}
