//! The run's schedule: when requests are sent. It is one enum, so that two
//! schedules at once (a `--rate` with `--num-conns`, a rate over a trace's
//! own timestamps) or an open loop's knobs without an open loop (`--skip`,
//! `--moderate`, `--coalesce` on a closed loop) cannot be written.
//!
//! Its JSON stays the flat fields results have always held (`rate`,
//! `arrival`, `coalesce`, `skip`, `moderate`, `churn`, and `trace_speed`),
//! and reading them back builds the enum through the same checks as the
//! command line: a saved result or an agent's spec cannot smuggle in a
//! combination the command line refuses.

use super::SpecError;

use super::churn::Churn;
use super::units;
use crate::workload::Distribution;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// When requests are sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ScheduleFlags", try_from = "ScheduleFlags")]
pub enum Schedule {
    /// Each connection sends as answers free its `--depth` slots.
    Closed,
    /// Requests arrive on a clock of their own, answered or not.
    Open(OpenLoop),
    /// httperf's connection churn (`--num-conns`): connections opened,
    /// used for their calls and closed on a schedule.
    Churn(Churn),
}

/// An open loop: its arrivals and how the client keeps to them.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoop {
    pub arrivals: Arrivals,
    /// `--coalesce`: a worker may wake this much after an arrival's
    /// intended time, so that one wake-up sends every arrival due by then.
    pub coalesce: Option<Duration>,
    /// `--skip`: drop arrivals unsent while far behind.
    pub skip: bool,
    /// `--moderate`: a connection sends nothing for 250 µs after an answer.
    pub moderate: bool,
}

/// Where an open loop's arrival times come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// `--rate` ops/s over every worker, with gaps of `gaps`' shape
    /// rescaled to it (mutilate's `--iadist`; exponential is Poisson).
    Rate { rate: f64, gaps: Distribution },
    /// A trace's own timestamps, replayed `speed` times as fast.
    Trace { speed: f64 },
}

/// The flags that choose a schedule, as given; also the schedule's JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScheduleFlags {
    /// Target aggregate ops/s; `null` with neither a rate nor a timed trace
    /// is a closed loop.
    #[serde(default)]
    pub rate: Option<f64>,
    #[serde(default = "poisson")]
    pub arrival: Distribution,
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub coalesce: Option<Duration>,
    #[serde(default)]
    pub skip: bool,
    #[serde(default)]
    pub moderate: bool,
    #[serde(default)]
    pub churn: Option<Churn>,
    /// A timed replay's speed (`--trace-speed`; 1 without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_speed: Option<f64>,
}

/// The gap shape when none is given: Poisson arrivals.
pub fn poisson() -> Distribution {
    Distribution::Exponential { mean: 1.0 }
}

impl Default for ScheduleFlags {
    fn default() -> Self {
        ScheduleFlags {
            rate: None,
            arrival: poisson(),
            coalesce: None,
            skip: false,
            moderate: false,
            churn: None,
            trace_speed: None,
        }
    }
}

impl ScheduleFlags {
    /// The one schedule these flags choose, or why they choose none.
    pub fn schedule(self) -> Result<Schedule, SpecError> {
        // A shape that cannot be scaled is refused even where it is not
        // used: it was written wrong.
        check_gaps(&self.arrival)?;
        let arrivals = match (self.rate, self.trace_speed) {
            (Some(_), Some(_)) => return Err(SpecError::Refused("--trace replays the trace's timestamps; --rate would be a second schedule (add --trace-timing ignore to use --rate)")),
            (Some(rate), None) => Some(Arrivals::Rate { rate, gaps: self.arrival.clone() }),
            (None, Some(_)) if !self.poisson_gaps() => return Err(SpecError::Refused("--arrival shapes --rate's gaps; a trace's timestamps set its own (add --trace-timing ignore and --rate)")),
            (None, Some(speed)) => Some(Arrivals::Trace { speed }),
            (None, None) => None,
        };
        if let Some(churn) = self.churn {
            if arrivals.is_some() {
                return Err(churn_with_arrivals(self.rate.is_some()));
            }
            self.refuse_open_knobs()?;
            return Ok(Schedule::Churn(churn));
        }
        let Some(arrivals) = arrivals else {
            self.refuse_open_knobs()?;
            return Ok(Schedule::Closed);
        };
        Ok(Schedule::Open(OpenLoop {
            arrivals,
            coalesce: self.coalesce,
            skip: self.skip,
            moderate: self.moderate,
        }))
    }

    fn poisson_gaps(&self) -> bool {
        matches!(self.arrival, Distribution::Exponential { .. })
    }

    /// An open loop's knobs, given to a schedule without arrivals.
    fn refuse_open_knobs(&self) -> Result<(), SpecError> {
        if self.skip {
            return Err(SpecError::Refused(
                "--skip drops arrivals of an open loop that is behind: give --rate",
            ));
        }
        if self.moderate {
            return Err(SpecError::Refused(
                "--moderate spaces the sends of an open loop: give --rate",
            ));
        }
        if self.coalesce.is_some_and(|w| !w.is_zero()) {
            return Err(SpecError::Refused("--coalesce gathers an open loop's arrivals into one wake-up: give --rate (or a timed --trace)"));
        }
        // A gap shape without a rate shapes nothing: profiles set one for
        // whatever rate the run is given (`scan` and `search` give their
        // own), and mutilate ignores `-i` without `-q`; so it is dropped.
        Ok(())
    }
}

fn churn_with_arrivals(rate: bool) -> SpecError {
    SpecError::Refused(if rate {
        "--rate does not go with --num-conns: each connection paces its own requests; use --call-rate"
    } else {
        "--trace does not go with --num-conns: a replay keeps its connections open"
    })
}

impl TryFrom<ScheduleFlags> for Schedule {
    type Error = SpecError;

    fn try_from(flags: ScheduleFlags) -> Result<Self, SpecError> {
        flags.schedule()
    }
}

impl From<Schedule> for ScheduleFlags {
    fn from(schedule: Schedule) -> Self {
        let mut flags = ScheduleFlags::default();
        match schedule {
            Schedule::Closed => {}
            Schedule::Churn(churn) => flags.churn = Some(churn),
            Schedule::Open(open) => {
                match open.arrivals {
                    Arrivals::Rate { rate, gaps } => {
                        flags.rate = Some(rate);
                        flags.arrival = gaps;
                    }
                    Arrivals::Trace { speed } => flags.trace_speed = Some(speed),
                }
                flags.coalesce = open.coalesce;
                flags.skip = open.skip;
                flags.moderate = open.moderate;
            }
        }
        flags
    }
}

impl Schedule {
    /// The open loop, if this is one.
    pub fn open(&self) -> Option<&OpenLoop> {
        match self {
            Schedule::Open(open) => Some(open),
            _ => None,
        }
    }

    /// The connection schedule, if this is one.
    pub fn churn(&self) -> Option<&Churn> {
        match self {
            Schedule::Churn(churn) => Some(churn),
            _ => None,
        }
    }

    /// `--rate`, ops/s, if the arrivals come at one.
    pub fn rate(&self) -> Option<f64> {
        match self.open()?.arrivals {
            Arrivals::Rate { rate, .. } => Some(rate),
            Arrivals::Trace { .. } => None,
        }
    }

    /// The gap shape of a rate's arrivals.
    pub fn gaps(&self) -> Option<&Distribution> {
        match &self.open()?.arrivals {
            Arrivals::Rate { gaps, .. } => Some(gaps),
            Arrivals::Trace { .. } => None,
        }
    }

    /// A timed replay's speed.
    pub fn trace_speed(&self) -> Option<f64> {
        match self.open()?.arrivals {
            Arrivals::Trace { speed } => Some(speed),
            Arrivals::Rate { .. } => None,
        }
    }

    /// This run's open loop at `rate` ops/s: a rate's own gap shape and an
    /// open loop's knobs are kept; any other schedule becomes Poisson
    /// arrivals.
    pub fn at_rate(&self, rate: f64) -> OpenLoop {
        let gaps = self.gaps().cloned().unwrap_or_else(poisson);
        let open = self.open();
        OpenLoop {
            arrivals: Arrivals::Rate { rate, gaps },
            coalesce: open.and_then(|o| o.coalesce),
            skip: open.is_some_and(|o| o.skip),
            moderate: open.is_some_and(|o| o.moderate),
        }
    }
}

/// The longest `--coalesce`: beyond it the wait would rival what is measured.
const MAX_COALESCE: Duration = Duration::from_millis(1);

impl super::RunSpec {
    /// Whether requests follow a schedule of their own: `--rate`, or a
    /// trace's timestamps.
    pub fn open_loop(&self) -> bool {
        self.load.schedule.open().is_some()
    }

    /// Whether the run's own threads must give the load its cores: a
    /// paced load's send times are what is measured, so the summary
    /// thread runs only when a core is idle. A `--load-only` run reports
    /// its preload, which is never paced; `--busy-poll` keeps its cores.
    pub fn summary_yields_to_load(&self) -> bool {
        self.open_loop()
            && self.key_space.preload != super::LoadMode::LoadOnly
            && !self.load.busy_poll
    }

    /// The open loop, if the run is one.
    pub fn open(&self) -> Option<&OpenLoop> {
        self.load.schedule.open()
    }

    /// `--num-conns`' schedule, if the run has one.
    pub fn churn(&self) -> Option<&Churn> {
        self.load.schedule.churn()
    }

    /// `--rate`, ops/s.
    pub fn rate(&self) -> Option<f64> {
        self.load.schedule.rate()
    }

    /// `--skip`: an open loop drops arrivals while far behind.
    pub fn skip(&self) -> bool {
        self.open().is_some_and(|o| o.skip)
    }

    /// `--moderate`: an open loop's connection waits 250 µs after an answer.
    pub fn moderate(&self) -> bool {
        self.open().is_some_and(|o| o.moderate)
    }

    /// What the schedule's own values must be (which schedule it is, the
    /// type has settled).
    pub(super) fn validate_schedule(&self) -> Result<(), SpecError> {
        let Some(open) = self.open() else {
            return Ok(());
        };
        if let Some(w) = open.coalesce.filter(|w| *w > MAX_COALESCE) {
            return Err(SpecError::Invalid(format!(
                "--coalesce must be at most 1ms, got {w:?}"
            )));
        }
        match &open.arrivals {
            Arrivals::Rate { rate, .. } if !(rate.is_finite() && *rate > 0.0) => {
                Err(SpecError::Invalid(format!(
                    "--rate must be a positive number of ops/s, got {rate}"
                )))
            }
            Arrivals::Rate { rate, .. } if *rate > MAX_RATE => Err(SpecError::Invalid(format!(
                "--rate {rate} ops/s is beyond any client: at most {MAX_RATE:e} a second \
                 (arrivals a nanosecond apart)"
            ))),
            Arrivals::Rate { gaps, .. } => check_gaps(gaps),
            Arrivals::Trace { .. } if self.trace.is_none() => Err(SpecError::Refused(
                "a replay at a trace's timestamps needs --trace",
            )),
            Arrivals::Trace { speed } => super::trace::check_speed(*speed),
        }
    }
}

/// The highest rate a schedule may ask: arrivals a nanosecond apart, the
/// worker clock's own step. Rates beyond are no load any client offers.
pub const MAX_RATE: f64 = 1e9;

/// A gap shape that can be scaled to a rate: non-negative gaps of a
/// finite positive mean.
fn check_gaps(gaps: &Distribution) -> Result<(), SpecError> {
    let (gap_lo, _) = gaps.support();
    if gap_lo < 0.0 {
        return Err(SpecError::Invalid(format!(
            "--arrival {gaps} can draw negative gaps (down to {gap_lo}); a gap shape must be of \
             non-negative values (exponential, fixed, uniform:0,2, fb_ia, ...)"
        )));
    }
    let mean = gaps.mean();
    if !(mean.is_finite() && mean > 0.0) {
        return Err(SpecError::Invalid(format!(
            "--arrival {gaps} has no finite positive mean, so it cannot be scaled to a rate"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> ScheduleFlags {
        ScheduleFlags::default()
    }

    #[test]
    fn no_rate_no_trace_no_churn_is_a_closed_loop() {
        assert_eq!(flags().schedule(), Ok(Schedule::Closed));
    }

    #[test]
    fn open_knobs_need_arrivals() {
        let closed = [
            ScheduleFlags {
                skip: true,
                ..flags()
            },
            ScheduleFlags {
                moderate: true,
                ..flags()
            },
            ScheduleFlags {
                coalesce: Some(Duration::from_micros(5)),
                ..flags()
            },
        ];
        for f in closed {
            let err = f.clone().schedule().unwrap_err();
            assert!(err.to_string().contains("give --rate"), "{f:?}: {err}");
        }
        // A zero window is no coalescing: it is dropped, not refused.
        let zero = ScheduleFlags {
            coalesce: Some(Duration::ZERO),
            ..flags()
        };
        assert_eq!(zero.schedule(), Ok(Schedule::Closed));
        // So is a gap shape: there is no rate to shape.
        let shape = ScheduleFlags {
            arrival: Distribution::Fixed(1.0),
            ..flags()
        };
        assert_eq!(shape.schedule(), Ok(Schedule::Closed));
    }

    #[test]
    fn two_schedules_are_refused() {
        let churn = Churn {
            conns: 2,
            conn_gaps: super::super::Gaps::AfterPrevious,
            calls: 1,
            call_gaps: super::super::Gaps::AfterPrevious,
        };
        let with_rate = ScheduleFlags {
            rate: Some(5.0),
            churn: Some(churn),
            ..flags()
        };
        assert!(with_rate
            .schedule()
            .unwrap_err()
            .to_string()
            .contains("--call-rate"));
        let with_trace = ScheduleFlags {
            trace_speed: Some(1.0),
            churn: Some(churn),
            ..flags()
        };
        assert!(with_trace
            .schedule()
            .unwrap_err()
            .to_string()
            .contains("--num-conns"));
        let both = ScheduleFlags {
            rate: Some(5.0),
            trace_speed: Some(2.0),
            ..flags()
        };
        assert!(both
            .schedule()
            .unwrap_err()
            .to_string()
            .contains("second schedule"));
        let shaped = ScheduleFlags {
            trace_speed: Some(2.0),
            arrival: Distribution::Fixed(1.0),
            ..flags()
        };
        assert!(shaped
            .schedule()
            .unwrap_err()
            .to_string()
            .contains("timestamps set its own"));
    }

    #[test]
    fn json_is_flat_and_reads_back_through_the_checks() {
        let open = ScheduleFlags {
            rate: Some(1000.0),
            arrival: Distribution::Fixed(1.0),
            skip: true,
            ..flags()
        }
        .schedule()
        .unwrap();
        let json = serde_json::to_value(&open).unwrap();
        assert_eq!(json["rate"], 1000.0);
        assert_eq!(json["skip"], true);
        assert_eq!(json["churn"], serde_json::Value::Null);
        let back: Schedule = serde_json::from_value(json).unwrap();
        assert_eq!(back, open);
        let mut bad = serde_json::to_value(Schedule::Closed).unwrap();
        bad["skip"] = true.into();
        let err = serde_json::from_value::<Schedule>(bad).unwrap_err();
        assert!(err.to_string().contains("--skip"), "{err}");
    }

    #[test]
    fn a_saved_or_sent_spec_reads_back_through_the_same_checks() {
        let spec = crate::cli::run_spec(&["-s", "127.0.0.1:1", "-q", "500", "--skip"]);
        let mut json = serde_json::to_value(&spec).unwrap();
        let back: super::super::RunSpec = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.load.schedule, spec.load.schedule);
        // An agent's spec with a rate and a connection schedule at once.
        let churn = crate::cli::run_spec(&["-s", "127.0.0.1:1", "--num-conns", "3"]);
        json["churn"] = serde_json::to_value(churn.churn()).unwrap();
        let err = serde_json::from_value::<super::super::RunSpec>(json).unwrap_err();
        assert!(err.to_string().contains("--num-conns"), "{err}");
    }

    #[test]
    fn the_command_line_coalesces_only_when_asked() {
        let spec = |extra: &[&str]| {
            crate::cli::run_spec(&[&["-s", "127.0.0.1:1", "-q", "5000"], extra].concat())
        };
        assert_eq!(spec(&[]).coalesce(), Duration::ZERO);
        assert_eq!(spec(&["--coalesce", "0"]).coalesce(), Duration::ZERO);
        let asked = spec(&["--coalesce", "200us"]);
        assert_eq!(asked.coalesce(), Duration::from_micros(200));
        assert_eq!(asked.rate(), Some(5000.0));
    }

    #[test]
    fn a_new_rate_keeps_the_gap_shape_and_knobs() {
        let open = ScheduleFlags {
            rate: Some(10.0),
            arrival: Distribution::Fixed(1.0),
            moderate: true,
            ..flags()
        }
        .schedule()
        .unwrap();
        let faster = Schedule::Open(open.at_rate(20.0));
        assert_eq!(faster.rate(), Some(20.0));
        assert_eq!(faster.gaps(), Some(&Distribution::Fixed(1.0)));
        assert!(faster.open().unwrap().moderate);
        let closed = Schedule::Open(Schedule::Closed.at_rate(5.0));
        assert_eq!(closed.gaps(), Some(&poisson()));
    }
}
