//! What a benchmark reads in two `stats` snapshots of one server: the
//! counters' deltas and the gauges' ends, named as memcached names them,
//! and every other numeric stat that moved.

use super::Stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counters whose sum is the server's commands (a multiget counts each
/// key in `cmd_get`; a cas is a `cmd_set`).
const COMMANDS: [&str; 9] = [
    "cmd_get",
    "cmd_set",
    "cmd_touch",
    "delete_hits",
    "delete_misses",
    "incr_hits",
    "incr_misses",
    "decr_hits",
    "decr_misses",
];

/// Stats that describe the server rather than the run, or that `Figures`
/// already reports: not listed again among those that moved.
const NOT_MOVED: [&str; 21] = [
    "pid",
    "uptime",
    "time",
    "rusage_user",
    "rusage_system",
    "cmd_get",
    "cmd_set",
    "get_hits",
    "get_misses",
    "evictions",
    "reclaimed",
    "curr_connections",
    "total_connections",
    "rejected_connections",
    "bytes_read",
    "bytes_written",
    "curr_items",
    "total_items",
    "pointer_size",
    "threads",
    "max_connections",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Seconds between the two snapshots (the server's clock is read in
    /// whole seconds; this is the poller's).
    pub duration_s: f64,
    /// The server restarted in between (its pid changed or its uptime went
    /// back): the deltas count from its start.
    pub restarted: bool,
    /// `cmd_get` and `cmd_set` deltas, and every command per second.
    pub cmd_get: u64,
    pub cmd_set: u64,
    pub ops_per_s: f64,
    pub get_hits: u64,
    pub get_misses: u64,
    /// get_hits / (get_hits + get_misses); null without lookups.
    pub hit_ratio: Option<f64>,
    pub evictions: u64,
    pub reclaimed: u64,
    /// At the end (a gauge): after a run, the load's connections are
    /// closed.
    pub curr_connections: u64,
    /// The most `curr_connections` any `stats` in between showed.
    pub peak_connections: u64,
    pub total_connections: u64,
    pub rejected_connections: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// At the end (a gauge).
    pub curr_items: u64,
    pub total_items: u64,
    /// The server's CPU (rusage_user + rusage_system) per command, ns;
    /// null without commands.
    pub cpu_ns_per_op: Option<f64>,
}

/// A stat as a number, if it is one.
pub fn number(s: &Stats, name: &str) -> Option<f64> {
    s.get(name)?.trim().parse().ok()
}

/// Whether `b` comes from another life of the server than `a`.
fn restarted(a: &Stats, b: &Stats) -> bool {
    let pid_changed = matches!((a.get("pid"), b.get("pid")), (Some(x), Some(y)) if x != y);
    let went_back = matches!(
        (number(a, "uptime"), number(b, "uptime")),
        (Some(x), Some(y)) if y < x
    );
    pid_changed || went_back
}

impl Figures {
    /// The figures of the `secs` between snapshots `a` and `b`.
    pub fn between(a: &Stats, b: &Stats, secs: f64) -> Figures {
        let restarted = restarted(a, b);
        let empty = Stats::new();
        let a = if restarted { &empty } else { a };
        let delta = |name: &str| {
            let d = number(b, name).unwrap_or(0.0) - number(a, name).unwrap_or(0.0);
            d.max(0.0)
        };
        let end = |name: &str| number(b, name).unwrap_or(0.0) as u64;
        let commands: f64 = COMMANDS.iter().map(|c| delta(c)).sum();
        let (hits, misses) = (delta("get_hits"), delta("get_misses"));
        let cpu_s = delta("rusage_user") + delta("rusage_system");
        Figures {
            duration_s: secs,
            restarted,
            cmd_get: delta("cmd_get") as u64,
            cmd_set: delta("cmd_set") as u64,
            ops_per_s: if secs > 0.0 { commands / secs } else { 0.0 },
            get_hits: hits as u64,
            get_misses: misses as u64,
            hit_ratio: (hits + misses > 0.0).then(|| hits / (hits + misses)),
            evictions: delta("evictions") as u64,
            reclaimed: delta("reclaimed") as u64,
            curr_connections: end("curr_connections"),
            peak_connections: end("curr_connections")
                .max(number(a, "curr_connections").unwrap_or(0.0) as u64),
            total_connections: delta("total_connections") as u64,
            rejected_connections: delta("rejected_connections") as u64,
            bytes_read: delta("bytes_read") as u64,
            bytes_written: delta("bytes_written") as u64,
            curr_items: end("curr_items"),
            total_items: delta("total_items") as u64,
            cpu_ns_per_op: (commands > 0.0).then(|| cpu_s * 1e9 / commands),
        }
    }
}

/// Every other numeric stat whose value changed between `a` and `b`: its
/// change (end − start; negative for a gauge that fell). Replicating
/// forks' own stats (`repcached_qi_free`, `slaves`) show up here.
pub fn moved(a: &Stats, b: &Stats) -> BTreeMap<String, f64> {
    b.iter()
        .filter(|(name, _)| !NOT_MOVED.contains(&name.as_str()))
        .filter_map(|(name, _)| {
            let (x, y) = (number(a, name)?, number(b, name)?);
            (x != y).then(|| (name.clone(), y - x))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(pairs: &[(&str, &str)]) -> Stats {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn deltas_gauges_and_what_moved() {
        let a = stats(&[
            ("pid", "7"),
            ("uptime", "10"),
            ("cmd_get", "100"),
            ("cmd_set", "10"),
            ("get_hits", "90"),
            ("get_misses", "10"),
            ("rusage_user", "1.0"),
            ("rusage_system", "0.5"),
            ("curr_items", "5"),
            ("hash_power_level", "16"),
            ("version", "1.6.18"),
        ]);
        let b = stats(&[
            ("pid", "7"),
            ("uptime", "12"),
            ("cmd_get", "1100"),
            ("cmd_set", "110"),
            ("get_hits", "990"),
            ("get_misses", "110"),
            ("rusage_user", "1.5"),
            ("rusage_system", "0.6"),
            ("curr_items", "4"),
            ("hash_power_level", "17"),
            ("version", "1.6.18"),
        ]);
        let f = Figures::between(&a, &b, 2.0);
        assert!(!f.restarted);
        assert_eq!(
            (f.cmd_get, f.cmd_set, f.get_hits, f.get_misses),
            (1000, 100, 900, 100)
        );
        assert_eq!(f.hit_ratio, Some(0.9));
        assert_eq!(f.ops_per_s, 550.0);
        assert_eq!(f.curr_items, 4);
        let cpu = f.cpu_ns_per_op.unwrap();
        assert!((cpu - 0.6e9 / 1100.0).abs() < 1e-6, "{cpu}");
        let m = moved(&a, &b);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m["hash_power_level"], 1.0);
        // Another pid: counted from the new server's start.
        let c = stats(&[("pid", "8"), ("uptime", "1"), ("cmd_get", "3")]);
        let f = Figures::between(&b, &c, 1.0);
        assert!(f.restarted);
        assert_eq!(f.cmd_get, 3);
    }
}
