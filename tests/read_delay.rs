//! `--read-delay`: a closed loop that reads answers in batches, on purpose
//! late, and says so.

mod support;

use support::*;

/// With one request in flight, each answer comes to a worker that waits
/// for it, and is read one pause after the wake-up it causes.
#[test]
fn answers_are_read_one_pause_after_they_wake_the_worker() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let addr = m.addr();
    let median_latency_us = |delay: &str| {
        let (_, j) = run_ok(&addr, &["-c", "1", "-x", "300", "--read-delay", delay]);
        assert_eq!(f(&j, "total.count"), 300.0);
        assert_eq!(f(&j, "errors.protocol"), 0.0);
        f(&j, "total.latency_us.p50")
    };
    assert!(median_latency_us("0s") < 1500.0);
    // HdrHistogram reports a bucket's low end (1 µs wide here): 1 % margin.
    assert!(median_latency_us("2ms") >= 1980.0);
}

/// An answer bigger than one read, or than the socket's buffer, is read
/// on at once, not one pause per read or per buffer-full: the pause comes
/// before reads that start answers. Over TCP and a unix socket (whose
/// buffer is the sender's, ~200 KB).
#[test]
fn a_large_answer_waits_one_pause_not_one_per_read() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let tcp = Memcached::start(&[]);
    let _unix = Memcached::start_unix(&path);
    for addr in [tcp.addr(), format!("unix:{}", path.display())] {
        // 1 MB values, 4 in flight: each answer takes many reads, and
        // more than the unix socket holds.
        let (out, j) = run_json(&[
            "run",
            "-s",
            &addr,
            "-r",
            "20",
            "-V",
            "1000000",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "4",
            "-x",
            "40",
            "--read-delay",
            "5ms",
        ]);
        assert!(out.status.success(), "{addr}: {}", stderr(&out));
        assert_eq!(f(&j, "gets.hits"), 40.0, "{addr}");
        // About one pause (6-7 ms here); one per read or per buffer-full
        // is ten or more (70 ms over the unix socket).
        let p50 = f(&j, "total.latency_us.p50");
        assert!(p50 < 20_000.0, "{addr}: p50 {p50} µs");
    }
}

/// The preload is not measured against anything: it is never delayed.
/// 2,000 sets on one connection, one at a time, would take 20 s at one
/// 10 ms pause each.
#[test]
fn the_preload_reads_at_once() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let started = std::time::Instant::now();
    let (_, j) = run_ok(
        &m.addr(),
        &["-r", "2000", "-c", "1", "-x", "10", "--read-delay", "10ms"],
    );
    assert_eq!(f(&j, "gets.misses"), 0.0);
    assert!(m.stat("cmd_set") >= 2000);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
}

#[test]
fn the_delay_is_in_the_spec_and_the_report() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["-x", "100", "--read-delay", "300us"]);
    assert!((f(&j, "spec.read_delay") - 0.0003).abs() < 1e-9);
    let out = mcbench(&["run", "-s", &m.addr(), "-x", "100", "--read-delay", "300us"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reads delayed 300 µs (answers timed up to 300 µs late)"),
        "{text}"
    );
}

#[test]
fn an_open_loop_or_a_long_delay_is_refused() {
    let _machine = shared_machine();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "-q", "1000", "--read-delay", "1ms"],
            "--read-delay is for closed loops",
        ),
        (&["run", "--read-delay", "11ms"], "at most 10ms"),
        (
            &["run", "--load-only", "--read-delay", "1ms"],
            "--load-only measures the preload",
        ),
        (
            &["run", "-s", "udp:127.0.0.1:9", "--read-delay", "1ms"],
            "--read-delay is for streams",
        ),
        (&["run", "--read-delay", "soon"], "invalid duration"),
    ];
    for (args, needle) in cases {
        let out = mcbench(args);
        assert_usage_error(&out, needle);
    }
}
