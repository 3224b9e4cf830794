//! `--csv`: one row per interval per op type (and `total`), with the
//! run's percentiles computed from each interval's histogram.
//!
//! Written by hand rather than with the `csv` crate: every field is a
//! number or an op name, none needs quoting.

use super::Exporter;
use crate::result::{percentile_label, percentile_us, RunResult};
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
}
