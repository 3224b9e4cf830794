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
    let na = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
    let int = |v: Option<u64>| na(v.map(|v| v.to_string()));
    let mb = |v: Option<u64>| na(v.map(|v| format!("{:.2}", v as f64 / 1e6)));
    let hit = na(f.hit_ratio.map(|h| format!("{:.1}", h * 100.0)));
    let cpu = na(f.cpu_ns_per_op.map(|c| format!("{c:.0}")));
    let conns = format!(
        "{}/{}/{}",
        int(f.peak_connections),
        int(f.total_connections),
        int(f.rejected_connections)
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>14} {:>9} {:>9} {:>9} {:>9}{}",
        row.address,
        int(f.cmd_get),
        int(f.cmd_set),
        na(f.ops_per_s.map(|o| format!("{o:.1}"))),
        hit,
        int(f.evictions),
        int(f.reclaimed),
        conns,
        mb(f.bytes_read),
        mb(f.bytes_written),
        int(f.curr_items),
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
