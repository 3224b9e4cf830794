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
    /// bytes and limit_maxbytes; `None` (shown `n/a`) where the server
    /// gave no number.
    pub bytes: Option<f64>,
    pub limit: Option<f64>,
    pub hit: Option<f64>,
    pub conn: Option<f64>,
    pub time: Option<Duration>,
    /// The last connect of the kept connection.
    pub connect: Option<Duration>,
    /// Per second over the interval: evictions, gets, sets, bytes read and
    /// written (each `None` where either reading gave no number); `None`
    /// before a second reading.
    pub rates: Option<[Option<f64>; 5]>,
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
        let get = |name: &str| number(s, name);
        let delta = |p: &Reading, name: &str| Some(get(name)? - number(&p.stats, name)?);
        // Another life of the server (its pid changed): no interval.
        let prev = prev.filter(|p| p.stats.get("pid") == s.get("pid") && cur.at_s > p.at_s);
        let rates = prev
            .map(|p| RATES.map(|name| delta(p, name).map(|d| d.max(0.0) / (cur.at_s - p.at_s))));
        let hit = prev.and_then(|p| {
            let (hits, misses) = (delta(p, "get_hits")?, delta(p, "get_misses")?);
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
            format!(
                "TOTAL: {}GB/{}GB",
                gigabytes(total.bytes),
                gigabytes(total.limit)
            ),
            cells(&Row {
                bytes: Some(0.0),
                limit: Some(0.0),
                ..total
            })
        );
    }
    out
}

const GB: f64 = 1024.0 * 1024.0 * 1024.0;

fn gigabytes(bytes: Option<f64>) -> String {
    bytes.map_or(NOT_A_NUMBER.into(), |b| format!("{:.1}", b / GB))
}

/// What a cell shows where the server gave no number.
const NOT_A_NUMBER: &str = "n/a";

fn cells(r: &Row) -> String {
    let usage = match (r.bytes, r.limit) {
        (Some(bytes), Some(limit)) if limit > 0.0 => format!("{:.1}%", 100.0 * bytes / limit),
        (Some(_), Some(_)) => String::new(),
        _ => NOT_A_NUMBER.into(),
    };
    let hit = r.hit.map_or("-".into(), |h| format!("{:.1}%", h * 100.0));
    let conn = r
        .conn
        .map_or(NOT_A_NUMBER.into(), |c| format!("{}", c.round()));
    let mut out = format!(
        "{usage:>9}{hit:>9}{conn:>9}{:>9}",
        r.time.map_or("-".into(), duration)
    );
    match r.rates {
        Some(rates) => {
            for v in rates {
                let _ = write!(out, "{:>9}", v.map_or(NOT_A_NUMBER.into(), scaled));
            }
        }
        None => out.push_str(&format!("{:>9}", "-").repeat(5)),
    }
    let _ = writeln!(out, "{:>9}", r.connect.map_or("-".into(), duration));
    out
}

/// The mean of the values there are (`None` if none).
fn mean_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let known: Vec<f64> = values.flatten().collect();
    (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
}

/// The sum of the values there are (`None` if none).
fn sum_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |sum, v| Some(sum.unwrap_or(0.0) + v))
}

/// The servers' mean: of each figure a server has.
fn average(rows: &[&Row]) -> Row {
    let rated: Vec<&[Option<f64>; 5]> = rows.iter().filter_map(|r| r.rates.as_ref()).collect();
    let usage = |r: &&Row| match (r.bytes, r.limit) {
        (Some(b), Some(l)) if l > 0.0 => Some(b / l),
        _ => None,
    };
    // USAGE is the mean of the servers' usages: as bytes of a limit of 1.
    let used = mean_of(rows.iter().map(usage));
    Row {
        instance: String::new(),
        bytes: used,
        limit: used.map(|_| 1.0),
        hit: mean_of(rows.iter().map(|r| r.hit)),
        conn: mean_of(rows.iter().map(|r| r.conn)),
        time: mean_of(rows.iter().map(|r| r.time.map(|t| t.as_secs_f64())))
            .map(Duration::from_secs_f64),
        connect: None,
        rates: (!rated.is_empty())
            .then(|| std::array::from_fn(|i| mean_of(rated.iter().map(|r| r[i])))),
        error: None,
    }
}

/// The servers' sum (TIME: the slowest).
fn total(rows: &[&Row]) -> Row {
    let rated: Vec<&[Option<f64>; 5]> = rows.iter().filter_map(|r| r.rates.as_ref()).collect();
    Row {
        instance: String::new(),
        bytes: sum_of(rows.iter().map(|r| r.bytes)),
        limit: sum_of(rows.iter().map(|r| r.limit)),
        hit: None,
        conn: sum_of(rows.iter().map(|r| r.conn)),
        time: rows.iter().filter_map(|r| r.time).max(),
        connect: None,
        rates: (!rated.is_empty())
            .then(|| std::array::from_fn(|i| sum_of(rated.iter().map(|r| r[i])))),
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
        assert_eq!(rates[1], Some(200.0));
        assert_eq!(r.hit, Some(0.8));
        let table = render(&[r.clone(), Row::failed("h:2", "connection refused".into())]);
        assert!(table.starts_with("INSTANCE"), "{table}");
        let line = table.lines().find(|l| l.starts_with("h:1")).unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cols,
            // Evictions, sets and bytes were in neither reading.
            ["h:1", "50.0%", "80.0%", "7", "0.25ms", "n/a", "200", "n/a", "n/a", "n/a", "0.09ms"]
        );
        assert!(table.contains("h:2") && table.contains("connection refused"));
        assert!(table.contains("AVERAGE:") && table.contains("TOTAL: 0.0GB/0.0GB"));
        // The first reading has no interval.
        assert!(Row::of("h:1", None, &b, Duration::ZERO).rates.is_none());
        assert_eq!(scaled(35_123.0), "34.3K");
        assert_eq!(scaled(214_748_365.0), "0.2G");
        assert_eq!(duration(Duration::from_millis(1160)), "1.16s");
    }

    #[test]
    fn values_that_are_not_numbers_show_as_not_available() {
        let mut a = reading(10.0, &[("cmd_get", 100.0), ("evictions", 1.0)]);
        let mut b = reading(11.0, &[("cmd_get", 300.0), ("bytes", 5.0)]);
        b.stats.insert("evictions".into(), "lots".into());
        b.stats.insert("curr_connections".into(), "x".into());
        a.stats.insert("cmd_set".into(), "?".into());
        b.stats.insert("cmd_set".into(), "70".into());
        let r = Row::of("h:1", Some(&a), &b, Duration::ZERO);
        let rates = r.rates.unwrap();
        assert_eq!(rates[..3], [None, Some(200.0), None]);
        assert_eq!((r.conn, r.limit), (None, None));
        let table = render(&[r]);
        let line = table.lines().find(|l| l.starts_with("h:1")).unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cols[1..9],
            ["n/a", "-", "n/a", "0.25ms", "n/a", "200", "n/a", "n/a"]
        );
        assert!(table.contains("TOTAL: 0.0GB/n/aGB"), "{table}");
    }
}
