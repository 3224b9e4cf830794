//! A percentile with its confidence interval: the order-statistic
//! interval over every sample, its ranks those of the samples' worth in
//! independent ones where the run's batches show the tail clustered or
//! drifting (`dispersion`); censored samples (timed out, cut off) counted
//! above every recorded one.

use super::dispersion::{dispersion, Batches, Dispersion};
use super::order::{scaled_ranks, value_at_ranks};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The confidence of every interval mcbench prints.
pub const CONFIDENCE: f64 = 0.95;

/// A design effect from which the text marks an interval as widened for
/// correlated samples: 1.25× the binomial interval's width, or more.
pub const MARKED_EFFECT: f64 = 1.5625;

/// Which interval a percentile carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Order statistics of every sample (exact binomial ranks).
    Binomial,
    /// The binomial ranks of the samples' worth in independent ones
    /// (n / design effect), scaled back: the tail's samples varied from
    /// batch to batch more than independent ones would.
    Effective,
    /// Batch means over the run's intervals (results saved before 0.1's
    /// batches; read, never made).
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
    /// The tail count's variance over the binomial's (`dispersion`): the
    /// ranks are those of n / design_effect samples. 1 without batches.
    #[serde(default = "one")]
    pub design_effect: f64,
    /// Batches the tail was judged over, at the length judged (0: none).
    #[serde(default)]
    pub batches: usize,
    /// Their length, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_s: Option<f64>,
    /// At least 20 batches that look independent: drift within the run
    /// would have shown. False: the run cannot tell.
    #[serde(default)]
    pub drift_judged: bool,
    /// The episodes the tail came in, where its samples cluster in time
    /// (a stall delays every request in flight at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episodes: Option<u64>,
}

fn one() -> f64 {
    1.0
}

#[cfg(test)]
impl Estimate {
    /// p99 at `value` ± `half` µs by the binomial ranks, `tail` samples
    /// beyond, over 30 independent batches: the tests' fixture.
    pub(crate) fn p99_for_tests(value: f64, half: f64, tail: u64) -> Estimate {
        Estimate {
            percentile: 99.0,
            value_us: value,
            lower_us: value - half,
            upper_us: Some(value + half),
            method: Method::Binomial,
            tail_samples: tail,
            estimable: true,
            censored: false,
            design_effect: 1.0,
            batches: 30,
            batch_s: Some(0.1),
            drift_judged: true,
            episodes: None,
        }
    }
}

impl Estimate {
    /// The larger distance from the value to a bound, over the value;
    /// None without a finite upper bound.
    pub fn relative_half_width(&self) -> Option<f64> {
        let upper = self.upper_us?;
        let v = self.value_us.max(f64::MIN_POSITIVE);
        Some(self.half_width_us(upper) / v)
    }

    /// The larger distance from the value to a bound, µs.
    fn half_width_us(&self, upper: f64) -> f64 {
        (upper - self.value_us)
            .max(self.value_us - self.lower_us)
            .max(0.0)
    }

    /// The larger distance from the value to a bound, µs; None without a
    /// finite upper bound.
    pub fn absolute_half_width(&self) -> Option<f64> {
        self.upper_us.map(|u| self.half_width_us(u))
    }

    /// Independent events the tail holds: its episodes where counted,
    /// else its samples over the design effect.
    pub fn independent_tail(&self) -> f64 {
        match self.episodes {
            Some(e) => e as f64,
            None => self.tail_samples as f64 / self.design_effect.max(1.0),
        }
    }

    /// `[205.1, 221.3]`, or `≥ 205.1` without an upper bound.
    pub fn interval_text(&self) -> String {
        match self.upper_us {
            Some(u) => format!("[{}, {}]", us(self.lower_us), us(u)),
            None => format!("≥ {}", us(self.lower_us)),
        }
    }

    fn empty(percent: f64) -> Estimate {
        Estimate {
            percentile: percent,
            value_us: 0.0,
            lower_us: 0.0,
            upper_us: None,
            method: Method::Binomial,
            tail_samples: 0,
            estimable: false,
            censored: false,
            design_effect: 1.0,
            batches: 0,
            batch_s: None,
            drift_judged: false,
            episodes: None,
        }
    }

    fn judged_over(&mut self, d: &Dispersion) {
        self.design_effect = d.design_effect;
        self.batches = d.batches;
        self.batch_s = Some(d.batch_s);
        self.drift_judged = d.independent;
        self.episodes = d.episodes;
        if d.design_effect > 1.0 {
            self.method = Method::Effective;
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
    /// The same samples cut in time order into short batches (None: only
    /// the binomial interval, and drift not judged).
    pub batches: Option<Batches<'a>>,
    /// Requests with no latency, above every recorded one: timed out, cut
    /// off, lost.
    pub censored: u64,
    /// What a censored request is known to exceed, ns (the timeout).
    pub censored_at_ns: u64,
}

impl<'a> Samples<'a> {
    /// `all` alone: no batches, nothing censored.
    pub fn alone(all: &'a Histogram<u64>) -> Self {
        Samples {
            all,
            batches: None,
            censored: 0,
            censored_at_ns: 0,
        }
    }
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
        return Estimate::empty(percent);
    }
    if value_rank > recorded {
        // Among the censored: at least the timeout, never the largest
        // finite latency.
        let at = s.censored_at_ns.max(s.all.max());
        return Estimate {
            value_us: us_of(at),
            lower_us: us_of(at),
            tail_samples,
            censored: true,
            ..Estimate::empty(percent)
        };
    }
    // Ranks count the censored requests too: p of n, among the recorded.
    let value = if s.censored == 0 {
        s.all.value_at_quantile(p)
    } else {
        s.all.value_at_quantile(value_rank as f64 / recorded as f64)
    };
    let judged = s
        .batches
        .and_then(|b| dispersion(&b, s.all, s.all.highest_equivalent(value)));
    let effect = judged.as_ref().map_or(1.0, |d| d.design_effect);
    let (lower, upper) = interval(s, n, effect, p, value);
    let mut e = Estimate {
        value_us: us_of(value),
        lower_us: lower / 1e3,
        upper_us: upper.map(|u| u / 1e3),
        tail_samples,
        estimable: upper.is_some(),
        ..Estimate::empty(percent)
    };
    if let Some(d) = &judged {
        e.judged_over(d);
    }
    e
}

/// The order-statistic interval, ns: (lower, upper if finite), holding
/// `value`, over the ranks of n / `effect` samples scaled to n. Ranks
/// beyond the recorded samples fall among the censored ones: no finite
/// upper bound.
fn interval(s: &Samples, n: u64, effect: f64, p: f64, value: u64) -> (f64, Option<f64>) {
    let r = scaled_ranks(n, n as f64 / effect, p, CONFIDENCE);
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
            censored: 10,
            censored_at_ns: 1_000_000_000,
            ..Samples::alone(&all)
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
        let s = Samples::alone(&all);
        let e = estimate(&s, 99.99);
        assert!(!e.estimable && e.upper_us.is_none() && !e.censored);
        assert_eq!(e.relative_half_width(), None);
        assert!(estimate(&s, 99.0).estimable);
    }

    #[test]
    fn batches_that_disagree_widen_the_interval() {
        // Forty batches whose levels drift apart: the tail beyond p50 is
        // in the later ones, far more unevenly than independent samples.
        let mut batches = Vec::new();
        let mut all = hist();
        for i in 0..40u64 {
            let mut h = crate::stats::batches::new_batch_histogram();
            for v in 0..2_000u64 {
                let x = 100_000 + i * 5_000 + v % 1000;
                h.record(x).unwrap();
                all.record(x).unwrap();
            }
            batches.push(h);
        }
        let plain = estimate(&Samples::alone(&all), 50.0);
        let s = Samples {
            batches: Some(Batches {
                hists: &batches,
                batch_s: 0.1,
            }),
            ..Samples::alone(&all)
        };
        let e = estimate(&s, 50.0);
        assert_eq!(e.method, Method::Effective);
        assert!(e.design_effect > 10.0 && !e.drift_judged, "{e:?}");
        let width = |e: &Estimate| e.upper_us.unwrap() - e.lower_us;
        assert!(width(&e) > 3.0 * width(&plain), "{e:?} {plain:?}");
    }
}
