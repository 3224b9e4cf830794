//! `--read-delay`: a closed loop that reads answers in batches, on purpose
//! late, and says so.

mod support;

use support::*;

/// Every answer is read after the pause that followed the wake-up it
/// caused, and every request was sent before that wake-up: so no latency
/// can be shorter than the delay.
#[test]
fn every_answer_is_timed_at_least_the_delay_late() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let addr = m.addr();
    let min_latency_us = |delay: &str| {
        let (out, j) = run_json(&[
            "run",
            "-s",
            &addr,
            "-c",
            "2",
            "-d",
            "4",
            "-x",
            "2000",
            "--read-delay",
            delay,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(f(&j, "total.count"), 2000.0);
        assert_eq!(f(&j, "errors.protocol"), 0.0);
        f(&j, "total.latency_us.min")
    };
    assert!(min_latency_us("0s") < 2000.0);
    assert!(min_latency_us("2ms") >= 2000.0);
}

#[test]
fn the_delay_is_in_the_spec_and_the_report() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (out, j) = run_json(&["run", "-s", &m.addr(), "-x", "100", "--read-delay", "300us"]);
    assert!(out.status.success(), "{}", stderr(&out));
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
        (&["run", "--read-delay", "soon"], "invalid duration"),
    ];
    for (args, needle) in cases {
        let out = mcbench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}
