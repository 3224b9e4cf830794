//! Whether a percentile's tail came in independent samples, read off a
//! run's short batches (its latencies cut by answer time, in order).
//!
//! The order-statistic interval rests on the count K of samples beyond
//! the true quantile being Binomial(n, 1 − p). A stall that delays every
//! request in flight at once, or a level that drifts, puts the tail's
//! samples in a few batches: K then varies far more than the binomial
//! says. Counted batch by batch, its variance over the binomial's is the
//! *design effect* d (the batch means of the tail indicator); n / d
//! samples are worth as much as n independent ones, and the interval
//! takes the ranks of that many (`order::scaled_ranks`).
//!
//! Batches must be long enough for their counts to be independent: the
//! lag-1 autocorrelation ρ̂ of the counts' residuals is tested, and while
//! it is both significant (one-sided, 5 %, against its large-sample normal
//! law, ρ̂·√b ~ N(0, 1)) and material (over 0.1: it then widens the
//! variance by over a fifth; with hundreds of batches a correlation of a
//! few hundredths is significant and changes nothing), neighbours are
//! merged (twice as long, half as many). With fewer than `MIN_BATCHES` left, drift within the run cannot
//! be told from noise: the estimate says so.
//!
//! Episodes: where the tail's samples cluster (a design effect of 2 or
//! more) and few batches hold any (at most 30 %), each run of consecutive
//! batches holding tail samples is one episode. A stall's victims are all
//! answered when it ends, so by answer time one stall lands in one batch,
//! or two neighbours; with most batches holding tail samples, runs would
//! join what is unrelated, and no count is given.

use hdrhistogram::Histogram;

/// Batches needed to judge drift within a run (simulation-output
/// practice: 20 to 30).
pub const MIN_BATCHES: usize = 20;
/// The one-sided 5 % point of the standard normal: a lag-1
/// autocorrelation ρ̂ with ρ̂·√b above it is significant...
const LAG_Z: f64 = 1.645;
/// ...and one over this is material: (1 + ρ)/(1 − ρ) widens the variance
/// of a sum of AR(1) counts by 22 % at 0.1.
const LAG_MATERIAL: f64 = 0.1;
/// Episodes are counted where the tail clusters: a design effect of at
/// least this...
const CLUSTERED: f64 = 2.0;
/// ...and no more than this share of batches holding tail samples.
const MAX_OCCUPANCY: f64 = 0.3;

/// A run's batches: each a histogram of the latencies answered in it,
/// in time order, all `batch_s` long (the last may be shorter).
#[derive(Debug, Clone, Copy)]
pub struct Batches<'a> {
    pub hists: &'a [Histogram<u64>],
    pub batch_s: f64,
}

/// What the batches say of one percentile's tail.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispersion {
    /// Batches with samples, at the length judged.
    pub batches: usize,
    /// That length, s (the batches' own, or merged neighbours').
    pub batch_s: f64,
    /// The tail count's variance over the binomial's, at least 1.
    pub design_effect: f64,
    /// The lag-1 autocorrelation of the batches' tail counts.
    pub lag1: f64,
    /// At least `MIN_BATCHES`, and not correlated at lag 1: drift within
    /// the run would have shown.
    pub independent: bool,
    /// The episodes the tail came in, where it clusters; None where its
    /// samples look independent, or fill too many batches to tell.
    pub episodes: Option<u64>,
}

/// One batch: its samples, and how many of them lie beyond the threshold.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Count {
    n: f64,
    beyond: f64,
}

/// The dispersion of the samples of `all` beyond `beyond_ns` (the highest
/// value of the percentile's bucket) over `batches`; None without samples.
pub fn dispersion(batches: &Batches, all: &Histogram<u64>, beyond_ns: u64) -> Option<Dispersion> {
    let mut counts = tail_counts(batches.hists, all, beyond_ns);
    let n: f64 = counts.iter().map(|c| c.n).sum();
    let k: f64 = counts.iter().map(|c| c.beyond).sum();
    if n <= 0.0 {
        return None;
    }
    let share = k / n;
    let mut batch_s = batches.batch_s;
    let finest = counts.clone();
    loop {
        let b = counts.iter().filter(|c| c.n > 0.0).count();
        let (design_effect, lag1) = spread(&counts, share, n);
        let correlated = lag1 * (b as f64).sqrt() > LAG_Z && lag1 > LAG_MATERIAL;
        if !correlated || b / 2 < MIN_BATCHES {
            return Some(Dispersion {
                batches: b,
                batch_s,
                design_effect,
                lag1,
                independent: !correlated && b >= MIN_BATCHES,
                episodes: (design_effect >= CLUSTERED)
                    .then(|| episodes(&finest))
                    .flatten(),
            });
        }
        counts = counts
            .chunks(2)
            .map(|pair| Count {
                n: pair.iter().map(|c| c.n).sum(),
                beyond: pair.iter().map(|c| c.beyond).sum(),
            })
            .collect();
        batch_s *= 2.0;
    }
}

/// Each batch's samples, and those beyond `beyond_ns`: whole buckets above
/// it, and of the bucket that straddles it the share that `all` (finer)
/// holds beyond it. The counts beyond add up to `all`'s exactly.
fn tail_counts(hists: &[Histogram<u64>], all: &Histogram<u64>, beyond_ns: u64) -> Vec<Count> {
    let straddle_share = |lo: u64, hi: u64| {
        let inside = all.count_between(lo, hi);
        if inside == 0 {
            return 0.0;
        }
        all.count_between(beyond_ns.saturating_add(1), hi) as f64 / inside as f64
    };
    hists
        .iter()
        .map(|h| {
            let mut c = Count {
                n: h.len() as f64,
                beyond: 0.0,
            };
            for v in h.iter_recorded() {
                let at = v.value_iterated_to();
                let (lo, hi) = (h.lowest_equivalent(at), h.highest_equivalent(at));
                let count = v.count_at_value() as f64;
                if lo > beyond_ns {
                    c.beyond += count;
                } else if hi > beyond_ns {
                    c.beyond += count * straddle_share(lo, hi);
                }
            }
            c
        })
        .collect()
}

/// The design effect (≥ 1) and the lag-1 autocorrelation of the counts'
/// residuals from `share` of each batch's samples. The variance of the
/// tail count is b/(b − 1)·Σ r² (a ratio estimator: batches may differ in
/// size), the binomial's n·share·(1 − share).
fn spread(counts: &[Count], share: f64, n: f64) -> (f64, f64) {
    let b = counts.iter().filter(|c| c.n > 0.0).count() as f64;
    let binomial = n * share * (1.0 - share);
    if b < 2.0 || binomial <= 0.0 {
        return (1.0, 0.0);
    }
    let r: Vec<f64> = counts.iter().map(|c| c.beyond - share * c.n).collect();
    let ss: f64 = r.iter().map(|x| x * x).sum();
    let variance = b / (b - 1.0) * ss;
    let lag1 = if ss > 0.0 {
        r.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / ss
    } else {
        0.0
    };
    ((variance / binomial).max(1.0), lag1)
}

/// Runs of consecutive batches holding tail samples (half a sample or
/// more), where few enough batches hold any; None otherwise.
fn episodes(counts: &[Count]) -> Option<u64> {
    let held: Vec<bool> = counts.iter().map(|c| c.beyond >= 0.5).collect();
    let busy = counts.iter().filter(|c| c.n > 0.0).count().max(1);
    let holding = held.iter().filter(|h| **h).count();
    if holding as f64 > MAX_OCCUPANCY * busy as f64 {
        return None;
    }
    let starts = held
        .iter()
        .enumerate()
        .filter(|(i, h)| **h && (*i == 0 || !held[i - 1]))
        .count();
    Some(starts as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist() -> Histogram<u64> {
        Histogram::new_with_bounds(1, 3_600_000_000_000, 2).unwrap()
    }

    /// `batches` batches of `per` samples at 100 µs, with `stalls` of
    /// them (every `every`-th) holding `victims` samples at 20 ms too.
    fn stalled(batches: usize, per: u64, every: usize, victims: u64) -> Vec<Histogram<u64>> {
        (0..batches)
            .map(|i| {
                let mut h = hist();
                h.record_n(100_000, per).unwrap();
                if i % every == every / 2 {
                    h.record_n(20_000_000, victims).unwrap();
                }
                h
            })
            .collect()
    }

    /// The dispersion of `hs` (100 ms batches) beyond `t`.
    fn judged(hs: &[Histogram<u64>], t: u64) -> Dispersion {
        let b = Batches {
            hists: hs,
            batch_s: 0.1,
        };
        dispersion(&b, &all_of(hs), t).unwrap()
    }

    fn all_of(hs: &[Histogram<u64>]) -> Histogram<u64> {
        let mut all = crate::stats::new_histogram();
        for h in hs {
            all.add(h).unwrap();
        }
        all
    }

    #[test]
    fn a_tail_of_stalls_is_counted_in_episodes_and_its_variance_is_theirs() {
        // 50 batches; 5 stalls of 40 victims each.
        let hs = stalled(50, 1_000, 10, 40);
        let d = judged(&hs, all_of(&hs).highest_equivalent(100_000));
        assert_eq!(d.episodes, Some(5), "{d:?}");
        // The tail count is 40 × Poisson-like(5): its variance ~40× the
        // binomial's of 200 independent samples.
        assert!(d.design_effect > 20.0, "{d:?}");
        assert!(d.independent && d.batches == 50, "{d:?}");
    }

    #[test]
    fn independent_samples_have_no_design_effect_to_speak_of() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let hs: Vec<_> = (0..40)
            .map(|_| {
                let mut h = hist();
                for _ in 0..2_000 {
                    h.record(rng.gen_range(100_000..200_000)).unwrap();
                }
                h
            })
            .collect();
        let all = all_of(&hs);
        for q in [0.5, 0.99] {
            let t = all.highest_equivalent(all.value_at_quantile(q));
            let d = judged(&hs, t);
            assert!(d.design_effect < 1.6, "p{q}: {d:?}");
            assert_eq!(d.episodes, None, "p{q}: {d:?}");
        }
    }

    #[test]
    fn a_drift_is_correlated_and_merging_cannot_leave_enough_batches() {
        // 40 batches whose level rises step by step: at every length the
        // neighbours agree, and 20 batches is as far as merging may go.
        let hs: Vec<_> = (0..40u64)
            .map(|i| {
                let mut h = hist();
                for v in 0..1_000u64 {
                    h.record(100_000 + i * 2_000 + v * 50).unwrap();
                }
                h
            })
            .collect();
        let all = all_of(&hs);
        let t = all.highest_equivalent(all.value_at_quantile(0.5));
        let d = judged(&hs, t);
        assert!(!d.independent, "{d:?}");
        assert!(d.batches >= MIN_BATCHES && d.batches < 40, "{d:?}");
        assert!(d.design_effect > 10.0, "{d:?}");
        // Too few batches at all: not independent, whatever they say.
        let d = judged(&hs[..10], t);
        assert!(!d.independent && d.batches == 10, "{d:?}");
    }

    #[test]
    fn the_tail_counts_add_up_to_the_whole_runs() {
        let hs = stalled(30, 777, 7, 13);
        let all = all_of(&hs);
        for q in [0.5, 0.9, 0.99, 0.999] {
            let t = all.highest_equivalent(all.value_at_quantile(q));
            let k: f64 = tail_counts(&hs, &all, t).iter().map(|c| c.beyond).sum();
            let want = all.len() - all.count_between(0, t);
            assert!((k - want as f64).abs() < 1e-6, "p{q}: {k} against {want}");
        }
    }
}
