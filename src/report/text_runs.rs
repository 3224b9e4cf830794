//! Repeated runs in text: each figure's median over a set with its 95 %
//! bootstrap interval, and the changes from one set to another against the
//! A/A noise floor.

use crate::result::{Difference, Spread};
use std::fmt::Write;

/// One line per figure: median `[interval]`, min–max.
pub fn spreads(runs: usize, rows: &[Spread]) -> String {
    let mut out =
        format!("{runs} runs of one configuration: medians with their 95 % bootstrap interval\n");
    let _ = writeln!(
        out,
        "  {:<14}{:>12}  {:<20}{:>12}{:>12}",
        "", "median", "interval", "min", "max"
    );
    for s in rows {
        let interval = s.median_interval.map_or("-".to_string(), |[lo, hi]| {
            format!("[{:+.1} %, {:+.1} %]", lo * 100.0, hi * 100.0)
        });
        let _ = writeln!(
            out,
            "  {:<14}{:>12.1}  {:<20}{:>12.1}{:>12.1}",
            s.metric, s.median, interval, s.min, s.max
        );
    }
    out
}

/// One line per figure: the medians, the change with its interval, the
/// floor, and whether it is real.
pub fn differences(title: &str, rows: &[Difference]) -> String {
    let mut out = format!("{title}\n");
    let _ = writeln!(
        out,
        "  {:<14}{:>12}{:>12}{:>10}  {:<22}{:<12}verdict",
        "", "A median", "B median", "change", "95 % interval", "A/A floor"
    );
    for d in rows {
        let c = &d.change;
        let floor = d
            .floor
            .map_or("n/a".to_string(), |f| format!("±{:.1} %", f * 100.0));
        let verdict = match (d.real, d.better) {
            (true, true) => "real: better",
            (true, false) => "real: WORSE",
            _ if c.excludes_zero() => "within the A/A noise",
            _ => "no change shown",
        };
        let _ = writeln!(
            out,
            "  {:<14}{:>12.1}{:>12.1}{:>9.1}%  {:<22}{:<12}{verdict}",
            d.metric,
            d.a_median,
            d.b_median,
            c.relative * 100.0,
            format!("[{:+.1} %, {:+.1} %]", c.lower * 100.0, c.upper * 100.0),
            floor
        );
    }
    if rows.iter().any(|d| d.floor.is_none()) {
        out.push_str("  (n/a: fewer than 4 runs of A, no A/A floor; the interval alone decides)\n");
    }
    out
}
