//! `mcbench search` and `mcbench scan`: one workload run open loop at a
//! series of rates, each run after its own warm-up, the series kept as one
//! `Curve` (every point and every run) and written once at the end, or
//! when a signal or a failure cuts it short.
//!
//! The keys are loaded once, by the first run; the later runs find them on
//! the server. With no `--server`, one memcached is started for the whole
//! series.

mod search;

use super::{hold_telemetry, install_signal_flag, measure, start_telemetry, Watched};
use crate::cli::{RunArgs, ScanArgs, SearchArgs};
use crate::embedded::EmbeddedMemcached;
use crate::error::{exit, Failure};
use crate::report::{text_curve, ExportManager, Exporter};
use crate::result::{Curve, CurveKind, CurvePoint, Slo, Verdict, DEFAULT_PERCENTILES};
use crate::spec::{LoadMode, RunSpec, ServerAddr};
use crate::telemetry::Telemetry;
use search::{End, Next, Search};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A probe's length and warm-up when the flags give none (mutilate's 5 s).
const PROBE_LENGTH: Duration = Duration::from_secs(5);
const PROBE_WARMUP: Duration = Duration::from_secs(1);
const PROBE_INTERVAL: Duration = Duration::from_millis(500);

/// The first rate a search probes without `--min-rate` or `--rate`.
const DEFAULT_MIN_RATE: f64 = 1000.0;

pub fn search(args: &SearchArgs) -> i32 {
    search_presented(args, None)
}

pub fn scan(args: &ScanArgs) -> i32 {
    scan_presented(args, None)
}

/// `search`, its text report rendered by `text` when given (a seed tool's
/// layout, `crate::personality`).
pub fn search_presented(args: &SearchArgs, text: Option<Box<dyn Exporter>>) -> i32 {
    finish(search_inner(args, text))
}

/// `scan`, its text report rendered by `text` when given.
pub fn scan_presented(args: &ScanArgs, text: Option<Box<dyn Exporter>>) -> i32 {
    finish(scan_inner(args, text))
}

fn finish(code: Result<i32, Failure>) -> i32 {
    code.unwrap_or_else(|f| {
        crate::stderr_line!("mcbench: error: {f}");
        f.exit_code()
    })
}

fn search_inner(args: &SearchArgs, text: Option<Box<dyn Exporter>>) -> Result<i32, Failure> {
    super::no_agents(&args.run, "search")?;
    let slo =
        match (args.slo, &args.run.workload.profile) {
            (Some(slo), _) => slo,
            (None, Some(name)) => crate::config::profiles::slo(name).map_err(Failure::usage)?,
            (None, None) => return Err(Failure::usage(
                "search needs a bound: --slo PERCENTILE:BOUND (p99:1ms), or an mcperf --profile",
            )),
        };
    let min = args
        .min_rate
        .or(args.run.load.rate)
        .unwrap_or(DEFAULT_MIN_RATE);
    if min <= 0.0 || args.max_rate.is_some_and(|max| max < min) {
        return Err(Failure::usage(format!(
            "--min-rate must be above 0 and at most --max-rate; got {min} and {:?}",
            args.max_rate
        )));
    }
    let curve = Curve::new(CurveKind::Search, Some(slo), Some(args.bracket));
    let mut series = Series::prepare(&args.run, min, curve, text)?;
    let mut search = Search::new(min, args.max_rate, args.bracket);
    let end = search.drive(args.max_probes, |rate, repeat| {
        Ok::<_, Failure>(series.probe(rate, repeat)?.map(|p| p.verdict))
    })?;
    let outcome = match end {
        End::Decided(next) => {
            match next {
                Next::Found { best, failed } => {
                    series.curve.answer = Some(best);
                    series.curve.answer_range = Some([best, failed]);
                }
                Next::Ceiling(rate) => series.curve.answer = Some(rate),
                _ => {}
            }
            search_outcome(next, slo)
        }
        End::ClientBound(rate) => client_ceiling(&mut series.curve, rate, search.best(), slo),
        End::OutOfProbes => (
            format!(
                "no answer after {} probes (--max-probes); the best rate so far: {}",
                args.max_probes,
                rate_text(search.best())
            ),
            exit::FAILED,
        ),
        End::Stopped => return Ok(series.end_stopped()),
    };
    Ok(series.end(outcome))
}

/// The search's last word and its exit code.
fn search_outcome(next: Next, slo: Slo) -> (String, i32) {
    match next {
        Next::Found { best, failed } => (
            format!(
                "the highest rate meeting {slo}: {best:.0} ops/s (it passed twice); \
                 at 95 % it lies in [{best:.0}, {failed:.0}] ops/s"
            ),
            exit::OK,
        ),
        Next::Ceiling(rate) => (
            format!(
                "every rate up to --max-rate met {slo}: the answer is at least {rate:.0} ops/s"
            ),
            exit::OK,
        ),
        Next::Unmet(rate) => (
            format!(
                "{slo} is not met even at the lowest rate, {rate:.0} ops/s: \
                 lower --min-rate, or look at the server"
            ),
            exit::FAILED,
        ),
        Next::Undecided(rate) => (
            format!(
                "{slo} could not be decided at the lowest rate, {rate:.0} ops/s: its 95 % \
                 interval straddles the bound; give a longer -t, or lower --min-rate"
            ),
            exit::FAILED,
        ),
        Next::Probe { .. } => unreachable!("a probe is not an end"),
    }
}

/// The search met the client's ceiling at `rate` (client-bound twice):
/// the SLO holds at least up to the most the client delivered with it
/// met (the best passing rate, or the client-bound probe's own delivered
/// rate where its interval lies wholly under the bound). An answer, not
/// a failure; a failure only when no rate met the SLO at all.
fn client_ceiling(curve: &mut Curve, rate: f64, best: Option<f64>, slo: Slo) -> (String, i32) {
    let last = curve.points.last();
    let delivered = last
        .filter(|p| {
            crate::result::decide(p.slo_lower_us.unwrap_or(0.0), p.slo_upper_us, slo.bound_us)
                == Verdict::Pass
        })
        .map(|p| p.achieved_rate);
    let why = last.and_then(|p| p.why.clone()).unwrap_or_default();
    let further = curve.runs.last().map(further).unwrap_or_default();
    let Some(ceiling) = best.into_iter().chain(delivered).reduce(f64::max) else {
        return (
            format!(
                "the client, not the server, limits the first rate, {rate:.0} ops/s (twice): \
                 no rate was measured. {why}. To go further: {further}"
            ),
            exit::FAILED,
        );
    };
    curve.answer = Some(ceiling);
    curve.client_ceiling = Some(ceiling);
    (
        format!(
            "{slo} holds at least up to {ceiling:.0} ops/s, the most this client delivered with \
             it met: the CLIENT's ceiling, not the server's (at {rate:.0} ops/s offered, twice: \
             {why}). To go further: {further}"
        ),
        exit::OK,
    )
}

/// What to add to a client-bound run: threads while the machine has
/// CPUs to spare, connections where a worker waited for them, else
/// agents on other machines.
fn further(run: &crate::result::RunResult) -> String {
    let cpus = crate::os::allowed_cpus().len().max(1);
    let threads = run.spec.load.threads;
    let saturated = run
        .warnings
        .iter()
        .any(|w| matches!(w, crate::warnings::Warning::WorkerSaturated { .. }));
    let mut ways = Vec::new();
    if threads < cpus {
        ways.push(format!("threads (-T, now {threads}; {cpus} CPUs here)"));
    }
    if !saturated {
        ways.push(format!(
            "connections (-c, now {})",
            run.spec.load.connections
        ));
    }
    ways.push("agents on other machines (--agent)".into());
    ways.join(", or ")
}

fn rate_text(rate: Option<f64>) -> String {
    rate.map_or("none".into(), |r| format!("{r:.0} ops/s"))
}

fn scan_inner(args: &ScanArgs, text: Option<Box<dyn Exporter>>) -> Result<i32, Failure> {
    super::no_agents(&args.run, "scan")?;
    if let Some(rate) = args.run.load.rate {
        crate::stderr_line!(
            "mcbench: note: --rates sets each run's rate; --rate {rate} is not used"
        );
    }
    let mut rates = args.rates.0.clone();
    if args.updown {
        // Up, then down again: each rate but the top is run twice.
        let down: Vec<f64> = rates.iter().rev().skip(1).copied().collect();
        rates.extend(down);
    }
    let curve = Curve::new(CurveKind::Scan, args.slo, None);
    let mut series = Series::prepare(&args.run, rates[0], curve, text)?;
    series.reload = args.load_every_rate;
    for &rate in &rates {
        if series.probe(rate, false)?.is_none() {
            return Ok(series.end_stopped());
        }
        // A failed run measured no server: the scan stops there, exit 1.
        if let Some(why) = series.curve.runs.last().and_then(|r| r.failure.clone()) {
            let outcome = format!("stopped at {rate:.0} ops/s: that run FAILED ({why})");
            return Ok(series.end((outcome, exit::FAILED)));
        }
    }
    series.curve.hysteresis = series.curve.hysteresis_rates().map_err(Failure::run)?;
    let bound = series
        .curve
        .points
        .iter()
        .filter(|p| p.client_bound)
        .count();
    let mut outcome = match bound {
        0 => format!("{} rates run", rates.len()),
        n => format!(
            "{} rates run; {n} of them client-bound (their points measure mcbench, not \
             the server: add threads or agents)",
            rates.len()
        ),
    };
    if args.updown {
        let flagged = &series.curve.hysteresis;
        outcome.push_str(&match flagged.len() {
            0 => "; going down met going up at every rate".to_string(),
            _ => format!(
                "; HYSTERESIS at {}: going down, the latency intervals did not meet going up's",
                flagged
                    .iter()
                    .map(|r| format!("{r:.0}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(series.end((outcome, exit::OK)))
}

/// The runs of one scan or search, and where their curve goes.
struct Series {
    base: RunSpec,
    percentiles: Vec<f64>,
    embedded: Option<EmbeddedMemcached>,
    stop: Arc<AtomicUsize>,
    outputs: ExportManager,
    curve: Curve,
    /// Preload before every rate (scan's `--load-every-rate`), not once.
    reload: bool,
    /// `--metrics-listen`: every probe's intervals, one after another.
    telemetry: Option<Telemetry>,
}

impl Series {
    /// Checks the flags (open loop at `first_rate`) and creates the outputs,
    /// before any traffic.
    fn prepare(
        run: &RunArgs,
        first_rate: f64,
        curve: Curve,
        text: Option<Box<dyn Exporter>>,
    ) -> Result<Self, Failure> {
        refuse(run).map_err(Failure::usage)?;
        let mut args = run.clone();
        args.load.rate = Some(first_rate);
        if args.load.duration.is_none() && args.load.ops.is_none() {
            args.load.duration = Some(PROBE_LENGTH);
        }
        args.load.warmup.get_or_insert(PROBE_WARMUP);
        // Short intervals let a probe end once decided (from the fifth).
        args.recording.interval.get_or_insert(PROBE_INTERVAL);
        let mut base = args.to_spec().map_err(Failure::usage)?;
        let files = run.outputs.files();
        let mut outputs = ExportManager::create_curve(&files)?;
        if let Some(text) = text {
            outputs = outputs.with_text(text, false);
        }
        let stop = install_signal_flag()?;
        let embedded = if base.target.servers.is_empty() {
            crate::os::claim_fds(base.fds_needed()).map_err(Failure::usage)?;
            let e = EmbeddedMemcached::start(&crate::run::embedded_size(&base))?;
            base.target.servers =
                vec![ServerAddr::parse(&e.addr.to_string()).map_err(Failure::run)?];
            Some(e)
        } else {
            None
        };
        let telemetry = start_telemetry(run, &base)?;
        crate::stderr_line!("{}", text_curve::header(&curve));
        Ok(Series {
            base,
            percentiles: run
                .outputs
                .percentiles
                .as_ref()
                .map_or(DEFAULT_PERCENTILES.to_vec(), |p| p.0.clone()),
            embedded,
            stop,
            outputs,
            curve,
            reload: false,
            telemetry,
        })
    }

    /// One run at `rate`, added to the curve and printed; `None` when a
    /// signal cut it short.
    fn probe(&mut self, rate: f64, repeat: bool) -> Result<Option<&CurvePoint>, Failure> {
        let mut spec = self.base.clone();
        spec.load.schedule = crate::spec::Schedule::Open(spec.load.schedule.at_rate(rate));
        // With an SLO and a -t, the probe ends once its SLO is decided.
        if let (Some(slo), crate::spec::StopAfter::Duration(_)) = (self.curve.slo, spec.load.stop) {
            spec.load.decide = Some(crate::spec::precision::SloDecision {
                percentile: slo.percentile,
                bound_us: slo.bound_us,
            });
        }
        if !self.curve.runs.is_empty() && spec.key_space.preload == LoadMode::Load && !self.reload {
            spec.key_space.preload = LoadMode::NoLoad;
        }
        if let Some(t) = &self.telemetry {
            t.begin(Some(rate));
        }
        let watched = Watched {
            telemetry: self.telemetry.as_ref(),
            ..Watched::stopped_by(&self.stop)
        };
        let mut result = match measure(&spec, self.percentiles.clone(), watched, None) {
            Ok(r) => r,
            Err(f) => {
                let outcome = format!("stopped at {rate:.0} ops/s: {f}");
                self.write(&outcome);
                return Err(Failure::run(outcome));
            }
        };
        result.embedded_server = self.embedded.as_ref().map(|e| e.version.clone());
        if result.stopped_by.is_some() {
            self.curve
                .push(rate, result, repeat)
                .map_err(Failure::run)?;
            return Ok(None);
        }
        self.curve
            .push(rate, result, repeat)
            .map_err(Failure::run)?;
        let n = self.curve.points.len();
        let point = &self.curve.points[n - 1];
        crate::stderr_line!("{}", text_curve::line(&self.curve, n, point));
        Ok(Some(point))
    }

    /// Writes the curve with its outcome; the exit code, 1 if a write failed.
    fn end(mut self, (outcome, code): (String, i32)) -> i32 {
        if code != exit::OK {
            crate::stderr_line!("mcbench: error: {outcome}");
        }
        if self.write(&outcome) {
            code
        } else {
            exit::FAILED
        }
    }

    /// After a signal: what was run is written, then 130 or 143.
    fn end_stopped(mut self) -> i32 {
        let sig = self.stop.load(Ordering::Relaxed);
        let (name, code) = (crate::error::signal_name(sig), exit::of_signal(sig));
        let outcome = format!("stopped by {name} after {} runs", self.curve.runs.len());
        self.write(&outcome);
        code
    }

    /// Writes the curve; the endpoint's counts are final before, and it
    /// holds for a last scrape after (`--metrics-hold`).
    fn write(&mut self, outcome: &str) -> bool {
        if let Some(t) = &self.telemetry {
            t.done();
        }
        self.curve.outcome = outcome.to_string();
        let written = match self.outputs.write_curve(&self.curve) {
            Ok(()) => true,
            Err(f) => {
                crate::stderr_line!("mcbench: error: {f}");
                false
            }
        };
        hold_telemetry(self.telemetry.as_ref(), &self.stop);
        written
    }
}

/// `run` flags a series cannot take.
fn refuse(run: &RunArgs) -> Result<(), crate::app::AppError> {
    let refused = [
        (
            run.target.each,
            "--each (run the series against one server at a time instead)",
        ),
        (
            run.recording.save.is_some(),
            "--save (the series writes its runs with --json)",
        ),
        (
            run.key_space.load_only,
            "--load-only (nothing would be measured)",
        ),
        (
            run.recording.repeat.is_some(),
            "--repeat (a scan of its own per repeat)",
        ),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, what)) => Err(crate::app::AppError::NotInSeries(what)),
        None => Ok(()),
    }
}
