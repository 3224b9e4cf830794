//! `mcbench compare`: runs side by side, each with its ratio to the first,
//! after checking that they ran the same workload.

use crate::report::RenderError;

use crate::result::{percentile_label, percentile_us, OpSummary, RunResult};
use crate::server_stats::Figures;
use std::fmt::Write;

/// Spec fields that say where, how or how long the load was made, not
/// what it was: runs may differ in them and still compare (rates and
/// percentiles do not depend on a run's length).
const NOT_WORKLOAD: [&str; 15] = [
    "label",
    "servers",
    "server_stats",
    "seed",
    "interval",
    "live",
    "affinity",
    "timeout",
    "connect_timeout",
    "drain_timeout",
    "user",
    "save_rate",
    "threads",
    "stop",
    "warmup",
];

/// Spec fields in which runs merged into one (`report --merge`) may also
/// differ: each machine's slice of the key space and share of the load.
pub const SHARE_OF_LOAD: [&str; 3] = ["client", "rate", "connections"];

/// The workload fields in which `b` differs from `a`, as `name: a ≠ b`,
/// leaving out `also` besides the fields that are no workload.
pub fn workload_differences(a: &RunResult, b: &RunResult, also: &[&str]) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(&a.spec), serde_json::to_value(&b.spec))
    else {
        return vec!["spec: not comparable".into()];
    };
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| !NOT_WORKLOAD.contains(&n.as_str()) && !also.contains(&n.as_str()))
        .filter_map(|n| {
            let (x, y) = (a.get(n), b.get(n));
            (x != y).then(|| format!("{n}: {} ≠ {}", show(x), show(y)))
        })
        .collect()
}

fn show(v: Option<&serde_json::Value>) -> String {
    v.map_or("(absent)".into(), ToString::to_string)
}

/// The comparison table: one column per run, `value (ratio)` where the
/// ratio is to the first run.
pub fn compare(runs: &[RunResult], labels: &[String]) -> Result<String, RenderError> {
    let mut rows: Vec<(String, Vec<f64>)> = Vec::new();
    let first = &runs[0];
    rows.push(("ops/s".into(), runs.iter().map(|r| r.total.rate).collect()));
    latency_rows(&mut rows, "latency", runs, |r| Some(&r.total), first)?;
    for op in first.ops.keys() {
        if runs.iter().all(|r| r.ops.contains_key(op)) {
            let name = format!("{op} latency");
            rows.push((
                format!("{op} ops/s"),
                runs.iter().map(|r| r.ops[op].rate).collect(),
            ));
            latency_rows(&mut rows, &name, runs, |r| r.ops.get(op), first)?;
        }
    }
    rows.push((
        "errors".into(),
        runs.iter().map(|r| r.total.errors as f64).collect(),
    ));
    rows.push((
        "hit ratio %".into(),
        runs.iter().map(|r| r.gets.hit_ratio * 100.0).collect(),
    ));
    rows.push((
        "client CPU ns/op".into(),
        runs.iter().map(|r| r.client.cpu_ns_per_op).collect(),
    ));
    server_rows(&mut rows, runs);
    let mut out = render(&rows, runs, labels);
    out.push_str(&interval_notes(runs, labels)?);
    Ok(out)
}

/// Each printed percentile of total latency with its 95 % interval per
/// run, and whether each run's interval meets the first's: intervals that
/// do not meet differ by more than one run's own noise (between-run noise
/// is `--repeat`'s to tell).
fn interval_notes(runs: &[RunResult], labels: &[String]) -> Result<String, RenderError> {
    let mut out = String::from("\nlatency, 95 % intervals (µs):\n");
    let mut runs = runs.to_vec();
    for r in &mut runs {
        r.attach_precision()?;
    }
    for (i, p) in runs[0].percentiles.iter().enumerate() {
        let Some(base) = runs[0].total.latency_ci.get(i) else {
            continue;
        };
        let _ = write!(out, "  {:<8}", crate::result::percentile_label(*p));
        for (r, label) in runs.iter().zip(labels) {
            let Some(e) = r.total.latency_ci.get(i) else {
                continue;
            };
            let meets = match (e.upper_us, base.upper_us) {
                (Some(u), Some(bu)) => e.lower_us <= bu && base.lower_us <= u,
                _ => true,
            };
            let mark = if meets { "" } else { " (differs)" };
            let _ = write!(out, "  {label}: {}{mark}", e.interval_text());
        }
        out.push('\n');
    }
    Ok(out)
}

/// With `--server-stats` in every run: the servers' own figures over the
/// run, summed over each run's servers.
fn server_rows(rows: &mut Vec<(String, Vec<f64>)>, runs: &[RunResult]) {
    let figures: Option<Vec<Vec<&Figures>>> = runs
        .iter()
        .map(|r| {
            let f: Vec<&Figures> = r
                .server_stats
                .iter()
                .filter_map(|s| s.run.as_ref())
                .collect();
            (!f.is_empty()).then_some(f)
        })
        .collect();
    let Some(figures) = figures else { return };
    // A figure some server of a run does not report is NaN, shown `n/a`.
    let sum = |pick: &dyn Fn(&Figures) -> Option<f64>| -> Vec<f64> {
        figures
            .iter()
            .map(|fs| fs.iter().map(|f| pick(f).unwrap_or(f64::NAN)).sum())
            .collect()
    };
    let count = |v: Option<u64>| v.map(|v| v as f64);
    let commands = sum(&|f| f.ops_per_s.map(|o| o * f.duration_s));
    let (hits, misses) = (sum(&|f| count(f.get_hits)), sum(&|f| count(f.get_misses)));
    let cpu = sum(&|f| Some(f.cpu_ns_per_op? * f.ops_per_s? * f.duration_s));
    rows.push(("server commands/s".into(), sum(&|f| f.ops_per_s)));
    rows.push((
        "server hit ratio %".into(),
        hits.iter()
            .zip(&misses)
            .map(|(h, m)| {
                if h + m > 0.0 {
                    100.0 * h / (h + m)
                } else {
                    f64::NAN
                }
            })
            .collect(),
    ));
    rows.push(("server evictions".into(), sum(&|f| count(f.evictions))));
    rows.push(("server items at end".into(), sum(&|f| count(f.curr_items))));
    rows.push((
        "server MB read+written/s".into(),
        sum(&|f| Some((f.bytes_read? + f.bytes_written?) as f64 / 1e6 / f.duration_s.max(1e-9))),
    ));
    rows.push((
        "server CPU ns/command".into(),
        cpu.iter()
            .zip(&commands)
            .map(|(c, n)| c / n.max(1.0))
            .collect(),
    ));
}

fn latency_rows(
    rows: &mut Vec<(String, Vec<f64>)>,
    name: &str,
    runs: &[RunResult],
    pick: impl Fn(&RunResult) -> Option<&OpSummary>,
    first: &RunResult,
) -> Result<(), RenderError> {
    let hists = runs
        .iter()
        .map(|r| {
            pick(r).map_or(Ok(crate::stats::new_histogram()), |s| {
                s.latency_hdr.decode()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for p in &first.percentiles {
        rows.push((
            format!("{name} {} µs", percentile_label(*p)),
            hists.iter().map(|h| percentile_us(h, *p)).collect(),
        ));
    }
    rows.push((
        format!("{name} max µs"),
        hists.iter().map(crate::stats::max_us).collect(),
    ));
    Ok(())
}

fn render(rows: &[(String, Vec<f64>)], runs: &[RunResult], labels: &[String]) -> String {
    let width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let col = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(22)
        + 2;
    let mut out = String::new();
    let _ = write!(out, "{:<width$}", "");
    for l in labels {
        let _ = write!(out, "{l:>col$}");
    }
    out.push('\n');
    for (name, values) in rows {
        let _ = write!(out, "{name:<width$}");
        for (i, v) in values.iter().enumerate() {
            let cell = if i == 0 {
                num(*v)
            } else {
                format!("{} ({})", num(*v), ratio(*v, values[0]))
            };
            let _ = write!(out, "{cell:>col$}");
        }
        out.push('\n');
    }
    let bound: Vec<&String> = labels
        .iter()
        .zip(runs)
        .filter(|(_, r)| r.client.client_bound)
        .map(|(l, _)| l)
        .collect();
    if !bound.is_empty() {
        let _ = writeln!(
            out,
            "\nWARNING: CLIENT-BOUND runs measure the client, not the server: {}",
            bound
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

/// A figure; `n/a` for one not reported (NaN).
fn num(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else if v.abs() >= 10_000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `1.05×` of the first run; `-` when the first is zero; `n/a` when
/// either was not reported.
fn ratio(v: f64, base: f64) -> String {
    if v.is_nan() || base.is_nan() {
        "n/a".into()
    } else if base == 0.0 {
        if v == 0.0 {
            "=".into()
        } else {
            "-".into()
        }
    } else {
        format!("{:.2}×", v / base)
    }
}
