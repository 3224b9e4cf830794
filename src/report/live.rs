//! The live line printed per interval with `-i`.

use crate::result::{percentile_label, percentile_us};
use crate::stats::IntervalSummary;
use std::fmt::Write;

/// `[  3.0s] get 45120/s p50 120.3 p99 340.1 µs | set ... | miss 0 err 0`,
/// with the run's percentiles, each from the interval's histogram.
pub fn live_line(s: &IntervalSummary, percentiles: &[f64]) -> String {
    let mut line = format!("[{:>7.1}s]", s.time_s);
    for (name, op) in &s.ops {
        if name == "total" || op.count == 0 {
            continue;
        }
        let _ = write!(line, " {name} {:.0}/s", op.rate);
        if let Ok(h) = op.latency_hdr.decode() {
            for p in percentiles {
                let _ = write!(
                    line,
                    " {} {:.1}",
                    percentile_label(*p),
                    percentile_us(&h, *p)
                );
            }
        }
        line.push_str(" µs |");
    }
    let _ = write!(line, " miss {} err {}", s.misses, s.errors);
    line
}
