//! The operation mix: which command each request is.

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The operations a request can be. Each has its own histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Get,
    Set,
}

impl OpKind {
    pub const ALL: [OpKind; 2] = [OpKind::Get, OpKind::Set];
    pub const COUNT: usize = Self::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Get => "get",
            OpKind::Set => "set",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A weighted choice of operations. Weights are normalised shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    /// (op, share), shares summing to 1.
    pub shares: Vec<(OpKind, f64)>,
}

impl Mix {
    /// `update` is the share of sets; the rest are gets (mutilate's `-u`).
    pub fn from_update_ratio(update: f64) -> Result<Self, String> {
        if !(0.0..=1.0).contains(&update) {
            return Err(format!(
                "invalid update ratio {update}: it is the share of sets, between 0 and 1"
            ));
        }
        Ok(Mix {
            shares: vec![(OpKind::Get, 1.0 - update), (OpKind::Set, update)],
        })
    }

    /// Draws the next operation.
    pub fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> OpKind {
        let mut u: f64 = rng.gen();
        for &(op, share) in &self.shares {
            if u < share {
                return op;
            }
            u -= share;
        }
        self.shares
            .iter()
            .rev()
            .find(|(_, s)| *s > 0.0)
            .map_or(OpKind::Get, |(op, _)| *op)
    }

    pub fn share_of(&self, op: OpKind) -> f64 {
        self.shares
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, s)| s)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn shares_are_followed() {
        let mix = Mix::from_update_ratio(0.1).unwrap();
        let mut rng = SmallRng::seed_from_u64(5);
        let n = 100_000;
        let sets = (0..n).filter(|_| mix.pick(&mut rng) == OpKind::Set).count();
        assert!((sets as f64 / n as f64 - 0.1).abs() < 0.005, "{sets}");
        let all_gets = Mix::from_update_ratio(0.0).unwrap();
        assert!((0..1000).all(|_| all_gets.pick(&mut rng) == OpKind::Get));
        let all_sets = Mix::from_update_ratio(1.0).unwrap();
        assert!((0..1000).all(|_| all_sets.pick(&mut rng) == OpKind::Set));
        assert!(Mix::from_update_ratio(1.5).is_err());
    }
}
