//! `--html`: one self-contained page (no script, font or style from the
//! network): the configuration, the summary table, and charts as inline
//! SVG. Several runs (`mcbench report A.json B.json --html F`) overlay in
//! one set of charts, a colour per run.

mod charts;
mod curve;
mod servers;

use super::Exporter;
use crate::result::{percentile_label, percentile_us, RunResult};
use crate::stats::{max_us, IntervalSummary};
use charts::{Series, PALETTE};
use std::fmt::Write;

pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, String> {
        let mut page = String::new();
        let _ = write!(page, "{HEAD}");
        config_table(&mut page, runs);
        summary_table(&mut page, runs)?;
        page.push_str("<h2>Latency by percentile</h2>\n");
        for op in op_names(runs) {
            let svg = charts::spectrum(
                &format!("{op}: latency by percentile"),
                &spectra(runs, &op)?,
            )?;
            figure(&mut page, &svg);
        }
        page.push_str("<h2>Over time</h2>\n");
        for svg in time_charts(runs)? {
            figure(&mut page, &svg);
        }
        let server_charts = servers::charts(runs)?;
        if !server_charts.is_empty() {
            page.push_str("<h2>Servers</h2>\n");
            for svg in server_charts {
                figure(&mut page, &svg);
            }
        }
        page.push_str("</body>\n</html>\n");
        Ok(page.into_bytes())
    }

    fn takes_several(&self) -> bool {
        true
    }

    fn render_curve(&self, curve: &crate::result::Curve) -> Result<Vec<u8>, String> {
        curve::page(curve)
    }

    fn takes_curve(&self) -> bool {
        true
    }
}

const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<title>mcbench report</title>\n<style>\n\
body { font-family: sans-serif; margin: 1.5em; color: #222; }\n\
table { border-collapse: collapse; margin-bottom: 1.5em; font-size: 0.9em; }\n\
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }\n\
th:first-child, td:first-child { text-align: left; }\n\
figure { margin: 0.5em 0; display: inline-block; }\n\
.warn { color: #a00; }\n</style>\n</head>\n<body>\n<h1>mcbench report</h1>\n";

/// Labels runs `run 1`, `run 2`, ... with their servers.
fn label(i: usize, r: &RunResult) -> String {
    format!("run {} ({})", i + 1, r.servers.join(", "))
}

fn color(i: usize) -> plotters::style::RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn figure(page: &mut String, svg: &str) {
    let _ = writeln!(page, "<figure class=\"chart\">{svg}</figure>");
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The resolved configuration, a column per run.
fn config_table(page: &mut String, runs: &[RunResult]) {
    page.push_str("<h2>Configuration</h2>\n<table>\n<tr><th>setting</th>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(page, "<th>{}</th>", esc(&label(i, r)));
    }
    page.push_str("</tr>\n");
    let specs: Vec<serde_json::Map<String, serde_json::Value>> = runs
        .iter()
        .map(|r| match serde_json::to_value(&r.spec) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        })
        .collect();
    let mut rows = vec![
        (
            "version".to_string(),
            runs.iter().map(|r| r.version.clone()).collect::<Vec<_>>(),
        ),
        (
            "measured, s".into(),
            runs.iter()
                .map(|r| format!("{:.3}", r.duration_s))
                .collect(),
        ),
    ];
    if runs.iter().any(|r| r.tls.is_some()) {
        let tls = |r: &RunResult| super::text::tls_line(r).unwrap_or_else(|| "no".into());
        rows.push(("TLS".into(), runs.iter().map(tls).collect()));
    }
    for key in specs[0].keys() {
        rows.push((
            key.clone(),
            specs
                .iter()
                .map(|m| m.get(key).map_or(String::new(), ToString::to_string))
                .collect(),
        ));
    }
    for (name, cells) in rows {
        let _ = write!(page, "<tr><td>{}</td>", esc(&name));
        for c in cells {
            let _ = write!(page, "<td>{}</td>", esc(&c));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

/// Per run and op type: count, rate, the run's percentiles, max, errors.
fn summary_table(page: &mut String, runs: &[RunResult]) -> Result<(), String> {
    let pcts = &runs[0].percentiles;
    page.push_str(
        "<h2>Summary</h2>\n<table>\n<tr><th>run</th><th>op</th><th>ops</th><th>ops/s</th>",
    );
    for p in pcts {
        let _ = write!(page, "<th>{} µs</th>", percentile_label(*p));
    }
    page.push_str("<th>max µs</th><th>errors</th></tr>\n");
    for (i, r) in runs.iter().enumerate() {
        let measure = r.measure.iter().flat_map(|m| {
            m.ops
                .iter()
                .map(|(op, s)| (format!("measure: {op}"), s))
                .chain([("measure: total".to_string(), &m.total)])
        });
        let rows = r
            .ops
            .iter()
            .map(|(op, s)| (op.clone(), s))
            .chain([("total".to_string(), &r.total)])
            .chain(measure);
        for (op, s) in rows {
            let h = s.latency_hdr.decode()?;
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td>",
                esc(&label(i, r)),
                esc(&op),
                s.count,
                s.rate
            );
            for (i, p) in pcts.iter().enumerate() {
                // The value, then its 95 % interval beneath it.
                let ci = s
                    .latency_ci
                    .get(i)
                    .filter(|e| e.percentile == *p)
                    .map_or(String::new(), |e| {
                        format!("<br><small>{}</small>", esc(&e.interval_text()))
                    });
                let _ = write!(page, "<td>{:.1}{ci}</td>", percentile_us(&h, *p));
            }
            let max = max_us(&h);
            let _ = writeln!(page, "<td>{max:.1}</td><td>{}</td></tr>", s.errors);
        }
    }
    page.push_str("</table>\n<p><small>Under each percentile: its 95 % interval (order statistics, or batch means over the intervals where wider); ≥ X: no finite upper bound.</small></p>\n");
    for (i, r) in runs.iter().enumerate() {
        verdict(page, &label(i, r), r);
        for w in &r.warnings {
            let _ = writeln!(
                page,
                "<p class=\"warn\">{}: WARNING: {}</p>",
                esc(&label(i, r)),
                esc(&w.to_string())
            );
        }
    }
    Ok(())
}

/// The verdict on precision: one line per judged percentile, then
/// stationarity.
fn verdict(page: &mut String, run: &str, r: &RunResult) {
    let Some(v) = &r.verdict else { return };
    let _ = writeln!(
        page,
        "<h3>{}: verdict on precision</h3>\n<table>\n<tr><th>percentile</th><th>µs</th><th>95 % interval</th><th>± share</th><th>target</th><th>met</th></tr>",
        esc(run)
    );
    for c in &v.checks {
        let e = &c.estimate;
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>±{:.0} %</td><td>{}</td></tr>",
            percentile_label(e.percentile),
            e.value_us,
            esc(&e.interval_text()),
            c.relative_half_width
                .map_or("—".to_string(), |h| format!("{:.1} %", h * 100.0)),
            c.target * 100.0,
            if c.met { "yes" } else { "NO" }
        );
    }
    page.push_str("</table>\n");
    let st = &v.stationarity;
    let _ = writeln!(
        page,
        "<p>Stationarity over {} intervals: {}. {}</p>",
        st.intervals,
        match st.stationary {
            Some(true) => "no trend, halves agree",
            Some(false) => "NOT stationary",
            None => "too few intervals to judge",
        },
        if v.long_enough {
            "Long enough."
        } else {
            "NOT long enough."
        }
    );
}

/// Op types with requests in any run, then `total`.
fn op_names(runs: &[RunResult]) -> Vec<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.ops
                .iter()
                .filter(|(_, s)| s.count > 0)
                .map(|(n, _)| n.clone())
        })
        .collect();
    names.sort();
    names.dedup();
    names.push("total".into());
    names
}

/// Latency and service time of `op` in each run, as spectrum points.
fn spectra(runs: &[RunResult], op: &str) -> Result<Vec<Series>, String> {
    let mut out = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let s = if op == "total" {
            Some(&r.total)
        } else {
            r.ops.get(op)
        };
        let Some(s) = s.filter(|s| s.count > 0) else {
            continue;
        };
        let base = color(i);
        out.push(Series {
            label: format!("{}: latency", label(i, r)),
            color: base,
            points: spectrum_points(&s.latency_hdr.decode()?),
        });
        out.push(Series {
            label: format!("{}: service time", label(i, r)),
            color: plotters::style::RGBColor(base.0 / 2 + 100, base.1 / 2 + 100, base.2 / 2 + 100),
            points: spectrum_points(&s.service_time_hdr.decode()?),
        });
    }
    Ok(out)
}

/// (1/(1−p), µs) for p from 0 to 99.999 %, 20 points a decade, as far as
/// the count supports (a tail beyond 1/N is the max again).
fn spectrum_points(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    let limit = (h.len() as f64).max(10.0);
    (0..=100)
        .map(|i| 10f64.powf(i as f64 / 20.0))
        .take_while(|x| *x <= limit * 1.0001)
        .map(|x| {
            (
                x,
                (h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1e3).max(1e-3),
            )
        })
        .collect()
}

/// One value per interval of `r`, at the interval's end.
fn per_interval(
    r: &RunResult,
    value: impl Fn(&IntervalSummary) -> Result<f64, String>,
) -> Result<Vec<(f64, f64)>, String> {
    r.intervals
        .iter()
        .map(|s| Ok((s.time_s, value(s)?)))
        .collect()
}

/// The interval's latency at `percent`, all ops together, µs.
fn interval_percentile(s: &IntervalSummary, percent: f64) -> Result<f64, String> {
    match s.ops.get("total") {
        Some(o) => Ok(percentile_us(&o.latency_hdr.decode()?, percent)),
        None => Ok(0.0),
    }
}

/// Throughput; p50 and p99; send lag p99 (open loop); errors per second.
fn time_charts(runs: &[RunResult]) -> Result<Vec<String>, String> {
    let (mut rate, mut latency, mut lag, mut errors) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, r) in runs.iter().enumerate() {
        let name = label(i, r);
        let series = |label: String, color, points| Series {
            label,
            color,
            points,
        };
        rate.push(series(
            name.clone(),
            color(i),
            per_interval(r, |s| Ok(s.ops.get("total").map_or(0.0, |o| o.rate)))?,
        ));
        for (p, shade) in [(50.0, i), (99.0, i + 3)] {
            latency.push(series(
                format!("{name}: p{p}"),
                color(shade),
                per_interval(r, |s| interval_percentile(s, p))?,
            ));
        }
        if r.client.open_loop {
            lag.push(series(
                format!("{name}: p99"),
                color(i),
                per_interval(r, |s| Ok(percentile_us(&s.send_lag_hdr.decode()?, 99.0)))?,
            ));
        }
        errors.push(series(
            name,
            color(i),
            per_interval(r, |s| Ok(s.errors as f64 / s.duration_s.max(1e-9)))?,
        ));
    }
    let mut out = vec![
        charts::over_time("Throughput", "ops/s", &rate)?,
        charts::over_time("Latency over time", "µs", &latency)?,
    ];
    if !lag.is_empty() {
        out.push(charts::over_time(
            "Send lag (intended send → sent), p99",
            "µs",
            &lag,
        )?);
    }
    out.push(charts::over_time("Errors", "errors/s", &errors)?);
    Ok(out)
}
