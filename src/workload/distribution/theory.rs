//! What theory says of each distribution: its mean (to rescale arrival
//! shapes to a rate) and its CDF (to test samples against).

use super::{Distribution, FB_VALUE_HEAD, FB_VALUE_TAIL};

impl Distribution {
    /// The mean (used to scale inter-arrival shapes to a rate); infinite
    /// for heavy tails that have none.
    pub fn mean(&self) -> f64 {
        match *self {
            Distribution::Fixed(v) => v,
            Distribution::Uniform { min, max } => (min + max) / 2.0,
            Distribution::Normal { mean, .. } | Distribution::Exponential { mean } => mean,
            Distribution::Pareto { loc, scale, shape } if shape < 1.0 => {
                loc + scale / (1.0 - shape)
            }
            Distribution::Gev { loc, scale, shape } if shape < 1.0 && shape != 0.0 => {
                loc + scale * (gamma(1.0 - shape) - 1.0) / shape
            }
            Distribution::Gev { loc, scale, .. } if self.is_gumbel() => loc + scale * EULER_GAMMA,
            Distribution::Empirical(ref rows) => {
                rows.iter().map(|r| r.share * (r.lo + r.hi) / 2.0).sum()
            }
            Distribution::FbValue => {
                let head: f64 = FB_VALUE_HEAD
                    .iter()
                    .enumerate()
                    .map(|(i, p)| i as f64 * p)
                    .sum();
                let tail_p = 1.0 - FB_VALUE_HEAD.iter().sum::<f64>();
                head + tail_p * FB_VALUE_TAIL.mean()
            }
            Distribution::Zipf { n, theta } => {
                let (num, den) = (1..=n.min(1_000_000)).fold((0.0, 0.0), |(a, b), k| {
                    let w = (k as f64).powf(-theta);
                    (a + k as f64 * w, b + w)
                });
                num / den
            }
            _ => f64::INFINITY,
        }
    }

    fn is_gumbel(&self) -> bool {
        matches!(*self, Distribution::Gev { shape, .. } if shape == 0.0)
    }

    /// The CDF at `x`, for the continuous families (tests compare samples
    /// against it).
    pub fn cdf(&self, x: f64) -> f64 {
        match *self {
            Distribution::Fixed(v) => f64::from(u8::from(x >= v)),
            Distribution::Uniform { min, max } => ((x - min) / (max - min)).clamp(0.0, 1.0),
            Distribution::Exponential { mean } => (1.0 - (-x / mean).exp()).max(0.0),
            Distribution::Normal { mean, sd } => {
                0.5 * (1.0 + erf((x - mean) / (sd * std::f64::consts::SQRT_2)))
            }
            Distribution::Pareto { loc, scale, shape } => {
                if x <= loc {
                    0.0
                } else if shape == 0.0 {
                    1.0 - (-(x - loc) / scale).exp()
                } else {
                    1.0 - (1.0 + shape * (x - loc) / scale)
                        .max(0.0)
                        .powf(-1.0 / shape)
                }
            }
            Distribution::Gev { loc, scale, shape } => {
                let z = (x - loc) / scale;
                if shape == 0.0 {
                    (-(-z).exp()).exp()
                } else {
                    let t = 1.0 + shape * z;
                    if t <= 0.0 {
                        f64::from(u8::from(shape < 0.0))
                    } else {
                        (-t.powf(-1.0 / shape)).exp()
                    }
                }
            }
            Distribution::Empirical(ref rows) => rows
                .iter()
                .map(|r| r.share * ((x.floor() - r.lo + 1.0) / (r.hi - r.lo + 1.0)).clamp(0.0, 1.0))
                .sum(),
            Distribution::FbValue => {
                let head: f64 = FB_VALUE_HEAD
                    .iter()
                    .take((x.floor().max(-1.0) + 1.0).min(15.0) as usize)
                    .sum();
                let tail_p = 1.0 - FB_VALUE_HEAD.iter().sum::<f64>();
                head + tail_p * FB_VALUE_TAIL.cdf(x)
            }
            Distribution::Zipf { n, theta } => {
                let k = x.floor().clamp(0.0, n as f64) as u64;
                let h = |m: u64| (1..=m).map(|i| (i as f64).powf(-theta)).sum::<f64>();
                h(k) / h(n)
            }
        }
    }
}

const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// The gamma function (Lanczos approximation, g = 7, ~15 digits), written
/// here because no small well-kept crate is already a dependency for it.
pub(super) fn gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let a = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |a, (i, c)| a + c / (x + i as f64 + 1.0));
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

/// The error function (Abramowitz–Stegun 7.1.26, |error| < 1.5e-7).
pub(super) fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x >= 0.0 {
        y
    } else {
        -y
    }
}
