//! The text report's lines about several servers: how keys were placed,
//! one row per server, and a replication run's misses and lag.

use crate::result::RunResult;
use std::fmt::Write;

/// How keys met servers, when there are several; `None` with one.
pub fn placement(r: &RunResult) -> Option<String> {
    let s = &r.spec;
    let n = r.servers.len();
    if n < 2 {
        return None;
    }
    let weights = if s.target.weights.iter().any(|&w| w != 1) && s.target.distribution.weighted() {
        let w: Vec<String> = s.target.weights.iter().map(u32::to_string).collect();
        format!(" (weights {})", w.join(":"))
    } else {
        String::new()
    };
    if let Some(rep) = &s.server.replication {
        return Some(format!(
            "replication test: writes to the first {} of {n} servers, each key on the writer {} places it on; reads from a server the key was not written to",
            rep.writers, s.target.distribution
        ));
    }
    Some(if s.places_keys(n) {
        format!(
            "keys placed by {}{weights} over {n} servers; each connection is a client with a socket per server",
            s.target.distribution
        )
    } else if s.target.roundrobin {
        format!("keys not placed: each server takes any key; threads assigned to the {n} servers round-robin")
    } else {
        "keys not placed: each server takes any key (--distribution none)".into()
    })
}

/// One row per server: its ops, latency and errors.
pub fn write(out: &mut String, r: &RunResult) {
    if r.per_server.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nPer server (latency intended send → response, µs, 2 significant digits)"
    );
    let width = address_width(r.per_server.iter().map(|s| s.address.as_str()));
    let _ = writeln!(
        out,
        "{:<width$} {:>10} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "server", "ops", "share", "ok/s", "p50", "p99", "p99.9", "max", "errors"
    );
    let total: u64 = r.per_server.iter().map(|s| s.count).sum();
    for s in &r.per_server {
        let q = &s.latency_us;
        let _ = writeln!(
            out,
            "{:<width$} {:>10} {:>6.1}% {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8}",
            s.address,
            s.count,
            100.0 * s.count as f64 / total.max(1) as f64,
            s.ok_rate,
            q.p50,
            q.p99,
            q.p999,
            q.max,
            s.errors
        );
    }
}

/// `--rep-write`: replication misses apart from the rest, and the lag.
pub fn replication(out: &mut String, r: &RunResult) {
    let Some(rep) = &r.replication else {
        return;
    };
    let _ = writeln!(
        out,
        "\nReplication: reads from a replica {}, missed {} ({:.2}%); other misses {}",
        rep.replica_reads,
        rep.replica_misses,
        100.0 * rep.replica_miss_ratio,
        rep.other_misses
    );
    let Some(lag) = &rep.lag else {
        return;
    };
    let _ = writeln!(
        out,
        "  lag (write acknowledged → seen on another server, at most), µs: probes {}, seen {}, not seen within the timeout {}, failed {}",
        lag.probes, lag.seen, lag.unseen, lag.failed
    );
    if lag.seen > 0 {
        let q = &lag.lag_us;
        let _ = writeln!(
            out,
            "  lag p50 {:.1}  p99 {:.1}  max {:.1}; {} of {} found by the first poll (below the resolution: polled every {:.0} µs, poll round trip p50 {:.1})",
            q.p50, q.p99, q.max, lag.first_poll, lag.seen, lag.poll_us, lag.poll_rtt_us.p50
        );
    }
}

/// The width of a column of server addresses (at least "server"'s).
pub fn address_width<'a>(addresses: impl Iterator<Item = &'a str>) -> usize {
    addresses.map(str::len).max().unwrap_or(0).max(6)
}
