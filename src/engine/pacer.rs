//! The open-loop schedule: when each request is meant to be sent.
//!
//! Intended times accumulate from the phase start (in f64 ns, so rounding
//! never drifts the rate); a late client does not shift later arrivals.

use crate::spec::Arrival;
use rand::rngs::SmallRng;
use rand::Rng;

pub struct Pacer {
    arrival: Arrival,
    /// Mean gap between arrivals, ns.
    mean_gap_ns: f64,
    next_ns: f64,
}

impl Pacer {
    /// A schedule of `rate` ops/s starting at `start_ns`.
    pub fn new(arrival: Arrival, rate: f64, start_ns: u64) -> Self {
        Pacer {
            arrival,
            mean_gap_ns: 1e9 / rate,
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
        self.next_ns += match self.arrival {
            Arrival::Fixed => self.mean_gap_ns,
            Arrival::Exponential => {
                let u: f64 = rng.gen();
                -self.mean_gap_ns * (1.0 - u).ln()
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rate_is_kept_over_many_arrivals() {
        for arrival in [Arrival::Fixed, Arrival::Exponential] {
            let mut rng = SmallRng::seed_from_u64(9);
            let mut p = Pacer::new(arrival, 5000.0, 0);
            p.restart(0, &mut rng);
            let n = 50_000;
            for _ in 1..n {
                p.advance(&mut rng);
            }
            let rate = n as f64 / (p.next() as f64 / 1e9);
            assert!((rate / 5000.0 - 1.0).abs() < 0.02, "{arrival:?}: {rate}");
        }
    }
}
