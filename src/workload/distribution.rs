//! One distribution type for every random quantity of a workload: key and
//! value sizes, inter-arrival gaps, rates.
//!
//! The text forms are those of mutilate/memcache-perf (`fixed:30`,
//! `uniform:100`, `normal:M,SD`, `exponential:LAMBDA`, `pareto:L,S,K`,
//! `gev:L,S,K`) and of twemperf (`d30`, `u1,16`, `e5`), plus
//! `uniform:MIN,MAX`. A bare number is `fixed`.

use rand::Rng;
use rand_distr::{Distribution as _, StandardNormal};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    Fixed(f64),
    /// Uniform on `[min, max)`.
    Uniform {
        min: f64,
        max: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// Exponential with the given mean (mutilate writes the rate, twemperf
    /// the mean; both parse to this).
    Exponential {
        mean: f64,
    },
    /// Generalized Pareto.
    Pareto {
        loc: f64,
        scale: f64,
        shape: f64,
    },
    /// Generalized extreme value.
    Gev {
        loc: f64,
        scale: f64,
        shape: f64,
    },
}

impl Distribution {
    /// Draws one sample.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            Distribution::Fixed(v) => v,
            Distribution::Normal { mean, sd } => {
                let z: f64 = StandardNormal.sample(rng);
                mean + sd * z
            }
            _ => self.quantile(open_unit(rng)),
        }
    }

    /// The inverse CDF at `u` in (0, 1), for the families that have a closed
    /// form; `Normal` is sampled directly and returns its mean here.
    fn quantile(&self, u: f64) -> f64 {
        match *self {
            Distribution::Fixed(v) => v,
            Distribution::Uniform { min, max } => min + (max - min) * u,
            Distribution::Normal { mean, .. } => mean,
            Distribution::Exponential { mean } => -mean * (1.0 - u).ln(),
            Distribution::Pareto { loc, scale, shape } => {
                if shape == 0.0 {
                    loc - scale * u.ln()
                } else {
                    loc + scale * (u.powf(-shape) - 1.0) / shape
                }
            }
            Distribution::Gev { loc, scale, shape } => {
                if shape == 0.0 {
                    loc - scale * (-u.ln()).ln()
                } else {
                    loc + scale * ((-u.ln()).powf(-shape) - 1.0) / shape
                }
            }
        }
    }

    /// The smallest and largest value a sample can take (infinite where the
    /// family is unbounded), used to validate sizes up front.
    pub fn support(&self) -> (f64, f64) {
        match *self {
            Distribution::Fixed(v) => (v, v),
            Distribution::Uniform { min, max } => (min, max),
            Distribution::Normal { .. } => (f64::NEG_INFINITY, f64::INFINITY),
            Distribution::Exponential { .. } => (0.0, f64::INFINITY),
            Distribution::Pareto { loc, scale, shape } if shape < 0.0 => (loc, loc - scale / shape),
            Distribution::Pareto { loc, .. } => (loc, f64::INFINITY),
            Distribution::Gev { loc, scale, shape } if shape > 0.0 => {
                (loc - scale / shape, f64::INFINITY)
            }
            Distribution::Gev { loc, scale, shape } if shape < 0.0 => {
                (f64::NEG_INFINITY, loc - scale / shape)
            }
            Distribution::Gev { .. } => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// The fixed value, if this distribution is constant.
    pub fn as_fixed(&self) -> Option<f64> {
        match *self {
            Distribution::Fixed(v) => Some(v),
            _ => None,
        }
    }
}

/// A uniform sample in the open interval (0, 1), safe for `ln` and `powf`.
fn open_unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u: f64 = rng.gen();
        if u > 0.0 {
            return u;
        }
    }
}

impl FromStr for Distribution {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = |why: &str| format!("invalid distribution '{text}': {why}");
        let (name, args) = match t.split_once(':') {
            Some((n, a)) => (n, numbers(a).map_err(|e| bad(&e))?),
            None => return parse_short(t).ok_or_else(|| bad(FORMS)),
        };
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(bad(&format!(
                    "'{name}' takes {n} number(s), got {}",
                    args.len()
                )))
            }
        };
        let dist = match name {
            "fixed" => arity(1).map(|_| Distribution::Fixed(args[0]))?,
            "uniform" if args.len() == 1 => Distribution::Uniform {
                min: 0.0,
                max: args[0],
            },
            "uniform" => arity(2).map(|_| Distribution::Uniform {
                min: args[0],
                max: args[1],
            })?,
            "normal" => arity(2).map(|_| Distribution::Normal {
                mean: args[0],
                sd: args[1],
            })?,
            "exponential" => {
                arity(1)?;
                if args[0] <= 0.0 {
                    return Err(bad("the rate must be positive"));
                }
                Distribution::Exponential {
                    mean: 1.0 / args[0],
                }
            }
            "pareto" => arity(3).map(|_| Distribution::Pareto {
                loc: args[0],
                scale: args[1],
                shape: args[2],
            })?,
            "gev" => arity(3).map(|_| Distribution::Gev {
                loc: args[0],
                scale: args[1],
                shape: args[2],
            })?,
            _ => return Err(bad(&format!("unknown family '{name}'; {FORMS}"))),
        };
        dist.validate().map_err(|e| bad(&e))?;
        Ok(dist)
    }
}

const FORMS: &str = "expected N, fixed:N, uniform:MAX, uniform:MIN,MAX, normal:MEAN,SD, \
exponential:LAMBDA, pareto:LOC,SCALE,SHAPE, gev:LOC,SCALE,SHAPE, dN, uA,B or eMEAN";

impl Distribution {
    fn validate(&self) -> Result<(), String> {
        match *self {
            Distribution::Uniform { min, max } if max <= min => {
                Err("uniform needs MIN < MAX".into())
            }
            Distribution::Normal { sd, .. } if sd < 0.0 => {
                Err("the standard deviation must not be negative".into())
            }
            Distribution::Exponential { mean } if mean <= 0.0 => {
                Err("the mean must be positive".into())
            }
            Distribution::Pareto { scale, .. } | Distribution::Gev { scale, .. }
                if scale <= 0.0 =>
            {
                Err("the scale must be positive".into())
            }
            _ => Ok(()),
        }
    }
}

/// twemperf's forms and a bare number.
fn parse_short(t: &str) -> Option<Distribution> {
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some(Distribution::Fixed(v));
    }
    let (kind, rest) = t.split_at(t.char_indices().nth(1)?.0);
    let args = numbers(rest).ok()?;
    let dist = match (kind, args.as_slice()) {
        ("d", [v]) => Distribution::Fixed(*v),
        ("u", [min, max]) => Distribution::Uniform {
            min: *min,
            max: *max,
        },
        ("e", [mean]) => Distribution::Exponential { mean: *mean },
        _ => return None,
    };
    dist.validate().ok().map(|_| dist)
}

fn numbers(text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(format!("'{}' is not a number", p.trim())),
        })
        .collect()
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Distribution::Fixed(v) => write!(f, "fixed:{v}"),
            Distribution::Uniform { min, max } => write!(f, "uniform:{min},{max}"),
            Distribution::Normal { mean, sd } => write!(f, "normal:{mean},{sd}"),
            Distribution::Exponential { mean } => write!(f, "exponential:{}", 1.0 / mean),
            Distribution::Pareto { loc, scale, shape } => write!(f, "pareto:{loc},{scale},{shape}"),
            Distribution::Gev { loc, scale, shape } => write!(f, "gev:{loc},{scale},{shape}"),
        }
    }
}

impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn parse(t: &str) -> Distribution {
        t.parse().unwrap()
    }

    #[test]
    fn forms() {
        assert_eq!(parse("30"), Distribution::Fixed(30.0));
        assert_eq!(parse("fixed:30"), Distribution::Fixed(30.0));
        assert_eq!(parse("d1"), Distribution::Fixed(1.0));
        assert_eq!(
            parse("u1,16"),
            Distribution::Uniform {
                min: 1.0,
                max: 16.0
            }
        );
        assert_eq!(
            parse("uniform:100"),
            Distribution::Uniform {
                min: 0.0,
                max: 100.0
            }
        );
        assert_eq!(parse("e5"), Distribution::Exponential { mean: 5.0 });
        assert_eq!(
            parse("exponential:0.5"),
            Distribution::Exponential { mean: 2.0 }
        );
        assert_eq!(
            parse("gev:30.7984,8.20449,0.078688").to_string(),
            "gev:30.7984,8.20449,0.078688"
        );
    }

    #[test]
    fn rejects_with_the_offending_text() {
        for bad in [
            "",
            "x",
            "fixed:",
            "fixed:a",
            "uniform:5,1",
            "normal:1",
            "exponential:0",
            "gev:1,-1,0",
            "d",
            "q5",
            "fixed:1,2",
        ] {
            let err = bad.parse::<Distribution>().unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{bad}: {err}");
        }
    }

    #[test]
    fn exponential_mean() {
        let d = parse("e50");
        let mut rng = SmallRng::seed_from_u64(7);
        let n = 200_000;
        let mean = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean - 50.0).abs() < 0.5, "mean {mean}");
    }
}
