//! The text report's precision: each table's 95 % intervals under it, and
//! the verdict printed last (long enough? stationary? rate held?).

use super::tone::{paint, Tone};
use crate::precision::{us, Estimate, Method, MARKED_EFFECT, MIN_BATCHES};
use crate::result::{
    percent_text, percentile_label, OpSummary, PercentileCheck, PrecisionVerdict, RunResult,
};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One row per op type with samples, then `total`: each percentile's
/// interval; `*` marks one widened for correlated samples.
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
            let widened = e.method == Method::BatchMeans
                || (e.method == Method::Effective && e.design_effect >= MARKED_EFFECT);
            let mark = if widened {
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
        out.push_str(
            "  * widened: the samples beyond varied from batch to batch more than independent \
             ones (correlated in time)\n",
        );
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
        check_line(out, c);
    }
    batches_line(out, &v.checks);
    client_share_line(out, &v.checks);
    stationarity_line(out, v);
    if let Some(cut) = v.warmup_cut_s {
        let _ = writeln!(
            out,
            "  warm-up: the first {cut:.1} s differ from the rest (MSER); consider -w {cut:.0}s"
        );
    }
    rate_line(out, v);
    let tone = if v.long_enough {
        Tone::Good
    } else {
        Tone::Caution
    };
    let _ = writeln!(out, "  → {}", paint(&conclusion(v), tone));
}

fn check_line(out: &mut String, c: &PercentileCheck) {
    let e = &c.estimate;
    let width = match c.relative_half_width {
        Some(h) => format!("±{:.1} %", h * 100.0),
        None if e.censored => "censored".to_string(),
        None => "no upper bound".to_string(),
    };
    let judged = if c.met {
        paint("met", Tone::Good)
    } else {
        let why: Vec<&str> = c.short_of.iter().map(|s| s.text()).collect();
        format!(
            "{} ({}): run ~{}× longer",
            paint("NOT met", Tone::Caution),
            why.join(", "),
            c.longer.unwrap_or(1.0)
        )
    };
    let _ = writeln!(
        out,
        "  {:<8}{:>9} {:<20}{:<15} target ±{:.0} %{}  {judged}; {}",
        percentile_label(e.percentile),
        us(e.value_us),
        e.interval_text(),
        width,
        c.target * 100.0,
        if c.named { " (named)" } else { "" },
        tail_text(e)
    );
}

/// `1,234 samples beyond`, with the episodes they came in where counted,
/// or the design effect where it widened the interval.
fn tail_text(e: &Estimate) -> String {
    let mut t = format!("{} samples beyond", e.tail_samples);
    match e.episodes {
        Some(1) => t.push_str(" in 1 episode"),
        Some(n) => t.push_str(&format!(" in {n} episodes")),
        None if e.design_effect >= MARKED_EFFECT => {
            t.push_str(&format!(" (worth {:.0} independent)", e.independent_tail()))
        }
        None => {}
    }
    t
}

/// Whether the batches could show drift within the run.
fn batches_line(out: &mut String, checks: &[PercentileCheck]) {
    let blind: Vec<&PercentileCheck> = checks
        .iter()
        .filter(|c| !c.estimate.drift_judged && !c.estimate.censored)
        .collect();
    let seconds = |e: &Estimate| e.batch_s.map_or(String::new(), |s| format!(" of {s:.2} s"));
    if blind.is_empty() {
        if let Some(c) = checks.first() {
            let e = &c.estimate;
            let _ = writeln!(
                out,
                "  batches: {}{}, independent at lag 1: drift within the run would show",
                e.batches,
                seconds(e)
            );
        }
        return;
    }
    let names: Vec<String> = blind
        .iter()
        .map(|c| format!("p{}", percent_text(c.estimate.percentile)))
        .collect();
    let e = &blind[0].estimate;
    let why = if e.batches == 0 {
        "no batches kept".to_string()
    } else if e.batches < MIN_BATCHES {
        format!("{} batches{}", e.batches, seconds(e))
    } else {
        format!("{} batches{}, correlated at lag 1", e.batches, seconds(e))
    };
    let _ = writeln!(
        out,
        "  batches: CANNOT TELL drift within the run for {} ({why}; {MIN_BATCHES} independent \
         ones needed)",
        names.join(", ")
    );
}

/// mcbench's own share of the latency at each percentile, and where it
/// exceeds the interval's half-width.
fn client_share_line(out: &mut String, checks: &[PercentileCheck]) {
    if checks.iter().all(|c| c.client_share_us.is_none()) {
        out.push_str(
            "  mcbench's own share of each latency: not measured (no request was stamped by \
             the kernel)\n",
        );
        return;
    }
    let label = |c: &PercentileCheck| format!("p{}", percent_text(c.estimate.percentile));
    let shares: Vec<String> = checks
        .iter()
        .filter_map(|c| Some(format!("{} {}", label(c), us(c.client_share_us?))))
        .collect();
    let over: Vec<String> = checks
        .iter()
        .filter(|c| c.client_share_exceeds_interval())
        .map(label)
        .collect();
    let verdict = if over.is_empty() {
        "within every interval's half-width".to_string()
    } else {
        format!(
            "over the half-width at {}: those intervals are of the server and mcbench together",
            over.join(", ")
        )
    };
    let _ = writeln!(
        out,
        "  mcbench's own share (its queue and receive, kernel stamps), µs: {}; {verdict}",
        shares.join(", ")
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precision::Estimate;

    /// A check of `percentile` at 100 µs ± `half`, whose own share is
    /// `share` µs.
    fn check(percentile: f64, half: f64, share: Option<f64>) -> PercentileCheck {
        PercentileCheck {
            estimate: Estimate {
                percentile,
                ..Estimate::p99_for_tests(100.0, half, 1_000)
            },
            relative_half_width: Some(half / 100.0),
            target: 0.1,
            named: false,
            met: true,
            short_of: Vec::new(),
            longer: None,
            client_share_us: share,
        }
    }

    #[test]
    fn the_clients_share_is_given_and_called_out_over_the_half_width() {
        let mut out = String::new();
        client_share_line(
            &mut out,
            &[check(50.0, 2.0, Some(30.0)), check(99.0, 40.0, Some(30.0))],
        );
        assert!(out.contains("µs: p50 30.0, p99 30.0"), "{out}");
        assert!(out.contains("over the half-width at p50:"), "{out}");
        assert!(!out.contains("at p50, p99"), "{out}");
        let mut out = String::new();
        client_share_line(&mut out, &[check(50.0, 2.0, None)]);
        assert!(out.contains("not measured"), "{out}");
    }
}
