//! `--agent` runs: one row per agent beside the merged result.

use super::{OpSummary, RunResult};
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
    /// Answers received (error replies included), answers other than
    /// errors per second, and the latency percentiles, µs. A lost
    /// agent's are those of the intervals it sent.
    #[serde(default)]
    pub count: u64,
    pub rate: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub errors: u64,
    /// The agent's CPU per answer, ns (0 when it did not finish: its
    /// CPU comes with its whole result).
    pub cpu_ns_per_op: f64,
    pub client_bound: bool,
    /// Whether the agent sent its whole result.
    #[serde(default)]
    pub finished: bool,
    /// Set when the agent was lost: seconds after the start, and why.
    pub lost_at_s: Option<f64>,
    pub lost_why: Option<String>,
}

impl AgentSummary {
    /// An agent that sent its whole result.
    pub fn of(name: &str, offset_ns: i64, rtt_ns: i64, r: &RunResult) -> Self {
        AgentSummary {
            cpu_ns_per_op: r.client.cpu_ns_per_op,
            client_bound: r.client.client_bound,
            finished: true,
            ..Self::cut(name, offset_ns, rtt_ns, &r.total, r.duration_s)
        }
    }

    /// An agent cut short (lost, or the master stopped), as far as its
    /// intervals' `total` over their `secs` tells. The rate is worked out
    /// here from the count, never taken as the agent stated it.
    pub fn cut(name: &str, offset_ns: i64, rtt_ns: i64, total: &OpSummary, secs: f64) -> Self {
        AgentSummary {
            name: name.into(),
            clock_offset_ms: offset_ns as f64 / 1e6,
            rtt_ms: rtt_ns as f64 / 1e6,
            count: total.count,
            rate: total.ok as f64 / secs.max(1e-9),
            p50_us: total.latency_us.p50,
            p99_us: total.latency_us.p99,
            errors: total.errors,
            cpu_ns_per_op: 0.0,
            client_bound: false,
            finished: false,
            lost_at_s: None,
            lost_why: None,
        }
    }

    /// Marked lost `at_s` after the start, for `why`.
    pub fn lost(self, at_s: f64, why: &str) -> Self {
        AgentSummary {
            lost_at_s: Some(at_s),
            lost_why: Some(why.into()),
            ..self
        }
    }
}
