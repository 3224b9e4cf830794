//! `--server-stats`: each server's own counters over the measured run and
//! per interval, beside the client's figures, with the stats round trip
//! and the raw `stats settings`, `stats slabs` and `stats items`.

use super::{quantiles, Quantiles};
use crate::server_stats::{figures, Figures, ServerLog, Stats};
use crate::stats::Hdr;
use crate::warnings::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerStatsRow {
    pub address: String,
    /// The server's `version` stat.
    pub version: Option<String>,
    /// From the first `stats` (the start of measurement) to the last (the
    /// end); null when fewer than two were answered.
    pub run: Option<Figures>,
    /// Every other numeric stat that changed over the run: end − start.
    pub moved: BTreeMap<String, f64>,
    /// Between consecutive `stats`, each ending `time_s` after the start.
    pub intervals: Vec<ServerInterval>,
    /// Every `stats` round trip on the kept connection, µs (connects
    /// apart, in `connect_us`).
    pub stats_rtt_us: Quantiles,
    pub stats_rtt_hdr: Hdr,
    pub connect_us: Vec<f64>,
    /// Queries that failed (the server died, refused a group, ...), and
    /// the first few described.
    pub failures: u64,
    pub errors: Vec<String>,
    pub settings: Option<Stats>,
    pub slabs_start: Option<Stats>,
    pub slabs_end: Option<Stats>,
    pub items_start: Option<Stats>,
    pub items_end: Option<Stats>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInterval {
    pub time_s: f64,
    #[serde(flatten)]
    pub figures: Figures,
}

impl ServerStatsRow {
    /// A row per server whose `stats` were read, in the order of
    /// `addresses`.
    pub fn rows(out: &crate::engine::Outcome, addresses: &[String]) -> Vec<Self> {
        out.server_logs
            .iter()
            .flatten()
            .zip(addresses)
            .map(|(log, address)| ServerStatsRow::build(address, log))
            .collect()
    }

    pub fn build(address: &str, log: &ServerLog) -> Self {
        let first = log.samples.first();
        let last = log.samples.last().filter(|_| log.samples.len() > 1);
        let peak = log
            .samples
            .iter()
            .filter_map(|s| figures::number(&s.stats, "curr_connections"))
            .reduce(f64::max)
            .map(|p| p as u64);
        let run = first.zip(last).map(|(a, b)| Figures {
            peak_connections: peak,
            ..Figures::between(&a.stats, &b.stats, b.at_s - a.at_s)
        });
        let moved = first
            .zip(last)
            .map(|(a, b)| figures::moved(&a.stats, &b.stats))
            .unwrap_or_default();
        let intervals = log
            .samples
            .windows(2)
            .map(|w| ServerInterval {
                time_s: w[1].at_s,
                figures: Figures::between(&w[0].stats, &w[1].stats, w[1].at_s - w[0].at_s),
            })
            .collect();
        let [slabs_start, slabs_end] = log.slabs.clone();
        let [items_start, items_end] = log.items.clone();
        ServerStatsRow {
            address: address.to_string(),
            version: first.and_then(|s| s.stats.get("version").cloned()),
            run,
            moved,
            intervals,
            stats_rtt_us: quantiles(&log.rtt),
            stats_rtt_hdr: Hdr::encode(&log.rtt),
            connect_us: log.connects.iter().map(|&ns| ns as f64 / 1e3).collect(),
            failures: log.failures,
            errors: log.errors.clone(),
            settings: log.settings.clone(),
            slabs_start,
            slabs_end,
            items_start,
            items_end,
        }
    }
}

/// What this run's answers account for on one server: lookups (keys a
/// retrieval asked for, answered) and hits, with the failed requests as
/// the slack (the server may have answered them).
pub struct ClientCounts {
    pub lookups: u64,
    pub hits: u64,
    pub failures: u64,
}

/// `--server-stats`' cross-check: a server whose lookups or hits over the
/// run differ from what this run's answers account for.
pub fn cross_check(rows: &[ServerStatsRow], client: &[ClientCounts]) -> Vec<Warning> {
    let mut w = Vec::new();
    for (row, c) in rows.iter().zip(client) {
        let Some(run) = &row.run else { continue };
        // A count the server does not report is not checked.
        let checks = [
            (
                "lookups (get_hits + get_misses)",
                run.get_hits.zip(run.get_misses).map(|(h, m)| h + m),
                c.lookups,
            ),
            ("hits (get_hits)", run.get_hits, c.hits),
        ];
        for (what, server_count, client_count) in checks {
            let Some(server_count) = server_count else {
                continue;
            };
            let slack = c.failures + (client_count / 100).max(10);
            if server_count.abs_diff(client_count) > slack {
                w.push(Warning::ServerCountsDisagree {
                    server: row.address.clone(),
                    what: what.into(),
                    server_count,
                    client_count,
                });
            }
        }
    }
    w
}

/// Per server, in `addrs` order: what the run's measured answers (and the
/// replication-lag probe's polls) account for.
pub fn client_counts(out: &crate::engine::Outcome) -> Vec<ClientCounts> {
    let t = &out.total;
    let mut counts: Vec<ClientCounts> = if t.servers.is_empty() {
        vec![ClientCounts {
            lookups: t.hits + t.misses,
            hits: t.hits,
            failures: t.failures(),
        }]
    } else {
        t.servers
            .iter()
            .map(|s| ClientCounts {
                lookups: s.hits + s.misses,
                hits: s.hits,
                failures: s.failures,
            })
            .collect()
    };
    let polls = out.replication_lag.iter().flat_map(|l| &l.polls);
    for (c, &(lookups, hits)) in counts.iter_mut().zip(polls) {
        c.lookups += lookups;
        c.hits += hits;
    }
    counts
}
