//! `mcbench scan` and `mcbench search` results: a series of open-loop runs,
//! one per offered rate, each reduced to a point of the latency–throughput
//! curve. The runs are kept whole beside the points, histograms included,
//! so that any point can be looked into again.

use super::{percentile_label, percentile_us, ResultError, RunResult};
use serde::{Deserialize, Serialize};
use std::fmt;

pub const CURVE_SCHEMA: &str = "mcbench.curve/1";

/// A run whose achieved rate falls below this share of the offered rate
/// did not carry its load: it fails a bound whatever its latency.
pub const CARRIED_SHARE: f64 = 0.9;

/// A latency objective: the `percentile` of latency (from the intended
/// send) at most `bound_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub percentile: f64,
    pub bound_us: f64,
}

impl std::str::FromStr for Slo {
    type Err = ResultError;

    /// `p99:1ms`, `99.9:500us`, or mutilate's `99:1000` (a bare bound is µs).
    fn from_str(text: &str) -> Result<Self, ResultError> {
        let bad = || ResultError::NotSlo(text.into());
        let (p, bound) = text.split_once(':').ok_or_else(bad)?;
        let percentile: f64 = p
            .trim()
            .trim_start_matches('p')
            .parse()
            .map_err(|_| bad())?;
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(ResultError::SloPercentile(percentile));
        }
        let bound = bound.trim();
        let bound_us = match bound.parse::<f64>() {
            Ok(us) => us,
            Err(_) => {
                crate::spec::units::parse_duration(bound)
                    .map_err(|_| bad())?
                    .as_secs_f64()
                    * 1e6
            }
        };
        if !(bound_us.is_finite() && bound_us > 0.0) {
            return Err(ResultError::SloBound(bound.into()));
        }
        Ok(Slo {
            percentile,
            bound_us,
        })
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ≤ {} µs",
            percentile_label(self.percentile),
            self.bound_us
        )
    }
}

/// A point's standing against the SLO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// mcbench, not the server, limited the run: never an answer.
    ClientBound,
    /// The SLO percentile's 95 % interval straddles the bound: the probe
    /// was too short to tell.
    Undecided,
}

impl Verdict {
    /// The name JSON and CSV give it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::ClientBound => "client_bound",
            Verdict::Undecided => "undecided",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::ClientBound => "client-bound",
            Verdict::Undecided => "undecided",
        })
    }
}

/// One run of the series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The open-loop rate asked for, ops/s.
    pub offered_rate: f64,
    /// Answers per second over the measured time.
    pub achieved_rate: f64,
    /// Answers without an error reply, per second.
    pub ok_rate: f64,
    /// Latency from the intended send, µs, of the requests whose latency
    /// the point reads (`group`).
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// The SLO's percentile, µs (when there is an SLO).
    pub slo_us: Option<f64>,
    /// Its 95 % interval, µs: a pass lies wholly under the bound, a fail
    /// wholly over it (null upper: no finite bound).
    #[serde(default)]
    pub slo_lower_us: Option<f64>,
    #[serde(default)]
    pub slo_upper_us: Option<f64>,
    /// Whose latency: `load` (every request) or `measure` (the
    /// measurement connections, `--measure-connections`).
    pub group: String,
    pub errors: u64,
    pub client_bound: bool,
    /// Against the SLO; none without one, or when a signal cut the run.
    pub verdict: Option<Verdict>,
    /// Why a point failed or was client-bound.
    pub why: Option<String>,
    /// A repeat of an earlier point's rate (search's check for noise).
    pub repeat: bool,
}

impl CurvePoint {
    /// `run`, made at `offered_rate`, as a point; judged when there is an SLO.
    pub fn of(
        offered_rate: f64,
        run: &RunResult,
        slo: Option<Slo>,
        repeat: bool,
    ) -> Result<Self, ResultError> {
        let (group, latency) = run.slo_latency();
        let h = latency.decode()?;
        let interval = slo.map(|s| run.slo_estimate(s.percentile)).transpose()?;
        let mut point = CurvePoint {
            offered_rate,
            achieved_rate: run.total.rate,
            ok_rate: run.total.ok_rate,
            p50_us: percentile_us(&h, 50.0),
            p99_us: percentile_us(&h, 99.0),
            p999_us: percentile_us(&h, 99.9),
            slo_us: slo.map(|s| percentile_us(&h, s.percentile)),
            slo_lower_us: interval.as_ref().map(|e| e.lower_us),
            slo_upper_us: interval.as_ref().and_then(|e| e.upper_us),
            group: group.to_string(),
            errors: run.total.errors,
            client_bound: run.client.client_bound,
            verdict: None,
            why: None,
            repeat,
        };
        if let Some(slo) = slo.filter(|_| run.stopped_by.is_none()) {
            let (verdict, why) = point.judge(run, slo);
            point.verdict = Some(verdict);
            point.why = why;
        } else if let Some(failure) = &run.failure {
            // Without an SLO a failed run is still no measurement.
            point.verdict = Some(Verdict::Fail);
            point.why = Some(failure.clone());
        }
        Ok(point)
    }

    fn judge(&self, run: &RunResult, slo: Slo) -> (Verdict, Option<String>) {
        if self.client_bound {
            let why = run.warnings.iter().find(|w| w.client_bound());
            return (Verdict::ClientBound, why.map(ToString::to_string));
        }
        let fail = |why: String| (Verdict::Fail, Some(why));
        if let Some(failure) = &run.failure {
            return fail(failure.clone());
        }
        if self.errors > 0 {
            return fail(format!("{} requests failed", self.errors));
        }
        // The measurement group's latency is the one judged: it must have
        // answered, and answered without failures.
        if let Some(m) = &run.measure {
            if m.total.count == 0 {
                return fail("the measurement connections got no answer".into());
            }
            if m.total.errors > 0 {
                return fail(format!(
                    "{} requests of the measurement connections failed",
                    m.total.errors
                ));
            }
        }
        if self.achieved_rate < CARRIED_SHARE * self.offered_rate {
            return fail(format!(
                "achieved {:.0} of {:.0} ops/s offered",
                self.achieved_rate, self.offered_rate
            ));
        }
        let label = percentile_label(slo.percentile);
        let (lower, upper) = (self.slo_lower_us.unwrap_or(0.0), self.slo_upper_us);
        let interval = match upper {
            Some(u) => format!("[{lower:.1}, {u:.1}]"),
            None => format!("≥ {lower:.1}"),
        };
        match decide(lower, upper, slo.bound_us) {
            Verdict::Fail => fail(format!(
                "{label} {interval} µs > {} µs at 95 %",
                slo.bound_us
            )),
            Verdict::Undecided => (
                Verdict::Undecided,
                Some(format!(
                    "{label} {interval} µs straddles {} µs: a longer -t would decide it",
                    slo.bound_us
                )),
            ),
            verdict => (verdict, None),
        }
    }
}

/// A 95 % interval [lower, upper] (µs; no upper: unbounded) against a
/// bound: pass when wholly at or under it, fail when wholly over it,
/// undecided when it straddles it.
pub fn decide(lower: f64, upper: Option<f64>, bound_us: f64) -> Verdict {
    if lower > bound_us {
        Verdict::Fail
    } else if upper.is_some_and(|u| u <= bound_us) {
        Verdict::Pass
    } else {
        Verdict::Undecided
    }
}

/// Which series made the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveKind {
    /// `mcbench scan`: the rates given, in order.
    Scan,
    /// `mcbench search`: the rates the search chose, in the order probed.
    Search,
}

/// A scan's or a search's result: `mcbench.curve/1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Curve {
    pub schema: String,
    pub kind: CurveKind,
    pub slo: Option<Slo>,
    /// search: the bracket is narrowed until (high − low) / low is at most
    /// this.
    pub precision: Option<f64>,
    pub points: Vec<CurvePoint>,
    /// search: the highest offered rate that met the SLO, twice.
    pub answer: Option<f64>,
    /// search: where the highest rate meeting the SLO lies, at 95 %: from
    /// the answer to the lowest rate that failed it (every rate between
    /// was undecided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_range: Option<[f64; 2]>,
    /// search: the client, not the server, stopped the search; the SLO
    /// held up to this rate, the most the client delivered with it met
    /// (`answer` is the same): the server may take more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ceiling: Option<f64>,
    /// scan --updown: rates whose SLO (else p99) intervals going up and
    /// coming down do not meet: the server kept a state from the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hysteresis: Vec<f64>,
    /// How the series ended, in words.
    pub outcome: String,
    /// The runs behind the points, in the same order.
    pub runs: Vec<RunResult>,
}

impl Curve {
    pub fn new(kind: CurveKind, slo: Option<Slo>, precision: Option<f64>) -> Self {
        Curve {
            schema: CURVE_SCHEMA.into(),
            kind,
            slo,
            precision,
            points: Vec::new(),
            answer: None,
            answer_range: None,
            client_ceiling: None,
            hysteresis: Vec::new(),
            outcome: String::new(),
            runs: Vec::new(),
        }
    }

    /// The SLO's percentile when the points' p50, p99 and p99.9 do not
    /// already show it: a column of its own in the tables.
    pub fn extra_percentile(&self) -> Option<f64> {
        self.slo
            .map(|s| s.percentile)
            .filter(|p| ![50.0, 99.0, 99.9].contains(p))
    }

    /// `--updown`: the rates run twice whose latency intervals (the
    /// SLO's percentile, else p99) do not meet.
    pub fn hysteresis_rates(&self) -> Result<Vec<f64>, ResultError> {
        let percent = self.slo.map_or(99.0, |s| s.percentile);
        let mut flagged = Vec::new();
        for (i, a) in self.points.iter().enumerate() {
            let Some(j) =
                (i + 1..self.points.len()).find(|j| self.points[*j].offered_rate == a.offered_rate)
            else {
                continue;
            };
            let x = self.runs[i].slo_estimate(percent)?;
            let y = self.runs[j].slo_estimate(percent)?;
            let meet = match (x.upper_us, y.upper_us) {
                (Some(xu), Some(yu)) => x.lower_us <= yu && y.lower_us <= xu,
                _ => true,
            };
            if !meet {
                flagged.push(a.offered_rate);
            }
        }
        Ok(flagged)
    }

    /// Adds `run` as the next point.
    pub fn push(
        &mut self,
        offered_rate: f64,
        run: RunResult,
        repeat: bool,
    ) -> Result<(), ResultError> {
        let point = CurvePoint::of(offered_rate, &run, self.slo, repeat)?;
        self.points.push(point);
        self.runs.push(run);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slos_parse_as_mutilate_and_as_mcbench_write_them() {
        let s: Slo = "p99:1ms".parse().unwrap();
        assert_eq!((s.percentile, s.bound_us), (99.0, 1000.0));
        let s: Slo = "95:1000".parse().unwrap();
        assert_eq!((s.percentile, s.bound_us), (95.0, 1000.0));
        let s: Slo = "99.9:500us".parse().unwrap();
        assert_eq!((s.percentile, s.bound_us), (99.9, 500.0));
        for bad in ["p99", "p100:1ms", "p99:0", "x:1ms", "p99:fast"] {
            assert!(bad.parse::<Slo>().is_err(), "{bad}");
        }
    }
}
