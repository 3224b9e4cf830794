//! `--agent` runs: one row per agent beside the merged result.

use super::RunResult;
use serde::{Deserialize, Serialize};

/// What one agent offered and measured, or when and why it was lost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentSummary {
    /// The agent's address as given to `--agent`.
    pub name: String,
    /// The agent's clock minus the master's, ms, and the round trip it
    /// was measured over (the offset's uncertainty is half of it).
    pub clock_offset_ms: f64,
    pub rtt_ms: f64,
    /// Answers per second, and its latency percentiles, µs.
    pub rate: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub errors: u64,
    /// The agent's CPU per answer, ns.
    pub cpu_ns_per_op: f64,
    pub client_bound: bool,
    /// Set when the agent was lost: seconds after the start, and why.
    pub lost_at_s: Option<f64>,
    pub lost_why: Option<String>,
}

impl AgentSummary {
    pub fn of(name: &str, offset_ns: i64, rtt_ns: i64, r: &RunResult) -> Self {
        AgentSummary {
            name: name.into(),
            clock_offset_ms: offset_ns as f64 / 1e6,
            rtt_ms: rtt_ns as f64 / 1e6,
            rate: r.total.rate,
            p50_us: r.total.latency_us.p50,
            p99_us: r.total.latency_us.p99,
            errors: r.total.errors,
            cpu_ns_per_op: r.client.cpu_ns_per_op,
            client_bound: r.client.client_bound,
            lost_at_s: None,
            lost_why: None,
        }
    }

    pub fn lost(name: &str, offset_ns: i64, rtt_ns: i64, at_s: f64, why: &str) -> Self {
        AgentSummary {
            name: name.into(),
            clock_offset_ms: offset_ns as f64 / 1e6,
            rtt_ms: rtt_ns as f64 / 1e6,
            rate: 0.0,
            p50_us: 0.0,
            p99_us: 0.0,
            errors: 0,
            cpu_ns_per_op: 0.0,
            client_bound: false,
            lost_at_s: Some(at_s),
            lost_why: Some(why.into()),
        }
    }
}
