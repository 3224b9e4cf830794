//! The text report's precision: each table's 95 % intervals under it, and
//! the verdict printed last (long enough? stationary? rate held?).

use crate::precision::{us, Estimate, Method};
use crate::result::{percent_text, percentile_label, OpSummary, PrecisionVerdict, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One row per op type with samples, then `total`: each percentile's
/// interval; `*` marks a batch-means interval (correlated samples).
pub fn intervals_table(
    out: &mut String,
    percentiles: &[f64],
    (ops, total): (&BTreeMap<String, OpSummary>, &OpSummary),
    pick: fn(&OpSummary) -> &[Estimate],
) {
    if pick(total).is_empty() {
        return;
    }
    let _ = write!(out, "  95 % intervals{:<3}", "");
    for p in percentiles {
        let _ = write!(out, "{:>20}", percentile_label(*p));
    }
    out.push('\n');
    let rows = ops
        .iter()
        .filter(|(_, s)| s.count > 0)
        .map(|(n, s)| (n.as_str(), s))
        .chain([("total", total)]);
    let mut batch = false;
    for (name, s) in rows {
        let _ = write!(out, "  {name:<16}");
        for e in pick(s) {
            let mark = if e.method == Method::BatchMeans {
                batch = true;
                "*"
            } else {
                ""
            };
            let _ = write!(out, "{:>20}", format!("{}{mark}", e.interval_text()));
        }
        out.push('\n');
    }
    if batch {
        out.push_str("  * batch means over the intervals: the samples were correlated in time\n");
    }
    out.push('\n');
}

/// The verdict, last in the report.
pub fn write(out: &mut String, r: &RunResult) {
    let Some(v) = &r.verdict else { return };
    let whose = if r.measure.is_some() {
        "the measurement group's latency"
    } else {
        "total latency"
    };
    let _ = writeln!(
        out,
        "\nVerdict on precision ({:.0} % intervals of {whose}, µs):",
        v.confidence * 100.0
    );
    for c in &v.checks {
        let e = &c.estimate;
        let width = match c.relative_half_width {
            Some(h) => format!("±{:.1} %", h * 100.0),
            None if e.censored => "censored".to_string(),
            None => "no upper bound".to_string(),
        };
        let judged = if c.met {
            "met".to_string()
        } else {
            format!("NOT met: run ~{}× longer", c.longer.unwrap_or(1.0))
        };
        let _ = writeln!(
            out,
            "  {:<8}{:>9} {:<20}{:<15} target ±{:.0} %{}  {judged}; {} samples beyond",
            percentile_label(e.percentile),
            us(e.value_us),
            e.interval_text(),
            width,
            c.target * 100.0,
            if c.named { " (named)" } else { "" },
            e.tail_samples
        );
    }
    stationarity_line(out, v);
    if let Some(cut) = v.warmup_cut_s {
        let _ = writeln!(
            out,
            "  warm-up: the first {cut:.1} s differ from the rest (MSER); consider -w {cut:.0}s"
        );
    }
    rate_line(out, v);
    let _ = writeln!(out, "  → {}", conclusion(v));
}

fn stationarity_line(out: &mut String, v: &PrecisionVerdict) {
    let s = &v.stationarity;
    let Some(p) = s.mann_kendall_p else {
        let _ = writeln!(
            out,
            "  stationarity: {} full intervals, too few to judge",
            s.intervals
        );
        return;
    };
    let trend = if p >= crate::precision::TREND_P {
        "no trend"
    } else {
        "a TREND"
    };
    let halves = match s.halves_agree {
        Some(true) => ", halves agree",
        Some(false) => ", the halves DIFFER",
        None => "",
    };
    let _ = writeln!(
        out,
        "  stationarity: {} intervals, {trend} in p99 (Mann–Kendall p = {p:.2}){halves}",
        s.intervals
    );
}

fn rate_line(out: &mut String, v: &PrecisionVerdict) {
    let (Some(offered), Some(worst), Some(held)) = (v.rate.offered, v.rate.worst, v.rate.held)
    else {
        return;
    };
    let _ = writeln!(
        out,
        "  rate: {}, the farthest interval {:+.1} % of {offered:.0}/s",
        if held { "held" } else { "NOT held" },
        worst * 100.0
    );
}

fn conclusion(v: &PrecisionVerdict) -> String {
    let names = |met: bool| {
        v.checks
            .iter()
            .filter(|c| c.met == met)
            .map(|c| format!("p{}", percent_text(c.estimate.percentile)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (ok, short) = (names(true), names(false));
    let mut text = match (ok.is_empty(), short.is_empty()) {
        (_, true) => format!("long enough for {ok}"),
        (true, false) => format!("NOT long enough for {short}"),
        (false, false) => format!("long enough for {ok}; NOT long enough for {short}"),
    };
    if v.stationarity.stationary == Some(false) {
        text.push_str("; the intervals are not stationary");
    }
    text
}
