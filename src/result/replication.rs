//! A replication run's own figures (`--rep-write`): reads a replica
//! answered and how many missed, apart from every other miss, and the
//! replication lag the probe measured.

use super::merge::ratio;
use super::{quantiles, Quantiles};
use crate::engine::LagRecorder;
use crate::spec::RunSpec;
use crate::stats::{Hdr, ReplicaReads};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicationSummary {
    /// The first `writers` of `servers` took the writes.
    pub writers: usize,
    pub servers: usize,
    /// Measured reads of loaded keys answered by a server the key was not
    /// written to.
    pub replica_reads: u64,
    /// Those that missed: replication misses.
    pub replica_misses: u64,
    /// `replica_misses / replica_reads` (0 with none).
    pub replica_miss_ratio: f64,
    /// Every other miss of the run: reads the key's own writer answered
    /// (every other server was down), planned misses (`--miss-ratio`).
    pub other_misses: u64,
    /// The lag probe's figures; `None` with `--rep-lag-rate 0`.
    pub lag: Option<ReplicationLag>,
}

/// Write acknowledged → visible on another server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicationLag {
    /// Probes started per second, and the wait between polls, µs.
    pub rate: f64,
    pub poll_us: f64,
    /// Probes whose write was acknowledged; of them, found on the other
    /// server, and not found within `--timeout`.
    pub probes: u64,
    pub seen: u64,
    /// Of the probes seen, those the first poll found: their lag is
    /// below the resolution.
    #[serde(default)]
    pub first_poll: u64,
    pub unseen: u64,
    /// Probes a connection, a refused write or a bad reply cut short.
    pub failed: u64,
    /// Of the probes seen: acknowledgement → answer of the poll that found
    /// the key, µs (an upper bound; see `poll_rtt_us`).
    pub lag_us: Quantiles,
    pub lag_hdr: Hdr,
    /// Round trip of every poll, µs: with the poll gap, the resolution.
    pub poll_rtt_us: Quantiles,
    pub poll_rtt_hdr: Hdr,
}

impl ReplicationSummary {
    /// The summary of a replication run (`None` for any other).
    pub fn build(
        spec: &RunSpec,
        reads: &ReplicaReads,
        misses: u64,
        lag: Option<&LagRecorder>,
    ) -> Option<Self> {
        let r = spec.server.replication.as_ref()?;
        Some(ReplicationSummary {
            writers: r.writers,
            servers: spec.target.servers.len(),
            replica_reads: reads.reads,
            replica_misses: reads.misses,
            replica_miss_ratio: ratio(reads.misses, reads.reads),
            other_misses: misses.saturating_sub(reads.misses),
            lag: lag.map(|l| ReplicationLag::build(l, r.lag_rate, r.lag_poll.as_secs_f64() * 1e6)),
        })
    }

    /// Runs made at the same time: counts and histograms added.
    pub fn merge(parts: &[&ReplicationSummary]) -> Result<Option<Self>, super::ResultError> {
        let Some(first) = parts.first() else {
            return Ok(None);
        };
        let reads = parts.iter().map(|p| p.replica_reads).sum();
        let misses = parts.iter().map(|p| p.replica_misses).sum();
        let lags: Vec<&ReplicationLag> = parts.iter().filter_map(|p| p.lag.as_ref()).collect();
        let lag = if lags.is_empty() {
            None
        } else {
            let rec = LagRecorder {
                probes: lags.iter().map(|l| l.probes).sum(),
                seen: lags.iter().map(|l| l.seen).sum(),
                first_poll: lags.iter().map(|l| l.first_poll).sum(),
                unseen: lags.iter().map(|l| l.unseen).sum(),
                failed: lags.iter().map(|l| l.failed).sum(),
                lag: Hdr::sum(lags.iter().map(|l| &l.lag_hdr))?,
                poll_rtt: Hdr::sum(lags.iter().map(|l| &l.poll_rtt_hdr))?,
                polls: Vec::new(),
            };
            let rate = lags.iter().map(|l| l.rate).sum();
            Some(ReplicationLag::build(&rec, rate, lags[0].poll_us))
        };
        Ok(Some(ReplicationSummary {
            writers: first.writers,
            servers: first.servers,
            replica_reads: reads,
            replica_misses: misses,
            replica_miss_ratio: ratio(misses, reads),
            other_misses: parts.iter().map(|p| p.other_misses).sum(),
            lag,
        }))
    }
}

impl ReplicationLag {
    fn build(l: &LagRecorder, rate: f64, poll_us: f64) -> Self {
        ReplicationLag {
            rate,
            poll_us,
            probes: l.probes,
            seen: l.seen,
            first_poll: l.first_poll,
            unseen: l.unseen,
            failed: l.failed,
            lag_us: quantiles(&l.lag),
            lag_hdr: Hdr::encode(&l.lag),
            poll_rtt_us: quantiles(&l.poll_rtt),
            poll_rtt_hdr: Hdr::encode(&l.poll_rtt),
        }
    }
}
