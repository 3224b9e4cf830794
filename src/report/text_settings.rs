//! The text report's opening: what was run (the wire, TLS, the pace, the
//! workload and how long), under the report's identity line.

use crate::result::RunResult;
use crate::spec::{LoadMode, StopAfter};
use crate::workload::Distribution;
use std::fmt::Write;

/// `TLSv1.3 TLS13_AES_256_GCM_SHA384, 40 handshakes (38 resumed)`, and
/// loudly when no certificate was checked.
pub(super) fn tls_line(r: &RunResult) -> Option<String> {
    let t = r.tls.as_ref()?;
    let what = match (&t.version, &t.cipher_suite) {
        (Some(v), Some(c)) => format!("over TLS: {v} {c}"),
        _ => "over TLS: no handshake completed".into(),
    };
    let resumed = match (&t.resumption_refused, t.resumption) {
        (Some(alert), _) => format!(
            "{} resumed (then the server refused resumption, alert {alert}: full handshakes since)",
            t.resumed
        ),
        (None, true) => format!("{} resumed", t.resumed),
        (None, false) => "resumption off".into(),
    };
    let failed = match (t.failed, &t.first_failure) {
        (0, _) => String::new(),
        (n, Some(why)) => format!(", {n} FAILED (the first: {why})"),
        (n, None) => format!(", {n} FAILED"),
    };
    let checked = if t.verified {
        ""
    } else {
        "; the server's certificate was NOT CHECKED (--tls-insecure)"
    };
    Some(format!(
        "{what}; {} handshake(s), {resumed}{failed}{checked}",
        t.handshakes
    ))
}

/// `mcbench 0.1.0 · server 127.0.0.1:11211`: the report's first line.
pub(super) fn identity(r: &RunResult) -> String {
    let server = match &r.embedded_server {
        Some(v) => format!("{} (embedded {v})", r.servers.join(", ")),
        None => r.servers.join(", "),
    };
    format!("mcbench {} · server {server}", r.version)
}

/// What was run: the wire, the pace, the workload and how long, each line
/// indented under the identity, then a blank line.
pub(super) fn settings(out: &mut String, r: &RunResult) {
    let s = &r.spec;
    let pause = s.read_pause();
    let pace = match (s.rate(), s.load.schedule.gaps()) {
        (Some(rate), Some(gaps)) => format!(
            "open loop, {rate} ops/s target, gaps shaped {}",
            arrival_name(gaps)
        ),
        _ if s.open_loop() => "open loop, at the trace's timestamps".into(),
        _ if pause.is_zero() => "closed loop".into(),
        _ => {
            let d = match pause.as_nanos() {
                ns if ns < 1_000 => format!("{ns} ns"),
                ns => format!("{:.0} µs", ns as f64 / 1e3),
            };
            let timed = if s.stamps_answers() {
                "by kernel receive stamps".to_string()
            } else {
                format!("up to {d} late")
            };
            let chosen = match s.pauses_by_default() {
                true => " by default at this depth (--read-delay 0 reads at once)",
                false => "",
            };
            format!("closed loop, reads delayed {d}{chosen} (answers timed {timed})")
        }
    };
    let pace = if s.reads_late() {
        format!("{pace}, answers read at arrivals (timed by kernel receive stamps)")
    } else {
        pace
    };
    let stop = match s.load.stop {
        StopAfter::Duration(d) => format!("{:.2} s", d.as_secs_f64()),
        StopAfter::Ops(n) => format!("{n} ops"),
        StopAfter::Schedule => "until the connection schedule is done".into(),
        StopAfter::TraceEnd => "until the trace ends".into(),
    };
    wire(out, r);
    if let Some(line) = tls_line(r) {
        let _ = writeln!(out, "  {line}");
    }
    match super::text_conns::schedule(r) {
        Some(schedule) => {
            let _ = writeln!(out, "  {schedule}; {} thread(s)", s.load.threads);
        }
        None => {
            let _ = writeln!(
                out,
                "  {pace}; {} thread(s), {} connection(s)/server, depth {}",
                s.load.threads, s.load.connections, s.load.depth
            );
        }
    }
    if let Some(line) = super::text_servers::placement(r) {
        let _ = writeln!(out, "  {line}");
    }
    workload(out, r);
    let status = match (&r.stopped_by, &r.failure) {
        (Some(sig), _) => format!(" (STOPPED by {sig}: partial results)"),
        (None, Some(_)) => " (FAILED)".into(),
        (None, None) if !r.completed => " (INCOMPLETE)".into(),
        (None, None) => String::new(),
    };
    let _ = writeln!(
        out,
        "  run {stop}, warm-up {:.2} s, seed {}; measured {:.3} s{status}",
        s.load.warmup.as_secs_f64(),
        s.workload.seed,
        r.duration_s,
    );
    out.push('\n');
}

/// Protocol, transport and the options that change what goes on the wire.
fn wire(out: &mut String, r: &RunResult) {
    let s = &r.spec;
    let mut transports: Vec<&str> = r
        .servers
        .iter()
        .map(|a| match a.split_once(':') {
            Some(("udp", _)) => "UDP",
            Some(("unix", _)) => "unix socket",
            _ => "TCP",
        })
        .collect();
    transports.dedup();
    let facebook = format!(
        "UDP for retrievals, TCP for the rest ({} TCP connection(s) beside each UDP socket; --facebook)",
        s.conns.conn_sock
    );
    if s.conns.facebook {
        transports = vec![&facebook];
    }
    let expiry = match s.request.expiry {
        0 => "never".to_string(),
        e => format!("{e} s"),
    };
    let polling = if s.load.busy_poll {
        "; busy-polling"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  protocol {} over {}; reconnect {}; expiry {expiry}; noreply {}{polling}",
        s.target.protocol.name(),
        transports.join(" + "),
        on_off(s.conns.reconnect),
        on_off(s.request.noreply),
    );
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Keys, values, mix and the options that reshape them.
fn workload(out: &mut String, r: &RunResult) {
    let s = &r.spec;
    if let Some(t) = &s.trace {
        return trace_workload(out, t, s.workload.getset);
    }
    let load = match (s.key_space.preload, r.preloaded) {
        _ if s.key_space.window.is_some() => "not preloaded (each window fills as the run writes)",
        (LoadMode::Load, Some(true)) => "preloaded",
        (LoadMode::Load, Some(false)) => "preload FAILED",
        (LoadMode::Load, None) => "preload not finished",
        (LoadMode::NoLoad, _) => "not preloaded",
        (LoadMode::LoadOnly, _) => "load only",
    };
    let mix: Vec<String> = s
        .workload
        .mix
        .shares
        .iter()
        .map(|(op, sh)| format!("{op} {:.1}%", sh * 100.0))
        .collect();
    let slice = if s.key_space.client.of > 1 {
        format!(
            ", slice {}/{}",
            s.key_space.client.index, s.key_space.client.of
        )
    } else {
        String::new()
    };
    let numbers = match (s.key_space.key_digits, s.key_space.first_key) {
        (crate::workload::KeyDigits::Decimal, 0) => String::new(),
        (crate::workload::KeyDigits::Decimal, n) => format!(" numbered from {n}"),
        (crate::workload::KeyDigits::Hex, n) => format!(" numbered in hex from {n}"),
    };
    let _ = writeln!(
        out,
        "  {} keys ({} B, prefix '{}'{numbers}, {} popularity{slice}), values {} B; {}; keys {load}",
        s.key_space.keys,
        s.key_space.key_size,
        s.key_space.key_prefix,
        s.key_space.popularity,
        s.key_space.value_size,
        mix.join(" / ")
    );
    workload_extras(out, s);
}

/// A replay's keys and sizes: where they come from and which ops.
fn trace_workload(out: &mut String, t: &crate::spec::TraceSpec, getset: bool) {
    let ops = if t.format == crate::trace::TraceFormat::Keys {
        "ops from each line, else the mix"
    } else if t.names_ops {
        "ops from the trace"
    } else {
        "every record a get, its misses filled"
    };
    let fill = if getset { "; misses filled" } else { "" };
    let _ = writeln!(
        out,
        "  keys and value sizes from {} ({}), {ops}{fill}",
        t.path.display(),
        t.format
    );
}

/// The options that reshape a generated workload, on one line when any.
fn workload_extras(out: &mut String, s: &crate::spec::RunSpec) {
    let mut extras = Vec::new();
    if s.workload.multiget.share > 0.0 {
        extras.push(format!(
            "{:.0}% of gets are multigets of {} keys",
            s.workload.multiget.share * 100.0,
            s.workload.multiget.keys
        ));
    }
    if s.workload.miss_ratio > 0.0 {
        extras.push(format!(
            "{:.1}% of get keys are planned misses",
            s.workload.miss_ratio * 100.0
        ));
    }
    if let Some(w) = s.key_space.window {
        extras.push(format!(
            "memaslap task window of {w} keys per connection, {:.0}% of sets overwrite",
            s.key_space.overwrite * 100.0
        ));
    }
    if s.workload.getset {
        extras.push("a get that misses sets its key (op fill)".into());
    }
    if !extras.is_empty() {
        let _ = writeln!(out, "  {}", extras.join("; "));
    }
}

/// The arrival shape as the user would name it.
fn arrival_name(d: &Distribution) -> String {
    match d {
        Distribution::Exponential { .. } => "exponential (Poisson arrivals)".into(),
        Distribution::Fixed(_) => "fixed (even gaps)".into(),
        other => other.to_string(),
    }
}
