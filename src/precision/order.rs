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

/// The ranks among `n` samples that bound the `p`-quantile when they are
/// worth `n_eff` independent ones (n / design effect, ≤ n): the equal-tailed
/// ranks of `n_eff` samples, scaled by n / n_eff, the lower one down and
/// the upper one up. A tail of k samples beyond a rank of the effective
/// sample stands for k · n / n_eff samples: clusters of that mean size.
pub fn scaled_ranks(n: u64, n_eff: f64, p: f64, confidence: f64) -> Ranks {
    let n_eff = n_eff.clamp(1.0, n.max(1) as f64);
    let m = n_eff.floor() as u64;
    if m >= n {
        return ranks(n, p, confidence);
    }
    let r = ranks(m, p, confidence);
    let scale = n as f64 / m as f64;
    Ranks {
        lower: r
            .lower
            .map(|l| ((l as f64 * scale).floor() as u64).clamp(1, n)),
        upper: r
            .upper
            .map(|u| (u as f64 * scale).ceil() as u64)
            .filter(|u| *u <= n),
    }
}

/// Ranks k_l = l − 1 and k_u = u − 1 with equal tails: k_l the largest
/// with B(k_l) ≤ `tail`, k_u the smallest with B(k_u) ≥ 1 − `tail`. Each
/// bound then misses with at most `tail` on its own side (a central
/// interval): a tighter pair that spent the two tails' sum unevenly
/// missed low 3.9 % of the time at p99.9 with n = 5,909.
fn exact_ranks(n: u64, p: f64, tail: f64) -> (Option<u64>, Option<u64>) {
    let b = match Binomial::new(p, n) {
        Ok(b) => b,
        Err(_) => return (None, None),
    };
    let below = first_k(n, |k| b.cdf(k) > tail).checked_sub(1);
    let above = first_k(n, |k| b.cdf(k) >= 1.0 - tail);
    (below, Some(above))
}

/// The normal approximation with a continuity correction, one rank
/// wider on each side than it gives, so that neither tail exceeds
/// `tail` where the exact ranks would sit a rank further out.
fn normal_ranks(n: u64, p: f64, tail: f64) -> (Option<u64>, Option<u64>) {
    let z = Normal::standard().inverse_cdf(1.0 - tail);
    let mean = n as f64 * p;
    let spread = z * (n as f64 * p * (1.0 - p)).sqrt();
    let lower = (mean - spread - 0.5).floor() - 1.0;
    let upper = (mean + spread - 0.5).ceil() + 1.0;
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
/// the 95 % interval cover 97 % (tests/load/precision.rs).
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
                // Central: each bound misses on its own side at most 2.5 %.
                assert!(
                    below <= 0.025 + 1e-12,
                    "n={n} p={p} {r:?} misses low {below}"
                );
                assert!(1.0 - upto <= 0.025 + 1e-12, "n={n} p={p} {r:?} misses high");
            }
        }
        // A finite 97.5 % upper bound needs n ≥ ln(0.025)/ln(p): 368 for p99.
        assert!(ranks(367, 0.99, 0.95).upper.is_none());
        assert!(ranks(368, 0.99, 0.95).upper.is_some());
    }

    #[test]
    fn scaled_ranks_widen_by_the_design_effect_and_keep_the_plain_ones_at_one() {
        assert_eq!(
            scaled_ranks(10_000, 10_000.0, 0.99, 0.95),
            ranks(10_000, 0.99, 0.95)
        );
        // Clusters of 10: the tail of 100 is 10 events; the ranks lie as
        // far out, in samples, as 1,000 samples' ranks times 10.
        let r = scaled_ranks(10_000, 1_000.0, 0.99, 0.95);
        let e = ranks(1_000, 0.99, 0.95);
        assert_eq!(r.lower, e.lower.map(|l| l * 10));
        assert_eq!(r.upper, e.upper.map(|u| u * 10));
        let plain = ranks(10_000, 0.99, 0.95);
        assert!(r.lower < plain.lower && r.upper > plain.upper);
        // Worth too few samples for an upper bound: none.
        assert_eq!(scaled_ranks(100_000, 300.0, 0.99, 0.95).upper, None);
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
