//! `--precision`, and a search's or scan's probe: the main thread watches
//! the closed intervals and, once every named percentile of the total
//! latency is precise enough and the intervals look alike (and a probe's
//! SLO is decided: its interval wholly over the bound, or wholly under it
//! with no trend), ends the sending of every worker (`Shared::precise`).
//! `-t` stays the longest the run may take.

use crate::precision::{estimate, stationarity, Samples};
use crate::spec::precision::SloDecision;
use crate::spec::{PrecisionTarget, RunSpec};
use crate::stats::IntervalSummary;
use hdrhistogram::Histogram;

/// A run ends early no sooner than its tenth interval, and with 200
/// samples beyond each named percentile: ten batches of 20 at least.
/// With five (the fewest batch means use), the batches' spread is itself
/// so uncertain that a run stopped at a ±4 % dip ended at ±10 %
/// (tests/precision.rs, beside a full test suite).
const MIN_INTERVALS: usize = 10;
const MIN_TAIL: u64 = 200;
/// A search's or scan's probe is decided from its fifth interval: fewer
/// cannot show a trend.
const MIN_PROBE_INTERVALS: usize = 5;

/// A target counts as met here at this share of it: the run goes on for
/// the intervals in flight (over agents, a few), which move the final
/// figure a little; stopping at the first dip under the target itself
/// left a final ±5.3 % for a ±5 % target (tests/agents.rs).
const MARGIN: f64 = 0.9;

pub struct PrecisionWatch {
    targets: Vec<PrecisionTarget>,
    decide: Option<SloDecision>,
    /// The total latency of every closed interval, in order, ns.
    parts: Vec<Histogram<u64>>,
    all: Histogram<u64>,
}

impl PrecisionWatch {
    /// A watch when the run names targets.
    pub fn new(spec: &RunSpec) -> Option<Self> {
        // A measurement group's SLO is not the total's: no early decision.
        let decide = spec.decide.filter(|_| spec.measure.is_none());
        (!spec.precision.is_empty() || decide.is_some()).then(|| PrecisionWatch {
            targets: spec.precision.clone(),
            decide,
            parts: Vec::new(),
            all: crate::stats::new_histogram(),
        })
    }

    /// Adds a closed interval; whether the run is now precise enough.
    pub fn add(&mut self, summary: &IntervalSummary) -> bool {
        let Some(Ok(h)) = summary.ops.get("total").map(|t| t.latency_hdr.decode()) else {
            return false;
        };
        if self.all.add(&h).is_err() {
            return false;
        }
        self.parts.push(h);
        self.precise()
    }

    /// Every target met (timed-out requests are not known here: the
    /// verdict at the end counts them) and no trend.
    fn precise(&self) -> bool {
        // A probe's decision far from its bound needs no such length.
        let least = if self.targets.is_empty() {
            MIN_PROBE_INTERVALS
        } else {
            MIN_INTERVALS
        };
        if self.parts.len() < least {
            return false;
        }
        let s = Samples {
            all: &self.all,
            intervals: &self.parts,
            censored: 0,
            censored_at_ns: 0,
        };
        let met = self.targets.iter().all(|t| {
            let e = estimate(&s, t.percentile);
            e.estimable
                && e.tail_samples >= MIN_TAIL
                && e.relative_half_width()
                    .is_some_and(|h| h <= MARGIN * t.relative)
        });
        if !met {
            return false;
        }
        // A trend's p-value must clear 5 % here, not the verdict's 1 %:
        // one more interval then rarely tips the verdict into a trend.
        let stationary = || {
            let st = stationarity(&self.parts);
            st.stationary == Some(true) && st.mann_kendall_p.is_some_and(|p| p >= 0.05)
        };
        match self.decide {
            None => stationary(),
            Some(d) => {
                let e = estimate(&s, d.percentile);
                let under = e.upper_us.is_some_and(|u| u <= d.bound_us);
                // Over the bound is decided whatever the trend; under it,
                // only if the latency is not rising.
                e.lower_us > d.bound_us || (under && stationary())
            }
        }
    }
}
