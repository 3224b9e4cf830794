//! The text report's latency parts: what the requests at each percentile
//! were made of, per op type and in total, or why the kernel stamped none.

use crate::result::{percentile_label, LatencyParts, OpSummary, RunResult};
use crate::stats::parts::PART_LABELS;
use std::fmt::Write;

/// Column widths of a parts table.
struct Widths {
    /// The op type's column; 0 for a table of `total` alone.
    op: usize,
    latency: usize,
    part: usize,
    requests: usize,
}

/// `--details`: a row group per op type.
const FULL: Widths = Widths {
    op: 10,
    latency: 11,
    part: 18,
    requests: 11,
};

/// The brief report's: `total` alone, in 100 columns.
const BRIEF: Widths = Widths {
    op: 0,
    latency: 9,
    part: 17,
    requests: 10,
};

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
    header(out, &FULL, (total.requests, r.total.count), sampled(r));
    for (name, op) in rows(r) {
        op_rows(out, name, op, &FULL);
    }
    out.push('\n');
}

/// The brief report's parts: `total`'s rows only (each op type's are
/// `--details`'); nothing where none were measured.
pub fn write_total(out: &mut String, r: &RunResult) {
    let Some(total) = &r.total.latency_parts else {
        return;
    };
    header(out, &BRIEF, (total.requests, r.total.count), sampled(r));
    op_rows(out, "", total, &BRIEF);
    out.push('\n');
}

/// How the stamped requests were chosen, where not all were meant to be:
/// ` (1 in N writes, at random)`.
fn sampled(r: &RunResult) -> String {
    match r.spec.stamp_every() {
        1 => String::new(),
        n => format!(" (1 in {n} writes, at random)"),
    }
}

/// The title, with the requests stamped of those measured and how they
/// were sampled, and the columns' heads.
fn header(out: &mut String, w: &Widths, (stamped, measured): (u64, u64), sampled: String) {
    let _ = match w.op {
        0 => writeln!(
            out,
            "Latency parts (kernel stamps), µs: each part's mean at each percentile; \
             {stamped} of {measured} stamped{sampled}"
        ),
        _ => writeln!(
            out,
            "Latency taken apart by the kernel's stamps, µs: the mean of each part over the \
             requests at each percentile ({stamped} of {measured} requests stamped{sampled})"
        ),
    };
    let op = if w.op > 0 { "op" } else { "" };
    let (ow, lw, pw, rw) = (w.op, w.latency, w.part, w.requests);
    let _ = write!(out, "  {op:<ow$}{:>7}{:>lw$}", "", "latency");
    for label in PART_LABELS {
        let _ = write!(out, "{label:>pw$}");
    }
    let _ = writeln!(out, "{:>rw$}", "requests");
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

fn op_rows(out: &mut String, name: &str, parts: &LatencyParts, w: &Widths) {
    let (ow, lw, pw, rw) = (w.op, w.latency, w.part, w.requests);
    for (i, at) in parts.at.iter().enumerate() {
        let op = if i == 0 { name } else { "" };
        let label = percentile_label(at.percentile);
        let _ = write!(out, "  {op:<ow$}{label:>7}{:>lw$.1}", at.latency_us);
        for v in at.mean_us.values() {
            let _ = write!(out, "{v:>pw$.1}");
        }
        let _ = writeln!(out, "{:>rw$}", at.requests);
    }
}
