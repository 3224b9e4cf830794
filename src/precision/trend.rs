//! Whether a run's intervals look alike: a trend test over a series of
//! per-interval values, and an objective warm-up cut.

use statrs::distribution::{ContinuousCDF, Normal};

/// Mann–Kendall's test of a monotone trend in a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannKendall {
    /// Concordant minus discordant pairs.
    pub s: i64,
    /// Its normal score (continuity corrected, ties accounted for).
    pub z: f64,
    /// Two-sided p-value: small means a trend.
    pub p_value: f64,
}

/// The test over `xs` in time order; None with fewer than 4 values.
pub fn mann_kendall(xs: &[f64]) -> Option<MannKendall> {
    let n = xs.len();
    if n < 4 {
        return None;
    }
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            s += match xs[j].partial_cmp(&xs[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let var = (variance_term(n) - ties_term(xs)) / 18.0;
    let z = if var <= 0.0 || s == 0 {
        0.0
    } else {
        (s - s.signum()) as f64 / var.sqrt()
    };
    let p_value = 2.0 * (1.0 - Normal::standard().cdf(z.abs()));
    Some(MannKendall { s, z, p_value })
}

fn variance_term(n: usize) -> f64 {
    let n = n as f64;
    n * (n - 1.0) * (2.0 * n + 5.0)
}

/// Σ t(t−1)(2t+5) over groups of t equal values.
fn ties_term(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
        .chunk_by(|a, b| a == b)
        .filter(|g| g.len() > 1)
        .map(|g| variance_term(g.len()))
        .sum()
}

/// MSER (White 1997): the number of leading values to drop so that the
/// rest's mean is the most precise, the cut minimising s²(d)/(k−d)² over
/// the first half. With 25 values or more they are first averaged in
/// batches of 5 (MSER-5), and the cut is given in values. None with fewer
/// than 6 values.
pub fn mser_cut(xs: &[f64]) -> Option<usize> {
    if xs.len() < 6 {
        return None;
    }
    let batch = if xs.len() >= 25 { 5 } else { 1 };
    let ys: Vec<f64> = xs
        .chunks_exact(batch)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let k = ys.len();
    let score = |d: usize| {
        let rest = &ys[d..];
        let m = rest.iter().sum::<f64>() / rest.len() as f64;
        let ss = rest.iter().map(|y| (y - m).powi(2)).sum::<f64>();
        ss / ((k - d) as f64).powi(2)
    };
    let best = (0..=k / 2)
        .min_by(|a, b| score(*a).total_cmp(&score(*b)))
        .unwrap_or(0);
    Some(best * batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rising_series_has_a_trend_and_a_flat_one_none() {
        let rising: Vec<f64> = (0..20).map(|i| i as f64 + (i % 3) as f64).collect();
        let mk = mann_kendall(&rising).unwrap();
        assert!(mk.p_value < 0.001 && mk.s > 0, "{mk:?}");
        let flat = [5.0, 7.0, 5.0, 6.0, 7.0, 5.0, 6.0, 5.0, 7.0, 6.0];
        assert!(mann_kendall(&flat).unwrap().p_value > 0.5);
        assert!(mann_kendall(&[1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn mann_kendall_matches_a_worked_example() {
        // By hand: of 45 pairs, 3 fall (3>2, 7>6, 9>8) and 1 is tied, so
        // S = 41 − 3; one pair of ties takes 2·1·9 from the variance.
        let xs = [1.0, 3.0, 2.0, 4.0, 5.0, 5.0, 7.0, 6.0, 9.0, 8.0];
        let mk = mann_kendall(&xs).unwrap();
        assert_eq!(mk.s, 38);
        let var: f64 = (10.0 * 9.0 * 25.0 - 2.0 * 1.0 * 9.0) / 18.0;
        assert!((mk.z - 37.0 / var.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn mser_cuts_a_slow_start_and_leaves_a_steady_run() {
        let mut xs = vec![500.0, 300.0, 200.0];
        xs.extend((0..17).map(|i| 100.0 + (i % 4) as f64));
        assert_eq!(mser_cut(&xs), Some(3));
        let steady: Vec<f64> = (0..20).map(|i| 100.0 + (i % 4) as f64).collect();
        assert!(mser_cut(&steady).unwrap() <= 2);
    }
}
