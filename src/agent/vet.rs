//! What a master believes of an agent: only what adds up. Every message
//! an agent sends is checked before any of it reaches the report: counts
//! against the histograms they summarise, times finite and inside the
//! run the master saw, op names from the known set. An agent whose
//! message fails is lost (`--on-agent-loss`), never a number in the
//! report. Text an agent chose (its host name) is shown escaped.

use super::AgentDataError;
use crate::result::{checked, RunResult};
use crate::stats::IntervalSummary;

/// A time an agent sent: finite, not negative, within `limit_s`.
fn time_within(what: &'static str, s: f64, limit_s: f64) -> Result<(), AgentDataError> {
    if s.is_finite() && (0.0..=limit_s).contains(&s) {
        Ok(())
    } else {
        Err(AgentDataError::OutsideRun { what, s, limit_s })
    }
}

/// An agent's whole result, `elapsed_s` after the start the master named
/// (with a second's grace for the clocks): as any result from outside
/// (`result::checked`), and no longer than the run has lasted.
pub fn result(r: &RunResult, elapsed_s: f64) -> Result<(), AgentDataError> {
    let limit = elapsed_s.max(0.0) + 1.0;
    time_within("a duration", r.duration_s, limit)?;
    checked::check(r).map_err(|e| AgentDataError::Unchecked(shown(&e.to_string())))
}

/// An interval as it closed on the agent, `elapsed_s` after the start.
pub fn interval(i: &IntervalSummary, elapsed_s: f64) -> Result<(), AgentDataError> {
    let limit = elapsed_s.max(0.0) + 1.0;
    time_within("an interval ending", i.time_s, limit)?;
    time_within("an interval", i.duration_s, limit)?;
    checked::interval(i).map_err(|e| AgentDataError::Unchecked(shown(&e.to_string())))
}

pub use crate::untrusted::shown;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_reach_no_terminal_and_times_stay_in_the_run() {
        assert_eq!(shown("host\u{1b}[2J"), "host\\u{1b}[2J");
        assert!(time_within("a duration", f64::NAN, 10.0).is_err());
        assert!(time_within("a duration", 11.5, 10.0).is_err());
        assert!(time_within("a duration", 9.0, 10.0).is_ok());
    }
}
