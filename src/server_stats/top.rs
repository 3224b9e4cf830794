//! memcache-top's view of several servers, one row each, with AVERAGE and
//! TOTAL rows: USAGE, HIT %, CONN, TIME, EVICT/s, GETS/s, SETS/s, READ/s,
//! WRITE/s. Its flaws fixed:
//! - rates divide by the interval measured between the two `stats`, not
//!   the nominal refresh;
//! - HIT % is the interval's (hits / lookups between the two `stats`),
//!   not the lifetime's;
//! - TIME is the `stats` round trip on a kept connection; the connect is
//!   shown apart (CONNECT).

use super::figures::number;
use super::Stats;
use std::fmt::Write;
use std::time::Duration;

/// One reading of one server.
#[derive(Debug, Clone)]
pub struct Reading {
    pub stats: Stats,
    /// When it was answered, s on any monotonic clock.
    pub at_s: f64,
    /// Its round trip.
    pub rtt: Duration,
}

/// One server's row.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub instance: String,
    /// bytes and limit_maxbytes.
    pub bytes: f64,
    pub limit: f64,
    pub hit: Option<f64>,
    pub conn: f64,
    pub time: Option<Duration>,
    /// The last connect of the kept connection.
    pub connect: Option<Duration>,
    /// Per second over the interval: evictions, gets, sets, bytes read and
    /// written; `None` before a second reading.
    pub rates: Option<[f64; 5]>,
    /// Why the server has no reading now.
    pub error: Option<String>,
}

const RATES: [&str; 5] = [
    "evictions",
    "cmd_get",
    "cmd_set",
    "bytes_read",
    "bytes_written",
];

impl Row {
    /// The row of `instance` from its last two readings.
    pub fn of(instance: &str, prev: Option<&Reading>, cur: &Reading, connect: Duration) -> Row {
        let s = &cur.stats;
        let get = |name: &str| number(s, name).unwrap_or(0.0);
        let delta = |p: &Reading, name: &str| get(name) - number(&p.stats, name).unwrap_or(0.0);
        // Another life of the server (its pid changed): no interval.
        let prev = prev.filter(|p| p.stats.get("pid") == s.get("pid") && cur.at_s > p.at_s);
        let rates = prev.map(|p| RATES.map(|name| delta(p, name).max(0.0) / (cur.at_s - p.at_s)));
        let hit = prev.and_then(|p| {
            let (hits, misses) = (delta(p, "get_hits"), delta(p, "get_misses"));
            (hits + misses > 0.0).then(|| hits / (hits + misses))
        });
        Row {
            instance: instance.to_string(),
            bytes: get("bytes"),
            limit: get("limit_maxbytes"),
            hit,
            conn: get("curr_connections"),
            time: Some(cur.rtt),
            connect: Some(connect),
            rates,
            error: None,
        }
    }

    /// A server that gave no reading.
    pub fn failed(instance: &str, error: String) -> Row {
        Row {
            instance: instance.to_string(),
            error: Some(error),
            ..Row::default()
        }
    }
}

const HEAD: [&str; 11] = [
    "INSTANCE", "USAGE", "HIT %", "CONN", "TIME", "EVICT/s", "GETS/s", "SETS/s", "READ/s",
    "WRITE/s", "CONNECT",
];

/// The table: a header, a row per server, then AVERAGE and TOTAL.
pub fn render(rows: &[Row]) -> String {
    let width = rows
        .iter()
        .map(|r| r.instance.len())
        .max()
        .unwrap_or(0)
        .max(16)
        + 2;
    let mut out = String::new();
    let _ = write!(out, "{:<width$}", HEAD[0]);
    for h in &HEAD[1..] {
        let _ = write!(out, "{h:>9}");
    }
    out.push_str("\n\n");
    for r in rows {
        let _ = write!(out, "{:<width$}", r.instance);
        match &r.error {
            Some(e) => {
                let _ = writeln!(out, "  {e}");
            }
            None => out.push_str(&cells(r)),
        }
    }
    let up: Vec<&Row> = rows.iter().filter(|r| r.error.is_none()).collect();
    if !up.is_empty() {
        let _ = write!(out, "\n{:<width$}{}", "AVERAGE:", cells(&average(&up)));
        let total = total(&up);
        let _ = write!(
            out,
            "\n{:<width$}{}",
            format!("TOTAL: {:.1}GB/{:.1}GB", total.bytes / GB, total.limit / GB),
            cells(&Row {
                bytes: 0.0,
                limit: 0.0,
                ..total
            })
        );
    }
    out
}

const GB: f64 = 1024.0 * 1024.0 * 1024.0;

fn cells(r: &Row) -> String {
    let usage = if r.limit > 0.0 {
        format!("{:.1}%", 100.0 * r.bytes / r.limit)
    } else {
        String::new()
    };
    let hit = r.hit.map_or("-".into(), |h| format!("{:.1}%", h * 100.0));
    let mut out = format!(
        "{usage:>9}{hit:>9}{:>9}{:>9}",
        r.conn.round(),
        r.time.map_or("-".into(), duration)
    );
    match r.rates {
        Some(rates) => {
            for v in rates {
                let _ = write!(out, "{:>9}", scaled(v));
            }
        }
        None => out.push_str(&format!("{:>9}", "-").repeat(5)),
    }
    let _ = writeln!(out, "{:>9}", r.connect.map_or("-".into(), duration));
    out
}

/// The servers' mean: of each figure a server has.
fn average(rows: &[&Row]) -> Row {
    let n = rows.len() as f64;
    let mean = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
    let hits: Vec<f64> = rows.iter().filter_map(|r| r.hit).collect();
    let rated: Vec<[f64; 5]> = rows.iter().filter_map(|r| r.rates).collect();
    let used: Vec<f64> = rows
        .iter()
        .filter(|r| r.limit > 0.0)
        .map(|r| r.bytes / r.limit)
        .collect();
    // USAGE is the mean of the servers' usages: as bytes of a limit of 1.
    Row {
        instance: String::new(),
        bytes: used.iter().sum::<f64>() / used.len().max(1) as f64,
        limit: if used.is_empty() { 0.0 } else { 1.0 },
        hit: (!hits.is_empty()).then(|| hits.iter().sum::<f64>() / hits.len() as f64),
        conn: mean(&|r| r.conn),
        time: Some(Duration::from_secs_f64(mean(&|r| {
            r.time.unwrap_or_default().as_secs_f64()
        }))),
        connect: None,
        rates: (!rated.is_empty()).then(|| {
            std::array::from_fn(|i| rated.iter().map(|r| r[i]).sum::<f64>() / rated.len() as f64)
        }),
        error: None,
    }
}

/// The servers' sum (TIME: the slowest).
fn total(rows: &[&Row]) -> Row {
    let rated: Vec<[f64; 5]> = rows.iter().filter_map(|r| r.rates).collect();
    Row {
        instance: String::new(),
        bytes: rows.iter().map(|r| r.bytes).sum(),
        limit: rows.iter().map(|r| r.limit).sum(),
        hit: None,
        conn: rows.iter().map(|r| r.conn).sum(),
        time: rows.iter().filter_map(|r| r.time).max(),
        connect: None,
        rates: (!rated.is_empty())
            .then(|| std::array::from_fn(|i| rated.iter().map(|r| r[i]).sum::<f64>())),
        error: None,
    }
}

/// A round trip as memcache-top shows TIME: ms, or s from 1000 ms.
pub fn duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 1000.0 {
        format!("{:.2}s", ms / 1e3)
    } else {
        format!("{ms:.2}ms")
    }
}

/// A rate as memcache-top scales it: K, M, G (of 1024) past 9,999,
/// 999,999 and 99,999,999.
pub fn scaled(v: f64) -> String {
    const K: f64 = 1024.0;
    if v > 99_999_999.0 {
        format!("{:.1}G", v / (K * K * K))
    } else if v > 999_999.0 {
        format!("{:.1}M", v / (K * K))
    } else if v > 9_999.0 {
        format!("{:.1}K", v / K)
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at_s: f64, pairs: &[(&str, f64)]) -> Reading {
        Reading {
            stats: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain([("pid".to_string(), "1".to_string())])
                .collect(),
            at_s,
            rtt: Duration::from_micros(250),
        }
    }

    #[test]
    fn rates_and_hits_are_the_measured_intervals() {
        let a = reading(
            10.0,
            &[
                ("cmd_get", 1000.0),
                ("get_hits", 0.0),
                ("get_misses", 1000.0),
            ],
        );
        // 2.5 s later, not the nominal 3: 500 gets in it, 400 hits.
        let b = reading(
            12.5,
            &[
                ("cmd_get", 1500.0),
                ("get_hits", 400.0),
                ("get_misses", 1100.0),
                ("bytes", 50.0),
                ("limit_maxbytes", 100.0),
                ("curr_connections", 7.0),
            ],
        );
        let r = Row::of("h:1", Some(&a), &b, Duration::from_micros(90));
        let rates = r.rates.unwrap();
        assert_eq!(rates[1], 200.0);
        assert_eq!(r.hit, Some(0.8));
        let table = render(&[r.clone(), Row::failed("h:2", "connection refused".into())]);
        assert!(table.starts_with("INSTANCE"), "{table}");
        let line = table.lines().find(|l| l.starts_with("h:1")).unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cols,
            ["h:1", "50.0%", "80.0%", "7", "0.25ms", "0", "200", "0", "0", "0", "0.09ms"]
        );
        assert!(table.contains("h:2") && table.contains("connection refused"));
        assert!(table.contains("AVERAGE:") && table.contains("TOTAL: 0.0GB/0.0GB"));
        // The first reading has no interval.
        assert!(Row::of("h:1", None, &b, Duration::ZERO).rates.is_none());
        assert_eq!(scaled(35_123.0), "34.3K");
        assert_eq!(scaled(214_748_365.0), "0.2G");
        assert_eq!(duration(Duration::from_millis(1160)), "1.16s");
    }
}
