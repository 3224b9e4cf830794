//! What a master believes of an agent: only what adds up. Every message
//! an agent sends is checked before any of it reaches the report: counts
//! against the histograms they summarise, times finite and inside the
//! run the master saw, op names from the known set. An agent whose
//! message fails is lost (`--on-agent-loss`), never a number in the
//! report. Text an agent chose (its host name) is shown escaped.

use crate::result::{OpSummary, RunResult};
use crate::stats::IntervalSummary;
use crate::workload::OpKind;

/// The longest text of an agent's shown, characters: a host name, an op
/// name or a message.
const MAX_SHOWN: usize = 512;

/// Whether `name` is an op mcbench records (or `total`).
pub fn known_op(name: &str) -> bool {
    name == "total" || OpKind::ALL.iter().any(|op| op.name() == name)
}

/// A time an agent sent: finite, not negative, within `limit_s`.
fn time_within(what: &str, s: f64, limit_s: f64) -> Result<(), String> {
    if s.is_finite() && (0.0..=limit_s).contains(&s) {
        Ok(())
    } else {
        Err(format!(
            "{what} of {s} s, outside the {limit_s:.1} s the run has lasted"
        ))
    }
}

/// More requests a second than any one client machine sends (loopback
/// memcached tops out near a few million): a count past it over the run's
/// time is made up, however its histogram agrees.
const MAX_RATE: f64 = 100e6;

/// One op of a result: its count is its histogram's, its answered
/// requests are among them, and no more than `limit_s` could hold.
fn op(name: &str, o: &OpSummary, limit_s: f64) -> Result<(), String> {
    if !known_op(name) {
        return Err(format!(
            "an op named {:?}, which mcbench does not send",
            shown(name)
        ));
    }
    let recorded = o.latency_hdr.decode()?.len();
    if recorded != o.count {
        return Err(format!(
            "{name}: a count of {} for a histogram of {recorded}",
            o.count
        ));
    }
    if o.ok > o.count {
        return Err(format!("{name}: {} answered of {} sent", o.ok, o.count));
    }
    if o.count as f64 > MAX_RATE * limit_s {
        return Err(format!("{name}: {} requests in {limit_s:.1} s", o.count));
    }
    if let Some(parts) = &o.latency_parts {
        parts
            .recorder(o.count)
            .map_err(|e| format!("{name}: {e}"))?;
    }
    answered_keys(name, o.hits, o.misses, o.count)
}

/// Keys found and not found: no more than the requests could ask.
fn answered_keys(name: &str, hits: u64, misses: u64, count: u64) -> Result<(), String> {
    let most = count.saturating_mul(u64::from(crate::spec::MAX_MULTIGET_KEYS));
    if hits.saturating_add(misses) > most {
        return Err(format!(
            "{name}: {hits} hits and {misses} misses for {count} requests"
        ));
    }
    Ok(())
}

/// An agent's whole result, `elapsed_s` after the start the master named
/// (with a second's grace for the clocks).
pub fn result(r: &RunResult, elapsed_s: f64) -> Result<(), String> {
    let limit = elapsed_s.max(0.0) + 1.0;
    time_within("a duration", r.duration_s, limit)?;
    op("total", &r.total, limit)?;
    for (name, o) in &r.ops {
        op(name, o, limit)?;
    }
    Ok(())
}

/// An interval as it closed on the agent, `elapsed_s` after the start.
pub fn interval(i: &IntervalSummary, elapsed_s: f64) -> Result<(), String> {
    let limit = elapsed_s.max(0.0) + 1.0;
    time_within("an interval ending", i.time_s, limit)?;
    time_within("an interval", i.duration_s, limit)?;
    if let Some(name) = i.ops.keys().find(|name| !known_op(name)) {
        return Err(format!(
            "an op named {:?}, which mcbench does not send",
            shown(name)
        ));
    }
    for (name, o) in &i.ops {
        answered_keys(name, o.hits, o.misses, o.count)?;
    }
    Ok(())
}

/// Text an agent chose, as it may be printed: control characters (a
/// terminal's escape sequences) escaped, and cut to a readable length.
pub fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_SHOWN)
        .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
            if c.is_control() {
                Box::new(c.escape_default())
            } else {
                Box::new(std::iter::once(c))
            }
        })
        .collect();
    if text.chars().count() > MAX_SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_reach_no_terminal_and_unknown_ops_are_refused() {
        assert_eq!(shown("host\u{1b}[2J"), "host\\u{1b}[2J");
        assert_eq!(shown(&"a".repeat(600)).chars().count(), MAX_SHOWN + 1);
        assert!(known_op("get") && known_op("mget") && known_op("total"));
        assert!(!known_op("=HYPERLINK(\"x\")"));
        assert!(time_within("a duration", f64::NAN, 10.0).is_err());
        assert!(time_within("a duration", 11.5, 10.0).is_err());
        assert!(time_within("a duration", 9.0, 10.0).is_ok());
        assert!(answered_keys("get", 10_000, 0, 1).is_ok());
        assert!(answered_keys("get", 10_000, 1, 1).is_err());
        assert!(answered_keys("get", u64::MAX, u64::MAX, 3).is_err());
    }
}
