//! `run --repeat N` and `mcbench ab A.toml B.toml`: one configuration run
//! N times, every run kept (fresh connections each, and a fresh memcached
//! when mcbench starts one); the spread between the runs; and, for two
//! configurations run in turn (A B A B ...: drift falls on both), each
//! change with its bootstrap interval against A's own noise floor.

use super::{exit_code, install_signal_flag, measure, Watched};
use crate::cli::{AbArgs, RunArgs};
use crate::error::{exit, Failure};
use crate::report::{text_runs, ExportManager, OneFile};
use crate::result::{differences, spreads, RunResult, RunSet, DEFAULT_PERCENTILES};
use crate::spec::RunSpec;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `run --repeat N`: the exit code.
pub(super) fn run_repeated(
    args: &RunArgs,
    spec: &RunSpec,
    percentiles: Vec<f64>,
    n: u32,
) -> Result<i32, Failure> {
    refuse(args)?;
    let files = args.outputs.files();
    let named: Vec<(&str, &std::path::Path)> = files.iter().map(|(f, p)| (f.flag(), *p)).collect();
    crate::report::refuse_same_file(&named).map_err(Failure::usage)?;
    let mut outputs = ExportManager::create(&files, true)?.without_text();
    let stop = install_signal_flag()?;
    let configs = [(spec, "run")];
    let (runs, end) = run_in_turn(
        &configs,
        &percentiles,
        n,
        args.recording.between.as_deref(),
        &stop,
    );
    let runs = runs.into_iter().next().unwrap_or_default();
    if !runs.is_empty() {
        let table = spreads(&runs).map_err(Failure::run)?;
        let printed = crate::error::to_stdout(&text_runs::spreads(runs.len(), &table));
        if let Err(f) = outputs.write(&runs) {
            crate::stderr_line!("mcbench: error: {f}");
            return Ok(exit::FAILED);
        }
        if let Err(e) = printed {
            crate::stderr_line!("mcbench: error: {e}");
            return Ok(exit::FAILED);
        }
    }
    Ok(end)
}

/// `run` flags a repeated run cannot take.
fn refuse(args: &RunArgs) -> Result<(), Failure> {
    let refused = [
        (args.target.each, "--each"),
        (args.recording.save.is_some(), "--save"),
        (
            args.outputs.csv.is_some(),
            "--csv (it holds one run's intervals)",
        ),
        (
            args.outputs.hdr_log.is_some(),
            "--hdr-log (it holds one run)",
        ),
        (
            args.telemetry.metrics_listen.is_some(),
            "--metrics-listen (it serves one run)",
        ),
    ];
    #[cfg(feature = "agents")]
    super::no_agents(args, "--repeat")?;
    match refused.iter().find(|(given, _)| *given) {
        Some((_, what)) => Err(Failure::usage(format!(
            "--repeat does not take {what}: --json keeps every run, --html overlays them"
        ))),
        None => Ok(()),
    }
}

/// Runs each config in turn, `n` rounds (A B A B ...), `between` before
/// every run but the first. Stops early at a signal, a failed run or a
/// failed `between`; returns the runs so far, per config, and the exit
/// code.
fn run_in_turn(
    configs: &[(&RunSpec, &str)],
    percentiles: &[f64],
    n: u32,
    between: Option<&str>,
    stop: &Arc<AtomicUsize>,
) -> (Vec<Vec<RunResult>>, i32) {
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); configs.len()];
    for round in 0..n {
        for (k, (spec, name)) in configs.iter().enumerate() {
            if round + k as u32 > 0 {
                match run_between(between, stop) {
                    Ok(()) => {}
                    Err(Between::Stopped(sig)) => return (runs, exit::of_signal(sig)),
                    Err(Between::Failed(why)) => {
                        crate::stderr_line!("mcbench: error: {why}");
                        return (runs, exit::FAILED);
                    }
                }
            }
            let r = match measure(spec, percentiles.to_vec(), Watched::stopped_by(stop), None) {
                Ok(r) => r,
                Err(f) => {
                    crate::stderr_line!("mcbench: error: {name} {}: {f}", round + 1);
                    return (runs, f.exit_code());
                }
            };
            crate::stderr_line!("{}", run_line(name, round + 1, n, &r));
            let code = exit_code(&r);
            runs[k].push(r);
            if code != exit::OK {
                return (runs, code);
            }
        }
    }
    (runs, exit::OK)
}

/// `run 2/5: 85012 ok/s, p50 48.8 µs, p99 97.5 µs`.
fn run_line(name: &str, i: u32, n: u32, r: &RunResult) -> String {
    let q = &r.total.latency_us;
    format!(
        "{name} {i}/{n}: {:.0} ok/s, p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs",
        r.total.ok_rate, q.p50, q.p99, q.p999
    )
}

/// Why the `--between` command did not let the set go on.
enum Between {
    Failed(String),
    /// A signal (its number) came while it ran: it was stopped.
    Stopped(usize),
}

/// How often the wait for `--between` looks at the stop flag.
const BETWEEN_STEP: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs the `--between` command, if any, through the shell, in a process
/// group of its own: a signal to mcbench stops it (the whole group: the
/// shell and what it started) within a moment, and the set ends with
/// what it has.
fn run_between(between: Option<&str>, stop: &AtomicUsize) -> Result<(), Between> {
    use std::os::unix::process::CommandExt;
    let Some(cmd) = between else { return Ok(()) };
    let mut child = std::process::Command::new("sh")
        .args(["-c", cmd])
        .process_group(0)
        .spawn()
        .map_err(|e| Between::Failed(format!("--between '{cmd}': cannot run it: {e}")))?;
    let status = loop {
        let sig = stop.load(std::sync::atomic::Ordering::Relaxed);
        if sig != 0 {
            // SAFETY: a signal to the process group this function made.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            return Err(Between::Stopped(sig));
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(BETWEEN_STEP),
            Err(e) => return Err(Between::Failed(format!("--between '{cmd}': {e}"))),
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(Between::Failed(format!(
            "--between '{cmd}' failed ({status}): the set stops here"
        )))
    }
}

/// `mcbench ab A.toml B.toml`: returns the exit code.
pub fn ab(args: &AbArgs) -> i32 {
    ab_inner(args).unwrap_or_else(|f| {
        crate::stderr_line!("mcbench: error: {f}");
        f.exit_code()
    })
}

fn ab_inner(args: &AbArgs) -> Result<i32, Failure> {
    let a = spec_of(&args.a)?;
    let b = spec_of(&args.b)?;
    let json = args
        .json
        .as_deref()
        .map(|p| OneFile::create("--json", p))
        .transpose()
        .map_err(Failure::usage)?;
    let stop = install_signal_flag()?;
    let (names, configs) = (
        [args.a.display().to_string(), args.b.display().to_string()],
        [(&a, "A"), (&b, "B")],
    );
    let percentiles = DEFAULT_PERCENTILES.to_vec();
    let (mut runs, end) = run_in_turn(
        &configs,
        &percentiles,
        args.repeat,
        args.between.as_deref(),
        &stop,
    );
    let (ra, rb) = (std::mem::take(&mut runs[0]), std::mem::take(&mut runs[1]));
    if ra.is_empty() || rb.is_empty() {
        return Ok(if end == exit::OK { exit::FAILED } else { end });
    }
    let diffs = differences(&ra, &rb).map_err(Failure::run)?;
    let title = format!(
        "A = {} ({} runs), B = {} ({} runs), run in turn A B A B ...",
        names[0],
        ra.len(),
        names[1],
        rb.len()
    );
    let text = text_runs::differences(&title, &diffs);
    let value = serde_json::json!({
        "schema": "mcbench.ab/1",
        "a": RunSet::new(Some(names[0].clone()), ra),
        "b": RunSet::new(Some(names[1].clone()), rb),
        "differences": diffs,
    });
    let to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    // A report that cannot be written (a full disk, a closed pipe) is a
    // failed run: its JSON is still written.
    let mut failed = false;
    if to_stdout {
        crate::stderr_line!("{}", text.trim_end());
    } else if let Err(e) = crate::error::to_stdout(&text) {
        crate::stderr_line!("mcbench: error: {e}");
        failed = true;
    }
    if let Some(file) = json {
        let mut bytes =
            serde_json::to_vec_pretty(&value).map_err(|e| Failure::run(e.to_string()))?;
        bytes.push(b'\n');
        if let Err(e) = file.write(&bytes) {
            crate::stderr_line!("mcbench: error: {e}");
            failed = true;
        }
    }
    Ok(if failed && end == exit::OK {
        exit::FAILED
    } else {
        end
    })
}

/// The spec a run file makes, as `run --config FILE` would.
fn spec_of(path: &std::path::Path) -> Result<RunSpec, Failure> {
    use clap::Parser;
    let file = path.display().to_string();
    let argv = ["mcbench", "run", "--config", &file].map(std::ffi::OsString::from);
    let argv = crate::config::expand(argv.to_vec()).map_err(Failure::usage)?;
    let cli = crate::cli::Cli::try_parse_from(argv)
        .map_err(|e| Failure::usage(format!("{file}: {}", e.to_string().trim())))?;
    match cli.command {
        crate::cli::Command::Run(args) => {
            if args.recording.repeat.is_some() || args.target.each {
                return Err(Failure::usage(format!(
                    "{file}: ab runs each file --repeat times itself; drop repeat and each"
                )));
            }
            args.to_spec()
                .map_err(|e| Failure::usage(format!("{file}: {e}")))
        }
        _ => Err(Failure::usage(format!("{file}: not a run file"))),
    }
}

/// `compare A.json B.json` of two sets (`run --repeat --json`): each
/// change with its bootstrap interval and A's noise floor.
pub(super) fn compare_sets(
    a: &RunSet,
    b: &RunSet,
    labels: [&str; 2],
) -> Result<String, crate::result::ResultError> {
    let diffs = differences(&a.runs, &b.runs)?;
    let title = format!(
        "A = {} ({} runs), B = {} ({} runs); not run in turn: drift between the sets \
         counts as change (`mcbench ab` interleaves them)",
        labels[0],
        a.runs.len(),
        labels[1],
        b.runs.len()
    );
    Ok(text_runs::differences(&title, &diffs))
}
