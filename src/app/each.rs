//! `mcbench run --each`: the repcached guide's comparison in one command.
//! The same workload runs against each server alone, in turn, each from
//! its own preload; each run's report prints as it ends, and the
//! `compare` table follows (with the servers' own figures when
//! `--server-stats` is on). `--json`, `--csv` and `--hdr-log` get one
//! file per server (`out.json` → `out.1.json`, `out.2.json`, ...), in the
//! servers' order; `--html` overlays every run in one page.

use super::{exit_code, install_signal_flag, measure, Watched};
use crate::cli::RunArgs;
use crate::error::{exit, Failure};
use crate::report::{self, ExportManager, Format};
use crate::result::RunResult;
use crate::spec::RunSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub(super) fn run_each(
    args: &RunArgs,
    spec: &RunSpec,
    percentiles: Vec<f64>,
) -> Result<i32, Failure> {
    let specs = spec.each().map_err(Failure::usage)?;
    let (mut outputs, mut overlay) = create_outputs(args, specs.len())?;
    let stop = install_signal_flag()?;
    let (results, mut code) = run_one_by_one(&specs, &mut outputs, percentiles, &stop);
    if let Err(f) = overlay.write(&results) {
        crate::stderr_line!("mcbench: error: {f}");
        code = worse(code, exit::FAILED);
    }
    if results.len() > 1 {
        code = worse(code, compare_servers(&results)?);
    }
    Ok(code)
}

/// Every output, numbered per run (`out.2.json`), and the HTML that
/// overlays the runs: each created before any traffic.
fn create_outputs(
    args: &RunArgs,
    runs: usize,
) -> Result<(Vec<ExportManager>, ExportManager), Failure> {
    let files = args.outputs.files();
    if files.iter().any(|(_, p)| *p == Path::new("-")) {
        return Err(Failure::usage(
            "--each writes one result per server: name files, not '-'",
        ));
    }
    let per_run: Vec<Vec<(Format, PathBuf)>> = (1..=runs)
        .map(|i| {
            files
                .iter()
                .filter(|(f, _)| *f != Format::Html)
                .map(|(f, p)| (*f, numbered(p, i)))
                .collect()
        })
        .collect();
    let html: Vec<(Format, &Path)> = files
        .iter()
        .copied()
        .filter(|(f, _)| *f == Format::Html)
        .collect();
    let mut named: Vec<(&str, &Path)> = html.iter().map(|(f, p)| (f.flag(), *p)).collect();
    named.extend(
        per_run
            .iter()
            .flatten()
            .map(|(f, p)| (f.flag(), p.as_path())),
    );
    report::refuse_same_file(&named).map_err(Failure::usage)?;
    // Every output exists before any traffic.
    let outputs = per_run
        .iter()
        .map(|fs| {
            let refs: Vec<(Format, &Path)> = fs.iter().map(|(f, p)| (*f, p.as_path())).collect();
            Ok(ExportManager::create(&refs, false)?.detailed(args.outputs.details))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let overlay = ExportManager::create(&html, true)?.without_text();
    Ok((outputs, overlay))
}

/// Each server's run in turn, its results written to its outputs, until
/// one could not be made or was stopped.
fn run_one_by_one(
    specs: &[RunSpec],
    outputs: &mut [ExportManager],
    percentiles: Vec<f64>,
    stop: &Arc<AtomicUsize>,
) -> (Vec<RunResult>, i32) {
    let mut code = exit::OK;
    let mut results: Vec<RunResult> = Vec::new();
    for (i, (one, out)) in specs.iter().zip(outputs).enumerate() {
        crate::stderr_line!(
            "mcbench: --each: run {} of {}: {}",
            i + 1,
            specs.len(),
            one.target.servers[0]
        );
        // A run that could not be made (its server refuses connections)
        // ends the series; the runs made so far are still reported.
        let result = match measure(one, percentiles.clone(), Watched::stopped_by(stop), None) {
            Ok(r) => r,
            Err(f) => {
                crate::stderr_line!("mcbench: error: {}: {f}", one.target.servers[0]);
                code = worse(code, exit::FAILED);
                break;
            }
        };
        if let Err(f) = out.write(std::slice::from_ref(&result)) {
            crate::stderr_line!("mcbench: error: {f}");
            code = worse(code, exit::FAILED);
        }
        let stopped = result.stopped_by.is_some();
        code = worse(code, exit_code(&result));
        results.push(result);
        if stopped {
            break;
        }
    }
    (results, code)
}

/// The servers compared, as ratios to the first, on stdout: the exit code
/// it leaves.
fn compare_servers(results: &[RunResult]) -> Result<i32, Failure> {
    let labels: Vec<String> = results
        .iter()
        .map(|r| {
            r.spec
                .recording
                .label
                .clone()
                .unwrap_or_else(|| r.servers.join(","))
        })
        .collect();
    let table = report::compare(results, &labels).map_err(Failure::run)?;
    let text = format!(
        "\n════════ --each: the servers compared (ratios to the first) ════════\n\n{table}\n"
    );
    if let Err(e) = crate::error::to_stdout(&text) {
        crate::stderr_line!("mcbench: error: {e}");
        return Ok(exit::FAILED);
    }
    Ok(exit::OK)
}

/// `out.json` → `out.2.json`; `out` → `out.2`.
fn numbered(path: &Path, i: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{i}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{i}"),
    };
    path.with_file_name(name)
}

/// The exit code that says more: a signal over a failure over success.
fn worse(a: i32, b: i32) -> i32 {
    let rank = |c: i32| match c {
        exit::SIGINT | exit::SIGTERM | exit::SIGHUP => 3,
        exit::FAILED => 2,
        exit::OK => 0,
        _ => 1,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_numbered_per_server() {
        assert_eq!(
            numbered(Path::new("/r/out.json"), 2),
            Path::new("/r/out.2.json")
        );
        assert_eq!(numbered(Path::new("log"), 1), Path::new("log.1"));
        assert_eq!(worse(exit::OK, exit::FAILED), exit::FAILED);
        assert_eq!(worse(exit::SIGINT, exit::FAILED), exit::SIGINT);
    }
}
