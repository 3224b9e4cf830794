//! Key popularity: which key of a server's share each request asks for.
//!
//! The forms are YCSB's request distributions: `uniform`, `zipf:THETA`,
//! `hotspot:FRACTION,SHARE`, `sequential`, `latest[:THETA]`. A popularity
//! acts on one server's keys (rank 0 is that server's first key), so that a
//! connection can always draw a key its server owns; with one server that
//! is the whole key space.

use rand::Rng;
use rand_distr::Distribution as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// YCSB's default Zipf exponent.
pub const DEFAULT_THETA: f64 = 0.99;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Popularity {
    Uniform,
    /// Rank r is asked with weight r^-theta (rank 0 hottest).
    Zipf {
        theta: f64,
    },
    /// `fraction` of the keys get `share` of the requests.
    Hotspot {
        fraction: f64,
        share: f64,
    },
    /// Keys in order, round and round.
    Sequential,
    /// Zipf by recency: the key set last is hottest, then the one before.
    Latest {
        theta: f64,
    },
}

/// Key state of one connection: what some popularities and memaslap's
/// task window need to remember.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    /// Sequential: the next rank.
    next: u64,
    /// Latest: the rank most recently set.
    last_set: Option<u64>,
    /// The connection's number among the run's connections.
    pub lane: usize,
    /// Window mode: how many new keys this connection has written.
    pub written: u64,
    /// The key and cas unique of the latest `gets`/`gats` answered on this
    /// connection, for its next `cas`.
    pub cas: Option<(u64, u64)>,
    /// `--exp-verify`: this connection's sets with the short expiry.
    pub expiring: super::ExpiringKeys,
    /// Window mode with `--verify`: which window keys are stored.
    pub ledger: super::WindowLedger,
}

impl Cursor {
    pub fn new(lane: usize) -> Self {
        Cursor {
            lane,
            ..Cursor::default()
        }
    }

    /// A cursor whose sequential ranks start at `first` (taken modulo the
    /// key space as they are drawn).
    pub fn starting_at(lane: usize, first: u64) -> Self {
        Cursor {
            lane,
            next: first,
            ..Cursor::default()
        }
    }

    /// Tells the cursor that rank `rank` was just written.
    pub fn set(&mut self, rank: u64) {
        self.last_set = Some(rank);
    }
}

/// A popularity bound to `n` keys.
#[derive(Debug, Clone)]
pub struct Picker {
    popularity: Popularity,
    n: u64,
    zipf: Option<rand_distr::Zipf<f64>>,
}

impl Picker {
    pub fn new(popularity: Popularity, n: u64) -> Self {
        let n = n.max(1);
        let zipf = match popularity {
            Popularity::Zipf { theta } | Popularity::Latest { theta } => {
                rand_distr::Zipf::new(n, theta).ok()
            }
            _ => None,
        };
        Picker {
            popularity,
            n,
            zipf,
        }
    }

    /// A rank in `0..n`.
    #[inline]
    pub fn pick<R: Rng + ?Sized>(&self, rng: &mut R, cursor: &mut Cursor) -> u64 {
        let n = self.n;
        match self.popularity {
            Popularity::Uniform => rng.gen_range(0..n),
            Popularity::Zipf { .. } => self.zipf_rank(rng),
            Popularity::Hotspot { fraction, share } => {
                let hot = ((n as f64 * fraction).ceil() as u64).clamp(1, n);
                if hot == n || rng.gen::<f64>() < share {
                    rng.gen_range(0..hot)
                } else {
                    rng.gen_range(hot..n)
                }
            }
            Popularity::Sequential => {
                let r = cursor.next % n;
                cursor.next = (r + 1) % n;
                r
            }
            Popularity::Latest { .. } => {
                let anchor = cursor.last_set.unwrap_or(n - 1);
                (anchor + n - self.zipf_rank(rng) % n) % n
            }
        }
    }

    fn zipf_rank<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        self.zipf.as_ref().map_or(0, |z| {
            (z.sample(rng) as u64).saturating_sub(1).min(self.n - 1)
        })
    }
}

impl FromStr for Popularity {
    type Err = super::WorkloadError;

    fn from_str(text: &str) -> Result<Self, super::WorkloadError> {
        let bad = |why: &str| super::WorkloadError::Popularity {
            text: text.into(),
            why: why.into(),
        };
        let (name, args) = text.trim().split_once(':').unwrap_or((text.trim(), ""));
        let nums: Vec<f64> = if args.is_empty() {
            Vec::new()
        } else {
            args.split(',')
                .map(|a| {
                    a.trim()
                        .parse::<f64>()
                        .map_err(|_| bad(&format!("'{a}' is not a number")))
                })
                .collect::<Result<_, _>>()?
        };
        let theta = |nums: &[f64]| match nums {
            [] => Ok(DEFAULT_THETA),
            [t] if *t >= 0.0 && t.is_finite() => Ok(*t),
            _ => Err(bad("expects one THETA >= 0")),
        };
        match name {
            "uniform" if nums.is_empty() => Ok(Popularity::Uniform),
            "sequential" if nums.is_empty() => Ok(Popularity::Sequential),
            "zipf" | "zipfian" => Ok(Popularity::Zipf { theta: theta(&nums)? }),
            "latest" => Ok(Popularity::Latest { theta: theta(&nums)? }),
            "hotspot" => match nums[..] {
                [f, s] if f > 0.0 && f <= 1.0 && (0.0..=1.0).contains(&s) => {
                    Ok(Popularity::Hotspot { fraction: f, share: s })
                }
                _ => Err(bad("expects hotspot:FRACTION,SHARE with FRACTION in (0,1] and SHARE in [0,1]")),
            },
            _ => Err(bad("expected uniform, zipf:THETA, hotspot:FRACTION,SHARE, sequential or latest[:THETA]")),
        }
    }
}

impl fmt::Display for Popularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Popularity::Uniform => f.write_str("uniform"),
            Popularity::Zipf { theta } => write!(f, "zipf:{theta}"),
            Popularity::Hotspot { fraction, share } => write!(f, "hotspot:{fraction},{share}"),
            Popularity::Sequential => f.write_str("sequential"),
            Popularity::Latest { theta } => write!(f, "latest:{theta}"),
        }
    }
}

impl Serialize for Popularity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Popularity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn frequencies(p: &str, n: u64, draws: usize) -> Vec<f64> {
        let picker = Picker::new(p.parse().unwrap(), n);
        let mut rng = SmallRng::seed_from_u64(11);
        let mut cursor = Cursor::default();
        let mut counts = vec![0usize; n as usize];
        for _ in 0..draws {
            counts[picker.pick(&mut rng, &mut cursor) as usize] += 1;
        }
        counts
            .into_iter()
            .map(|c| c as f64 / draws as f64)
            .collect()
    }

    #[test]
    fn zipf_top_keys_follow_theory() {
        let (n, theta) = (1000u64, 0.99);
        let freq = frequencies("zipf:0.99", n, 1_000_000);
        let h: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        for rank in 0..10 {
            let expect = ((rank + 1) as f64).powf(-theta) / h;
            assert!(
                (freq[rank as usize] - expect).abs() < 0.05 * expect + 0.0005,
                "rank {rank}: {} vs {expect}",
                freq[rank as usize]
            );
        }
    }

    #[test]
    fn hotspot_share_goes_to_the_hot_fraction() {
        let freq = frequencies("hotspot:0.2,0.8", 1000, 500_000);
        let hot: f64 = freq[..200].iter().sum();
        assert!((hot - 0.8).abs() < 0.005, "{hot}");
    }

    #[test]
    fn latest_follows_the_last_write() {
        let picker = Picker::new("latest:0.99".parse().unwrap(), 1000);
        let mut rng = SmallRng::seed_from_u64(3);
        let mut cursor = Cursor::default();
        cursor.set(500);
        let draws = 200_000;
        let at_500 = (0..draws)
            .filter(|_| picker.pick(&mut rng, &mut cursor) == 500)
            .count() as f64
            / draws as f64;
        let h: f64 = (1..=1000).map(|k| (k as f64).powf(-0.99)).sum();
        assert!((at_500 - 1.0 / h).abs() < 0.01, "{at_500}");
        let at_499 = (0..draws)
            .filter(|_| picker.pick(&mut rng, &mut cursor) == 499)
            .count() as f64
            / draws as f64;
        assert!((at_499 - 2f64.powf(-0.99) / h).abs() < 0.01, "{at_499}");
    }

    #[test]
    fn sequential_cycles_and_uniform_is_flat() {
        let picker = Picker::new(Popularity::Sequential, 3);
        let mut rng = SmallRng::seed_from_u64(3);
        let mut c = Cursor::default();
        let seq: Vec<u64> = (0..7).map(|_| picker.pick(&mut rng, &mut c)).collect();
        assert_eq!(seq, [0, 1, 2, 0, 1, 2, 0]);
        let freq = frequencies("uniform", 10, 200_000);
        assert!(freq.iter().all(|f| (f - 0.1).abs() < 0.005), "{freq:?}");
    }

    #[test]
    fn malformed_popularity_names_the_text() {
        for bad in [
            "zipf:x",
            "hotspot:2,0.5",
            "hotspot:0.5",
            "pareto",
            "uniform:3",
            "zipf:-1",
        ] {
            let err = bad.parse::<Popularity>().unwrap_err();
            assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        }
    }
}
