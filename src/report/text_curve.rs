//! A scan's or a search's table: one line per point, then how it ended.

use crate::result::{percentile_label, Curve, CurveKind, CurvePoint};
use std::fmt::Write;

/// The header of the points' table.
pub fn header(curve: &Curve) -> String {
    let mut out = format!(
        "{:>3} {:>12} {:>12} {:>7} {:>10} {:>10} {:>10}",
        "#", "offered/s", "achieved/s", "group", "p50 µs", "p99 µs", "p99.9 µs"
    );
    if let Some(p) = curve.extra_percentile() {
        let _ = write!(out, " {:>10}", format!("{} µs", percentile_label(p)));
    }
    out.push_str("   errors  verdict");
    out
}

/// One point's line; `n` counts from 1.
pub fn line(curve: &Curve, n: usize, p: &CurvePoint) -> String {
    let mut out = format!(
        "{n:>3} {:>12.0} {:>12.0} {:>7} {:>10.1} {:>10.1} {:>10.1}",
        p.offered_rate, p.achieved_rate, p.group, p.p50_us, p.p99_us, p.p999_us
    );
    if curve.extra_percentile().is_some() {
        let _ = write!(out, " {:>10.1}", p.slo_us.unwrap_or(f64::NAN));
    }
    let _ = write!(out, " {:>8}", p.errors);
    let verdict = match (p.verdict, p.client_bound) {
        (Some(v), _) => v.to_string(),
        (None, true) => "client-bound".into(),
        (None, false) => "-".into(),
    };
    let _ = write!(out, "  {verdict}");
    if p.repeat {
        out.push_str(" (repeat)");
    }
    if let Some(why) = &p.why {
        let _ = write!(out, ": {why}");
    }
    out
}

/// The whole table, for the text report.
pub fn render(curve: &Curve) -> String {
    let what = match (curve.kind, curve.slo) {
        (CurveKind::Search, Some(slo)) => format!(
            "search: the highest rate with {slo}, to {}%",
            crate::result::percent_text(100.0 * curve.precision.unwrap_or(0.0))
        ),
        (CurveKind::Search, None) => "search".into(),
        (CurveKind::Scan, _) => "scan: latency against throughput".into(),
    };
    let mut out = format!("{what}\n\n{}\n", header(curve));
    for (i, p) in curve.points.iter().enumerate() {
        let _ = writeln!(out, "{}", line(curve, i + 1, p));
    }
    let _ = writeln!(out, "\n{}", curve.outcome);
    for (i, r) in curve.runs.iter().enumerate() {
        for w in &r.warnings {
            let _ = writeln!(out, "point {}: WARNING: {w}", i + 1);
        }
    }
    out
}
