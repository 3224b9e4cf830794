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
    /// Answered without an error reply, and their rate: the throughput.
    #[serde(default)]
    pub ok: u64,
    #[serde(default)]
    pub ok_rate: f64,
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
    /// A row per server, in the order of `addresses`.
    pub fn rows(recorders: &[ServerRecorder], addresses: &[String], secs: f64) -> Vec<Self> {
        recorders
            .iter()
            .zip(addresses)
            .map(|(r, address)| ServerSummary::build(address, r, secs))
            .collect()
    }

    pub fn build(address: &str, r: &ServerRecorder, secs: f64) -> Self {
        ServerSummary {
            address: address.to_string(),
            count: r.latency.len(),
            rate: r.latency.len() as f64 / secs,
            ok: r.latency.len().saturating_sub(r.error_replies),
            ok_rate: r.latency.len().saturating_sub(r.error_replies) as f64 / secs,
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
    pub fn merge(
        runs: &[&[ServerSummary]],
        secs: f64,
    ) -> Result<Vec<ServerSummary>, super::ResultError> {
        let mut addresses: Vec<&str> = Vec::new();
        for row in runs.iter().flat_map(|r| r.iter()) {
            if !addresses.contains(&row.address.as_str()) {
                addresses.push(&row.address);
            }
        }
        addresses
            .into_iter()
            .map(|address| {
                let rows: Vec<&ServerSummary> = runs
                    .iter()
                    .flat_map(|r| r.iter())
                    .filter(|row| row.address == address)
                    .collect();
                let merged = ServerRecorder {
                    latency: Hdr::sum(rows.iter().map(|r| &r.latency_hdr))?,
                    hits: rows.iter().map(|r| r.hits).sum(),
                    misses: rows.iter().map(|r| r.misses).sum(),
                    error_replies: rows.iter().map(|r| r.count.saturating_sub(r.ok)).sum(),
                    failures: rows.iter().map(|r| r.errors).sum(),
                };
                Ok(ServerSummary::build(address, &merged, secs))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(address: &str, latencies_us: &[u64], errors: u64) -> ServerSummary {
        let mut r = ServerRecorder::default();
        for l in latencies_us {
            r.latency.record(l * 1000).unwrap();
        }
        r.failures = errors;
        r.hits = latencies_us.len() as u64;
        ServerSummary::build(address, &r, 1.0)
    }

    #[test]
    fn rows_merge_by_address_with_their_histograms() {
        let a = [row("x:1", &[100; 90], 1), row("y:1", &[5], 0)];
        let b = [row("x:1", &[1000; 10], 2)];
        let merged = ServerSummary::merge(&[&a, &b], 2.0).unwrap();
        assert_eq!(merged.len(), 2);
        let x = &merged[0];
        assert_eq!(
            (x.address.as_str(), x.count, x.hits, x.errors),
            ("x:1", 100, 100, 3)
        );
        assert_eq!(x.rate, 50.0);
        // p90 from the added histograms, not from either run's.
        assert!(
            (99.0..=101.0).contains(&x.latency_us.p90),
            "{}",
            x.latency_us.p90
        );
        assert!(
            (990.0..=1010.0).contains(&x.latency_us.p99),
            "{}",
            x.latency_us.p99
        );
        assert_eq!(merged[1].count, 1);
    }
}
