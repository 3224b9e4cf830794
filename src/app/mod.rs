//! The subcommands: `mcbench run` from parsed flags to written reports and
//! an exit code; `report` and `compare` over saved results (`saved`);
//! `route`, where keys live (`route`); `man` and `completions` (`docs`).

mod curve;
mod docs;
mod each;
mod error;
mod inspect;
mod repeat;
mod route;
mod saved;
mod top;
mod trace_stat;

pub use curve::{scan, scan_presented, search, search_presented};
pub use docs::{completions, man};
pub use error::AppError;
pub use inspect::{slabs, stats};
pub use repeat::ab;
pub use route::route;
pub use saved::{compare, report};
pub use top::top;
pub use trace_stat::trace_stat;

use crate::cli::RunArgs;
use crate::engine;
use crate::error::{exit, Failure};
use crate::report::{live_line, ExportManager, SampleWriter};
use crate::result::{RunResult, DEFAULT_PERCENTILES};
use crate::spec::{RunSpec, StopAfter};
use crate::stats::{IntervalSummary, Sample};
use crate::telemetry::Telemetry;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Runs the benchmark and returns the process exit code.
pub fn run(args: &RunArgs) -> i32 {
    run_presented(args, None)
}

/// How a run shows itself on the terminal when it is not mcbench's own
/// report: a seed tool's layout (`crate::personality`). Files asked for
/// (`--json`, `--html`) are written as usual beside it.
pub trait Presenter {
    /// Before any traffic, with the run's validated spec.
    fn begin(&mut self, _spec: &RunSpec) {}
    /// Each interval as it closes (`-i`'s length), instead of the live line.
    fn interval(&mut self, s: &IntervalSummary);
    /// The report printed on stdout at the end.
    fn text(&self) -> Box<dyn crate::report::Exporter>;
    /// Whether that report goes to stderr (twemperf prints there).
    fn to_stderr(&self) -> bool {
        false
    }
}

/// `run`, shown by `presenter` when there is one.
pub fn run_presented(args: &RunArgs, presenter: Option<&mut dyn Presenter>) -> i32 {
    match run_inner(args, presenter) {
        Ok(code) => code,
        Err(f) => {
            crate::stderr_line!("mcbench: error: {f}");
            f.exit_code()
        }
    }
}

/// What the main thread does while the engine runs: live lines or the
/// progress bar, and `--save`'s samples.
struct Watch<'a, 'p> {
    spec: &'a RunSpec,
    percentiles: &'a [f64],
    progress: ProgressBar,
    samples: Option<&'a mut SampleWriter>,
    /// Each interval, instead of the live line: a seed tool's layout.
    on_interval: Option<&'a mut (dyn FnMut(&IntervalSummary) + 'p)>,
    /// `--metrics-listen`'s endpoint, given each interval.
    telemetry: Option<&'a Telemetry>,
}

impl engine::Observer for Watch<'_, '_> {
    fn interval(&mut self, s: &IntervalSummary) {
        if let Some(t) = self.telemetry {
            t.record(s);
        }
        if let Some(f) = self.on_interval.as_deref_mut() {
            self.progress.suspend(|| f(s));
        } else if self.spec.recording.live {
            let line = live_line(s, self.percentiles);
            self.progress.suspend(|| crate::stderr_line!("{line}"));
        }
        self.progress.inc(s.ops.get("total").map_or(0, |o| {
            if is_ops_bound(self.spec) {
                o.count
            } else {
                (s.duration_s * 1000.0) as u64
            }
        }));
    }

    fn samples(&mut self, samples: &[Sample], start_ns: u64) {
        if let Some(w) = self.samples.as_deref_mut() {
            w.write(samples, start_ns);
        }
    }
}

/// `--agent` drives plain runs only: with `what` it is a usage error.
pub(crate) fn no_agents(args: &RunArgs, what: &str) -> Result<(), Failure> {
    #[cfg(feature = "agents")]
    if !args.fleet.agents.is_empty() {
        return Err(Failure::usage(format!(
            "--agent with {what} is not supported: agents run one plain run"
        )));
    }
    let _ = (args, what);
    Ok(())
}

fn run_inner(args: &RunArgs, presenter: Option<&mut dyn Presenter>) -> Result<i32, Failure> {
    let spec = args.to_spec().map_err(Failure::usage)?;
    refuse_combinations(args)?;
    let percentiles = args
        .outputs
        .percentiles
        .as_ref()
        .map_or(DEFAULT_PERCENTILES.to_vec(), |p| p.0.clone());
    if args.target.each {
        return each::run_each(args, &spec, percentiles);
    }
    if let Some(n) = args.recording.repeat {
        return repeat::run_repeated(args, &spec, percentiles, n);
    }
    let mut outputs = create_outputs(args)?;
    let mut presenter = presenter;
    if let Some(p) = presenter.as_deref_mut() {
        p.begin(&spec);
        outputs = outputs.with_text(p.text(), p.to_stderr());
    }
    let mut samples = args
        .recording
        .save
        .as_deref()
        .map(SampleWriter::create)
        .transpose()
        .map_err(Failure::usage)?;
    let telemetry = start_telemetry(args, &spec)?;
    let stop = install_signal_flag()?;
    let presented = presenter.is_some();
    #[cfg(feature = "agents")]
    if !args.fleet.agents.is_empty() {
        let code = run_by_agents(
            args,
            &spec,
            percentiles,
            &mut outputs,
            &stop,
            telemetry.as_ref(),
        );
        hold_telemetry(telemetry.as_ref(), &stop);
        return code;
    }
    let watched = Watched {
        stop: &stop,
        samples: samples.as_mut(),
        telemetry: telemetry.as_ref(),
    };
    let result = match presenter {
        Some(p) => {
            let mut show = |s: &IntervalSummary| p.interval(s);
            measure(&spec, percentiles, watched, Some(&mut show))
        }
        None => measure(&spec, percentiles, watched, None),
    };
    if let Some(t) = &telemetry {
        t.done();
    }
    let result = result?;
    // A seed tool's layout has no place for mcbench's verdicts: they go
    // to stderr, so a client-bound run never passes unsaid.
    if presented {
        for w in &result.warnings {
            crate::stderr_line!("mcbench: warning: {w}");
        }
    }
    let written = outputs.write(std::slice::from_ref(&result));
    let saved = samples.map_or(Ok(()), SampleWriter::finish);
    hold_telemetry(telemetry.as_ref(), &stop);
    Ok(written_code(exit_code(&result), written, saved))
}

/// The run's exit code once its outputs are written: results that could
/// not be written are a failed run, whatever else happened (130/143
/// promise the results so far were written).
fn written_code(
    code: i32,
    written: Result<(), Failure>,
    saved: Result<(), crate::report::OutputError>,
) -> i32 {
    if let Err(f) = written {
        crate::stderr_line!("mcbench: error: {f}");
        return exit::FAILED;
    }
    if let Err(e) = saved {
        crate::stderr_line!("mcbench: error: {e}");
        return exit::FAILED;
    }
    code
}

/// Flags that make no run together, before any traffic.
fn refuse_combinations(args: &RunArgs) -> Result<(), Failure> {
    if args.target.each {
        no_agents(args, "--each")?;
        if args.telemetry.metrics_listen.is_some() {
            return Err(Failure::usage(
                "--metrics-listen with --each is not supported: it serves one run",
            ));
        }
    }
    if args.recording.save.is_some() {
        no_agents(args, "--save (the agents' samples stay on their machines)")?;
    }
    Ok(())
}

/// `--metrics-listen`'s endpoint, bound before any traffic: an address in
/// use or not allowed is a usage error.
pub(crate) fn start_telemetry(
    args: &RunArgs,
    spec: &RunSpec,
) -> Result<Option<Telemetry>, Failure> {
    let Some(config) = args.telemetry.config() else {
        return Ok(None);
    };
    let named = crate::telemetry::Named::of(spec, None);
    let t = Telemetry::start(&config, named).map_err(Failure::usage)?;
    crate::stderr_line!("mcbench: metrics at http://{}/metrics", t.addr());
    Ok(Some(t))
}

/// The results are written: the endpoint holds for a last scrape when
/// asked (not after a signal).
pub(crate) fn hold_telemetry(telemetry: Option<&Telemetry>, stop: &AtomicUsize) {
    if let Some(t) = telemetry {
        t.hold(|| stop.load(std::sync::atomic::Ordering::Relaxed) != 0);
    }
}

/// Every output, created before any traffic: a bad path costs no run.
fn create_outputs(args: &RunArgs) -> Result<ExportManager, Failure> {
    let files = args.outputs.files();
    let mut named: Vec<(&str, &std::path::Path)> =
        files.iter().map(|(f, p)| (f.flag(), *p)).collect();
    named.extend(args.recording.save.as_deref().map(|p| ("--save", p)));
    crate::report::refuse_same_file(&named).map_err(Failure::usage)?;
    Ok(ExportManager::create(&files, false)?.detailed(args.outputs.details))
}

/// A run the agents make (`--agent`), its merged result written to
/// `outputs`.
#[cfg(feature = "agents")]
fn run_by_agents(
    args: &RunArgs,
    spec: &RunSpec,
    percentiles: Vec<f64>,
    outputs: &mut ExportManager,
    stop: &Arc<AtomicUsize>,
    telemetry: Option<&Telemetry>,
) -> Result<i32, Failure> {
    let token =
        args.fleet.token_file.as_deref().ok_or_else(|| {
            Failure::usage("--agent needs --token-file: the agents' shared token")
        })?;
    let control = crate::agent::Control {
        addrs: &args.fleet.agents,
        token_file: token,
        loss: args.fleet.on_agent_loss,
        tls_ca: args.fleet.agent_tls_ca.as_deref(),
        tls_domain: args.fleet.agent_tls_domain.clone(),
        percentiles: percentiles.clone(),
        telemetry: telemetry.map(Telemetry::sink),
    };
    let result = crate::agent::run_with_agents(spec, &control, stop);
    if let Some(t) = telemetry {
        t.done();
    }
    let mut result = result?;
    result.percentiles = percentiles;
    let written = outputs.write(std::slice::from_ref(&result));
    let code = exit_code(&result);
    Ok(if written.is_err() { exit::FAILED } else { code })
}

/// What watches a run beside its live lines: the signal flag, `--save`'s
/// writer, `--metrics-listen`'s endpoint.
pub(crate) struct Watched<'a> {
    pub(crate) stop: &'a Arc<AtomicUsize>,
    pub(crate) samples: Option<&'a mut SampleWriter>,
    pub(crate) telemetry: Option<&'a Telemetry>,
}

impl<'a> Watched<'a> {
    /// Only the signal flag.
    pub(crate) fn stopped_by(stop: &'a Arc<AtomicUsize>) -> Self {
        Watched {
            stop,
            samples: None,
            telemetry: None,
        }
    }
}

/// One run (`crate::run::measure`) watched: live lines or the progress
/// bar, `--save`'s samples, the endpoint's intervals, each interval to
/// `on_interval` instead of its live line.
fn measure(
    spec: &RunSpec,
    percentiles: Vec<f64>,
    watched: Watched,
    on_interval: Option<&mut dyn FnMut(&IntervalSummary)>,
) -> Result<RunResult, Failure> {
    let mut watch = Watch {
        spec,
        percentiles: &percentiles,
        progress: progress_bar(spec),
        samples: watched.samples,
        on_interval,
        telemetry: watched.telemetry,
    };
    let result = crate::run::measure(spec, percentiles.clone(), watched.stop, &mut watch);
    watch.progress.finish_and_clear();
    result
}

/// `mcbench agent`: serves until stopped; the exit code.
#[cfg(feature = "agents")]
pub fn agent(args: &crate::cli::AgentArgs) -> i32 {
    use std::sync::atomic::Ordering::Relaxed;
    let signal = match install_signal_flag() {
        Ok(flag) => flag,
        Err(f) => {
            crate::stderr_line!("mcbench agent: error: {f}");
            return f.exit_code();
        }
    };
    let telemetry = match agent_telemetry(args) {
        Ok(t) => t,
        Err(f) => {
            crate::stderr_line!("mcbench agent: error: {f}");
            return f.exit_code();
        }
    };
    let how = crate::agent::Serve {
        telemetry: telemetry.as_ref().map(Telemetry::sink),
        listen: args.listen,
        token_file: &args.token_file,
        weight: args.lambda_mul,
        threads: args.threads,
        tls: args.tls_cert.as_deref().zip(args.tls_key.as_deref()),
        signal: signal.clone(),
        insecure_plaintext: args.insecure_plaintext,
        limits: crate::agent::Limits {
            keys: args.max_keys,
            connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
            rate: args.max_rate,
            duration: args.max_duration,
        },
    };
    match crate::agent::serve(&how) {
        Ok(()) if signal.load(Relaxed) != 0 => exit::of_signal(signal.load(Relaxed)),
        Ok(()) => exit::OK,
        Err(f) => {
            crate::stderr_line!("mcbench agent: error: {f}");
            f.exit_code()
        }
    }
}

/// `mcbench agent --metrics-listen`: bound before it listens for
/// masters; each share renames what it serves.
#[cfg(feature = "agents")]
fn agent_telemetry(args: &crate::cli::AgentArgs) -> Result<Option<Telemetry>, Failure> {
    if args.telemetry.metrics_hold.is_some() {
        return Err(Failure::usage(
            "--metrics-hold is a run's: an agent serves until it is stopped",
        ));
    }
    let Some(config) = args.telemetry.config() else {
        return Ok(None);
    };
    let t = Telemetry::start(&config, crate::telemetry::Named::idle()).map_err(Failure::usage)?;
    crate::stderr_line!("mcbench agent: metrics at http://{}/metrics", t.addr());
    Ok(Some(t))
}

/// 130/143 after a signal (results so far written), 1 for a failed run,
/// 0 otherwise.
pub(crate) fn exit_code(result: &RunResult) -> i32 {
    if let Some(name) = result.stopped_by.as_deref() {
        return exit::of_signal_name(name);
    }
    match &result.failure {
        Some(why) => {
            crate::stderr_line!("mcbench: error: {why}");
            exit::FAILED
        }
        None => exit::OK,
    }
}

/// SIGINT, SIGTERM and SIGHUP set the process's stop flag (to the signal
/// number) instead of killing the process, so that the results so far
/// are still written (`os::stop_flag`).
pub(crate) fn install_signal_flag() -> Result<Arc<AtomicUsize>, Failure> {
    crate::os::stop_flag()
        .map_err(|e| Failure::run(format!("cannot install a signal handler: {e}")))
}

fn is_ops_bound(spec: &RunSpec) -> bool {
    matches!(spec.load.stop, StopAfter::Ops(_))
}

/// A progress bar on a terminal when no live lines were asked for; hidden
/// otherwise. Its unit is ms of run time, or ops for `--ops`.
fn progress_bar(spec: &RunSpec) -> ProgressBar {
    if spec.recording.live || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let len = match spec.load.stop {
        StopAfter::Duration(d) => d.as_millis() as u64,
        StopAfter::Ops(n) => n,
        // The schedule's length is not known in time: a spinner.
        StopAfter::Schedule | StopAfter::TraceEnd => return ProgressBar::new_spinner(),
    };
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
