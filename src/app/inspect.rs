//! `mcbench stats` and `mcbench slabs`: a server's `stats` in memcached-tool's
//! layouts (its `stats`/`settings` modes, and its `display` table of slab
//! classes), read once on a fresh connection.

use super::AppError;
use crate::cli::{ServersArgs, StatsArgs};
use crate::error::exit;
use crate::server_stats::{slabs, Stats, StatsConn, StatsQueryError};
use crate::spec::Address;
use mcbench_proto::stats as wire;

pub fn stats(args: &StatsArgs) -> i32 {
    if let Some(g) = &args.group {
        if g.is_empty() || !g.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            crate::stderr_line!("mcbench: error: stats group '{g}' must be one word (slabs, items, settings, conns, sizes, ...)");
            return exit::USAGE;
        }
    }
    if let Some(g) = args
        .group
        .as_deref()
        .filter(|g| wire::CHANGES_SERVER.contains(g))
    {
        crate::stderr_line!("mcbench: error: 'stats {g}' changes the server; mcbench only reads");
        return exit::USAGE;
    }
    let group = args.group.as_deref().filter(|g| *g != "general");
    each_server(
        &args.target,
        |name, conn| {
            let (stats, _) = conn.query(group)?;
            Ok(stats_block(name, &stats, args.json, group.is_none()))
        },
        args.json,
    )
}

pub fn slabs(args: &ServersArgs) -> i32 {
    each_server(
        args,
        |name, conn| {
            let (slabs, _) = conn.query(Some("slabs"))?;
            let (items, _) = conn.query(Some("items"))?;
            Ok(format!("# {name}\n{}", slabs::display(&slabs, &items)))
        },
        false,
    )
}

/// memcached-tool's layout (1.6): the address, then `name value` sorted
/// by name, wider for the general stats than for its `settings` mode; or
/// a JSON object.
fn stats_block(name: &str, stats: &Stats, json: bool, general: bool) -> String {
    if json {
        return serde_json::to_string(stats).unwrap_or_default();
    }
    let (head, field, value) = if general { (22, 29, 14) } else { (17, 24, 12) };
    let mut out = format!(
        "#{name:<head$} {:>5} {:>w$}\n",
        "Field",
        "Value",
        w = value - 1
    );
    for (k, v) in stats {
        out.push_str(&format!("{k:>field$} {v:>value$}\n"));
    }
    out
}

/// Runs `show` on a connection to each server in turn and prints what it
/// gives (JSON: one object keyed by server). Exit 2 for a bad address,
/// 1 if any server failed (the others are still printed).
fn each_server(
    args: &ServersArgs,
    show: impl Fn(&str, &mut StatsConn) -> Result<String, StatsQueryError>,
    json: bool,
) -> i32 {
    let names = match names(args) {
        Ok(n) => n,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    // A signal cuts every wait short and ends the command with its code.
    let stop = super::install_signal_flag().ok();
    let signalled = || {
        stop.as_deref()
            .map_or(0, |s| s.load(std::sync::atomic::Ordering::Relaxed))
    };
    let mut failed = false;
    let mut blocks = Vec::new();
    for name in &names {
        if signalled() != 0 {
            return exit::of_signal(signalled());
        }
        let shown = match Address::resolve(name) {
            Ok(a) => StatsConn::connect(&a, args.timeout, stop.clone())
                .and_then(|mut c| show(name, &mut c))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match shown {
            Ok(text) => blocks.push((name, text)),
            Err(e) => {
                crate::stderr_line!("mcbench: error: {name}: {e}");
                failed = true;
            }
        }
    }
    if signalled() != 0 {
        return exit::of_signal(signalled());
    }
    let text = if json {
        let fields: Vec<String> = blocks
            .iter()
            .map(|(n, t)| format!("{}:{t}", serde_json::to_string(n).unwrap_or_default()))
            .collect();
        format!("{{{}}}\n", fields.join(","))
    } else {
        let texts: Vec<&str> = blocks.iter().map(|(_, t)| t.as_str()).collect();
        texts.join("\n")
    };
    if let Err(e) = crate::error::to_stdout(&text) {
        crate::stderr_line!("mcbench: error: {e}");
        failed = true;
    }
    if failed {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The servers as written (ranges expanded); weights mean nothing here.
pub(super) fn names(args: &ServersArgs) -> Result<Vec<String>, AppError> {
    let (names, weights) = crate::spec::servers::expand(&args.servers)?;
    if weights.iter().any(|&w| w != 1) {
        return Err(AppError::StatsWeight);
    }
    if let Some(udp) = crate::spec::ServerAddr::first_udp(&names) {
        return Err(AppError::StatsOverUdp(udp.to_string()));
    }
    Ok(names.iter().map(ToString::to_string).collect())
}
