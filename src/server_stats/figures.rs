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

/// Each count is `None` (JSON `null`, `n/a` in text) where the server
/// does not report the stat (yrmcds has no `cmd_get`, no bytes, no
/// rusage): a figure is never made up as 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Seconds between the two snapshots (the server's clock is read in
    /// whole seconds; this is the poller's).
    pub duration_s: f64,
    /// The server restarted in between (its pid changed or its uptime went
    /// back): the deltas count from its start.
    pub restarted: bool,
    /// `cmd_get` and `cmd_set` deltas, and every command per second (of
    /// the commands the server counts).
    pub cmd_get: Option<u64>,
    pub cmd_set: Option<u64>,
    pub ops_per_s: Option<f64>,
    pub get_hits: Option<u64>,
    pub get_misses: Option<u64>,
    /// get_hits / (get_hits + get_misses); null without lookups.
    pub hit_ratio: Option<f64>,
    pub evictions: Option<u64>,
    pub reclaimed: Option<u64>,
    /// At the end (a gauge): after a run, the load's connections are
    /// closed.
    pub curr_connections: Option<u64>,
    /// The most `curr_connections` any `stats` in between showed.
    pub peak_connections: Option<u64>,
    pub total_connections: Option<u64>,
    pub rejected_connections: Option<u64>,
    pub bytes_read: Option<u64>,
    pub bytes_written: Option<u64>,
    /// At the end (a gauge).
    pub curr_items: Option<u64>,
    pub total_items: Option<u64>,
    /// The server's CPU (rusage_user + rusage_system) per command, ns;
    /// null without commands or without rusage.
    pub cpu_ns_per_op: Option<f64>,
}

/// A stat as a number, if it is one.
pub fn number(s: &Stats, name: &str) -> Option<f64> {
    s.get(name)?.trim().parse().ok()
}

/// A counter as a whole number, if it is one that fits 64 bits: a
/// larger one is no count (as a float its last digits would be lost, and
/// a delta between two of them read as 0).
pub fn counter(s: &Stats, name: &str) -> Option<u64> {
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
        // A counter's change: none where the server does not report it, or
        // where either value is not a number (never a count from 0). A
        // server that restarted counts from 0.
        // A counter that went back without a restart has no change either.
        let count = |name: &str| {
            let end = counter(b, name)?;
            let start = if restarted { 0 } else { counter(a, name)? };
            end.checked_sub(start)
        };
        // Seconds of CPU are not counts: fractions, as floats.
        let seconds = |name: &str| {
            let end = number(b, name)?;
            let start = if restarted { 0.0 } else { number(a, name)? };
            Some((end - start).max(0.0))
        };
        let end = |name: &str| counter(b, name);
        let counted: Vec<u64> = COMMANDS.iter().filter_map(|c| count(c)).collect();
        let commands = (!counted.is_empty())
            .then(|| counted.iter().fold(0u64, |s, c| s.saturating_add(*c)) as f64);
        let (hits, misses) = (count("get_hits"), count("get_misses"));
        let cpu_s = seconds("rusage_user")
            .zip(seconds("rusage_system"))
            .map(|(u, s)| u + s);
        Figures {
            duration_s: secs,
            restarted,
            cmd_get: count("cmd_get"),
            cmd_set: count("cmd_set"),
            ops_per_s: commands.filter(|_| secs > 0.0).map(|c| c / secs),
            get_hits: hits,
            get_misses: misses,
            hit_ratio: hits
                .zip(misses)
                .map(|(h, m)| (h as f64, m as f64))
                .filter(|(h, m)| h + m > 0.0)
                .map(|(h, m)| h / (h + m)),
            evictions: count("evictions"),
            reclaimed: count("reclaimed"),
            curr_connections: end("curr_connections"),
            peak_connections: end("curr_connections")
                .map(|e| counter(a, "curr_connections").map_or(e, |start| e.max(start))),
            total_connections: count("total_connections"),
            rejected_connections: count("rejected_connections"),
            bytes_read: count("bytes_read"),
            bytes_written: count("bytes_written"),
            curr_items: end("curr_items"),
            total_items: count("total_items"),
            cpu_ns_per_op: cpu_s
                .zip(commands)
                .filter(|(_, c)| *c > 0.0)
                .map(|(cpu, c)| cpu * 1e9 / c),
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
    fn a_counter_that_is_not_a_number_at_either_end_has_no_change() {
        let a = stats(&[("pid", "7"), ("cmd_get", "garbage"), ("cmd_set", "10")]);
        let b = stats(&[("pid", "7"), ("cmd_get", "1100"), ("cmd_set", "x")]);
        let f = Figures::between(&a, &b, 2.0);
        assert_eq!((f.cmd_get, f.cmd_set), (None, None));
        // After a restart the server counts from 0.
        let c = stats(&[("pid", "8"), ("cmd_get", "30")]);
        assert_eq!(Figures::between(&a, &c, 2.0).cmd_get, Some(30));
    }

    #[test]
    fn a_counter_past_64_bits_is_no_count_and_one_that_went_back_no_change() {
        let a = stats(&[("pid", "7"), ("cmd_get", "18446744073709551615")]);
        let b = stats(&[("pid", "7"), ("cmd_get", "18446744073709551616")]);
        assert_eq!(Figures::between(&a, &b, 1.0).cmd_get, None);
        let c = stats(&[("pid", "7"), ("cmd_get", "10")]);
        assert_eq!(Figures::between(&a, &c, 1.0).cmd_get, None);
        // Large but whole: exact, where floats would say 0.
        let d = stats(&[("pid", "7"), ("cmd_get", "18446744073709551000")]);
        let e = stats(&[("pid", "7"), ("cmd_get", "18446744073709551015")]);
        assert_eq!(Figures::between(&d, &e, 1.0).cmd_get, Some(15));
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
            (Some(1000), Some(100), Some(900), Some(100))
        );
        assert_eq!(f.hit_ratio, Some(0.9));
        assert_eq!(f.ops_per_s, Some(550.0));
        assert_eq!(f.curr_items, Some(4));
        // What the server does not report is not there, not 0.
        assert_eq!(
            (f.evictions, f.bytes_read, f.total_items),
            (None, None, None)
        );
        let cpu = f.cpu_ns_per_op.unwrap();
        assert!((cpu - 0.6e9 / 1100.0).abs() < 1e-6, "{cpu}");
        let m = moved(&a, &b);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m["hash_power_level"], 1.0);
        // Another pid: counted from the new server's start.
        let c = stats(&[("pid", "8"), ("uptime", "1"), ("cmd_get", "3")]);
        let f = Figures::between(&b, &c, 1.0);
        assert!(f.restarted);
        assert_eq!(f.cmd_get, Some(3));
        // A server with neither cmd_get nor rusage (yrmcds): no figure.
        let d = stats(&[("pid", "8"), ("uptime", "2"), ("curr_items", "9")]);
        let f = Figures::between(&d, &d, 1.0);
        assert_eq!(
            (f.cmd_get, f.ops_per_s, f.cpu_ns_per_op),
            (None, None, None)
        );
        assert_eq!(f.curr_items, Some(9));
    }
}
