//! The text report's `--server-stats` section: each server's own counters
//! over the measured run, beside the client's figures above it.

use crate::result::{RunResult, ServerStatsRow};
use std::fmt::Write;

/// Other stats that moved listed per server at most (JSON has them all).
const MOVED_SHOWN: usize = 12;

pub fn write(out: &mut String, r: &RunResult) {
    if r.server_stats.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nServer stats (each server's own `stats`, start → end of the measured run)"
    );
    let width =
        super::text_servers::address_width(r.server_stats.iter().map(|s| s.address.as_str()));
    let _ = writeln!(
        out,
        "{:<width$} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>14} {:>9} {:>9} {:>9} {:>9}",
        "server",
        "cmd_get",
        "cmd_set",
        "ops/s",
        "hit%",
        "evicted",
        "reclaim",
        "conns peak/+/rej",
        "read MB",
        "write MB",
        "items",
        "cpu ns/op"
    );
    for row in &r.server_stats {
        line(out, row, width);
    }
    for row in &r.server_stats {
        details(out, row);
    }
}

fn line(out: &mut String, row: &ServerStatsRow, width: usize) {
    let Some(f) = &row.run else {
        let _ = writeln!(
            out,
            "{:<width$} (fewer than two `stats` answered)",
            row.address
        );
        return;
    };
    let hit = f
        .hit_ratio
        .map_or("-".into(), |h| format!("{:.1}", h * 100.0));
    let cpu = f.cpu_ns_per_op.map_or("-".into(), |c| format!("{c:.0}"));
    let conns = format!(
        "{}/{}/{}",
        f.peak_connections, f.total_connections, f.rejected_connections
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>10} {:>10} {:>10.1} {:>7} {:>8} {:>8} {:>14} {:>9.2} {:>9.2} {:>9} {:>9}{}",
        row.address,
        f.cmd_get,
        f.cmd_set,
        f.ops_per_s,
        hit,
        f.evictions,
        f.reclaimed,
        conns,
        f.bytes_read as f64 / 1e6,
        f.bytes_written as f64 / 1e6,
        f.curr_items,
        cpu,
        if f.restarted { "  (restarted)" } else { "" }
    );
}

fn details(out: &mut String, row: &ServerStatsRow) {
    let q = &row.stats_rtt_us;
    let connects: Vec<String> = row.connect_us.iter().map(|c| format!("{c:.1}")).collect();
    let _ = writeln!(
        out,
        "  {}: stats round trip p50 {:.1} µs, max {:.1} µs on a kept connection; connect µs {}",
        row.address,
        q.p50,
        q.max,
        if connects.is_empty() {
            "-".into()
        } else {
            connects.join(", ")
        }
    );
    if !row.moved.is_empty() {
        let shown: Vec<String> = row
            .moved
            .iter()
            .take(MOVED_SHOWN)
            .map(|(k, v)| format!("{k} {v:+}"))
            .collect();
        let more = row.moved.len().saturating_sub(MOVED_SHOWN);
        let tail = if more > 0 {
            format!(" and {more} more (JSON)")
        } else {
            String::new()
        };
        let _ = writeln!(out, "    also moved: {}{tail}", shown.join(", "));
    }
    if row.failures > 0 {
        let _ = writeln!(
            out,
            "    {} stats queries failed; first: {}",
            row.failures,
            row.errors.first().map_or("", String::as_str)
        );
    }
}
