//! `--csv`: one row per interval per op type (and `total`), with the
//! run's percentiles computed from each interval's histogram and their
//! 95 % intervals (order statistics of the interval); for a scan
//! or a search, one row per point of the curve.
//!
//! Written with the `csv` crate (RFC 4180 quoting). Text cells come from
//! saved results and agents, so one that a spreadsheet would run as a
//! formula (`=`, `+`, `-`, `@`, tab, CR first) is made inert with a `'`.

use crate::report::RenderError;

use super::Exporter;
use crate::result::{percentile_label, percentile_us, Curve, RunResult};
use crate::stats::max_us;
use crate::stats::parts::PART_NAMES;

pub struct CsvExporter;

/// A text cell a spreadsheet will not run as a formula.
fn inert(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, RenderError> {
    w.into_inner()
        .map_err(|e| RenderError::CsvFlush(e.to_string()))
}

/// Lower and upper bound of each percentile's 95 % interval, µs.
fn interval_cells(h: &hdrhistogram::Histogram<u64>, percentiles: &[f64]) -> Vec<String> {
    let s = crate::precision::Samples::alone(h);
    percentiles
        .iter()
        .flat_map(|p| {
            let e = crate::precision::estimate(&s, *p);
            let upper = e.upper_us.map_or(String::new(), |u| format!("{u:.3}"));
            [format!("{:.3}", e.lower_us), upper]
        })
        .collect()
}

/// Each part's mean and p99 over an interval, µs; empty where unstamped.
fn part_cells(op: &crate::stats::IntervalOp) -> Result<Vec<String>, RenderError> {
    Ok(match op.parts()? {
        Some(p) => (p.hists.iter())
            .flat_map(|h| [h.mean() / 1e3, percentile_us(h, 99.0)].map(|v| format!("{v:.3}")))
            .collect(),
        None => vec![String::new(); 2 * PART_NAMES.len()],
    })
}

impl Exporter for CsvExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let r = &runs[0];
        let mut w = writer();
        let mut header: Vec<String> = ["time_s", "interval_s", "op", "count", "rate"]
            .map(String::from)
            .to_vec();
        header.extend(
            r.percentiles
                .iter()
                .map(|p| format!("{}_us", percentile_label(*p))),
        );
        header.extend(["max_us", "hits", "misses", "errors"].map(String::from));
        // Each percentile's 95 % interval over the interval's own samples;
        // an empty upper cell: no finite bound.
        for p in &r.percentiles {
            let label = percentile_label(*p);
            header.push(format!("{label}_lower_us"));
            header.push(format!("{label}_upper_us"));
        }
        // The latency's parts over the interval (`stats::parts`): empty
        // cells where the kernel stamped nothing.
        for part in PART_NAMES {
            header.push(format!("{part}_mean_us"));
            header.push(format!("{part}_p99_us"));
        }
        w.write_record(&header)?;
        for s in &r.intervals {
            for (name, op) in &s.ops {
                let h = op.latency_hdr.decode()?;
                let mut row = vec![
                    format!("{:.6}", s.time_s),
                    format!("{:.6}", s.duration_s),
                    inert(name),
                    op.count.to_string(),
                    format!("{:.3}", op.rate),
                ];
                row.extend(
                    r.percentiles
                        .iter()
                        .map(|p| format!("{:.3}", percentile_us(&h, *p))),
                );
                row.push(format!("{:.3}", max_us(&h)));
                row.extend([op.hits, op.misses, op.errors].map(|n| n.to_string()));
                row.extend(interval_cells(&h, &r.percentiles));
                row.extend(part_cells(op)?);
                w.write_record(&row)?;
            }
        }
        finish(w)
    }

    fn render_curve(&self, curve: &Curve) -> Result<Vec<u8>, RenderError> {
        let mut w = writer();
        w.write_record([
            "point",
            "offered_rate",
            "achieved_rate",
            "ok_rate",
            "group",
            "p50_us",
            "p99_us",
            "p999_us",
            "slo_us",
            "errors",
            "client_bound",
            "verdict",
            "repeat",
            "slo_lower_us",
            "slo_upper_us",
        ])?;
        for (i, p) in curve.points.iter().enumerate() {
            let row = [
                (i + 1).to_string(),
                format!("{:.3}", p.offered_rate),
                format!("{:.3}", p.achieved_rate),
                format!("{:.3}", p.ok_rate),
                inert(&p.group.to_string()),
                format!("{:.3}", p.p50_us),
                format!("{:.3}", p.p99_us),
                format!("{:.3}", p.p999_us),
                p.slo_us.map_or(String::new(), |v| format!("{v:.3}")),
                p.errors.to_string(),
                p.client_bound.to_string(),
                inert(p.verdict.map_or("", |v| v.name())),
                p.repeat.to_string(),
                p.slo_lower_us.map_or(String::new(), |v| format!("{v:.3}")),
                p.slo_upper_us.map_or(String::new(), |v| format!("{v:.3}")),
            ];
            w.write_record(&row)?;
        }
        finish(w)
    }

    fn takes_curve(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_made_inert() {
        assert_eq!(inert("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(inert("-1"), "'-1");
        assert_eq!(inert("get"), "get");
    }
}
