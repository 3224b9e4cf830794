//! The open-loop schedule: when each request is meant to be sent.
//!
//! Gaps are drawn from the arrival shape, rescaled so that their mean is
//! 1/rate. Intended times accumulate from the phase start (in f64 ns, so
//! rounding never drifts the rate); a late client does not shift later
//! arrivals.

use crate::workload::Distribution;
use rand::rngs::SmallRng;
use rand::Rng;

pub struct Pacer {
    shape: Distribution,
    /// Multiplies a shape sample into a gap in ns.
    scale: f64,
    /// Mean gap, ns (the exponential fast path).
    mean_gap_ns: f64,
    next_ns: f64,
}

impl Pacer {
    /// A schedule of `rate` ops/s, gaps shaped like `shape`.
    pub fn new(shape: Distribution, rate: f64, start_ns: u64) -> Self {
        let mean_gap_ns = 1e9 / rate;
        Pacer {
            scale: mean_gap_ns / shape.mean(),
            shape,
            mean_gap_ns,
            next_ns: start_ns as f64,
        }
    }

    /// Restarts the schedule at `start_ns` with a first gap drawn as usual.
    pub fn restart(&mut self, start_ns: u64, rng: &mut SmallRng) {
        self.next_ns = start_ns as f64;
        self.advance(rng);
    }

    /// Intended send time of the next arrival, ns.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next_ns as u64
    }

    /// Moves to the following arrival.
    #[inline]
    pub fn advance(&mut self, rng: &mut SmallRng) {
        self.next_ns += match self.shape {
            Distribution::Fixed(_) => self.mean_gap_ns,
            Distribution::Exponential { .. } => -self.mean_gap_ns * (1.0 - rng.gen::<f64>()).ln(),
            _ => (self.shape.sample(rng) * self.scale).max(0.0),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rate_is_kept_over_many_arrivals() {
        for shape in [
            "fixed:1",
            "exponential:1",
            "fb_ia",
            "uniform:0,2",
            "pareto:0,1,0.3",
        ] {
            let mut rng = SmallRng::seed_from_u64(9);
            let mut p = Pacer::new(shape.parse().unwrap(), 5000.0, 0);
            p.restart(0, &mut rng);
            let n = 200_000;
            for _ in 1..n {
                p.advance(&mut rng);
            }
            let rate = n as f64 / (p.next() as f64 / 1e9);
            assert!((rate / 5000.0 - 1.0).abs() < 0.02, "{shape}: {rate}");
        }
    }
}
