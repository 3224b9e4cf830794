//! Differences between two sets of repeated runs: the relative change of
//! their medians with a bootstrap interval, and the noise floor that the
//! same configuration measured against itself (A/A) shows.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Resamples per interval: enough for the 2.5 % and 97.5 % points to move
/// by less than a tenth of the interval between seeds.
const RESAMPLES: usize = 4000;

/// Fixed: the same runs give the same intervals.
const SEED: u64 = 0x006d_6362_656e_6368;

/// B's median over A's, less one, with its 95 % bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Change {
    pub relative: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Change {
    /// Whether the interval leaves out no change at all.
    pub fn excludes_zero(&self) -> bool {
        self.lower > 0.0 || self.upper < 0.0
    }
}

/// The change from `a` to `b` (one value per run); None when either has
/// no run or A's median is 0. The seed is fixed: the same runs give the
/// same interval.
pub fn change(a: &[f64], b: &[f64]) -> Option<Change> {
    let ma = median(a)?;
    let mb = median(b)?;
    if ma == 0.0 {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut draws: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let ra = median(&resample(a, &mut rng))?;
            let rb = median(&resample(b, &mut rng))?;
            (ra != 0.0).then(|| rb / ra - 1.0)
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((draws.len() - 1) as f64 * q).round() as usize];
    Some(Change {
        relative: mb / ma - 1.0,
        lower: at(0.025),
        upper: at(0.975),
    })
}

/// The 95 % bootstrap interval of the median of `xs`, as shares of it
/// (−0.03, 0.05 for 3 % under to 5 % over); None with fewer than 2
/// values or a median of 0.
pub fn median_interval(xs: &[f64]) -> Option<(f64, f64)> {
    let m = median(xs).filter(|m| *m != 0.0 && xs.len() >= 2)?;
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut draws: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| median(&resample(xs, &mut rng)))
        .map(|d| d / m - 1.0)
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((draws.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// The A/A floor: the largest change the bootstrap allows between A's
/// runs at even and odd places (interleaved, so drift falls on both). None
/// with fewer than 4 runs.
pub fn noise_floor(a: &[f64]) -> Option<f64> {
    if a.len() < 4 {
        return None;
    }
    let even: Vec<f64> = a.iter().step_by(2).copied().collect();
    let odd: Vec<f64> = a.iter().skip(1).step_by(2).copied().collect();
    let c = change(&even, &odd)?;
    Some(c.lower.abs().max(c.upper.abs()))
}

fn resample(xs: &[f64], rng: &mut SmallRng) -> Vec<f64> {
    (0..xs.len())
        .map(|_| xs[rng.gen_range(0..xs.len())])
        .collect()
}

/// The median; None when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_shift_excludes_zero_and_equal_sets_do_not() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let b = [120.0, 121.0, 119.0, 122.0, 118.0, 120.5];
        let c = change(&a, &b).unwrap();
        assert!(
            (c.relative - 0.2).abs() < 0.01 && c.excludes_zero(),
            "{c:?}"
        );
        let c = change(&a, &a).unwrap();
        assert!(!c.excludes_zero() && c.relative == 0.0, "{c:?}");
        let floor = noise_floor(&a).unwrap();
        assert!(floor > 0.0 && floor < 0.1, "{floor}");
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        let (lo, hi) = median_interval(&a).unwrap();
        assert!(lo < 0.0 && hi > 0.0 && hi - lo < 0.05, "{lo} {hi}");
    }
}
