//! The text report's rows of an `--agent` run: one per agent, the merged
//! result being everything else.

use crate::result::RunResult;
use std::fmt::Write;

pub fn write(out: &mut String, r: &RunResult) {
    if r.agents.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Agents ({}; the tables above are their merged histograms)",
        r.agents.len()
    );
    let _ = writeln!(
        out,
        "  {:<24} {:>12} {:>10} {:>10} {:>8} {:>9} {:>10}  verdict",
        "agent", "ok ops/s", "p50 µs", "p99 µs", "errors", "cpu ns/op", "offset ms"
    );
    for a in &r.agents {
        let verdict = match (&a.lost_why, a.client_bound) {
            (Some(why), _) => format!("LOST at {:.1} s: {why}", a.lost_at_s.unwrap_or(0.0)),
            (None, _) if !a.finished => "stopped (intervals so far)".into(),
            (None, true) => "CLIENT-BOUND".into(),
            (None, false) => "ok".into(),
        };
        let _ = writeln!(
            out,
            "  {:<24} {:>12.0} {:>10.1} {:>10.1} {:>8} {:>9.0} {:>+10.3}  {verdict}",
            a.name, a.rate, a.p50_us, a.p99_us, a.errors, a.cpu_ns_per_op, a.clock_offset_ms
        );
    }
    out.push('\n');
}
