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
    let mut next = parts.iter().map(|h| Ok::<_, String>((*h).clone()));
    stationarity_of(parts.len(), || next.next().unwrap_or(Err(String::new()))).unwrap_or_default()
}

/// `stationarity` of `n` non-empty histograms given one at a time by
/// `next`: each is dropped once its p99 is read and it is added to its
/// half, so that memory stays that of three histograms however many
/// intervals a (saved) run has.
pub fn stationarity_of<E>(
    n: usize,
    mut next: impl FnMut() -> Result<Histogram<u64>, E>,
) -> Result<Stationarity, E> {
    let mut p99s = Vec::with_capacity(n);
    let mut halves: [Option<Histogram<u64>>; 2] = [None, None];
    let mut added = true;
    for i in 0..n {
        let h = next()?;
        p99s.push(h.value_at_quantile(0.99) as f64);
        if n >= 4 {
            match &mut halves[usize::from(i >= n / 2)] {
                Some(all) => added &= all.add(&h).is_ok(),
                empty => *empty = Some(h),
            }
        }
    }
    let mk = trend::mann_kendall(&p99s).map(|m| m.p_value);
    let halves = match halves {
        [Some(a), Some(b)] if added => halves_agree(&a, &b),
        _ => None,
    };
    Ok(Stationarity {
        intervals: n,
        mann_kendall_p: mk,
        halves_agree: halves,
        stationary: mk.map(|p| p >= TREND_P && halves != Some(false)),
    })
}

/// Whether p99's 95 % intervals over the two halves meet.
fn halves_agree(first: &Histogram<u64>, second: &Histogram<u64>) -> Option<bool> {
    let p99 = |all: &Histogram<u64>| {
        let e = estimate(&Samples::alone(all), 99.0);
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
