//! Whether a run's intervals look alike: no trend in their p99
//! (Mann–Kendall), and p99's 95 % intervals over the two halves meet.

use super::{estimate, trend, Samples};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A trend below this p-value, or halves whose intervals do not meet,
/// marks a series as not stationary. 1 %, not 5 %: the check runs on
/// every run and should rarely cry wolf.
pub const TREND_P: f64 = 0.01;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stationarity {
    /// Intervals judged.
    pub intervals: usize,
    /// Mann–Kendall's two-sided p-value for a trend in per-interval p99.
    pub mann_kendall_p: Option<f64>,
    /// Whether the 95 % intervals of p99 over each half meet; null when
    /// either has no finite bound.
    pub halves_agree: Option<bool>,
    /// Null with fewer than 4 intervals.
    pub stationary: Option<bool>,
}

/// The stationarity of `parts` (one latency histogram per interval, in
/// time order; empty ones are left out).
pub fn stationarity(parts: &[Histogram<u64>]) -> Stationarity {
    let parts: Vec<&Histogram<u64>> = parts.iter().filter(|h| !h.is_empty()).collect();
    let p99s: Vec<f64> = parts
        .iter()
        .map(|h| h.value_at_quantile(0.99) as f64)
        .collect();
    let mk = trend::mann_kendall(&p99s).map(|m| m.p_value);
    let halves = (parts.len() >= 4).then(|| halves_agree(&parts)).flatten();
    Stationarity {
        intervals: parts.len(),
        mann_kendall_p: mk,
        halves_agree: halves,
        stationary: mk.map(|p| p >= TREND_P && halves != Some(false)),
    }
}

fn halves_agree(parts: &[&Histogram<u64>]) -> Option<bool> {
    let (first, second) = parts.split_at(parts.len() / 2);
    let p99 = |part: &[&Histogram<u64>]| {
        let mut all = part[0].clone();
        for h in &part[1..] {
            all.add(*h).ok()?;
        }
        let e = estimate(&Samples::alone(&all), 99.0);
        Some((e.lower_us, e.upper_us?))
    };
    let ((al, au), (bl, bu)) = (p99(first)?, p99(second)?);
    Some(al <= bu && bl <= au)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(level: u64) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 1 << 40, 3).unwrap();
        for v in 0..2000u64 {
            h.record(level + v * level / 1000).unwrap();
        }
        h
    }

    #[test]
    fn a_drifting_series_is_not_stationary_and_a_steady_one_is() {
        let drifting: Vec<_> = (0..10).map(|i| interval(100_000 + i * 20_000)).collect();
        let s = stationarity(&drifting);
        assert_eq!(s.stationary, Some(false), "{s:?}");
        assert_eq!(s.halves_agree, Some(false));
        let steady: Vec<_> = (0..10)
            .map(|i| interval(100_000 + [0, 50, 20, 70, 10][i % 5]))
            .collect();
        let s = stationarity(&steady);
        assert_eq!(s.stationary, Some(true), "{s:?}");
        assert_eq!(stationarity(&steady[..3]).stationary, None);
    }
}
