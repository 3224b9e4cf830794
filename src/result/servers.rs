//! Per-server rows of a run with several servers: the load each server
//! got where the keys sent it, and how it answered.

use super::{quantiles, Quantiles};
use crate::stats::{Hdr, ServerRecorder};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerSummary {
    pub address: String,
    /// Answered requests (error replies included).
    pub count: u64,
    pub rate: f64,
    pub hits: u64,
    pub misses: u64,
    /// Failed requests: error replies, lost, timed out, no connection.
    pub errors: u64,
    pub error_rate: f64,
    /// Intended send → answer, µs, at 2 significant digits.
    pub latency_us: Quantiles,
    pub latency_hdr: Hdr,
}

impl ServerSummary {
    pub fn build(address: &str, r: &ServerRecorder, secs: f64) -> Self {
        ServerSummary {
            address: address.to_string(),
            count: r.latency.len(),
            rate: r.latency.len() as f64 / secs,
            hits: r.hits,
            misses: r.misses,
            errors: r.failures,
            error_rate: r.failures as f64 / secs,
            latency_us: quantiles(&r.latency),
            latency_hdr: Hdr::encode(&r.latency),
        }
    }

    /// Rows of runs made at the same time, merged by address (exact
    /// histogram addition).
    pub fn merge(runs: &[&[ServerSummary]], secs: f64) -> Result<Vec<ServerSummary>, String> {
        let mut merged: Vec<(String, ServerRecorder)> = Vec::new();
        for row in runs.iter().flat_map(|r| r.iter()) {
            let i = match merged.iter().position(|(a, _)| *a == row.address) {
                Some(i) => i,
                None => {
                    merged.push((row.address.clone(), ServerRecorder::default()));
                    merged.len() - 1
                }
            };
            let r = &mut merged[i].1;
            let h = row.latency_hdr.decode()?;
            r.latency
                .add(&h)
                .map_err(|e| format!("server {}: {e}", row.address))?;
            r.hits += row.hits;
            r.misses += row.misses;
            r.failures += row.errors;
        }
        Ok(merged
            .iter()
            .map(|(a, r)| ServerSummary::build(a, r, secs))
            .collect())
    }
}
