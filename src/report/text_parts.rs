//! The text report's latency parts: what the requests at each percentile
//! were made of, per op type and in total, or why the kernel stamped none.

use crate::result::{percentile_label, LatencyParts, OpSummary, RunResult};
use crate::stats::parts::PART_LABELS;
use std::fmt::Write;

pub fn write(out: &mut String, r: &RunResult) {
    if r.total.count == 0 {
        return;
    }
    let Some(total) = &r.total.latency_parts else {
        if let Some(why) = r.spec.latency_parts_blocker() {
            let _ = writeln!(out, "Latency parts: not measured ({why}).\n");
        }
        return;
    };
    let _ = writeln!(
        out,
        "Latency taken apart by the kernel's stamps, µs: the mean of each part over the requests at each percentile ({} of {} requests stamped)",
        total.requests, r.total.count
    );
    let _ = write!(out, "  {:<10}{:>7}{:>11}", "op", "", "latency");
    for label in PART_LABELS {
        let _ = write!(out, "{label:>18}");
    }
    out.push_str("   requests\n");
    for (name, op) in rows(r) {
        op_rows(out, name, op);
    }
    out.push('\n');
}

/// The brief report's parts: `total`'s rows only, in 100 columns (each op
/// type's are `--details`').
pub fn write_total(out: &mut String, r: &RunResult) {
    let Some(total) = &r.total.latency_parts else {
        return;
    };
    let _ = writeln!(
        out,
        "Latency parts (kernel stamps), µs: each part's mean at each percentile; {} of {} stamped",
        total.requests, r.total.count
    );
    let _ = write!(out, "  {:>7}{:>9}", "", "latency");
    for label in PART_LABELS {
        let _ = write!(out, "{label:>17}");
    }
    out.push_str("  requests\n");
    for at in &total.at {
        let _ = write!(
            out,
            "  {:>7}{:>9.1}",
            percentile_label(at.percentile),
            at.latency_us
        );
        for v in at.mean_us.values() {
            let _ = write!(out, "{v:>17.1}");
        }
        let _ = writeln!(out, "{:>10}", at.requests);
    }
    out.push('\n');
}

/// Each op type with parts, then `total` (only where it adds a row).
fn rows(r: &RunResult) -> Vec<(&str, &LatencyParts)> {
    let ops: Vec<(&str, &LatencyParts)> = (r.ops.iter())
        .filter_map(|(n, s): (&String, &OpSummary)| Some((n.as_str(), s.latency_parts.as_ref()?)))
        .collect();
    let total = r.total.latency_parts.as_ref().map(|t| ("total", t));
    match ops.len() {
        1 => ops,
        _ => ops.into_iter().chain(total).collect(),
    }
}

fn op_rows(out: &mut String, name: &str, parts: &LatencyParts) {
    for (i, at) in parts.at.iter().enumerate() {
        let op = if i == 0 { name } else { "" };
        let _ = write!(
            out,
            "  {op:<10}{:>7}{:>11.1}",
            percentile_label(at.percentile),
            at.latency_us
        );
        for v in at.mean_us.values() {
            let _ = write!(out, "{v:>18.1}");
        }
        let _ = writeln!(out, "{:>11}", at.requests);
    }
}
