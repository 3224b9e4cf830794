//! The open-loop schedule: when each request is meant to be sent.
//!
//! Gaps are drawn from the arrival shape, rescaled so that their mean is
//! 1/rate. Intended times accumulate from the phase start (in f64 ns from
//! it, not from the clock's origin: a gap of a nanosecond still counts an
//! hour in), so that rounding never drifts the rate; a late client does
//! not shift later arrivals.

use crate::workload::Distribution;
use rand::rngs::SmallRng;
use rand::Rng;

pub struct Pacer {
    shape: Distribution,
    /// Multiplies a shape sample into a gap in ns.
    scale: f64,
    /// Mean gap, ns (the exponential fast path).
    mean_gap_ns: f64,
    /// The schedule's start, and the next arrival after it, ns.
    origin_ns: u64,
    next_ns: f64,
}

/// Past this many arrivals, a stretch of the schedule is counted by its
/// expected number rather than drawn gap by gap (a Poisson count's noise
/// is then under 1 %): a client far behind a huge rate counts what it
/// never sent at once.
const COUNT_IN_BULK: f64 = 10_000.0;

impl Pacer {
    /// A schedule of `rate` ops/s, gaps shaped like `shape`.
    pub fn new(shape: Distribution, rate: f64, start_ns: u64) -> Self {
        let mean_gap_ns = 1e9 / rate;
        Pacer {
            scale: mean_gap_ns / shape.mean(),
            shape,
            mean_gap_ns,
            origin_ns: start_ns,
            next_ns: 0.0,
        }
    }

    /// Restarts the schedule at `start_ns` with a first gap drawn as usual.
    pub fn restart(&mut self, start_ns: u64, rng: &mut SmallRng) {
        self.origin_ns = start_ns;
        self.next_ns = 0.0;
        self.advance(rng);
    }

    /// Intended send time of the next arrival, ns.
    #[inline]
    pub fn next(&self) -> u64 {
        self.origin_ns.saturating_add(self.next_ns as u64)
    }

    /// Moves past every arrival before `until`: how many there were.
    /// Counted one by one up to `COUNT_IN_BULK`, by their expected number
    /// beyond.
    pub fn skip_to(&mut self, until: u64, rng: &mut SmallRng) -> u64 {
        let left = until.saturating_sub(self.next());
        let expected = left as f64 / self.mean_gap_ns;
        if expected > COUNT_IN_BULK {
            self.next_ns += left as f64;
            self.advance(rng);
            return expected.round() as u64;
        }
        let mut n = 0;
        while self.next() < until {
            n += 1;
            self.advance(rng);
        }
        n
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

    #[test]
    fn a_rate_of_a_billion_keeps_its_gaps_an_hour_into_the_clock() {
        let mut rng = SmallRng::seed_from_u64(3);
        // The monotonic clock an uptime of months in: f64 ns there have a
        // step of 0.25 ns, a quarter of each gap.
        let start = 10_000_000_000_000_000u64;
        let mut p = Pacer::new("exponential:1".parse().unwrap(), 1e9, start);
        p.restart(start, &mut rng);
        for _ in 0..1_000_000 {
            p.advance(&mut rng);
        }
        let rate = 1e6 / ((p.next() - start) as f64 / 1e9);
        assert!((rate / 1e9 - 1.0).abs() < 0.02, "{rate}");
    }

    #[test]
    fn skipping_counts_the_arrivals_one_by_one_or_in_bulk() {
        let mut rng = SmallRng::seed_from_u64(4);
        let mut p = Pacer::new("fixed:1".parse().unwrap(), 1000.0, 0);
        p.restart(0, &mut rng);
        // 1 ms apart from 1 ms: 1, ..., 999 ms before 1 s.
        assert_eq!(p.skip_to(1_000_000_000, &mut rng), 999);
        assert_eq!(p.next(), 1_000_000_000);
        // A billion a second for 10 s: counted at once.
        let mut p = Pacer::new("exponential:1".parse().unwrap(), 1e9, 0);
        p.restart(0, &mut rng);
        let skipped = p.skip_to(10_000_000_000, &mut rng);
        assert!((skipped as f64 / 1e10 - 1.0).abs() < 1e-3, "{skipped}");
        assert!(p.next() >= 10_000_000_000);
    }
}
