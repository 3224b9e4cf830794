//! The human report: configuration, a latency and a service-time table per
//! op type (percentiles from the kept histograms), counters, client
//! self-measurement and warnings.

use crate::report::RenderError;

use super::text_settings::{identity, settings};
use super::text_verdict::intervals_table;
use super::tone::{paint, Tone};
use super::Exporter;
use crate::result::{percentile_label, percentile_us, OpSummary, RunResult};
use crate::stats::{max_us, Hdr};
use crate::workload::Distribution;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The text report: the brief one by default (`text_brief`), every
/// section with `--details`.
pub struct TextExporter {
    pub details: bool,
}

impl Exporter for TextExporter {
    /// Several runs (`mcbench report A.json B.json`) follow one another.
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let mut out = String::new();
        for (i, r) in runs.iter().enumerate() {
            if i > 0 {
                out.push_str("\n────────\n\n");
            }
            match self.details {
                true => render_one(&mut out, r)?,
                false => super::text_brief::render_one(&mut out, r)?,
            }
        }
        Ok(out.into_bytes())
    }

    fn takes_several(&self) -> bool {
        true
    }

    fn render_curve(&self, curve: &crate::result::Curve) -> Result<Vec<u8>, RenderError> {
        Ok(super::text_curve::render(curve).into_bytes())
    }

    fn takes_curve(&self) -> bool {
        true
    }
}

fn render_one(out: &mut String, r: &RunResult) -> Result<(), RenderError> {
    let _ = writeln!(out, "{}", identity(r));
    settings(out, r);
    table(out, r, "Latency (intended send → response), µs", |s| {
        &s.latency_hdr
    })?;
    intervals_table(out, &r.percentiles, (&r.ops, &r.total), |s| &s.latency_ci);
    table(
        out,
        r,
        "Service time (actual send → response), µs",
        |s| &s.service_time_hdr,
    )?;
    intervals_table(out, &r.percentiles, (&r.ops, &r.total), |s| {
        &s.service_time_ci
    });
    super::text_parts::write(out, r);
    measure_group(out, r)?;
    trace(out, r);
    counters(out, r);
    asked_for(out, r);
    super::text_verdict::write(out, r);
    Ok(())
}

/// The replayed trace, where there is one.
pub(super) fn trace(out: &mut String, r: &RunResult) {
    if let Some(t) = &r.trace {
        let _ = writeln!(out, "{}\n", t.describe());
    }
}

/// The sections of what the run was asked to do beyond one server's load
/// (servers, replication, server stats, churn, agents, checks), then the
/// warnings: each prints nothing where it has nothing to tell.
pub(super) fn asked_for(out: &mut String, r: &RunResult) {
    super::text_servers::write(out, r);
    super::text_servers::replication(out, r);
    super::text_server_stats::write(out, r);
    super::text_conns::write(out, r);
    super::text_agents::write(out, r);
    checks(out, r);
    for w in &r.warnings {
        let _ = writeln!(out, "{} {w}", paint("WARNING:", Tone::Bad));
    }
}

/// `--measure-connections`: the measurement group's own tables.
fn measure_group(out: &mut String, r: &RunResult) -> Result<(), RenderError> {
    let Some(m) = &r.measure else {
        return Ok(());
    };
    let title = measure_title(m);
    group_table(out, &r.percentiles, (&m.ops, &m.total), &title, |s| {
        &s.latency_hdr
    })?;
    intervals_table(out, &r.percentiles, (&m.ops, &m.total), |s| &s.latency_ci);
    let _ = writeln!(out, "{}\n", measure_lag(m));
    Ok(())
}

/// The measurement group's title over its latency table.
pub(super) fn measure_title(m: &crate::result::MeasureSummary) -> String {
    format!(
        "Measurement connections ({} per server, {} ops/s, depth {}): latency, µs",
        m.connections, m.rate, m.depth
    )
}

/// The measurement group's own send lag.
pub(super) fn measure_lag(m: &crate::result::MeasureSummary) -> String {
    format!(
        "measurement send lag: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs; {} requests waited for a free connection",
        m.send_lag_us.p50, m.send_lag_us.p99, m.send_lag_us.max, m.waits
    )
}

/// One row per op type and `total`: min, mean, stdev, the run's
/// percentiles and max, each computed from the row's histogram.
fn table(
    out: &mut String,
    r: &RunResult,
    title: &str,
    pick: fn(&OpSummary) -> &Hdr,
) -> Result<(), RenderError> {
    group_table(out, &r.percentiles, (&r.ops, &r.total), title, pick)
}

/// One group's table: a row per op type, then `total`.
fn group_table(
    out: &mut String,
    percentiles: &[f64],
    (ops, total): (&BTreeMap<String, OpSummary>, &OpSummary),
    title: &str,
    pick: fn(&OpSummary) -> &Hdr,
) -> Result<(), RenderError> {
    let _ = writeln!(out, "{title}");
    let _ = write!(out, "{:<8}{:>11}{:>12}{:>12}", "op", "ops", "ok/s", "err/s");
    let mut heads = vec!["min".to_string(), "mean".into(), "stdev".into()];
    heads.extend(percentiles.iter().map(|p| percentile_label(*p)));
    heads.push("max".into());
    for h in &heads {
        let _ = write!(out, "{h:>9}");
    }
    out.push('\n');
    for (name, s) in table_rows(ops, total) {
        let h = pick(s).decode()?;
        let _ = write!(
            out,
            "{name:<8}{:>11} {:>11.1} {:>11.1}",
            s.count, s.ok_rate, s.error_rate
        );
        let mut cells = vec![0.0; 3];
        if !h.is_empty() {
            cells = vec![h.min() as f64 / 1e3, h.mean() / 1e3, h.stdev() / 1e3];
        }
        cells.extend(percentiles.iter().map(|p| percentile_us(&h, *p)));
        cells.push(max_us(&h));
        for c in cells {
            let _ = write!(out, "{:>9}", crate::precision::us(c));
        }
        out.push('\n');
    }
    out.push('\n');
    Ok(())
}

/// A table's rows: each op type that carries something, then `total`.
/// (The mix's `get` share goes out as `mget` with --multiget, and an op
/// that never ran says nothing.)
pub(super) fn table_rows<'a>(
    ops: &'a BTreeMap<String, OpSummary>,
    total: &'a OpSummary,
) -> impl Iterator<Item = (&'a str, &'a OpSummary)> {
    ops.iter()
        .filter(|(_, s)| s.count > 0 || s.errors > 0)
        .map(|(n, s)| (n.as_str(), s))
        .chain([("total", total)])
}

/// Hits, replies, errors, bytes and connections, the client's own cost,
/// its send lag and the verdict on whether it kept up.
fn counters(out: &mut String, r: &RunResult) {
    if let Some(line) = gets_line(r) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "replies: {}", nonzero(&r.responses));
    let _ = writeln!(out, "errors: {}", nonzero(&r.errors));
    let held = connections(r).map_or(String::new(), |c| format!("; {c}"));
    let _ = writeln!(
        out,
        "net: tx {} bytes ({:.2} MB/s), rx {} bytes ({:.2} MB/s){held}",
        r.bytes.tx, r.bytes.tx_mb_s, r.bytes.rx, r.bytes.rx_mb_s,
    );
    client_cost(out, r);
    if !send_lag(out, r) {
        let _ = writeln!(
            out,
            "send lag: n/a (closed loop: each request is sent when a slot frees)"
        );
    }
    let (verdict, bad) = client_verdict(r);
    let tone = if bad { Tone::Bad } else { Tone::Good };
    let _ = writeln!(out, "verdict: {}", paint(&verdict, tone));
}

/// `gets: 90 hits, 10 misses (90.00% hit)`; None for a run that looked
/// nothing up (it has no hit ratio to tell).
pub(super) fn gets_line(r: &RunResult) -> Option<String> {
    (r.gets.hits + r.gets.misses > 0).then(|| {
        format!(
            "gets: {} hits, {} misses ({:.2}% hit)",
            r.gets.hits,
            r.gets.misses,
            r.gets.hit_ratio * 100.0
        )
    })
}

/// `connections 4 opened, 0 lost, 0 reopened`: None with --num-conns,
/// whose held connections only preloaded (the connection section tells of
/// the measured ones).
pub(super) fn connections(r: &RunResult) -> Option<String> {
    if r.spec.churn().is_some() {
        return None;
    }
    let c = &r.connections;
    let failed = match c.reopen_failed {
        0 => String::new(),
        n => format!(" ({n} reopenings failed)"),
    };
    Some(format!(
        "connections {} opened, {} lost, {} reopened{failed}",
        c.opened, c.lost, c.reopened
    ))
}

/// The client's CPU, per op where an op was measured, its workers' busy
/// shares and its peak memory.
fn client_cost(out: &mut String, r: &RunResult) {
    let c = &r.client;
    let busy: Vec<String> = c
        .worker_busy
        .iter()
        // A saved result may say anything: a share is 0..100 %.
        .map(|b| format!("{:.0}%", b.clamp(0.0, 1.0) * 100.0))
        .collect();
    let per_op = if r.total.count > 0 {
        format!("{:.0} ns/op", c.cpu_ns_per_op)
    } else {
        "no request measured".to_string()
    };
    let _ = writeln!(
        out,
        "client: cpu user {:.3} s, sys {:.3} s ({per_op}); worker busy {}; peak RSS {:.1} MiB",
        c.cpu_user_s,
        c.cpu_sys_s,
        busy.join(" "),
        c.peak_rss_bytes as f64 / (1 << 20) as f64
    );
}

/// An open loop's send lag, gaps as sent and skips; false (nothing
/// written) for a closed loop, which has no schedule to be late to.
pub(super) fn send_lag(out: &mut String, r: &RunResult) -> bool {
    let c = &r.client;
    if !c.open_loop {
        return false;
    }
    let l = &c.send_lag_us;
    let to = match (&r.total.latency_parts, r.spec.stamp_every()) {
        (Some(_), 1) => " (to the kernel's transmit stamp)".to_string(),
        (Some(_), n) => format!(" (to the kernel's transmit stamp, 1 in {n} writes)"),
        (None, _) => String::new(),
    };
    let _ = writeln!(
        out,
        "send lag{to}: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs; {} requests waited for a free connection",
        l.p50, l.p99, l.max, c.waits
    );
    if let Some(cv) = c.send_gap_cv {
        let _ = writeln!(out, "{}", send_gaps_line(cv, r.spec.load.schedule.gaps()));
    }
    if r.spec.skip() {
        let _ = writeln!(out, "skipped transmissions (--skip): {}", c.skips);
    }
    true
}

/// Whether the numbers measure the server, and true where they do not
/// (the run failed or the client could not keep up).
pub(super) fn client_verdict(r: &RunResult) -> (String, bool) {
    match &r.failure {
        Some(why) => (
            format!("the run FAILED ({why}); these numbers measure no server's capacity"),
            true,
        ),
        None if r.total.count == 0 => match &r.stopped_by {
            Some(sig) => (
                format!("stopped by {sig} before any request was measured"),
                true,
            ),
            None => ("no request was measured".into(), true),
        },
        None if r.client.client_bound => (
            "CLIENT-BOUND — these numbers measure mcbench, not the server".into(),
            true,
        ),
        None => (
            "the client kept up; these numbers measure the server".into(),
            false,
        ),
    }
}

/// `stored 10, value 90`: the counts that are not zero, or `none`.
pub(super) fn nonzero(counts: &std::collections::BTreeMap<String, u64>) -> String {
    let listed: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if listed.is_empty() {
        "none".into()
    } else {
        listed.join(", ")
    }
}

/// memaslap's check counters, under its names; with `--verbose`, the
/// first failures.
fn checks(out: &mut String, r: &RunResult) {
    let c = &r.checks;
    if r.spec.checks.verify == 0.0 && r.spec.checks.exp_verify == 0.0 {
        return;
    }
    let _ = writeln!(
        out,
        "checks: verified {}, verify_misses {}, verify_failed {}; expiries judged {}, expired_get {}, unexpired_unget {}",
        c.verified, c.verify_misses, c.verify_failed, c.exp_checked, c.expired_get, c.unexpired_unget
    );
    if r.spec.checks.verbose {
        for e in &c.examples {
            let _ = writeln!(out, "  {e}");
        }
    }
}

/// The achieved gaps' dispersion beside the schedule's own, so that sends
/// that went out in bursts cannot pass for the schedule.
/// `arrival` is a rate's gap shape (`None`: a trace's timestamps).
fn send_gaps_line(cv: f64, arrival: Option<&Distribution>) -> String {
    let intended = match arrival {
        Some(Distribution::Exponential { .. }) => {
            " (Poisson's is 1.00; above it, sends went out in bursts)"
        }
        Some(Distribution::Fixed(_)) => " (even gaps' is 0.00)",
        _ => "",
    };
    format!("send gaps as sent: CV {cv:.2}{intended}")
}
