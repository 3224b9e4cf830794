//! `--csv`: one row per interval per op type (and `total`), with the
//! run's percentiles computed from each interval's histogram; for a scan
//! or a search, one row per point of the curve.
//!
//! Written by hand rather than with the `csv` crate: every field is a
//! number or an op name, none needs quoting.

use super::Exporter;
use crate::result::{percentile_label, percentile_us, Curve, RunResult};
use crate::stats::max_us;
use std::fmt::Write;

pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, String> {
        let r = &runs[0];
        let mut out = String::from("time_s,interval_s,op,count,rate");
        for p in &r.percentiles {
            let _ = write!(out, ",{}_us", percentile_label(*p));
        }
        out.push_str(",max_us,hits,misses,errors\n");
        for s in &r.intervals {
            for (name, op) in &s.ops {
                let h = op.latency_hdr.decode()?;
                let _ = write!(
                    out,
                    "{:.6},{:.6},{name},{},{:.3}",
                    s.time_s, s.duration_s, op.count, op.rate
                );
                for p in &r.percentiles {
                    let _ = write!(out, ",{:.3}", percentile_us(&h, *p));
                }
                let _ = writeln!(
                    out,
                    ",{:.3},{},{},{}",
                    max_us(&h),
                    op.hits,
                    op.misses,
                    op.errors
                );
            }
        }
        Ok(out.into_bytes())
    }

    fn render_curve(&self, curve: &Curve) -> Result<Vec<u8>, String> {
        let mut out = String::from(
            "point,offered_rate,achieved_rate,ok_rate,group,p50_us,p99_us,p999_us,slo_us,\
             errors,client_bound,verdict,repeat\n",
        );
        for (i, p) in curve.points.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{:.3},{:.3},{:.3},{},{:.3},{:.3},{:.3},{},{},{},{},{}",
                i + 1,
                p.offered_rate,
                p.achieved_rate,
                p.ok_rate,
                p.group,
                p.p50_us,
                p.p99_us,
                p.p999_us,
                p.slo_us.map_or(String::new(), |v| format!("{v:.3}")),
                p.errors,
                p.client_bound,
                p.verdict.map_or("", |v| v.name()),
                p.repeat
            );
        }
        Ok(out.into_bytes())
    }

    fn takes_curve(&self) -> bool {
        true
    }
}
