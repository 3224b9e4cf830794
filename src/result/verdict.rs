//! What a run's figures mean: the warnings about their truth, and whether
//! the run failed. A run whose requests (nearly) all failed, or that no
//! server answered, measured nothing: it must not pass for throughput.

use crate::engine::{Outcome, PhaseEnd};
use crate::spec::{LoadMode, RunSpec};
use crate::stats::{ErrorClass, Recorder};
use crate::warnings::{Warning, BUSY_LIMIT, LAG_P99_LIMIT_US};

use super::LagSummary;

/// Share of failed requests at or above which a measured run failed.
const FAILED_SHARE: f64 = 0.99;
/// The wait for answers after sending stopped is called long above this
/// share of the measured time, and this many seconds.
const LONG_DRAIN_SHARE: f64 = 0.1;
const LONG_DRAIN_MIN_S: f64 = 0.1;
/// A phase shorter than this says nothing of how busy its worker was.
const MIN_JUDGED_S: f64 = 0.05;
/// Intervals the statistics thread may hold unclosed before the run says
/// so: one is the normal case (each worker's snapshot on its way).
const MAX_INTERVALS_BEHIND: u64 = 2;

/// Why the run failed, if it did (the process then exits 1).
pub fn failure(spec: &RunSpec, out: &Outcome, stopped: bool) -> Option<String> {
    if let Some(why) = &out.preload_failure {
        return Some(why.clone());
    }
    if stopped {
        return None;
    }
    if let Some(why) = out.trace.as_ref().and_then(|t| t.error.as_ref()) {
        return Some(format!("the trace could not be read to its end: {why}"));
    }
    if let Some(PhaseEnd::Failed(why)) = out.ends.iter().find(|e| matches!(e, PhaseEnd::Failed(_)))
    {
        return Some(why.clone());
    }
    if out.ends.iter().all(|e| *e == PhaseEnd::AllLost) {
        return Some("every connection was lost; the run could not finish".into());
    }
    let t = &out.total;
    // Arrivals the client dropped were never sent: the client's failure
    // (CLIENT-BOUND says so), not the server's.
    if spec.key_space.preload == LoadMode::LoadOnly {
        if let Some(why) = crate::engine::preload::failure(t) {
            return Some(why);
        }
    }
    let (failed, mut attempted) = t.failed_of_attempted();
    // `--successful` keeps error replies out of the op counts: they were
    // answered all the same.
    let answered_errors = if spec.workload.successful {
        t.reply_errors()
    } else {
        0
    };
    attempted += answered_errors;
    if attempted == 0 && out.trace.as_ref().is_some_and(|f| f.ended) {
        return Some(
            "the trace ended before anything was measured: it is shorter than the warm-up (-w)"
                .into(),
        );
    }
    if attempted == 0 {
        // Nothing was sent (a rate so low no arrival fell in the run):
        // nothing failed either; `rate_missed` says so.
        return None;
    }
    if t.total_ops() + answered_errors == 0 {
        return Some(format!(
            "no request was answered{}",
            summary_suffix(&t.failure_summary())
        ));
    }
    if failed as f64 / attempted as f64 >= FAILED_SHARE {
        let hint = if t.error_count(ErrorClass::Auth) > 0 && spec.target.user.is_none() {
            "; the server asks for authentication: give --user and --password"
        } else {
            ""
        };
        return Some(format!(
            "{failed} of {attempted} requests failed ({}){hint}",
            t.failure_summary()
        ));
    }
    checks_failed(spec, &t.checks)
}

/// The server returned what this run did not store: a failed run unless
/// `--tolerate-check-failures`.
fn checks_failed(spec: &RunSpec, c: &crate::stats::CheckCounts) -> Option<String> {
    let failed = c.verify_misses + c.verify_failed + c.expired_get + c.unexpired_unget;
    (failed > 0 && !spec.checks.tolerate_check_failures).then(|| {
        format!(
            "{failed} checks failed (verify_misses {}, verify_failed {}, expired_get {}, \
             unexpired_unget {}); --tolerate-check-failures makes them a warning",
            c.verify_misses, c.verify_failed, c.expired_get, c.unexpired_unget
        )
    })
}

fn summary_suffix(summary: &str) -> String {
    if summary.is_empty() {
        String::new()
    } else {
        format!(" ({summary})")
    }
}

/// Every warning about the truth of a run's numbers, in the order the
/// report prints them: the client's own limits first.
pub fn warnings(spec: &RunSpec, out: &Outcome, lag: Option<&LagSummary>) -> Vec<Warning> {
    let mut w = client_bound(spec, out, lag);
    w.extend(missed_rate(spec, out));
    w.extend(lost_and_failed(spec, out));
    w.extend(unanswered(spec, &out.total));
    w.extend(out.noticed.iter().cloned());
    if out.intervals_behind > MAX_INTERVALS_BEHIND {
        w.push(Warning::IntervalsBehind {
            intervals: out.intervals_behind,
        });
    }
    w.extend(client_waits(spec, &out.total));
    w
}

/// The warnings that the client, not the server, set the numbers: late to
/// its schedule, a tail made in the client, a late measurement group, more
/// busy-polling workers than CPUs, a saturated worker.
fn client_bound(spec: &RunSpec, out: &Outcome, lag: Option<&LagSummary>) -> Vec<Warning> {
    let t = &out.total;
    let mut w = Vec::new();
    if let Some(lag) = lag.filter(|l| l.p99 > LAG_P99_LIMIT_US) {
        w.push(Warning::LateSchedule {
            send_lag_p99_us: lag.p99,
        });
    }
    w.extend(client_tail(t));
    // The measurement group keeps its own schedule: late to it, its
    // latency (what an SLO reads) is the client's too.
    if let Some(m) = &out.measure {
        let p99 = crate::stats::quantile_us(&m.send_lag, 0.99);
        if p99 > LAG_P99_LIMIT_US {
            w.push(Warning::MeasureLate {
                send_lag_p99_us: p99,
            });
        }
    }
    let cpus = crate::os::allowed_cpus().len().max(1);
    // The measurement group (`--measure-connections`) has a worker too.
    let workers = spec.load.threads + usize::from(spec.measure.is_some());
    if spec.load.busy_poll && workers > cpus {
        w.push(Warning::BusyPollOversubscribed {
            threads: workers,
            cpus,
        });
    }
    // A busy-polling worker uses its whole CPU by design: its share says
    // nothing of saturation (the send lag still does).
    if out.duration_s >= MIN_JUDGED_S && !spec.load.busy_poll {
        for (worker, &busy) in out.worker_busy.iter().enumerate() {
            if busy >= BUSY_LIMIT {
                w.push(Warning::WorkerSaturated { worker, busy });
            }
        }
    }
    w
}

/// Connections lost, checks failed, ephemeral ports exhausted, and a
/// drain long beside the measured time.
fn lost_and_failed(spec: &RunSpec, out: &Outcome) -> Vec<Warning> {
    let t = &out.total;
    let mut w = Vec::new();
    if t.connections_lost > 0 {
        w.push(Warning::ConnectionsLost {
            lost: t.connections_lost,
            of: out.connections,
        });
    }
    let c = &t.checks;
    if c.verify_misses + c.verify_failed + c.expired_get + c.unexpired_unget > 0 {
        w.push(Warning::ChecksFailed {
            verify_misses: c.verify_misses,
            verify_failed: c.verify_failed,
            expired_get: c.expired_get,
            unexpired_unget: c.unexpired_unget,
        });
    }
    let no_port = t.conns.error_count(crate::stats::ConnError::AddrUnavail);
    if no_port > 0 {
        w.push(Warning::PortsExhausted {
            failures: no_port,
            ports: crate::os::ephemeral_ports(),
            addresses: spec.conns.socket.source_addrs.len().max(1),
        });
    }
    // A signal during the drain ends it: no drain to speak of.
    let signalled = out.ends.contains(&PhaseEnd::Stopped);
    if !signalled
        && out.drain_s > LONG_DRAIN_SHARE * out.duration_s
        && out.drain_s >= LONG_DRAIN_MIN_S
    {
        w.push(Warning::LongDrain {
            drain_s: out.drain_s,
            duration_s: out.duration_s,
        });
    }
    w
}

/// Requests answered with an error, unanswered, or skipped.
fn unanswered(spec: &RunSpec, t: &Recorder) -> Vec<Warning> {
    let total_ops = t.total_ops();
    let mut w = Vec::new();
    let replies = t.reply_errors();
    if replies > 0 {
        let answered = if spec.workload.successful {
            total_ops + replies
        } else {
            total_ops
        };
        w.push(Warning::ErrorReplies {
            replies,
            // `--successful` leaves error replies out of the op counts.
            share: replies as f64 / answered.max(1) as f64,
            classes: t.reply_summary(),
        });
    }
    let unanswered = t.error_count(ErrorClass::Timeout);
    if unanswered > 0 {
        w.push(Warning::Unanswered {
            requests: unanswered,
        });
    }
    if t.skips > 0 {
        w.push(Warning::Skipped {
            skips: t.skips,
            share: t.skips as f64 / (total_ops + t.skips).max(1) as f64,
        });
    }
    w
}

/// Requests that found every connection at its depth and waited in the
/// client.
fn client_waits(spec: &RunSpec, t: &Recorder) -> Option<Warning> {
    if t.client_waits == 0 {
        return None;
    }
    // Every measured arrival: answered (error replies too, also under
    // --successful), failed without a reply, skipped, or never sent.
    let successful_replies = if spec.workload.successful {
        t.reply_errors()
    } else {
        0
    };
    let arrivals = t.total_ops()
        + successful_replies
        + t.failures_without_reply()
        + t.skips
        + t.error_count(ErrorClass::Unsent);
    let arrivals = arrivals.max(t.client_waits).max(1);
    Some(Warning::ClientWaits {
        waits: t.client_waits,
        share: t.client_waits as f64 / arrivals as f64,
    })
}

/// The requests at p99 of every op together: a warning when more than
/// half their latency, and more than the late-schedule limit, was the
/// client's own queue and receive (`stats::parts`).
fn client_tail(t: &Recorder) -> Option<Warning> {
    const P: f64 = 99.0;
    let mut latency = crate::stats::new_histogram();
    let mut parts = crate::stats::parts::PartsRecorder::default();
    for (_, op) in t.ops() {
        latency.add(&op.latency).expect("same bounds");
        if let Some(p) = op.stamped_parts() {
            parts.merge(p);
        }
    }
    if latency.is_empty() {
        return None;
    }
    let at = parts.at(latency.value_at_quantile(P / 100.0))?;
    let [queue, _, _, receive] = at.mean_ns.map(|ns| ns / 1e3);
    let latency_us = at.mean_ns.iter().sum::<f64>() / 1e3;
    // A wait for a free connection is the server's pace, not the client's.
    let queue = queue - at.waited_ns / 1e3;
    let client = queue + receive;
    (client > 0.5 * latency_us && client > LAG_P99_LIMIT_US).then_some(Warning::ClientTail {
        percentile: P,
        latency_us,
        client_queue_us: queue,
        client_receive_us: receive,
    })
}

/// Open loop: the rate answered missed the target by more than 1 % and
/// by more than the Poisson count's own noise (3 standard deviations of
/// the requests expected over the run).
fn missed_rate(spec: &RunSpec, out: &Outcome) -> Option<Warning> {
    let target = spec.rate()?;
    if out.duration_s < MIN_JUDGED_S {
        return None;
    }
    let expected = target * out.duration_s;
    let achieved = out.total.total_ops() as f64 / out.duration_s;
    // Even gaps have no count noise: 1 %. Random gaps: 1 % or 3 standard
    // deviations of a Poisson count, whichever is larger.
    let tolerance = match spec.load.schedule.gaps() {
        Some(crate::workload::Distribution::Fixed(_)) => 0.01,
        _ => 0.01f64.max(3.0 / expected.max(1.0).sqrt()),
    };
    ((achieved - target).abs() > tolerance * target)
        .then_some(Warning::RateMissed { target, achieved })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{cpu::CpuTimes, quantile_us, Recorder};
    use crate::workload::OpKind;

    fn spec(args: &[&str]) -> RunSpec {
        crate::cli::run_spec(args)
    }

    fn outcome(lag_ns: u64, waits: u64, busy: f64) -> Outcome {
        let mut total = Recorder::default();
        for _ in 0..1000 {
            total.record_op(OpKind::Get, 1_000_000, 1000);
            total.record_lag(lag_ns);
        }
        total.client_waits = waits;
        Outcome {
            total,
            intervals: Vec::new(),
            batches: Default::default(),
            duration_s: 1.0,
            drain_s: 0.0,
            started_unix_s: 0.0,
            cpu: CpuTimes::default(),
            worker_busy: vec![busy],
            ends: vec![PhaseEnd::Completed],
            connections: 1,
            max_open: 1,
            preload_failure: None,
            preloaded: None,
            replication_lag: None,
            server_logs: None,
            measure: None,
            measure_batches: None,
            noticed: Vec::new(),
            intervals_behind: 0,
            trace: None,
        }
    }

    fn verdict(out: &Outcome, open_loop: bool) -> (bool, Vec<Warning>) {
        let lag = LagSummary {
            p50: quantile_us(&out.total.send_lag, 0.5),
            p99: quantile_us(&out.total.send_lag, 0.99),
            max: 0.0,
        };
        let w = warnings(&spec(&[]), out, open_loop.then_some(&lag));
        (w.iter().any(Warning::client_bound), w)
    }

    #[test]
    fn intervals_behind_are_said_past_one_per_worker_on_its_way() {
        let behind = |n| {
            let mut out = outcome(1000, 0, 0.1);
            out.intervals_behind = n;
            verdict(&out, true)
                .1
                .iter()
                .any(|w| matches!(w, Warning::IntervalsBehind { .. }))
        };
        assert!(!behind(1) && !behind(MAX_INTERVALS_BEHIND));
        assert!(behind(MAX_INTERVALS_BEHIND + 1));
    }

    /// Latencies of 2 ms at p99: client-bound when the stamps say most of
    /// them was mcbench's own queue or receive, not when it was the
    /// network and server, nor when the client's share is under 1 ms.
    #[test]
    fn a_tail_made_in_the_client_is_client_bound() {
        let tail = |parts: [u64; 4], waited: u64| {
            let mut out = outcome(1000, 0, 0.1);
            let op = out.total.record_op(OpKind::Get, 2_000_000, 1_000);
            for _ in 0..1000 {
                op.record_parts([0, 0, 1_000_000, 0], 0);
            }
            for _ in 0..20 {
                op.record_parts(parts, waited);
            }
            for _ in 0..19 {
                out.total.record_op(OpKind::Get, 2_000_000, 1_000);
            }
            let (bound, w) = verdict(&out, true);
            let said = w.iter().any(|w| matches!(w, Warning::ClientTail { .. }));
            assert_eq!(bound, said, "{w:?}");
            said
        };
        assert!(tail([1_200_000, 0, 700_000, 100_000], 0));
        assert!(tail([100_000, 0, 700_000, 1_200_000], 0));
        assert!(!tail([100_000, 0, 1_800_000, 100_000], 0));
        // Queued for a free connection: every one was at its depth.
        assert!(!tail([1_200_000, 0, 700_000, 100_000], 1_000_000));
        // Mostly the client's, but under a millisecond of it.
        let mut out = outcome(1000, 0, 0.1);
        let op = out.total.record_op(OpKind::Get, 900_000, 1_000);
        op.record_parts([800_000, 0, 100_000, 0], 0);
        assert!(verdict(&out, true).1.is_empty());
    }

    #[test]
    fn a_server_stall_is_not_client_bound() {
        // Every request waited for a slot, the worker was idle, lag small.
        let (bound, w) = verdict(&outcome(20_000, 1000, 0.05), true);
        assert!(!bound, "{w:?}");
        assert!(w.iter().any(|w| matches!(w, Warning::ClientWaits { .. })));
    }

    #[test]
    fn a_late_or_saturated_client_is_client_bound() {
        let (bound, w) = verdict(&outcome(2_000_000, 0, 0.3), true);
        assert!(
            bound && matches!(w[0], Warning::LateSchedule { .. }),
            "{w:?}"
        );
        let (bound, w) = verdict(&outcome(1000, 0, 0.99), false);
        assert!(
            bound && matches!(w[0], Warning::WorkerSaturated { .. }),
            "{w:?}"
        );
        // Closed loop has no schedule: its lag is never judged.
        assert!(!verdict(&outcome(2_000_000, 0, 0.3), false).0);
    }

    #[test]
    fn runs_that_measured_nothing_fail() {
        let answered = outcome(1000, 0, 0.1);
        assert_eq!(failure(&spec(&[]), &answered, false), None);
        // Every request answered with an authentication error.
        let mut refused = outcome(1000, 0, 0.1);
        refused.total.error(ErrorClass::Auth, 1000);
        let why = failure(&spec(&[]), &refused, false).unwrap();
        assert!(
            why.contains("1000 of 1000") && why.contains("--user"),
            "{why}"
        );
        // No answer at all.
        let mut silent = outcome(1000, 0, 0.1);
        silent.total = Recorder::default();
        silent.total.error(ErrorClass::Timeout, 40);
        let why = failure(&spec(&[]), &silent, false).unwrap();
        assert!(
            why.contains("no request was answered (timeout 40)"),
            "{why}"
        );
        // A signal is no failure.
        assert_eq!(failure(&spec(&[]), &silent, true), None);
        // 2 % of a --load-only preload failed; 2 % of a measured run did not.
        let mut some = outcome(1000, 0, 0.1);
        some.total.error(ErrorClass::ServerError, 20);
        assert!(failure(&spec(&["--load-only"]), &some, false).is_some());
        assert_eq!(failure(&spec(&[]), &some, false), None);
    }

    #[test]
    fn a_missed_rate_is_said_beyond_its_noise() {
        // 1000 answered in 1 s.
        let out = outcome(1000, 0, 0.1);
        let missed = |rate: &str| {
            warnings(&spec(&["-q", rate]), &out, None)
                .iter()
                .any(|w| matches!(w, Warning::RateMissed { .. }))
        };
        // 1000 expected: Poisson noise is 3.2 % at 1000, so 1050 is noise...
        assert!(!missed("1050"));
        // ...and 1200 is not.
        assert!(missed("1200"));
        assert!(missed("500"));
    }
}
