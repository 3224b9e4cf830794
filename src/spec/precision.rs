//! `--precision p99.9:5%`: a percentile and the relative half-width of its
//! 95 % interval that the run must reach (it measures until then, within
//! `-t`), and the default every printed percentile is judged against.

use super::SpecError;

use serde::{Deserialize, Serialize};

/// The half-width a printed percentile is judged against when the run
/// names none: ±10 %.
pub const DEFAULT_TARGET: f64 = 0.10;

/// A percentile and how precise it must be.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrecisionTarget {
    /// 0 < percentile < 100.
    pub percentile: f64,
    /// The largest relative half-width allowed (0.05 for ±5 %).
    pub relative: f64,
}

impl std::str::FromStr for PrecisionTarget {
    type Err = SpecError;

    /// `p99.9:5%`, `99:0.05`.
    fn from_str(text: &str) -> Result<Self, SpecError> {
        let bad = || SpecError::PrecisionTarget(text.into());
        let (p, width) = text.split_once(':').ok_or_else(bad)?;
        let percentile: f64 = p
            .trim()
            .trim_start_matches('p')
            .parse()
            .map_err(|_| bad())?;
        let width = width.trim();
        let relative = match width.strip_suffix('%') {
            Some(pct) => pct.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
            None => width.parse::<f64>().map_err(|_| bad())?,
        };
        let target = PrecisionTarget {
            percentile,
            relative,
        };
        target.check()?;
        Ok(target)
    }
}

impl PrecisionTarget {
    /// Values a target may hold (the checks of a spec read from JSON too).
    pub fn check(&self) -> Result<(), SpecError> {
        if !(self.percentile > 0.0 && self.percentile < 100.0) {
            return Err(SpecError::Invalid(format!(
                "--precision: the percentile must be above 0 and below 100, got {}",
                self.percentile
            )));
        }
        if !(self.relative > 0.0 && self.relative <= 1.0) {
            return Err(SpecError::Invalid(format!(
                "--precision: the half-width must be above 0 and at most 100%, got {}",
                self.relative
            )));
        }
        Ok(())
    }
}

/// `search` and `scan`: a probe may end once its SLO percentile's 95 %
/// interval lies wholly on one side of the bound (set by the series, not
/// a flag of its own).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloDecision {
    pub percentile: f64,
    pub bound_us: f64,
}

impl super::RunSpec {
    /// `--precision` measures until precise, within `-t`: it needs that
    /// bound, and a measured phase.
    pub(super) fn validate_precision(&self) -> Result<(), SpecError> {
        self.validate_decide()?;
        let Some(first) = self.load.precision.first() else {
            return Ok(());
        };
        for t in &self.load.precision {
            t.check()?;
        }
        if !matches!(self.load.stop, super::StopAfter::Duration(_)) {
            return Err(SpecError::Invalid(format!(
                "--precision p{}:... runs until precise within -t/--duration, the longest it may \
                 take: give -t instead of a request count or --num-conns",
                first.percentile
            )));
        }
        if self.key_space.preload == super::LoadMode::LoadOnly {
            return Err(SpecError::Refused(
                "--precision needs a measured phase; --load-only has none",
            ));
        }
        Ok(())
    }
}

impl super::RunSpec {
    /// `search`'s SLO: a percentile strictly between 0 and 100 and a
    /// bound above 0 and within the longest latency recorded (an hour).
    pub(super) fn validate_decide(&self) -> Result<(), SpecError> {
        let Some(d) = self.load.decide else {
            return Ok(());
        };
        let longest_us = crate::stats::HIGHEST_NS as f64 / 1e3;
        let bound = d.bound_us > 0.0 && d.bound_us <= longest_us;
        if !(d.percentile > 0.0 && d.percentile < 100.0 && bound) {
            return Err(SpecError::Invalid(format!(
                "the SLO p{}:{} µs cannot decide a probe",
                d.percentile, d.bound_us
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_percent_or_share_and_refuse_the_rest() {
        let t: PrecisionTarget = "p99.9:5%".parse().unwrap();
        assert_eq!((t.percentile, t.relative), (99.9, 0.05));
        let t: PrecisionTarget = "99:0.1".parse().unwrap();
        assert_eq!((t.percentile, t.relative), (99.0, 0.1));
        for bad in ["p99", "p100:5%", "p99:0%", "p99:150%", "x:5%"] {
            assert!(bad.parse::<PrecisionTarget>().is_err(), "{bad}");
        }
    }
}
