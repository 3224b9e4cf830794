//! The gaps between an open loop's sends as they went out, not as they
//! were scheduled: their coefficient of variation says whether a Poisson
//! schedule (CV 1) left the client as Poisson sends or in bursts (CV above
//! 1), so that a bursty sender cannot pass for an open loop.

use serde::{Deserialize, Serialize};

/// Moments of the gaps between consecutive sends of one worker, in ns.
/// Requests written in one loop turn went out together: gaps of 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SendGaps {
    pub count: u64,
    pub sum_ns: f64,
    pub sum_sq_ns2: f64,
}

impl SendGaps {
    /// `sends` requests went out `gap_ns` after the previous send: one gap
    /// of `gap_ns`, then `sends - 1` of 0.
    #[inline]
    pub fn record(&mut self, gap_ns: u64, sends: usize) {
        let gap = gap_ns as f64;
        self.count += sends as u64;
        self.sum_ns += gap;
        self.sum_sq_ns2 += gap * gap;
    }

    pub fn merge(&mut self, other: &SendGaps) {
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns2 += other.sum_sq_ns2;
    }

    /// Standard deviation over mean of the gaps; `None` with fewer than
    /// two gaps or none longer than 0.
    pub fn cv(&self) -> Option<f64> {
        if self.count < 2 || self.sum_ns <= 0.0 {
            return None;
        }
        let n = self.count as f64;
        let mean = self.sum_ns / n;
        let var = (self.sum_sq_ns2 / n - mean * mean).max(0.0);
        Some(var.sqrt() / mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cv_is_that_of_the_gaps_with_simultaneous_sends_as_zero() {
        // Gaps 10, 0, 30, 0, 0, 20 (sends of 2, 3 and 1 at a time).
        let mut g = SendGaps::default();
        g.record(10, 2);
        g.record(30, 3);
        let mut h = SendGaps::default();
        h.record(20, 1);
        g.merge(&h);
        let gaps = [10.0, 0.0, 30.0, 0.0, 0.0, 20.0_f64];
        let mean = gaps.iter().sum::<f64>() / 6.0;
        let sd = (gaps.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 6.0).sqrt();
        assert!((g.cv().unwrap() - sd / mean).abs() < 1e-12);
        assert_eq!(SendGaps::default().cv(), None);
    }
}
