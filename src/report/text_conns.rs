//! The text report's connection section, as twemperf prints it but with
//! µs resolution and percentiles: rates, connect time, lifetime, sizes and
//! failures by twemperf's classes.

use crate::result::{Quantiles, RunResult, SizeSummary};
use std::fmt::Write;

/// twemperf's error classes in its order, with their JSON keys.
const CLASSES: [(&str, &str); 9] = [
    ("client-timo", "client_timo"),
    ("socket-timo", "socket_timo"),
    ("connrefused", "connrefused"),
    ("connreset", "connreset"),
    ("fd-unavail", "fd_unavail"),
    ("ftab-full", "ftab_full"),
    ("addrunavail", "addrunavail"),
    ("tls-handshake", "tls_handshake"),
    ("other", "other"),
];

/// The schedule in the header: `1000 connections at 1000.0/s fixed, 10
/// calls each at ...`.
pub fn schedule(r: &RunResult) -> Option<String> {
    let c = r.spec.churn()?;
    Some(format!(
        "{} connections, {}; {} call(s) each, {}",
        c.conns, c.conn_gaps, c.calls, c.call_gaps
    ))
}

/// The section, when connections were opened while measuring or failed.
pub fn write(out: &mut String, r: &RunResult) {
    let c = &r.connections;
    if r.spec.churn().is_none() && c.connects == 0 && c.failures() == 0 {
        return;
    }
    let per_conn = if c.rate > 0.0 {
        format!("{:.3} ms/conn", 1e3 / c.rate)
    } else {
        "-".into()
    };
    let _ = writeln!(
        out,
        "connections: {} connected, {} closed; rate {:.1} conn/s ({per_conn}), at most {} open at once",
        c.connects, c.closed, c.rate, c.max_open
    );
    if c.connects > 0 {
        quantile_line(out, "connect time", &c.connect_time_us);
    }
    if c.handshakes > 0 {
        let cpu = r.tls.as_ref().map_or(0.0, |t| t.cpu_per_handshake_us);
        let _ = writeln!(
            out,
            "tls handshakes: {} at {:.1}/s, client CPU {cpu:.1} µs each",
            c.handshakes, c.handshake_rate
        );
        quantile_line(out, "handshake time", &c.handshake_time_us);
    }
    if c.closed > 0 {
        quantile_line(out, "connection lifetime", &c.lifetime_us);
    }
    size_line(out, "request size", &c.request_size);
    size_line(out, "response size", &c.response_size);
    let classes: Vec<String> = CLASSES
        .iter()
        .map(|(label, key)| format!("{label} {}", c.errors.get(*key).copied().unwrap_or(0)))
        .collect();
    let _ = writeln!(
        out,
        "connection errors: total {} {}",
        c.failures(),
        classes.join(" ")
    );
}

fn quantile_line(out: &mut String, what: &str, q: &Quantiles) {
    let _ = writeln!(
        out,
        "  {what} [µs]: min {:.1} p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1} (mean {:.1}, stdev {:.1})",
        q.min, q.p50, q.p90, q.p99, q.p999, q.max, q.mean, q.stdev
    );
}

fn size_line(out: &mut String, what: &str, s: &SizeSummary) {
    let _ = writeln!(
        out,
        "  {what} [B]: avg {:.1} min {} max {} stdev {:.1}",
        s.mean, s.min, s.max, s.stdev
    );
}
