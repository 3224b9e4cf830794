//! One distribution type for every random quantity of a workload: key and
//! value sizes, inter-arrival gaps, rates.
//!
//! The text forms are those of mutilate/memcache-perf (`fixed:30`,
//! `uniform:100`, `normal:M,SD`, `exponential:LAMBDA`, `pareto:L,S,K`,
//! `gev:L,S,K`) and of twemperf (`d30`, `u1,16`, `e5`), plus
//! `uniform:MIN,MAX`. A bare number is `fixed`.

mod theory;

use crate::workload::TableError;
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
    /// Ranges `[lo, hi]` (inclusive) with their shares, uniform within a
    /// range: what a memaslap config file gives.
    Empirical(Vec<Range>),
    /// Facebook ETC value sizes (Atikoglu et al., SIGMETRICS 2012): a
    /// discrete head for 0..=14 bytes and a generalized Pareto tail.
    FbValue,
    /// Zipf ranks 1..=n with exponent theta (popularity).
    Zipf {
        n: u64,
        theta: f64,
    },
}

/// One row of an empirical table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
    pub share: f64,
}

/// fb_value's head: P(size = i bytes) for i = 0..=14 (mutilate's table).
const FB_VALUE_HEAD: [f64; 15] = [
    0.00536, 0.00047, 0.17820, 0.09239, 0.00018, 0.02740, 0.00065, 0.00606, 0.00023, 0.00837,
    0.00837, 0.08989, 0.00092, 0.00326, 0.01980,
];
/// fb_value's tail beyond the head.
const FB_VALUE_TAIL: Distribution = Distribution::Pareto {
    loc: 15.0,
    scale: 214.476,
    shape: 0.348238,
};
/// fb_key: key sizes, GEV.
const FB_KEY: Distribution = Distribution::Gev {
    loc: 30.7984,
    scale: 8.20449,
    shape: 0.078688,
};
/// fb_ia: inter-arrival gaps in µs, generalized Pareto.
const FB_IA: Distribution = Distribution::Pareto {
    loc: 0.0,
    scale: 16.0292,
    shape: 0.154971,
};

impl Distribution {
    /// Draws one sample.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            Distribution::Fixed(v) => v,
            Distribution::Normal { mean, sd } => {
                let z: f64 = StandardNormal.sample(rng);
                mean + sd * z
            }
            Distribution::Empirical(ref rows) => {
                let mut u: f64 = rng.gen();
                let row = rows
                    .iter()
                    .find(|r| {
                        let hit = u < r.share;
                        u -= r.share;
                        hit
                    })
                    .unwrap_or(&rows[rows.len() - 1]);
                // Whole sizes, each of lo..=hi equally likely.
                (row.lo + (row.hi - row.lo + 1.0) * rng.gen::<f64>())
                    .floor()
                    .min(row.hi)
            }
            Distribution::FbValue => {
                let mut u: f64 = rng.gen();
                for (size, p) in FB_VALUE_HEAD.iter().enumerate() {
                    if u < *p {
                        return size as f64;
                    }
                    u -= p;
                }
                FB_VALUE_TAIL.sample(rng)
            }
            Distribution::Zipf { n, theta } => {
                rand_distr::Zipf::new(n, theta).map_or(1.0, |z| z.sample(rng))
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
            Distribution::Empirical(_) | Distribution::FbValue | Distribution::Zipf { .. } => {
                self.mean()
            }
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
            Distribution::Empirical(ref rows) => rows
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                    (lo.min(r.lo), hi.max(r.hi))
                }),
            Distribution::FbValue => (0.0, f64::INFINITY),
            Distribution::Zipf { n, .. } => (1.0, n as f64),
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
    type Err = super::WorkloadError;

    fn from_str(text: &str) -> Result<Self, super::WorkloadError> {
        let t = text.trim();
        let bad = |why: &str| super::WorkloadError::Distribution {
            text: text.into(),
            why: why.into(),
        };
        match t {
            "fb_key" => return Ok(FB_KEY),
            "fb_value" => return Ok(Distribution::FbValue),
            "fb_ia" => return Ok(FB_IA),
            _ => {}
        }
        if let Some(table) = t.strip_prefix("empirical:") {
            return parse_table(table).map_err(|e| bad(&e.to_string()));
        }
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
            "zipf" => {
                arity(2)?;
                if args[0] < 1.0 || args[0].fract() != 0.0 {
                    return Err(bad("zipf needs a whole number of items N >= 1"));
                }
                Distribution::Zipf {
                    n: args[0] as u64,
                    theta: args[1],
                }
            }
            _ => return Err(bad(&format!("unknown family '{name}'; {FORMS}"))),
        };
        dist.validate().map_err(bad)?;
        Ok(dist)
    }
}

const FORMS: &str = "expected N, fixed:N, uniform:MAX, uniform:MIN,MAX, normal:MEAN,SD, \
exponential:LAMBDA, pareto:LOC,SCALE,SHAPE, gev:LOC,SCALE,SHAPE, zipf:N,THETA, \
empirical:LO-HI:SHARE,..., fb_key, fb_value, fb_ia, dN, uA,B or eMEAN";

impl Distribution {
    /// Why the parameters make no distribution, if they do not.
    fn validate(&self) -> Result<(), &'static str> {
        match *self {
            Distribution::Uniform { min, max } if max <= min => Err("uniform needs MIN < MAX"),
            Distribution::Normal { sd, .. } if sd < 0.0 => {
                Err("the standard deviation must not be negative")
            }
            Distribution::Exponential { mean } if mean <= 0.0 => Err("the mean must be positive"),
            Distribution::Pareto { scale, .. } | Distribution::Gev { scale, .. }
                if scale <= 0.0 =>
            {
                Err("the scale must be positive")
            }
            Distribution::Zipf { theta, .. } if theta.is_nan() || theta < 0.0 => {
                Err("zipf needs THETA >= 0")
            }
            _ => Ok(()),
        }
    }
}

/// `LO-HI:SHARE,LO-HI:SHARE,...`; shares must sum to 1 (within 0.001,
/// memaslap's precision) and ranges must be whole sizes with LO <= HI.
fn parse_table(text: &str) -> Result<Distribution, TableError> {
    let rows = text
        .split(',')
        .map(|row| {
            let err = || TableError::Row(row.to_string());
            let (range, share) = row.split_once(':').ok_or_else(err)?;
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            let num = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite());
            match (num(lo), num(hi), num(share)) {
                (Some(lo), Some(hi), Some(share))
                    if lo <= hi
                        && lo >= 0.0
                        && share >= 0.0
                        && lo.fract() == 0.0
                        && hi.fract() == 0.0 =>
                {
                    Ok(Range { lo, hi, share })
                }
                _ => Err(err()),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let total: f64 = rows.iter().map(|r| r.share).sum();
    if (total - 1.0).abs() > 0.001 {
        return Err(TableError::Sum(total));
    }
    Ok(Distribution::Empirical(rows))
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
            Distribution::Empirical(ref rows) => {
                f.write_str("empirical:")?;
                for (i, r) in rows.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    write!(f, "{sep}{}-{}:{}", r.lo, r.hi, r.share)?;
                }
                Ok(())
            }
            Distribution::FbValue => f.write_str("fb_value"),
            Distribution::Zipf { n, theta } => write!(f, "zipf:{n},{theta}"),
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
    use super::theory::{erf, gamma};
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
            "zipf:10,-1",
            "zipf:0.5,1",
            "empirical:1-2:0.5",
            "empirical:5-1:1",
            "empirical:x",
            "fb_values",
        ] {
            let err = bad.parse::<Distribution>().unwrap_err();
            assert!(
                err.to_string().contains(&format!("'{bad}'")),
                "{bad}: {err}"
            );
        }
    }

    /// Kolmogorov–Smirnov statistic of `samples` against a continuous CDF.
    fn ks(mut samples: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        samples.sort_by(f64::total_cmp);
        let n = samples.len() as f64;
        samples.iter().enumerate().fold(0.0, |d: f64, (i, &x)| {
            let f = cdf(x);
            d.max((i as f64 + 1.0) / n - f).max(f - i as f64 / n)
        })
    }

    fn draw(d: &Distribution, n: usize) -> Vec<f64> {
        let mut rng = SmallRng::seed_from_u64(42);
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    /// KS at α = 0.001 (critical value 1.95/√n) and the sample mean within
    /// `mean_tol` (relative) of the theoretical mean.
    fn check(text: &str, mean_tol: f64) {
        let d = parse(text);
        let n = 100_000;
        let xs = draw(&d, n);
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!(
            (mean / d.mean() - 1.0).abs() < mean_tol,
            "{text}: mean {mean} vs {}",
            d.mean()
        );
        let stat = ks(xs, |x| d.cdf(x));
        assert!(stat < 1.95 / (n as f64).sqrt(), "{text}: KS {stat}");
    }

    #[test]
    fn continuous_families_match_their_cdf() {
        check("uniform:10,20", 0.005);
        check("u1,16", 0.005);
        check("uniform:100", 0.01);
        check("normal:100,15", 0.005);
        check("exponential:0.02", 0.01);
        check("e50", 0.01);
        check("pareto:0,16.0292,0.154971", 0.02);
        check("fb_ia", 0.02);
        check("gev:30.7984,8.20449,0.078688", 0.005);
        check("fb_key", 0.005);
        check("gev:10,2,0", 0.005);
    }

    #[test]
    fn normal_variance_matches() {
        let xs = draw(&parse("normal:100,15"), 100_000);
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((var.sqrt() / 15.0 - 1.0).abs() < 0.01, "sd {}", var.sqrt());
    }

    #[test]
    fn fb_value_head_and_tail_match_the_table() {
        let n = 400_000;
        let xs = draw(&parse("fb_value"), n);
        for (size, p) in FB_VALUE_HEAD.iter().enumerate() {
            let f = xs.iter().filter(|&&x| x == size as f64).count() as f64 / n as f64;
            assert!(
                (f - p).abs() < 4.0 * (p / n as f64).sqrt() + 1e-4,
                "size {size}: {f} vs {p}"
            );
        }
        let tail: Vec<f64> = xs.into_iter().filter(|&x| x >= 15.0).collect();
        let tail_p = 1.0 - FB_VALUE_HEAD.iter().sum::<f64>();
        assert!((tail.len() as f64 / n as f64 - tail_p).abs() < 0.005);
        let stat = ks(tail.clone(), |x| FB_VALUE_TAIL.cdf(x));
        assert!(stat < 1.95 / (tail.len() as f64).sqrt(), "tail KS {stat}");
    }

    #[test]
    fn empirical_tables_keep_their_proportions() {
        let d = parse("empirical:16-100:0.8,101-200:0.1,201-249:0.1");
        let n = 200_000;
        let xs = draw(&d, n);
        for (lo, hi, p) in [(16.0, 100.0, 0.8), (101.0, 200.0, 0.1), (201.0, 249.0, 0.1)] {
            let f = xs
                .iter()
                .filter(|&&x| x >= lo && x <= hi && x.fract() == 0.0)
                .count() as f64
                / n as f64;
            assert!((f - p).abs() < 0.01 * p, "[{lo},{hi}]: {f}");
        }
        assert_eq!(d.support(), (16.0, 249.0));
    }

    #[test]
    fn zipf_ranks_follow_theory() {
        let d = parse("zipf:100,0.99");
        let n = 300_000;
        let xs = draw(&d, n);
        let h: f64 = (1..=100).map(|k| (k as f64).powf(-0.99)).sum();
        for k in 1..=5 {
            let f = xs.iter().filter(|&&x| x == k as f64).count() as f64 / n as f64;
            let p = (k as f64).powf(-0.99) / h;
            assert!((f - p).abs() < 0.03 * p, "rank {k}: {f} vs {p}");
        }
    }

    #[test]
    fn gamma_and_erf_are_accurate() {
        assert!((gamma(5.0) - 24.0).abs() < 1e-9);
        assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-9);
        assert!((erf(1.0) - 0.842_700_792_9).abs() < 1e-6);
    }
}
