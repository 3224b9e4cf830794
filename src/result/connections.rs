//! The `connections` section of a result: twemperf's connection report
//! (rates, connect time, lifetime, sizes, failures by class), with
//! histograms instead of averages.

use super::{quantiles, Quantiles, ResultError};
use crate::engine::Outcome;
use crate::stats::{ConnError, Hdr, Sizes};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connections {
    /// Held connections opened before measuring (`--connections` per
    /// server).
    pub opened: usize,
    pub lost: u64,
    /// Lost or timed-out connections opened again.
    pub reopened: u64,
    /// Attempts to reopen a lost connection that failed.
    #[serde(default)]
    pub reopen_failed: u64,
    /// Connects completed while measuring (`--num-conns` connections).
    #[serde(default)]
    pub connects: u64,
    /// Of those, closed again.
    #[serde(default)]
    pub closed: u64,
    /// `connects` per second of measured time.
    #[serde(default)]
    pub rate: f64,
    /// The most connections open (or opening) at once while measuring.
    #[serde(default)]
    pub max_open: usize,
    /// connect() → connected, µs, and its histogram (ns).
    #[serde(default)]
    pub connect_time_us: Quantiles,
    #[serde(default = "Hdr::empty")]
    pub connect_time_hdr: Hdr,
    /// `--tls`: handshakes completed while measuring, per second, and
    /// connected → handshake done, µs, with its histogram (ns).
    #[serde(default)]
    pub handshakes: u64,
    #[serde(default)]
    pub handshake_rate: f64,
    #[serde(default)]
    pub handshake_time_us: Quantiles,
    #[serde(default = "Hdr::empty")]
    pub handshake_time_hdr: Hdr,
    /// Connected → closed, µs, and its histogram (ns).
    #[serde(default)]
    pub lifetime_us: Quantiles,
    #[serde(default = "Hdr::empty")]
    pub lifetime_hdr: Hdr,
    /// Bytes per request and per response.
    #[serde(default)]
    pub request_size: SizeSummary,
    #[serde(default)]
    pub response_size: SizeSummary,
    /// Failures in twemperf's classes: `client_timo` (connections closed
    /// for an unanswered request), `socket_timo`, `connrefused`,
    /// `connreset`, `fd_unavail`, `ftab_full`, `addrunavail`, `other`.
    #[serde(default)]
    pub errors: BTreeMap<String, u64>,
}

/// Sizes in bytes.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct SizeSummary {
    pub count: u64,
    pub mean: f64,
    pub min: u64,
    pub max: u64,
    pub stdev: f64,
}

impl SizeSummary {
    fn of(s: &Sizes) -> Self {
        SizeSummary {
            count: s.count,
            mean: s.mean(),
            min: s.min,
            max: s.max,
            stdev: s.stdev(),
        }
    }

    /// The summary of every size of `parts` together (exact: sums and sums
    /// of squares follow from count, mean and stdev).
    fn combine(parts: impl Iterator<Item = SizeSummary>) -> Self {
        let (mut n, mut sum, mut sum_sq) = (0u64, 0.0, 0.0);
        let (mut min, mut max) = (u64::MAX, 0);
        for p in parts.filter(|p| p.count > 0) {
            n += p.count;
            sum += p.mean * p.count as f64;
            sum_sq += (p.stdev * p.stdev + p.mean * p.mean) * p.count as f64;
            min = min.min(p.min);
            max = max.max(p.max);
        }
        if n == 0 {
            return SizeSummary::default();
        }
        let mean = sum / n as f64;
        SizeSummary {
            count: n,
            mean,
            min,
            max,
            stdev: (sum_sq / n as f64 - mean * mean).max(0.0).sqrt(),
        }
    }
}

impl Connections {
    pub fn build(out: &Outcome, secs: f64) -> Self {
        let t = &out.total;
        let c = &t.conns;
        let mut errors: BTreeMap<String, u64> = ConnError::ALL
            .iter()
            .map(|e| (e.name().to_string(), c.error_count(*e)))
            .collect();
        errors.insert("client_timo".into(), c.client_timo);
        Connections {
            opened: out.connections,
            lost: t.connections_lost,
            reopened: t.connections_reopened,
            reopen_failed: t.reopen_failures,
            connects: c.opened,
            closed: c.closed,
            rate: c.opened as f64 / secs,
            max_open: out.max_open,
            connect_time_us: quantiles(&c.connect_time),
            connect_time_hdr: Hdr::encode(&c.connect_time),
            handshakes: c.handshake_time.len(),
            handshake_rate: c.handshake_time.len() as f64 / secs,
            handshake_time_us: quantiles(&c.handshake_time),
            handshake_time_hdr: Hdr::encode(&c.handshake_time),
            lifetime_us: quantiles(&c.lifetime),
            lifetime_hdr: Hdr::encode(&c.lifetime),
            request_size: SizeSummary::of(&c.request_size),
            response_size: SizeSummary::of(&c.response_size),
            errors,
        }
    }

    /// Every failure, client-timo included (twemperf's "Errors: total").
    pub fn failures(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Runs side by side (`report --merge`): counts and histograms add;
    /// the most open at once is at most the sum of each run's.
    pub fn merge(runs: &[&Connections], secs: f64) -> Result<Self, ResultError> {
        let sum = |f: fn(&Connections) -> u64| runs.iter().map(|c| f(c)).sum::<u64>();
        let connect = Hdr::sum(runs.iter().map(|c| &c.connect_time_hdr))?;
        let lifetime = Hdr::sum(runs.iter().map(|c| &c.lifetime_hdr))?;
        let handshake = Hdr::sum(runs.iter().map(|c| &c.handshake_time_hdr))?;
        let errors = super::merge::sum_maps(runs.iter().map(|c| &c.errors));
        let connects = sum(|c| c.connects);
        Ok(Connections {
            opened: runs.iter().map(|c| c.opened).sum(),
            lost: sum(|c| c.lost),
            reopened: sum(|c| c.reopened),
            reopen_failed: sum(|c| c.reopen_failed),
            connects,
            closed: sum(|c| c.closed),
            rate: connects as f64 / secs.max(1e-9),
            max_open: runs.iter().map(|c| c.max_open).sum(),
            connect_time_us: quantiles(&connect),
            connect_time_hdr: Hdr::encode(&connect),
            handshakes: handshake.len(),
            handshake_rate: handshake.len() as f64 / secs.max(1e-9),
            handshake_time_us: quantiles(&handshake),
            handshake_time_hdr: Hdr::encode(&handshake),
            lifetime_us: quantiles(&lifetime),
            lifetime_hdr: Hdr::encode(&lifetime),
            request_size: SizeSummary::combine(runs.iter().map(|c| c.request_size)),
            response_size: SizeSummary::combine(runs.iter().map(|c| c.response_size)),
            errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_summaries_combine_exactly() {
        let (mut a, mut b, mut all) = (Sizes::default(), Sizes::default(), Sizes::default());
        for n in 1..=50u64 {
            a.record(n * 3);
            all.record(n * 3);
        }
        for n in 1..=20u64 {
            b.record(n * n);
            all.record(n * n);
        }
        let merged = SizeSummary::combine([SizeSummary::of(&a), SizeSummary::of(&b)].into_iter());
        let direct = SizeSummary::of(&all);
        assert_eq!(
            (merged.count, merged.min, merged.max),
            (direct.count, direct.min, direct.max)
        );
        assert!((merged.mean - direct.mean).abs() < 1e-9);
        assert!((merged.stdev - direct.stdev).abs() < 1e-6);
    }
}
