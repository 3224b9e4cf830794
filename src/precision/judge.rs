//! Whether one percentile is known well enough: one rule, for the verdict
//! printed at the end and for `--precision`'s early stop.
//!
//! Met means another run would agree: the interval is finite and within
//! the target, the tail holds enough independent events for its variance
//! to be known, and the batches could have shown drift within the run.

use super::dispersion::MIN_BATCHES;
use super::Estimate;
use serde::{Deserialize, Serialize};

/// The fewest independent events (episodes, or samples over the design
/// effect) a tail may rest on. With fewer, the batches' estimate of the
/// tail count's variance rests on a handful of clusters and may be far
/// too small: a p99.99 made of 5 stalls covered the value of 30 pooled
/// runs in 2 of them.
pub const MIN_INDEPENDENT_TAIL: f64 = 20.0;

/// Why a percentile is not met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shortfall {
    /// No finite interval: too few samples beyond the percentile, or it
    /// lies among the censored requests.
    NoBound,
    /// The interval is wider than the target.
    TooWide,
    /// The tail came in fewer than 20 independent episodes.
    FewEpisodes,
    /// Fewer than 20 batches, or batches correlated at every length that
    /// leaves 20: drift within the run cannot be told from noise.
    CannotTellDrift,
}

impl Shortfall {
    /// How the text report says it.
    pub fn text(self) -> &'static str {
        match self {
            Shortfall::NoBound => "no upper bound",
            Shortfall::TooWide => "too wide",
            Shortfall::FewEpisodes => "too few episodes",
            Shortfall::CannotTellDrift => "cannot tell drift",
        }
    }
}

/// Each way `e` falls short of a relative half-width `target`, in the
/// order above; empty when it is met.
pub fn judge(e: &Estimate, target: f64) -> Vec<Shortfall> {
    let mut short = Vec::new();
    match e.relative_half_width() {
        Some(h) if e.estimable => {
            if h > target {
                short.push(Shortfall::TooWide);
            }
        }
        _ => short.push(Shortfall::NoBound),
    }
    if e.independent_tail() < MIN_INDEPENDENT_TAIL {
        short.push(Shortfall::FewEpisodes);
    }
    if !e.drift_judged || e.batches < MIN_BATCHES {
        short.push(Shortfall::CannotTellDrift);
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(value: f64, half: f64, tail: u64) -> Estimate {
        Estimate::p99_for_tests(value, half, tail)
    }

    #[test]
    fn met_needs_width_events_and_batches() {
        assert!(judge(&estimate(100.0, 5.0, 1000), 0.1).is_empty());
        assert_eq!(
            judge(&estimate(100.0, 15.0, 1000), 0.1),
            [Shortfall::TooWide]
        );
        // Narrow, but five stalls.
        let mut few = estimate(100.0, 5.0, 1000);
        few.episodes = Some(5);
        assert_eq!(judge(&few, 0.1), [Shortfall::FewEpisodes]);
        // Samples in clusters of 100: ten independent events.
        let mut clustered = estimate(100.0, 5.0, 1000);
        clustered.design_effect = 100.0;
        assert_eq!(judge(&clustered, 0.1), [Shortfall::FewEpisodes]);
        // Three batches cannot show drift.
        let mut short = estimate(100.0, 5.0, 1000);
        short.batches = 3;
        short.drift_judged = false;
        assert_eq!(judge(&short, 0.1), [Shortfall::CannotTellDrift]);
        let mut open = estimate(100.0, 5.0, 1000);
        open.upper_us = None;
        open.estimable = false;
        assert_eq!(judge(&open, 0.1), [Shortfall::NoBound]);
    }
}
