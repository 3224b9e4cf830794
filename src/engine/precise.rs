//! `--precision`, and a search's or scan's probe: the main thread watches
//! the closed intervals and, once every named percentile of the total
//! latency is precise enough and the intervals look alike (and a probe's
//! SLO is decided: its interval wholly over the bound, or wholly under it
//! with no trend), ends the sending of every worker (`Shared::precise`).
//! `-t` stays the longest the run may take.

use crate::precision::{estimate, judge, stationarity, Batches, Samples};
use crate::spec::precision::SloDecision;
use crate::spec::{PrecisionTarget, RunSpec};
use crate::stats::batches::{BatchSeries, SlotHdrs};
use crate::stats::IntervalSummary;
use hdrhistogram::Histogram;

/// A run ends early no sooner than its tenth interval, and with 200
/// samples beyond each named percentile: checked interval after interval,
/// a run stopped at the first dip under its target ends wider than it
/// (optional stopping), and ten intervals let the trend test see one.
const MIN_INTERVALS: usize = 10;
const MIN_TAIL: u64 = 200;
/// A search's or scan's probe is decided from its fifth interval: fewer
/// cannot show a trend.
const MIN_PROBE_INTERVALS: usize = 5;

/// A target counts as met here at this share of it: the run goes on for
/// the intervals in flight (over agents, a few), which move the final
/// figure a little; stopping at the first dip under the target itself
/// left a final ±5.3 % for a ±5 % target (tests/fleet/agents.rs).
const MARGIN: f64 = 0.9;

pub struct PrecisionWatch {
    targets: Vec<PrecisionTarget>,
    decide: Option<SloDecision>,
    /// The total latency of every closed interval, in order, ns.
    parts: Vec<Histogram<u64>>,
    all: Histogram<u64>,
    /// The total latency's batches, as the verdict will read them; None
    /// once an interval came without slots.
    batches: Option<BatchSeries>,
}

impl PrecisionWatch {
    /// A watch when the run names targets.
    pub fn new(spec: &RunSpec) -> Option<Self> {
        // A measurement group's SLO is not the total's: no early decision.
        let decide = spec.load.decide.filter(|_| spec.measure.is_none());
        let slot_s = spec.recording.interval.as_secs_f64() / crate::stats::batches::SLOTS as f64;
        (!spec.load.precision.is_empty() || decide.is_some()).then(|| PrecisionWatch {
            targets: spec.load.precision.clone(),
            decide,
            parts: Vec::new(),
            all: crate::stats::new_histogram(),
            batches: Some(BatchSeries::new(slot_s)),
        })
    }

    /// Adds a closed interval; whether the run is now precise enough.
    pub fn add(&mut self, summary: &IntervalSummary) -> bool {
        let Some(total) = summary.ops.get("total") else {
            return false;
        };
        let Ok(h) = total.latency_hdr.decode() else {
            return false;
        };
        self.add_latencies(h, total.slots.as_deref())
    }

    /// Adds one closed interval's total latency, ns, and its slots.
    fn add_latencies(&mut self, h: Histogram<u64>, slots: Option<&SlotHdrs>) -> bool {
        if self.all.add(&h).is_err() {
            return false;
        }
        self.parts.push(h);
        let pushed = match (self.batches.as_mut(), slots) {
            (Some(b), Some(s)) => b.push(Some(s)).is_ok(),
            _ => false,
        };
        if !pushed {
            self.batches = None;
        }
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
        let Some(Ok(hists)) = self.batches.as_ref().map(BatchSeries::latency_hists) else {
            return false;
        };
        let batch_s = self.batches.as_ref().map_or(0.0, |b| b.batch_s);
        let s = Samples {
            batches: Some(Batches {
                hists: &hists,
                batch_s,
            }),
            ..Samples::alone(&self.all)
        };
        let met = self.targets.iter().all(|t| {
            let e = estimate(&s, t.percentile);
            e.tail_samples >= MIN_TAIL && judge(&e, MARGIN * t.relative).is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(targets: &[&str], decide: Option<SloDecision>) -> PrecisionWatch {
        PrecisionWatch {
            targets: targets.iter().map(|t| t.parse().unwrap()).collect(),
            decide,
            parts: Vec::new(),
            all: crate::stats::new_histogram(),
            batches: Some(BatchSeries::new(0.1)),
        }
    }

    /// An interval of `n` latencies drawn uniformly from 1..2 ms (the
    /// draw seeded by `seed`), each scaled by `scale`, spread evenly
    /// over its slots.
    fn interval(n: u64, scale: f64, seed: u64) -> (Histogram<u64>, SlotHdrs) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut h = crate::stats::new_histogram();
        let mut slots = crate::stats::batches::Slots::default();
        for i in 0..n {
            let ms: f64 = rng.gen_range(1.0..2.0);
            let v = (ms * 1e6 * scale) as u64;
            h.record(v).unwrap();
            slots.record(i as usize % crate::stats::batches::SLOTS, v, v);
        }
        (h, slots.encode())
    }

    /// The first interval after which the watch says enough, if any.
    fn stops_after(
        w: &mut PrecisionWatch,
        intervals: impl Iterator<Item = (Histogram<u64>, SlotHdrs)>,
    ) -> Option<usize> {
        intervals
            .enumerate()
            .find_map(|(i, (h, s))| w.add_latencies(h, Some(&s)).then_some(i + 1))
    }

    #[test]
    fn a_target_is_met_from_the_tenth_interval_with_enough_tail() {
        // 20,000 a interval: p99 holds 200 tail samples at once, but not
        // before ten intervals.
        let mut w = watch(&["p99:5%"], None);
        let at = stops_after(&mut w, (0..40).map(|i| interval(20_000, 1.0, i)));
        assert_eq!(at, Some(MIN_INTERVALS));
    }

    #[test]
    fn a_thin_tail_waits_for_its_samples() {
        // 100 a interval: one sample beyond p99 each, so 200 intervals.
        let mut w = watch(&["p99:50%"], None);
        let at = stops_after(&mut w, (0..400).map(|i| interval(100, 1.0, i))).unwrap();
        assert!((200..=210).contains(&at), "{at}");
    }

    #[test]
    fn a_rising_latency_is_never_enough() {
        let mut w = watch(&["p50:50%"], None);
        let rising = (0..60).map(|i| interval(5_000, 1.0 + 0.05 * i as f64, i));
        assert_eq!(stops_after(&mut w, rising), None);
    }

    #[test]
    fn a_probe_is_decided_from_its_fifth_interval() {
        let over = SloDecision {
            percentile: 99.0,
            bound_us: 500.0,
        };
        let mut w = watch(&[], Some(over));
        let at = stops_after(&mut w, (0..20).map(|i| interval(5_000, 1.0, i)));
        assert_eq!(at, Some(MIN_PROBE_INTERVALS));
        // Under the bound but rising: not decided; over it, rising or not.
        let under = SloDecision {
            percentile: 99.0,
            bound_us: 50_000.0,
        };
        let mut w = watch(&[], Some(under));
        let rising = (0..20).map(|i| interval(5_000, 1.0 + 0.1 * i as f64, i));
        assert_eq!(stops_after(&mut w, rising), None);
        let mut w = watch(&[], Some(over));
        let rising = (0..20).map(|i| interval(5_000, 1.0 + 0.1 * i as f64, i));
        assert_eq!(stops_after(&mut w, rising), Some(MIN_PROBE_INTERVALS));
    }

    #[test]
    fn a_straddled_bound_is_undecided() {
        // The bound at the true p99: each check's 95 % interval straddles
        // it 95 % of the time (checked again and again, one of them falls
        // to a side at last: a search probes its answer twice for that).
        let at = SloDecision {
            percentile: 99.0,
            bound_us: 1_990.0,
        };
        let mut w = watch(&[], Some(at));
        assert_eq!(
            stops_after(&mut w, (0..10).map(|i| interval(5_000, 1.0, i))),
            None
        );
    }
}
