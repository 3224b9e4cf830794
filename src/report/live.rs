//! The live line printed per interval with `-i`.

use crate::stats::IntervalSummary;
use std::fmt::Write;

/// `[  3.0s] get 45120/s p50 120.3 p99 340.1 µs | set ... | miss 0 err 0`
pub fn live_line(s: &IntervalSummary) -> String {
    let mut line = format!("[{:>7.1}s]", s.time_s);
    for (name, op) in &s.ops {
        if *name == "total" || op.count == 0 {
            continue;
        }
        let _ = write!(
            line,
            " {name} {:.0}/s p50 {:.1} p99 {:.1} µs |",
            op.rate, op.p50_us, op.p99_us
        );
    }
    let _ = write!(line, " miss {} err {}", s.misses, s.errors);
    line
}
