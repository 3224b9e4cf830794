//! The run over time, an interval a point: throughput, p50 and p99, send
//! lag (open loop), errors by class and the client's CPU.

use crate::report::RenderError;

use super::charts::{self, style, Series};
use super::{figure, label};
use crate::result::{percentile_us, RunResult};
use crate::stats::IntervalSummary;

pub fn write(page: &mut String, runs: &[RunResult], t_end: f64) -> Result<(), RenderError> {
    let n = runs.len();
    let (mut rate, mut latency, mut lag, mut errors, mut cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, r) in runs.iter().enumerate() {
        let name = |what: &str| match (n, what) {
            (1, "") => "all requests".to_string(),
            (1, w) => w.to_string(),
            (_, "") => label(i, r),
            (_, w) => format!("{}: {w}", label(i, r)),
        };
        rate.push(line(
            name(""),
            i,
            0,
            n,
            per_interval(r, |s| Ok(s.ok_rate(r.spec.workload.successful)))?,
        ));
        for (k, p) in [(0, 99.0), (1, 50.0)] {
            let points = per_interval(r, |s| total_percentile(s, p))?;
            latency.push(line(name(&format!("p{p}")), i, k, n, points));
        }
        if r.client.open_loop {
            let points = per_interval(r, |s| Ok(percentile_us(&s.send_lag_hdr.decode()?, 99.0)))?;
            lag.push(line(name(""), i, 0, n, points));
        }
        errors.extend(error_lines(r, i, n, &name)?);
        if r.intervals.iter().any(|s| s.client_cpu_s > 0.0) {
            let points = per_interval(r, |s| Ok(s.client_cpu_s / s.duration_s.max(1e-9)))?;
            cpu.push(line(name(""), i, 0, n, points));
        }
    }
    let t = t_end;
    let drawn = [
        chart(page, "Throughput: answered without error", "ops/s", rate, t)?,
        chart(page, "Latency over time", "µs", latency, t)?,
        chart(page, "Send lag (intended send → sent), p99", "µs", lag, t)?,
        chart(page, "Errors by class", "errors/s", errors, t)?,
        chart(
            page,
            "Client CPU: the load's worker threads",
            "cores busy",
            cpu,
            t,
        )?,
    ];
    if !drawn.contains(&true) {
        page.push_str(
            "<p>Fewer than two intervals were measured: nothing to draw over time.</p>\n",
        );
    }
    Ok(())
}

/// Draws the lines of two points or more, if any; whether it drew.
pub(super) fn chart(
    page: &mut String,
    title: &str,
    unit: &str,
    mut series: Vec<Series>,
    t_end: f64,
) -> Result<bool, RenderError> {
    series.retain(|s| s.points.len() >= 2);
    if series.is_empty() {
        return Ok(false);
    }
    let svg = charts::over_time(unit, &series, t_end)?;
    figure(page, title, &svg, &series, &[]);
    Ok(true)
}

fn line(label: String, run: usize, k: usize, runs: usize, points: Vec<(f64, f64)>) -> Series {
    Series {
        label,
        style: style(run, k, runs),
        points,
    }
}

/// One run: a line per error class the run had. Several: a line per run
/// (every class), whose classes the tables below name.
fn error_lines(
    r: &RunResult,
    run: usize,
    runs: usize,
    name: &dyn Fn(&str) -> String,
) -> Result<Vec<Series>, RenderError> {
    let rate = |s: &IntervalSummary, n: u64| n as f64 / s.duration_s.max(1e-9);
    if runs > 1 || r.intervals.iter().all(|s| s.error_classes.is_empty()) {
        let points = per_interval(r, |s| Ok(rate(s, s.errors)))?;
        return Ok(vec![line(name("all classes"), run, 0, runs, points)]);
    }
    let mut classes: Vec<&String> = r
        .intervals
        .iter()
        .flat_map(|s| s.error_classes.keys())
        .collect();
    classes.sort();
    classes.dedup();
    classes
        .into_iter()
        .enumerate()
        .map(|(k, class)| {
            let points = per_interval(r, |s| {
                Ok(rate(s, s.error_classes.get(class).copied().unwrap_or(0)))
            })?;
            Ok(line(class.clone(), run, k, runs, points))
        })
        .collect()
}

/// One value per interval of `r`, at the interval's end.
fn per_interval(
    r: &RunResult,
    value: impl Fn(&IntervalSummary) -> Result<f64, RenderError>,
) -> Result<Vec<(f64, f64)>, RenderError> {
    r.intervals
        .iter()
        .map(|s| Ok((s.time_s, value(s)?)))
        .collect()
}

/// The interval's latency at `percent`, all ops together, µs.
fn total_percentile(s: &IntervalSummary, percent: f64) -> Result<f64, RenderError> {
    match s.ops.get("total") {
        Some(o) => Ok(percentile_us(&o.latency_hdr.decode()?, percent)),
        None => Ok(0.0),
    }
}

/// The end of the page's time axis, s: the last interval of any run, or
/// of any server's own stats.
pub fn axis_end(runs: &[RunResult]) -> f64 {
    let client = runs
        .iter()
        .flat_map(|r| r.intervals.iter().map(|s| s.time_s));
    let servers = runs
        .iter()
        .flat_map(|r| &r.server_stats)
        .flat_map(|row| row.intervals.iter().map(|s| s.time_s));
    client.chain(servers).fold(0.0, f64::max)
}
