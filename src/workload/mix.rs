//! The operation mix: which command each request is.

use super::WorkloadError;
use mcbench_proto::Cmd;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The operations a request can be. Each has its own histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Get,
    Gets,
    Gat,
    Gats,
    Touch,
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    /// A store that succeeds only if the cas unique is still the one a
    /// `gets` on this connection returned.
    Cas,
    Incr,
    Decr,
    Delete,
    /// A get of several keys in one request.
    Mget,
    /// A set sent by `--getset` after a get missed.
    Fill,
}

impl OpKind {
    pub const ALL: [OpKind; 16] = [
        OpKind::Get,
        OpKind::Gets,
        OpKind::Gat,
        OpKind::Gats,
        OpKind::Touch,
        OpKind::Set,
        OpKind::Add,
        OpKind::Replace,
        OpKind::Append,
        OpKind::Prepend,
        OpKind::Cas,
        OpKind::Incr,
        OpKind::Decr,
        OpKind::Delete,
        OpKind::Mget,
        OpKind::Fill,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Mget => "mget",
            OpKind::Fill => "fill",
            op => op.cmd().name(),
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The protocol command that carries the op.
    pub fn cmd(self) -> Cmd {
        match self {
            OpKind::Get | OpKind::Mget => Cmd::Get,
            OpKind::Gets => Cmd::Gets,
            OpKind::Gat => Cmd::Gat,
            OpKind::Gats => Cmd::Gats,
            OpKind::Touch => Cmd::Touch,
            OpKind::Set | OpKind::Fill => Cmd::Set,
            OpKind::Add => Cmd::Add,
            OpKind::Replace => Cmd::Replace,
            OpKind::Append => Cmd::Append,
            OpKind::Prepend => Cmd::Prepend,
            OpKind::Cas => Cmd::Cas,
            OpKind::Incr => Cmd::Incr,
            OpKind::Decr => Cmd::Decr,
            OpKind::Delete => Cmd::Delete,
        }
    }

    /// Whether the op is a retrieval (its keys count as hits or misses).
    pub fn is_retrieval(self) -> bool {
        self.cmd().is_retrieval()
    }

    /// Whether the op writes its key (and so moves the "latest" key).
    pub fn writes(self) -> bool {
        self.cmd().is_storage()
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The ops a user can put in a mix: all but `fill`, which follows from
/// `--getset`.
fn mixable(name: &str) -> Option<OpKind> {
    OpKind::ALL
        .into_iter()
        .find(|op| *op != OpKind::Fill && op.name() == name)
}

/// A weighted choice of operations. Shares sum to 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    pub shares: Vec<(OpKind, f64)>,
}

impl Mix {
    /// `update` is the share of sets; the rest are gets (mutilate's `-u`).
    pub fn from_update_ratio(update: f64) -> Result<Self, WorkloadError> {
        if !(0.0..=1.0).contains(&update) {
            return Err(WorkloadError::UpdateRatio(update));
        }
        Ok(Mix {
            shares: vec![(OpKind::Get, 1.0 - update), (OpKind::Set, update)],
        })
    }

    /// Draws the next operation.
    #[inline]
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

/// `get=90,set=10` (or `get:90,set:10`): weights, normalised to shares.
impl std::str::FromStr for Mix {
    type Err = WorkloadError;

    fn from_str(text: &str) -> Result<Self, WorkloadError> {
        let bad = |why: String| WorkloadError::Mix {
            text: text.into(),
            why,
        };
        let mut shares: Vec<(OpKind, f64)> = Vec::new();
        for part in text.split(',') {
            let (name, weight) = part
                .split_once(['=', ':'])
                .ok_or_else(|| bad(format!("'{part}' is not OP=WEIGHT")))?;
            let op = mixable(name.trim()).ok_or_else(|| {
                bad(format!(
                    "unknown op '{}' (ops: get, gets, gat, gats, touch, set, add, replace, \
                     append, prepend, cas, incr, decr, delete, mget)",
                    name.trim()
                ))
            })?;
            let w: f64 = weight
                .trim()
                .parse()
                .ok()
                .filter(|w: &f64| w.is_finite() && *w >= 0.0)
                .ok_or_else(|| bad(format!("'{}' is not a weight >= 0", weight.trim())))?;
            if shares.iter().any(|(o, _)| *o == op) {
                return Err(bad(format!("op '{op}' appears twice")));
            }
            shares.push((op, w));
        }
        let total: f64 = shares.iter().map(|(_, w)| w).sum();
        if total <= 0.0 {
            return Err(bad("the weights sum to zero".into()));
        }
        Ok(Mix {
            shares: shares.into_iter().map(|(op, w)| (op, w / total)).collect(),
        })
    }
}

/// How many gets are multigets, and of how many keys.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MultiGet {
    /// Share of gets sent as multigets (0..=1).
    pub share: f64,
    /// Keys per multiget.
    pub keys: u32,
}

impl MultiGet {
    pub const NONE: MultiGet = MultiGet {
        share: 0.0,
        keys: 1,
    };
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

    #[test]
    fn mix_text_is_normalised() {
        let mix: Mix = "get=90,set=10".parse().unwrap();
        assert!((mix.share_of(OpKind::Set) - 0.1).abs() < 1e-12);
        let mix: Mix = "set=1, get=3".parse().unwrap();
        assert!((mix.share_of(OpKind::Get) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn malformed_mixes_name_the_offending_text() {
        for (bad, needle) in [
            ("get=90,sett=10", "'sett'"),
            ("get", "'get' is not OP=WEIGHT"),
            ("get=x", "'x'"),
            ("get=-1", "'-1'"),
            ("get=0,set=0", "sum to zero"),
            ("get=1,get=2", "twice"),
        ] {
            let err = bad.parse::<Mix>().unwrap_err();
            assert!(
                err.to_string().contains(needle) && err.to_string().contains(bad),
                "{bad}: {err}"
            );
        }
    }
}
