//! `--precision`: the main thread watches the closed intervals and, once
//! every named percentile of the total latency is precise enough and the
//! intervals look alike, ends the sending of every worker (`Shared::
//! precise`). `-t` stays the longest the run may take.

use crate::precision::{estimate, stationarity, Samples};
use crate::spec::{PrecisionTarget, RunSpec};
use crate::stats::IntervalSummary;
use hdrhistogram::Histogram;

/// A run ends early no sooner than its fifth interval: fewer cannot show
/// a trend, nor make batch means.
const MIN_INTERVALS: usize = 5;

pub struct PrecisionWatch {
    targets: Vec<PrecisionTarget>,
    /// The total latency of every closed interval, in order, ns.
    parts: Vec<Histogram<u64>>,
    all: Histogram<u64>,
}

impl PrecisionWatch {
    /// A watch when the run names targets.
    pub fn new(spec: &RunSpec) -> Option<Self> {
        (!spec.precision.is_empty()).then(|| PrecisionWatch {
            targets: spec.precision.clone(),
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
        if self.parts.len() < MIN_INTERVALS {
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
            e.estimable && e.relative_half_width().is_some_and(|h| h <= t.relative)
        });
        met && stationarity(&self.parts).stationary == Some(true)
    }
}
