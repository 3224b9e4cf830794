//! The HTML report's charts about the servers: each server's own view
//! (`--server-stats`: commands/s, hit ratio, CPU per command, per
//! interval) and where the client's requests went (runs with several
//! servers: an outage and a failover show here).

use super::charts::{self, Series};
use super::{color, label};
use crate::result::RunResult;

/// The charts, empty when no run has several servers or server stats.
pub fn charts(runs: &[RunResult]) -> Result<Vec<String>, String> {
    let (mut answered, mut ops, mut hits, mut cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut shade = 0;
    for (i, r) in runs.iter().enumerate() {
        let run = label(i, r);
        for (s, address) in r.servers.iter().enumerate() {
            let name = format!("{run}: {address}");
            let client: Vec<(f64, f64)> = r
                .intervals
                .iter()
                .filter_map(|iv| {
                    let row = iv.servers.get(s)?;
                    Some((iv.time_s, row.ok as f64 / iv.duration_s.max(1e-9)))
                })
                .collect();
            if !client.is_empty() {
                answered.push(series(&name, shade, client));
            }
            if let Some(row) = r.server_stats.get(s) {
                let at =
                    |f: &dyn Fn(&crate::server_stats::Figures) -> Option<f64>| -> Vec<(f64, f64)> {
                        row.intervals
                            .iter()
                            .filter_map(|iv| Some((iv.time_s, f(&iv.figures)?)))
                            .collect()
                    };
                ops.push(series(&name, shade, at(&|f| f.ops_per_s)));
                hits.push(series(
                    &name,
                    shade,
                    at(&|f| f.hit_ratio.map(|h| h * 100.0)),
                ));
                cpu.push(series(&name, shade, at(&|f| f.cpu_ns_per_op)));
            }
            shade += 1;
        }
    }
    let mut out = Vec::new();
    if !answered.is_empty() {
        out.push(charts::over_time(
            "Requests answered without error per server (client)",
            "ops/s",
            &answered,
        )?);
    }
    if !ops.is_empty() {
        out.push(charts::over_time(
            "Commands per server (its own stats)",
            "commands/s",
            &ops,
        )?);
        out.push(charts::over_time(
            "Hit ratio per server (its own stats)",
            "%",
            &hits,
        )?);
        out.push(charts::over_time(
            "Server CPU per command (rusage_user + rusage_system)",
            "ns",
            &cpu,
        )?);
    }
    Ok(out)
}

fn series(label: &str, shade: usize, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: label.to_string(),
        color: color(shade),
        points,
    }
}
