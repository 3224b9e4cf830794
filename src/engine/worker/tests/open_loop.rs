//! The open loop on the manual clock: arrivals go out when due, their
//! latency counts from when they were due, and a stall shows in every
//! request scheduled during it.

use super::{run, Scripted, MS};
use crate::workload::OpKind;

/// 2,000 arrivals a second for a second on one connection, at depth 64
/// unless `extra` says otherwise.
fn paced(extra: &[&str], script: Scripted) -> super::Ran {
    let mut args = vec!["--no-load", "-u", "0", "-c", "1", "-d", "64"];
    args.extend_from_slice(&["--rate", "2000", "-t", "1s"]);
    args.extend_from_slice(extra);
    run(&args, script)
}

#[test]
fn every_arrival_goes_out_when_due_and_takes_the_servers_time() {
    // Each answer read as it comes: its latency is the server's alone.
    let ran = paced(&["--read-answers", "at-once"], Scripted::after(100_000));
    let gets = ran.total.count(OpKind::Get);
    // 2,000/s for 1 s of Poisson arrivals: the server saw each one.
    assert!((1_800..2_200).contains(&gets), "{gets} gets");
    assert_eq!(gets as usize, ran.gets_seen());
    let lat = &ran.total.op(OpKind::Get).expect("gets").latency;
    // Nothing but the server's 100 µs: the client's time is not counted
    // on a clock that only the waits move.
    let server = lat.lowest_equivalent(100_000);
    assert_eq!(lat.lowest_equivalent(lat.min()), server);
    assert_eq!(lat.lowest_equivalent(lat.max()), server);
    // Each arrival sent when due (a lag is recorded as 1 ns at least).
    assert_eq!(ran.total.send_lag.max(), 1);
    assert_eq!(ran.total.client_waits, 0, "64 slots: none waited for one");
    assert_eq!(ran.errors(crate::stats::ErrorClass::ClientOverload), 0);
}

#[test]
fn the_server_sees_the_arrivals_at_their_poisson_times() {
    let ran = paced(&[], Scripted::after(100_000));
    let at: Vec<u64> = ran.seen.iter().map(|s| s.at).collect();
    let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
    // Exponential gaps of 500 µs: coefficient of variation 1.
    assert!((450_000.0..550_000.0).contains(&mean), "mean gap {mean}");
    let cv = var.sqrt() / mean;
    assert!((0.9..1.1).contains(&cv), "gap CV {cv}");
}

#[test]
fn a_stall_counts_in_every_request_scheduled_during_it() {
    // The 500th request takes 50 ms; the others 100 µs. One connection
    // at depth 1: what arrives meanwhile waits in the client.
    let stall = 50 * MS;
    let script = Scripted::new(move |n, _| Some(if n == 500 { stall } else { 100_000 }));
    let ran = paced(&["-d", "1"], script);
    let lat = &ran.total.op(OpKind::Get).expect("gets").latency;
    // The longest: the first arrival after the stalled request, which
    // waited for it and was then served in 100 µs.
    let max = lat.max();
    assert!(max >= lat.lowest_equivalent(stall), "max {max}");
    assert!(max <= lat.highest_equivalent(stall + 100_000), "max {max}");
    // At 2,000/s some hundred arrivals came during the stall; each waited
    // for it, from when it was due.
    let delayed = lat.count_between(MS, stall * 2);
    assert!((60..=140).contains(&delayed), "{delayed} delayed");
    assert!(
        ran.total.client_waits >= delayed,
        "they waited in the client"
    );
}

#[test]
fn a_closed_loop_under_the_same_stall_counts_it_once() {
    // The contrast: without a schedule, nothing was due during the stall.
    let script = Scripted::new(|n, _| Some(if n == 500 { 50 * MS } else { 100_000 }));
    let ran = run(
        &["--no-load", "-u", "0", "-c", "1", "-d", "1", "-t", "1s"],
        script,
    );
    let lat = &ran.total.op(OpKind::Get).expect("gets").latency;
    assert_eq!(lat.count_between(MS, 100 * MS), 1);
}

#[test]
fn moderate_keeps_each_connection_quiet_after_an_answer() {
    // mutilate's --moderate: 250 µs of quiet after each answer.
    let ran = paced(
        &["-c", "2", "-d", "1", "--moderate"],
        Scripted::after(100_000),
    );
    let mut last_on: std::collections::HashMap<usize, u64> = Default::default();
    for s in &ran.seen {
        if let Some(&prev) = last_on.get(&s.pipe) {
            // Answered 100 µs after it came; quiet 250 µs after that.
            assert!(s.at >= prev + 350_000, "{} ns after the last", s.at - prev);
        }
        last_on.insert(s.pipe, s.at);
    }
    assert_eq!(ran.total.count(OpKind::Get) as usize, ran.gets_seen());
}

#[test]
fn late_reads_time_each_answer_by_when_it_came() {
    // The open loop's default: the worker sleeps to the next arrival and
    // reads what came meanwhile, each read timed by its receive stamp.
    let late = paced(&[], Scripted::after(100_000));
    let lat = &late.total.op(OpKind::Get).expect("gets").latency;
    let server = lat.lowest_equivalent(100_000);
    // Never earlier than it came; a read of two answers dates the first
    // by the second's stamp, as the kernel does, so a few are later.
    assert_eq!(lat.lowest_equivalent(lat.min()), server);
    assert_eq!(lat.lowest_equivalent(lat.value_at_quantile(0.5)), server);
    assert_eq!(late.total.count(OpKind::Get) as usize, late.gets_seen());
}

/// `--coalesce 200us`: an arrival waits up to 200 µs for those due after
/// it, and they go out at one wake-up: the server sees them at one
/// instant, none before it was due, none more than the window late.
#[test]
fn coalesced_arrivals_reach_the_server_together_within_the_window() {
    let distinct = |ran: &super::Ran| {
        let mut at: Vec<u64> = ran.seen.iter().map(|s| s.at).collect();
        at.dedup();
        at.len()
    };
    let apart = paced(&["-c", "4"], Scripted::after(100_000));
    assert_eq!(distinct(&apart), apart.seen.len(), "one instant each");
    let ran = paced(
        &["-c", "4", "--coalesce", "200us"],
        Scripted::after(100_000),
    );
    let n = ran.seen.len();
    let instants = distinct(&ran);
    // Poisson at 2,000/s: a 200 µs window opened by each instant's first
    // arrival takes in 0.4 more on average: n / 1.4 instants.
    let expected = n as f64 / 1.4;
    assert!(
        (instants as f64 - expected).abs() < 0.1 * expected,
        "{instants} instants of {n} arrivals"
    );
    // Late by the wait, never early, never beyond the window.
    let lag = &ran.total.send_lag;
    assert!(
        lag.max() <= lag.highest_equivalent(200_000),
        "{}",
        lag.max()
    );
    assert!(lag.value_at_quantile(0.5) > 50_000, "the wait is measured");
}
