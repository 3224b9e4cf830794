//! What a result from outside (a saved file, an agent's) must add up to
//! before any of it is believed: one check, stated once, for `report`,
//! `compare`, `--merge` and the master. A result that breaks a rule is
//! refused, naming the field and the rule; nothing of it is printed.
//!
//! The rules:
//! - every kept histogram's counts sum without overflow (read from its
//!   bytes), and a latency, service-time, parts or batch histogram holds
//!   exactly its op's `count`;
//! - no op counts more than `MAX_RATE` requests a second over the run's
//!   duration (and a second more);
//! - `ok` ≤ `count`; keys found and not found ≤ `count` × the most keys a
//!   request asks; `total` counts what its ops count;
//! - the figures shown from a histogram (its quantiles; rates over the
//!   duration) are the histogram's own;
//! - each interval's histograms hold its counts, and its keys its requests.

use super::{quantiles, OpSummary, Quantiles, ResultError, RunResult};
use crate::stats::IntervalSummary;
use crate::workload::OpKind;

/// More requests a second than any one client machine sends (loopback
/// memcached tops out near a few million): a count past it over the run's
/// time is made up, however its histogram agrees.
pub const MAX_RATE: f64 = 100e6;

/// The longest run a result may claim, s (a year): a duration past it
/// would let any count pass `MAX_RATE`.
const MAX_DURATION_S: f64 = 365.0 * 86_400.0;

/// Whether `name` is an op mcbench records (or `total`).
pub fn known_op(name: &str) -> bool {
    name == "total" || OpKind::ALL.iter().any(|op| op.name() == name)
}

/// Every rule above, over the whole result.
pub fn check(r: &RunResult) -> Result<(), ResultError> {
    let secs = r.duration_s;
    if !(secs.is_finite() && (0.0..=MAX_DURATION_S).contains(&secs)) {
        return Err(ResultError::Duration(secs));
    }
    let group = |prefix: &'static str, ops: &[(&str, &OpSummary)], total: &OpSummary, rates| {
        let sum = ops.iter().fold(0u64, |s, (_, o)| s.saturating_add(o.count));
        if sum != total.count {
            return Err(ResultError::TotalCount {
                prefix,
                count: total.count,
                sum,
            });
        }
        for (name, o) in ops {
            op(name, o, secs, rates).map_err(|e| in_op(prefix, name, e))?;
        }
        op("total", total, secs, rates).map_err(|e| in_op(prefix, "total", e))
    };
    let ops: Vec<(&str, &OpSummary)> = r.ops.iter().map(|(n, o)| (n.as_str(), o)).collect();
    group("", &ops, &r.total, true)?;
    if let Some(m) = &r.measure {
        let ops: Vec<(&str, &OpSummary)> = m.ops.iter().map(|(n, o)| (n.as_str(), o)).collect();
        // The master's probe kept its own clock: no rate is checked.
        group("measure.", &ops, &m.total, false)?;
    }
    for i in &r.intervals {
        interval(i)?;
    }
    Ok(())
}

/// One op of a result, over `secs`; `rates`: its rates are over `secs`.
/// `e`, found in op `name` of the group `prefix` names.
fn in_op(prefix: &'static str, name: &str, e: ResultError) -> ResultError {
    ResultError::Op {
        prefix,
        op: name.into(),
        source: Box::new(e),
    }
}

pub fn op(name: &str, o: &OpSummary, secs: f64, rates: bool) -> Result<(), ResultError> {
    if !known_op(name) {
        return Err(ResultError::UnknownOp);
    }
    holds("latency_hdr", o.latency_hdr.count()?, o.count)?;
    holds("service_time_hdr", o.service_time_hdr.count()?, o.count)?;
    if o.count as f64 > MAX_RATE * (secs + 1.0) {
        return Err(ResultError::TooManyRequests {
            count: o.count,
            secs,
        });
    }
    if o.ok > o.count {
        return Err(ResultError::OkPastCount {
            ok: o.ok,
            count: o.count,
        });
    }
    answered_keys(o.hits, o.misses, o.count)?;
    if let Some(parts) = &o.latency_parts {
        parts.recorder(o.count)?;
    }
    if let Some(b) = &o.batches {
        b.check(o.count)?;
    }
    figures(
        "latency_us",
        &o.latency_us,
        &quantiles(&o.latency_hdr.decode()?),
    )?;
    figures(
        "service_time_us",
        &o.service_time_us,
        &quantiles(&o.service_time_hdr.decode()?),
    )?;
    if rates {
        let per_s = |n: u64| n as f64 / secs.max(1e-9);
        same("rate", o.rate, per_s(o.count))?;
        same("ok_rate", o.ok_rate, per_s(o.ok))?;
    }
    Ok(())
}

/// An interval: its histograms hold its counts, its keys its requests,
/// its times are times.
pub fn interval(i: &IntervalSummary) -> Result<(), ResultError> {
    let at = |e: ResultError| ResultError::Interval {
        index: i.index,
        source: Box::new(e),
    };
    for (what, secs) in [("time_s", i.time_s), ("duration_s", i.duration_s)] {
        if !(secs.is_finite() && (0.0..=MAX_DURATION_S).contains(&secs)) {
            return Err(at(ResultError::IntervalTime { what, secs }));
        }
    }
    let mut requests = 0u64;
    for (name, o) in &i.ops {
        if !known_op(name) {
            return Err(at(ResultError::UnknownOpNamed(name.clone())));
        }
        let held = o.latency_hdr.count().map_err(|e| at(e.into()))?;
        holds("latency_hdr", held, o.count).map_err(|e| at(in_op("", name, e)))?;
        answered_keys(o.hits, o.misses, o.count).map_err(|e| at(in_op("", name, e)))?;
        if name == "total" {
            requests = o.count;
        }
    }
    answered_keys(i.hits, i.misses, requests).map_err(at)?;
    Ok(i.check()?)
}

/// A histogram of `held` values for an op of `count` requests.
fn holds(what: &'static str, held: u64, count: u64) -> Result<(), ResultError> {
    if held != count {
        return Err(ResultError::Holds { what, held, count });
    }
    Ok(())
}

/// Keys found and not found: no more than `count` requests could ask.
pub fn answered_keys(hits: u64, misses: u64, count: u64) -> Result<(), ResultError> {
    let most = count.saturating_mul(u64::from(crate::spec::MAX_MULTIGET_KEYS));
    if hits.saturating_add(misses) > most {
        return Err(ResultError::Keys {
            hits,
            misses,
            count,
        });
    }
    Ok(())
}

/// The quantiles shown are the histogram's.
fn figures(what: &str, shown: &Quantiles, kept: &Quantiles) -> Result<(), ResultError> {
    let pairs = [
        ("min", shown.min, kept.min),
        ("mean", shown.mean, kept.mean),
        ("stdev", shown.stdev, kept.stdev),
        ("p50", shown.p50, kept.p50),
        ("p90", shown.p90, kept.p90),
        ("p99", shown.p99, kept.p99),
        ("p999", shown.p999, kept.p999),
        ("p9999", shown.p9999, kept.p9999),
        ("max", shown.max, kept.max),
    ];
    for (name, a, b) in pairs {
        same(&format!("{what}.{name}"), a, b)?;
    }
    Ok(())
}

/// `shown` is `kept`, but for the last digits of a float.
fn same(what: &str, shown: f64, kept: f64) -> Result<(), ResultError> {
    if (shown - kept).abs() <= 1e-9 * kept.abs().max(1.0) {
        Ok(())
    } else {
        Err(ResultError::Figure {
            what: what.into(),
            shown,
            kept,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ops_and_keys_past_the_requests_are_refused() {
        assert!(known_op("get") && known_op("mget") && known_op("total"));
        assert!(!known_op("=HYPERLINK(\"x\")"));
        assert!(answered_keys(10_000, 0, 1).is_ok());
        assert!(answered_keys(10_000, 1, 1).is_err());
        assert!(answered_keys(u64::MAX, u64::MAX, 3).is_err());
        assert!(same("rate", 1.0, 1.0 + 1e-12).is_ok());
        assert!(same("rate", 1.0, 1.1).is_err());
    }
}
