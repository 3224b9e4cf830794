//! The servers' charts, on the run's time axis: where the client's
//! requests went (runs with several servers: an outage and a failover
//! show here), and each server's own view (`--server-stats`: commands/s,
//! hit ratio, evictions, CPU per command).

use crate::report::RenderError;

use super::charts::{style, Series};
use super::{label, section};
use crate::result::RunResult;
use crate::server_stats::Figures;

/// The charts' titles and units, in the page's order.
const CHARTS: [(&str, &str); 5] = [
    (
        "Requests answered without error, per server (client)",
        "ops/s",
    ),
    ("Commands per server (its own stats)", "commands/s"),
    ("Hit ratio per server (its own stats)", "%"),
    ("Evictions per server (its own stats)", "evictions/s"),
    ("Server CPU per command (rusage_user + rusage_system)", "ns"),
];

pub fn write(page: &mut String, runs: &[RunResult], t_end: f64) -> Result<(), RenderError> {
    let mut lines: [Vec<Series>; 5] = Default::default();
    for (i, r) in runs.iter().enumerate() {
        for s in 0..r.servers.len() {
            add_server(&mut lines, runs, i, s);
        }
    }
    let drawable = |s: &Series| s.points.len() >= 2;
    if !lines.iter().any(|l| l.iter().any(drawable)) {
        return Ok(());
    }
    section(page, "servers", "Servers");
    for ((title, unit), series) in CHARTS.into_iter().zip(lines) {
        super::time::chart(page, title, unit, series, t_end)?;
    }
    page.push_str("</section>\n");
    Ok(())
}

/// Server `s` of run `i`: a line in each chart it has figures for.
fn add_server(lines: &mut [Vec<Series>; 5], runs: &[RunResult], i: usize, s: usize) {
    let r = &runs[i];
    let address = &r.servers[s];
    let name = match (runs.len(), r.servers.len()) {
        (1, _) => address.clone(),
        (_, 1) => label(i, r),
        _ => format!("{}: {address}", label(i, r)),
    };
    let line = |points| Series {
        label: name.clone(),
        style: style(i, s, runs.len()),
        points,
    };
    let client: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .filter_map(|iv| {
            let row = iv.servers.get(s)?;
            Some((iv.time_s, row.ok as f64 / iv.duration_s.max(1e-9)))
        })
        .collect();
    if !client.is_empty() {
        lines[0].push(line(client));
    }
    let Some(row) = r.server_stats.get(s) else {
        return;
    };
    let at = |f: &dyn Fn(&Figures) -> Option<f64>| -> Vec<(f64, f64)> {
        row.intervals
            .iter()
            .filter_map(|iv| Some((iv.time_s, f(&iv.figures)?)))
            .collect()
    };
    lines[1].push(line(at(&|f| f.ops_per_s)));
    lines[2].push(line(at(&|f| f.hit_ratio.map(|h| h * 100.0))));
    lines[3].push(line(at(&|f| {
        Some(f.evictions? as f64 / f.duration_s.max(1e-9))
    })));
    lines[4].push(line(at(&|f| f.cpu_ns_per_op)));
}
