//! The default text report: the answer first, on one screen. A headline
//! (throughput, the tail with its intervals, whether the client kept up,
//! whether the run was long enough), what was run, one table per measured
//! kind with each percentile's interval inline, and only the sections that
//! have something to say. `--details` prints every section (`text.rs`); the
//! JSON holds every figure of both.

use crate::report::RenderError;

use super::tone::{paint, Tone};
use super::{text, text_settings};
use crate::precision::{us, Estimate};
use crate::result::{
    percent_text, percentile_label, percentile_us, OpSummary, PercentileCheck, PrecisionVerdict,
    RunResult,
};
use crate::stats::{max_us, Hdr};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The brief report's width, in columns: settings and the precision
/// line wrap at their clauses to stay within it.
const WIDTH: usize = 100;
/// The percentiles the headline names, where the run has them.
const HEADLINE: [f64; 3] = [50.0, 99.0, 99.9];

pub fn render_one(out: &mut String, r: &RunResult) -> Result<(), RenderError> {
    let _ = writeln!(out, "{}", text_settings::identity(r));
    headline(out, r);
    out.push('\n');
    let mut settings = String::new();
    text_settings::settings(&mut settings, r);
    // Its lines end in a blank one.
    wrap_all(out, &settings);
    let kinds = (&r.ops, &r.total);
    let latency =
        "Latency (intended send → response), µs, ± to the farther end of its 95 % interval";
    inline_table(out, &r.percentiles, kinds, latency, Kind::Latency)?;
    if service_differs(r) {
        let service = "Service time (actual send → response), µs";
        inline_table(out, &r.percentiles, kinds, service, Kind::Service)?;
    }
    if r.total.count > 0 {
        super::text_parts::write_total(out, r);
    }
    if let Some(m) = &r.measure {
        let title = text::measure_title(m);
        inline_table(
            out,
            &r.percentiles,
            (&m.ops, &m.total),
            &title,
            Kind::Latency,
        )?;
        let _ = writeln!(out, "{}\n", text::measure_lag(m));
    }
    text::trace(out, r);
    counters(out, r);
    let mut asked = String::new();
    text::asked_for(&mut asked, r);
    wrap_all(out, &asked);
    let _ = writeln!(
        out,
        "\n(--details: each interval's bounds, service time, replies, bytes, client CPU, \
         the precision verdict)"
    );
    Ok(())
}

/// Throughput, tail, the client's verdict and the precision's, labelled.
fn headline(out: &mut String, r: &RunResult) {
    let rates = format!(
        "{:.0} ok/s, {:.0} err/s",
        r.total.ok_rate, r.total.error_rate
    );
    labelled(out, "throughput", &rates);
    if let Some(tail) = tail(r) {
        labelled(out, "latency", &tail);
    }
    let (verdict, bad) = text::client_verdict(r);
    let tone = if bad { Tone::Bad } else { Tone::Good };
    labelled(out, "verdict", &paint(&verdict, tone));
    if let Some(v) = &r.verdict {
        labelled(out, "precision", &precision(v));
    }
}

/// `  label       text`, the text starting at `LABELLED` and wrapped there.
fn labelled(out: &mut String, label: &str, text: &str) {
    let width = LABELLED - 2;
    let line = format!("  {label:<width$}{text}");
    wrap_at(out, &line, LABELLED);
}

/// `p50 58.9 µs ±4.2 %, p99 106.4 µs ±1.6 % (95 % intervals)`, of the
/// latency an SLO reads (the measurement group's where there is one).
fn tail(r: &RunResult) -> Option<String> {
    let estimates: Vec<&Estimate> = match &r.verdict {
        Some(v) => v.checks.iter().map(|c| &c.estimate).collect(),
        None => r.total.latency_ci.iter().collect(),
    };
    let named: Vec<&Estimate> = estimates
        .iter()
        .copied()
        .filter(|e| HEADLINE.contains(&e.percentile))
        .collect();
    let shown = if named.is_empty() {
        estimates.into_iter().take(3).collect()
    } else {
        named
    };
    if shown.is_empty() || r.total.count == 0 {
        return None;
    }
    let cells: Vec<String> = shown
        .iter()
        .map(|e| {
            format!(
                "{} {} µs {}",
                percentile_label(e.percentile),
                us(e.value_us),
                plus_minus(e)
            )
        })
        .collect();
    let whose = match r.measure {
        Some(_) => "measurement connections, ",
        None => "",
    };
    let confidence = r.verdict.as_ref().map_or(0.95, |v| v.confidence);
    Some(format!(
        "{} ({whose}{:.0} % intervals)",
        cells.join(", "),
        confidence * 100.0
    ))
}

/// `±4.2 %`: the farther end of the interval from the value, over it;
/// `±∞` where the interval has no upper bound.
fn plus_minus(e: &Estimate) -> String {
    match e.relative_half_width() {
        Some(h) if h * 100.0 < 10.0 => format!("±{:.1}%", h * 100.0),
        Some(h) => format!("±{:.0}%", h * 100.0),
        None => "±∞".into(),
    }
}

/// `long enough for p90-p99.9; p50 needs ~1.6× longer, p99.99 ~27×`,
/// with what else the verdict found that bears on the numbers.
fn precision(v: &PrecisionVerdict) -> String {
    let met: Vec<&PercentileCheck> = v.checks.iter().filter(|c| c.met).collect();
    let short: Vec<&PercentileCheck> = v.checks.iter().filter(|c| !c.met).collect();
    let mut parts = Vec::new();
    if !met.is_empty() {
        let text = format!("long enough for {}", spans(&v.checks, |c| c.met));
        parts.push(paint(&text, Tone::Good));
    }
    if !short.is_empty() {
        let needs: Vec<String> = short
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let times = times(c.longer.unwrap_or(1.0));
                let label = percentile_label(c.estimate.percentile);
                match i {
                    0 => format!("{label} needs ~{times} longer"),
                    _ => format!("{label} ~{times}"),
                }
            })
            .collect();
        parts.push(paint(&needs.join(", "), Tone::Caution));
    }
    if v.stationarity.stationary == Some(false) {
        parts.push(paint("the intervals are NOT stationary", Tone::Caution));
    }
    if v.rate.held == Some(false) {
        let worst = v.rate.worst.unwrap_or(0.0) * 100.0;
        let text = format!("the rate was NOT held (an interval {worst:+.1} %)");
        parts.push(paint(&text, Tone::Bad));
    }
    if let Some(cut) = v.warmup_cut_s {
        parts.push(format!(
            "the first {cut:.1} s differ from the rest (consider -w {cut:.0}s)"
        ));
    }
    parts.join("; ")
}

/// The checks that pass `pick`, consecutive ones joined: `p90-p99.9, p99.99`.
fn spans(checks: &[PercentileCheck], pick: fn(&PercentileCheck) -> bool) -> String {
    let mut runs: Vec<Vec<f64>> = Vec::new();
    let mut open = false;
    for c in checks {
        match (pick(c), open) {
            (true, true) => runs.last_mut().unwrap().push(c.estimate.percentile),
            (true, false) => runs.push(vec![c.estimate.percentile]),
            _ => {}
        }
        open = pick(c);
    }
    let label = |p: f64| format!("p{}", percent_text(p));
    runs.iter()
        .map(|r| match r.as_slice() {
            [one] => label(*one),
            [first, .., last] => format!("{}-{}", label(*first), label(*last)),
            [] => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1.6×`, `27×`.
fn times(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.0}×")
    }
}

/// Which of an op's histograms and intervals a table shows.
#[derive(Clone, Copy)]
enum Kind {
    Latency,
    Service,
}

impl Kind {
    fn of(self, s: &OpSummary) -> (&Hdr, &[Estimate]) {
        match self {
            Kind::Latency => (&s.latency_hdr, &s.latency_ci),
            Kind::Service => (&s.service_time_hdr, &s.service_time_ci),
        }
    }
}

/// One row per op type that carries something, then `total`: its rates,
/// each percentile with its interval inline, and the max.
fn inline_table(
    out: &mut String,
    percentiles: &[f64],
    (ops, total): (&BTreeMap<String, OpSummary>, &OpSummary),
    title: &str,
    kind: Kind,
) -> Result<(), RenderError> {
    let _ = writeln!(out, "{title}");
    let _ = write!(out, "{:<8}{:>10}{:>8}", "op", "ok/s", "err/s");
    for p in percentiles {
        let _ = write!(out, "{:>13}", percentile_label(*p));
    }
    let _ = writeln!(out, "{:>9}", "max");
    for (name, s) in text::table_rows(ops, total) {
        let (hdr, ci) = kind.of(s);
        let h = hdr.decode()?;
        let _ = write!(out, "{name:<8}{:>10.1}{:>8.1}", s.ok_rate, s.error_rate);
        for (i, p) in percentiles.iter().enumerate() {
            let cell = match (h.is_empty(), ci.get(i)) {
                (true, _) => "-".to_string(),
                (false, Some(e)) => format!("{} {}", us(e.value_us), plus_minus(e)),
                (false, None) => us(percentile_us(&h, *p)),
            };
            let _ = write!(out, " {cell:>12}");
        }
        let max = if h.is_empty() {
            "-".into()
        } else {
            us(max_us(&h))
        };
        let _ = writeln!(out, "{max:>9}");
    }
    out.push('\n');
    Ok(())
}

/// Whether service time says something latency does not: in an open loop
/// always (requests wait for their slot), else where requests waited in
/// the client: at some percentile service time lies outside latency's
/// interval, and by more than `MATERIAL` of it. (A closed loop's send
/// follows its slot's freeing by the client's own fraction of a µs, which
/// a tight interval tells apart but changes no conclusion.)
fn service_differs(r: &RunResult) -> bool {
    const MATERIAL: f64 = 0.05;
    if r.client.open_loop {
        return true;
    }
    let t = &r.total;
    t.service_time_ci.iter().zip(&t.latency_ci).any(|(s, l)| {
        let outside = s.value_us < l.lower_us || l.upper_us.is_some_and(|u| s.value_us > u);
        outside && (l.value_us - s.value_us).abs() > MATERIAL * l.value_us
    })
}

/// Gets, errors and connections on a line; an open loop's send lag under
/// it. Replies, bytes and the client's CPU are `--details`'.
fn counters(out: &mut String, r: &RunResult) {
    let mut parts: Vec<String> = text::gets_line(r).into_iter().collect();
    let errors = text::nonzero(&r.errors);
    parts.push(match errors.as_str() {
        "none" => "errors: none".into(),
        _ => paint(&format!("errors: {errors}"), Tone::Bad),
    });
    let c = &r.connections;
    if c.lost + c.reopened + c.reopen_failed > 0 {
        parts.extend(text::connections(r));
    }
    wrap(out, &parts.join("; "));
    let mut lag = String::new();
    text::send_lag(&mut lag, r);
    wrap_all(out, &lag);
}

/// `wrap` for each line of `text` (a table's rows, with no clauses to
/// break at, stay whole).
fn wrap_all(out: &mut String, text: &str) {
    for line in text.lines() {
        wrap(out, line);
    }
}

/// Where a headline's figures start, after its label.
const LABELLED: usize = 14;

/// Writes `line`, broken before a `; `-separated clause that would pass
/// `WIDTH` columns, each continuation indented two past the line's own
/// indent. (Clauses, not words: a crate's word wrap would split a setting
/// such as `get 90.0% / set 10.0%` across lines.)
fn wrap(out: &mut String, line: &str) {
    let indent = line.len() - line.trim_start().len();
    wrap_at(out, line, indent + 2);
}

/// `wrap`, each continuation indented `indent` columns. A clause too long
/// for a line of its own breaks at its commas, and a part still too long
/// at its spaces.
fn wrap_at(out: &mut String, line: &str, indent: usize) {
    let mut width = 0;
    let clauses: Vec<&str> = line.split("; ").collect();
    for (i, clause) in clauses.iter().enumerate() {
        if i > 0 {
            out.push(';');
            width += 1;
        }
        let pieces = pieces(clause, indent);
        let last = pieces.len() - 1;
        for (j, (sep, piece)) in pieces.into_iter().enumerate() {
            let sep = match (i, j) {
                (0, 0) => "",
                (_, 0) => " ",
                _ => sep,
            };
            // A clause's last piece keeps a column for the `;` after it.
            let semicolon = usize::from(j == last && i + 1 < clauses.len());
            let len = visible_len(piece) + semicolon;
            if width > 0 && width + sep.len() + len > WIDTH {
                let _ = write!(out, "{}\n{:indent$}", sep.trim_end(), "");
                width = indent;
            } else {
                out.push_str(sep);
                width += sep.len();
            }
            out.push_str(piece);
            width += len - semicolon;
        }
    }
    out.push('\n');
}

/// A clause's pieces, each with the separator before it: the clause whole
/// where it fits a line after `indent` columns, else its comma-separated
/// parts, each of those too long cut into words.
fn pieces(clause: &str, indent: usize) -> Vec<(&'static str, &str)> {
    let fits = |s: &str| indent + visible_len(s) <= WIDTH;
    if fits(clause) {
        return vec![("", clause)];
    }
    let mut all = Vec::new();
    for (k, part) in clause.split(", ").enumerate() {
        let sep = if k == 0 { "" } else { ", " };
        if fits(part) {
            all.push((sep, part));
            continue;
        }
        for (w, word) in part.split(' ').enumerate() {
            all.push((if w == 0 { sep } else { " " }, word));
        }
    }
    all
}

/// Columns `s` takes on a terminal: its characters less colour codes
/// (stripped as the writer strips them for a pipe).
fn visible_len(s: &str) -> usize {
    anstream::adapter::strip_str(s)
        .map(|part| part.chars().count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precision::Estimate;

    fn check(percentile: f64, met: bool) -> PercentileCheck {
        PercentileCheck {
            estimate: Estimate {
                percentile,
                ..Estimate::p99_for_tests(100.0, 2.0, 1_000)
            },
            relative_half_width: Some(0.02),
            target: 0.1,
            named: false,
            met,
            short_of: Vec::new(),
            longer: None,
            client_share_us: None,
        }
    }

    #[test]
    fn neighbours_that_pass_join_into_a_span() {
        let checks: Vec<PercentileCheck> = [(50.0, true), (90.0, false), (99.0, true)]
            .into_iter()
            .chain([(99.9, true), (99.99, true)])
            .map(|(p, met)| check(p, met))
            .collect();
        assert_eq!(spans(&checks, |c| c.met), "p50, p99-p99.99");
        assert_eq!(spans(&checks, |c| !c.met), "p90");
    }

    #[test]
    fn a_long_line_breaks_between_clauses_within_the_width() {
        let clause = "x".repeat(40);
        let line = format!(
            "  {clause}; {clause}; {}; {clause}",
            paint("NOT", Tone::Bad)
        );
        let mut out = String::new();
        wrap(&mut out, &line);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines.iter().all(|l| visible_len(l) <= WIDTH), "{out}");
        assert!(lines[1].starts_with(&format!("    {clause}")), "{out}");
        // Nothing lost but the break: the clauses in order.
        assert_eq!(out.replace(";\n    ", "; ").trim_end(), line);
        let mut short = String::new();
        wrap(&mut short, "  a; b");
        assert_eq!(short, "  a; b\n");
        // A clause over the width breaks at its commas.
        let long = format!("  {clause}, {clause}, {clause}; b");
        let mut out = String::new();
        wrap(&mut out, &long);
        assert_eq!(out, format!("  {clause}, {clause},\n    {clause}; b\n"));
    }

    #[test]
    fn colour_codes_take_no_columns() {
        assert_eq!(visible_len(&paint("NOT met", Tone::Caution)), 7);
        assert_eq!(visible_len("±4.2% µs"), 8);
    }
}
