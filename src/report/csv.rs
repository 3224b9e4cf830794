//! `--csv`: one row per interval per op type (and `total`), with the
//! run's percentiles computed from each interval's histogram.
//!
//! Written by hand rather than with the `csv` crate: every field is a
//! number or an op name, none needs quoting.

use super::Exporter;
use crate::result::{percentile_label, percentile_us, RunResult};
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
                let max = if h.is_empty() { 0 } else { h.max() };
                let _ = writeln!(
                    out,
                    ",{:.3},{},{},{}",
                    max as f64 / 1e3,
                    op.hits,
                    op.misses,
                    op.errors
                );
            }
        }
        Ok(out.into_bytes())
    }
}
