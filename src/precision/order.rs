//! Distribution-free confidence intervals for a percentile from order
//! statistics (Hahn & Meeker, *Statistical Intervals*, 1991), read off a
//! histogram.
//!
//! Of n samples, the number K at or below the true p-quantile q is
//! Binomial(n, p). The sorted samples X₍ₗ₎ ≤ q ≤ X₍ᵤ₎ exactly when
//! l ≤ K ≤ u − 1, so ranks with B(u−1; n, p) − B(l−1; n, p) ≥ 1 − α make
//! [X₍ₗ₎, X₍ᵤ₎] an interval of at least that confidence. Both tails get
//! at most α/2.

use hdrhistogram::Histogram;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// Above this n·p·(1−p) the normal approximation replaces the exact
/// binomial: the two ranks then differ by less than one in a thousand.
const EXACT_UP_TO_VARIANCE: f64 = 1e6;

/// The 1-based ranks of the order statistics that bound a percentile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranks {
    /// None: no lower bound (too few samples below the percentile).
    pub lower: Option<u64>,
    /// None: no finite upper bound (too few samples beyond it).
    pub upper: Option<u64>,
}

/// The equal-tailed ranks for the `p`-quantile (0 < p < 1) of `n` samples
/// at `confidence` (0.95 for 95 %).
pub fn ranks(n: u64, p: f64, confidence: f64) -> Ranks {
    let tail = (1.0 - confidence) / 2.0;
    if n == 0 {
        return Ranks {
            lower: None,
            upper: None,
        };
    }
    let variance = n as f64 * p * (1.0 - p);
    let (below_lower, at_upper) = if variance > EXACT_UP_TO_VARIANCE {
        normal_ranks(n, p, tail)
    } else {
        exact_ranks(n, p, tail)
    };
    Ranks {
        // l − 1 = the largest k with B(k) ≤ α/2; none when even B(0) > α/2.
        lower: below_lower.map(|k| k + 1),
        // u − 1 = the smallest k with B(k) ≥ 1 − α/2; u = n + 1 is no rank.
        upper: at_upper.map(|k| k + 1).filter(|u| *u <= n),
    }
}

/// Ranks k_l = l − 1 and k_u = u − 1 as tight as the binomial allows:
/// starting from the equal tails (at most α/2 each), the pair nearby whose
/// coverage B(k_u) − B(k_l) is the least at or above 1 − 2·tail (Hahn and
/// Meeker's "about symmetric" choice; with few samples the equal tails
/// alone cover up to 97.6 % where 95 % is asked).
fn exact_ranks(n: u64, p: f64, tail: f64) -> (Option<u64>, Option<u64>) {
    let b = match Binomial::new(p, n) {
        Ok(b) => b,
        Err(_) => return (None, None),
    };
    let below = first_k(n, |k| b.cdf(k) > tail).checked_sub(1);
    let above = first_k(n, |k| b.cdf(k) >= 1.0 - tail);
    let Some(below) = below.filter(|_| above < n) else {
        return (below, Some(above));
    };
    let cdf = |k: i64| if k < 0 { 0.0 } else { b.cdf(k as u64) };
    let lows: Vec<(i64, f64)> = (-SHIFT..=SHIFT)
        .map(|d| below as i64 + d)
        .filter(|k| *k >= 0)
        .map(|k| (k, cdf(k)))
        .collect();
    let highs: Vec<(i64, f64)> = (-SHIFT..=SHIFT)
        .map(|d| above as i64 + d)
        .filter(|k| *k < n as i64 && *k > below as i64 - SHIFT)
        .map(|k| (k, cdf(k)))
        .collect();
    let mut best = (
        below as i64,
        above as i64,
        cdf(above as i64) - cdf(below as i64),
    );
    for (kl, bl) in &lows {
        for (ku, bu) in highs.iter().filter(|(ku, _)| ku > kl) {
            let cover = bu - bl;
            if cover >= 1.0 - 2.0 * tail && cover < best.2 {
                best = (*kl, *ku, cover);
            }
        }
    }
    (Some(best.0 as u64), Some(best.1 as u64))
}

/// How far from the equal tails the tighter pair is looked for, in ranks.
const SHIFT: i64 = 4;

/// Lancet's approximation, one rank wider on each side than the exact
/// search would be on average.
fn normal_ranks(n: u64, p: f64, tail: f64) -> (Option<u64>, Option<u64>) {
    let z = Normal::standard().inverse_cdf(1.0 - tail);
    let mean = n as f64 * p;
    let spread = z * (n as f64 * p * (1.0 - p)).sqrt();
    let lower = (mean - spread).floor() - 1.0;
    let upper = (mean + spread).ceil();
    let lower = (lower >= 0.0).then_some(lower as u64);
    (lower, Some(upper.max(0.0) as u64))
}

/// The smallest k in 0..=n with `holds(k)` (monotone); n + 1 if none.
fn first_k(n: u64, holds: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, n + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// For each 1-based rank, where the sample of that rank lay: within its
/// bucket, at its place among the bucket's samples as if they were spread
/// evenly (linear interpolation, ns). None for a rank beyond the
/// histogram's count.
///
/// Not the bucket's ends: at a million samples a 3-digit bucket is an
/// eighth of a p99 interval's width, and widening by whole buckets made
/// the 95 % interval cover 97 % (tests/precision.rs).
pub fn value_at_ranks(h: &Histogram<u64>, ranks: &[u64]) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|i| ranks[*i]);
    let mut out = vec![None; ranks.len()];
    let mut next = order.iter().peekable();
    let mut before = 0u64;
    for v in h.iter_recorded() {
        let count = v.count_at_value();
        let value = v.value_iterated_to();
        let (lo, hi) = (h.lowest_equivalent(value), h.highest_equivalent(value));
        while let Some(&&i) = next.peek() {
            if ranks[i] > before + count {
                break;
            }
            let place = (ranks[i] - before) as f64 - 0.5;
            out[i] = Some(lo as f64 + (hi + 1 - lo) as f64 * place / count as f64);
            next.next();
        }
        before += count;
        if next.peek().is_none() {
            break;
        }
    }
    out
}

/// The highest quantile p (0 ≤ p < 1) that `n` samples bound above at
/// `confidence`: the largest sample bounds p exactly when
/// pⁿ ≤ (1 − confidence)/2 (`ranks`' upper rank is then n), so
/// p = ((1 − confidence)/2)^(1/n). 0 without samples.
pub fn highest_bounded(n: u64, confidence: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    ((1.0 - confidence) / 2.0).powf(1.0 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_bounded_quantile_is_where_the_upper_rank_ends() {
        for n in [10u64, 1_000, 3_688, 100_000] {
            let p = highest_bounded(n, 0.95);
            let beside = 1e-4 * (1.0 - p);
            assert!(ranks(n, p - beside, 0.95).upper.is_some(), "n {n}");
            assert!(ranks(n, p + beside, 0.95).upper.is_none(), "n {n}");
        }
        // p99.9 needs 3,688 samples.
        assert!(highest_bounded(3_687, 0.95) < 0.999 && highest_bounded(3_688, 0.95) >= 0.999);
    }

    #[test]
    fn the_ranks_cover_at_least_the_confidence_and_need_enough_samples() {
        for n in [10, 100, 1_000, 10_000, 100_000] {
            for p in [0.5, 0.9, 0.99, 0.999] {
                let r = ranks(n, p, 0.95);
                let b = Binomial::new(p, n).unwrap();
                let below = r.lower.map_or(0.0, |l| b.cdf(l - 1));
                let upto = r.upper.map_or(1.0, |u| b.cdf(u - 1));
                assert!(upto - below >= 0.95 - 1e-12, "n={n} p={p} {r:?}");
            }
        }
        // A finite 97.5 % upper bound needs n ≥ ln(0.025)/ln(p): 368 for p99.
        assert!(ranks(367, 0.99, 0.95).upper.is_none());
        // The tighter pair: n = 1000, p99 covers 95.2 %, not 97.6 %.
        let r = ranks(1000, 0.99, 0.95);
        let b = Binomial::new(0.99, 1000).unwrap();
        let cover = b.cdf(r.upper.unwrap() - 1) - b.cdf(r.lower.unwrap() - 1);
        assert!((0.95..0.955).contains(&cover), "{cover}");
        assert!(ranks(368, 0.99, 0.95).upper.is_some());
    }

    #[test]
    fn the_normal_approximation_meets_the_exact_ranks() {
        let (n, p) = (5_000_000u64, 0.99);
        let exact = exact_ranks(n, p, 0.025);
        let approx = normal_ranks(n, p, 0.025);
        // Within 1 % of the interval's width (~870 ranks).
        let width = exact.1.unwrap() - exact.0.unwrap();
        let gap = |a: Option<u64>, b: Option<u64>| a.unwrap().abs_diff(b.unwrap());
        assert!(
            gap(exact.0, approx.0) <= width / 100,
            "{exact:?} {approx:?}"
        );
        assert!(
            gap(exact.1, approx.1) <= width / 100,
            "{exact:?} {approx:?}"
        );
    }

    #[test]
    fn ranks_map_into_their_buckets() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let got = value_at_ranks(&h, &[990, 1, 1001, 500]);
        let at = |i: usize, v: f64| {
            let x = got[i].unwrap();
            assert!((x - v).abs() <= v / 1000.0, "{x} for {v}");
        };
        at(0, 990_000.0);
        at(1, 1000.0);
        at(3, 500_000.0);
        assert_eq!(got[2], None);
    }
}
