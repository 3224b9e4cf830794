//! `mcbench report` and `mcbench compare`: saved results rendered again,
//! merged, or set side by side. Nothing here touches the network.

use crate::cli::{CompareArgs, ReportArgs};
use crate::error::{exit, Failure};
use crate::report::{self, ExportManager};
use crate::result::{self, RunResult, RunSet};
use std::path::PathBuf;

/// `mcbench report RUN.json [...]`: returns the exit code.
pub fn report(args: &ReportArgs) -> i32 {
    // A signal drops the outputs not yet written (`dropped_on_signal`).
    finish(super::install_signal_flag().and_then(|_| report_inner(args)))
}

/// `mcbench compare A.json B.json [...]`: returns the exit code.
pub fn compare(args: &CompareArgs) -> i32 {
    finish(super::install_signal_flag().and_then(|_| compare_inner(args)))
}

/// The exit code; a failure's message is printed unless the exporters
/// already did (`Failure::Run` from writing). A signal that came after
/// the last output was written still ends the command with its code.
fn finish(r: Result<(), Failure>) -> i32 {
    match r {
        Ok(()) => match crate::os::stop_requested() {
            0 => exit::OK,
            sig => exit::of_signal(sig),
        },
        Err(f) => {
            crate::stderr_line!("mcbench: error: {f}");
            f.exit_code()
        }
    }
}

/// Every result, or the first that does not load (exit 2).
fn load_all(paths: &[PathBuf]) -> Result<Vec<RunResult>, Failure> {
    paths
        .iter()
        .map(|p| RunResult::load(p).map_err(Failure::usage))
        .collect()
}

fn report_inner(args: &ReportArgs) -> Result<(), Failure> {
    let several = args.runs.len() > 1 && !args.merge;
    // Inputs first: an output must never empty a result it is made from.
    let files = args.outputs.files();
    let mut named: Vec<(&str, &std::path::Path)> = args
        .runs
        .iter()
        .map(|p| ("the result", p.as_path()))
        .collect();
    named.extend(files.iter().map(|(f, p)| (f.flag(), *p)));
    report::refuse_same_file(&named).map_err(Failure::usage)?;
    let mut runs = load_all(&args.runs)?;
    if args.merge {
        same_workload(
            &args.runs,
            &runs,
            &report::SHARE_OF_LOAD,
            args.force,
            "merges",
        )?;
        let spread = result::start_spread_s(&runs);
        if spread >= runs[0].spec.recording.interval.as_secs_f64() / 2.0 {
            crate::stderr_line!(
                "mcbench: note: the runs started {spread:.1} s apart: their intervals of the same \
                 number are not the same stretch of time (the totals are unaffected)"
            );
        }
        let stopped = || crate::os::stop_requested() != 0;
        let merged = result::merge_unless(&runs, &stopped).map_err(|e| {
            match crate::os::stop_requested() {
                0 => Failure::usage(e),
                sig => Failure::Stopped(sig),
            }
        })?;
        runs = vec![merged];
    }
    let mut outputs = ExportManager::create(&files, several)?
        .detailed(args.outputs.details)
        .dropped_on_signal();
    if let Some(p) = &args.outputs.percentiles {
        for r in &mut runs {
            r.percentiles = p.0.clone();
        }
    }
    outputs.write(&runs)
}

/// Refuses runs whose workloads differ from the first's (in fields other
/// than `also`), naming each field, unless `force`: then a note.
fn same_workload(
    paths: &[PathBuf],
    runs: &[RunResult],
    also: &[&str],
    force: bool,
    verb: &str,
) -> Result<(), Failure> {
    let mut differ = Vec::new();
    for (path, r) in paths.iter().zip(runs).skip(1) {
        for d in report::workload_differences(&runs[0], r, also) {
            differ.push(format!("  {}: {d}", path.display()));
        }
    }
    if differ.is_empty() {
        return Ok(());
    }
    let what = format!(
        "the runs' workloads differ from {}'s:\n{}",
        paths[0].display(),
        differ.join("\n")
    );
    if !force {
        return Err(Failure::usage(format!(
            "{what}\n(--force {verb} them anyway)"
        )));
    }
    crate::stderr_line!("mcbench: note: {what}");
    Ok(())
}

fn compare_inner(args: &CompareArgs) -> Result<(), Failure> {
    let html: Vec<(report::Format, &std::path::Path)> = args
        .html
        .iter()
        .map(|p| (report::Format::Html, p.as_path()))
        .collect();
    // The page never over a result (a result may be compared with itself).
    if let Some(page) = &args.html {
        for run in &args.runs {
            report::refuse_same_file(&[("the result", run.as_path()), ("--html", page.as_path())])
                .map_err(Failure::usage)?;
        }
    }
    if let Some(table) = compare_sets(args)? {
        return write_stdout(&table);
    }
    let mut runs = load_all(&args.runs)?;
    same_workload(&args.runs, &runs, &[], args.force, "compares")?;
    if let Some(p) = &args.percentiles {
        runs[0].percentiles = p.0.clone();
    }
    // A run's --label, else its file.
    let labels: Vec<String> = args
        .runs
        .iter()
        .zip(&runs)
        .map(|(p, r)| {
            r.spec
                .recording
                .label
                .clone()
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect();
    let table = report::compare(&runs, &labels).map_err(Failure::run)?;
    let mut page = ExportManager::create(&html, true)?
        .without_text()
        .dropped_on_signal();
    write_stdout(&table)?;
    page.write(&runs)
}

fn write_stdout(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::run(format!("cannot write to stdout: {e}")))
}

/// Two sets of repeated runs (`run --repeat --json`): their differences;
/// None when the files are single results. A set beside a single result
/// is refused.
fn compare_sets(args: &CompareArgs) -> Result<Option<String>, Failure> {
    let sets = args
        .runs
        .iter()
        .map(|p| RunSet::load(p).map_err(Failure::usage))
        .collect::<Result<Vec<_>, _>>()?;
    match sets.as_slice() {
        [Some(_), Some(_)] if args.html.is_some() => Err(Failure::usage(
            "--html draws single results, not sets of runs",
        )),
        [Some(a), Some(b)] => {
            let labels = [&args.runs[0], &args.runs[1]].map(|p| p.display().to_string());
            let table = super::repeat::compare_sets(a, b, [&labels[0], &labels[1]])
                .map_err(Failure::run)?;
            Ok(Some(table))
        }
        s if s.iter().all(Option::is_none) => Ok(None),
        _ => Err(Failure::usage(
            "compare takes results, or two sets of runs (run --repeat --json), not a mix",
        )),
    }
}
