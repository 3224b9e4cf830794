//! The percentile spectrum (HdrHistogram's plot): one chart per op type
//! and the total, latency and service time of each run, each line ending
//! where its samples stop bounding the percentile.

use crate::report::RenderError;

use super::charts::{self, style, Series};
use super::{figure, label, Swatch};
use crate::precision::order::highest_bounded;
use crate::result::RunResult;

pub fn write(page: &mut String, runs: &[RunResult]) -> Result<(), RenderError> {
    // An SLO the runs were judged against (`search`, `scan --slo`).
    let slo = runs[0]
        .spec
        .load
        .decide
        .map(|d| (1.0 / (1.0 - d.percentile / 100.0), d.bound_us));
    for op in op_names(runs) {
        let (series, ends) = lines(runs, &op)?;
        if series.iter().all(|s| s.points.len() < 2) {
            continue;
        }
        let shade_from = ends.into_iter().reduce(f64::max);
        let svg = charts::spectrum(&series, shade_from, slo)?;
        let mut extra = Vec::new();
        if shade_from.is_some_and(|x| x < 1e5) {
            extra.push((
                "beyond every line's samples: no finite 95 % upper bound",
                Swatch::Shade,
            ));
        }
        if slo.is_some() {
            extra.push(("the SLO", Swatch::Rule));
        }
        figure(
            page,
            &format!("{op}: latency by percentile"),
            &svg,
            &series,
            &extra,
        );
    }
    Ok(())
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

/// Latency (solid) and service time (dashed) of `op` in each run, and
/// where each run's lines end (1/(1−p)).
fn lines(runs: &[RunResult], op: &str) -> Result<(Vec<Series>, Vec<f64>), RenderError> {
    let (mut out, mut ends) = (Vec::new(), Vec::new());
    for (i, r) in runs.iter().enumerate() {
        let s = if op == "total" {
            Some(&r.total)
        } else {
            r.ops.get(op)
        };
        let Some(s) = s.filter(|s| s.count > 0) else {
            continue;
        };
        let name = |what: &str| match runs.len() {
            1 => what.to_string(),
            _ => format!("{}: {what}", label(i, r)),
        };
        for (k, (what, hdr)) in [
            ("latency", &s.latency_hdr),
            ("service time", &s.service_time_hdr),
        ]
        .into_iter()
        .enumerate()
        {
            let h = hdr.decode()?;
            ends.push(bounded_up_to(h.len()));
            out.push(Series {
                label: name(what),
                style: style(i, k, runs.len()),
                points: points(&h),
            });
        }
    }
    Ok((out, ends))
}

/// Where a line of `n` samples ends: 1/(1−p) of the highest percentile
/// they bound above.
fn bounded_up_to(n: u64) -> f64 {
    1.0 / (1.0 - highest_bounded(n, crate::precision::CONFIDENCE))
}

/// (1/(1−p), µs) from p = 0, 20 points a decade, up to where the samples
/// bound the percentile (and that end itself).
fn points(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    let end = bounded_up_to(h.len()).min(1e5);
    let at = |x: f64| {
        (
            x,
            (h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1e3).max(1e-3),
        )
    };
    let mut out: Vec<(f64, f64)> = (0..=100)
        .map(|i| 10f64.powf(i as f64 / 20.0))
        .take_while(|x| *x < end)
        .map(at)
        .collect();
    if end > 1.0 {
        out.push(at(end));
    }
    out
}
