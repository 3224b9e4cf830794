//! mutilate's and memcache-perf's smaller knobs: `--skip`, `-W/--wait`,
//! `--queries`, `--no-nodelay`, `--trace-commands`; each read back from
//! the server or the kernel, not from mcbench alone.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::*;

fn served(m: &Memcached) -> u64 {
    m.stat("cmd_get") + m.stat("cmd_set")
}

#[test]
fn skip_drops_late_arrivals_unsent_and_keeps_the_latency_bounded() {
    let _machine = quiet_machine();
    let m = capped_memcached();
    let overload = [
        "--affinity",
        "1",
        "-q",
        "300k",
        "-c",
        "2",
        "-t",
        "1s",
        "--no-load",
        "--timeout",
        "20s",
    ];
    let mut args = overload.to_vec();
    args.push("--skip");
    let before = served(&m);
    let (_, skip) = run_ok(&m.addr(), &args);
    let skips = count(&skip, "client.skips");
    assert!(skips > 10_000, "{skips} skips at 300k/s offered");
    // Skipped arrivals were never sent: the server saw exactly the answered.
    assert_eq!(served(&m) - before, count(&skip, "total.count"));
    assert!(skip["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "skipped"));
    // Without it the same overload queues in the client: nothing is
    // skipped, and every arrival was answered, failed or left unsent.
    // (Which arrivals are skipped, 5 ms late, is the open loop's unit
    // test; how far the tail then stays from the queued run's is a
    // comparison of two runs' latency, for `bench/`.)
    let (_, queued) = run_json(&[&["run", "-s", &m.addr()][..], &overload[..]].concat());
    assert_eq!(count(&queued, "client.skips"), 0);
    assert!(!queued["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "skipped"));
}

#[test]
fn wait_pauses_with_nothing_sent_before_measuring() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let launched = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let t0 = Instant::now();
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-W",
            "1500ms",
            "-t",
            "300ms",
            "--json",
            "-",
        ],
        &[],
    );
    // Once the preload's 10,000 sets (the default key space) are in,
    // however long a loaded machine takes, the wait begins: for 400 of
    // its 1,500 ms nothing else is sent.
    while served(&m) < 10_000 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no preload");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mid = served(&m);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(served(&m), mid, "requests were sent during --wait");
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(f(&j, "started_unix_s") - launched >= 1.5);
    assert!(t0.elapsed() >= Duration::from_millis(1800));
    assert_eq!(f(&j, "spec.wait"), 1.5);
}

#[test]
fn queries_is_the_run_s_request_count_shared_among_the_servers() {
    let _machine = shared_machine();
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let servers = format!("{},{}", a.addr(), b.addr());
    let (before_a, before_b) = (served(&a), served(&b));
    let (_, j) = run_json(&["run", "-s", &servers, "--queries", "1000", "--no-load"]);
    assert_eq!(count(&j, "total.count"), 1000);
    let (on_a, on_b) = (served(&a) - before_a, served(&b) - before_b);
    assert_eq!(on_a + on_b, 1000);
    assert!(on_a > 300 && on_b > 300, "{on_a} and {on_b}");
}

/// strace's record of the TCP_NODELAY values mcbench set.
fn nodelay_values(addr: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "-f",
        "-e",
        "trace=setsockopt",
        support::BIN,
        "run",
        "-s",
        addr,
    ];
    args.extend(["-t", "200ms", "-c", "2"]);
    args.extend(extra);
    let out = Command::new("strace")
        .args(&args)
        .env_remove("MEMCACHED_SERVERS")
        .output()
        .expect("strace runs (apt-get install strace)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("TCP_NODELAY"))
        // Lines of a multithreaded process start with "[pid N] ".
        .map(|l| {
            l.split("TCP_NODELAY, [")
                .nth(1)
                .unwrap_or("")
                .chars()
                .take(1)
                .collect()
        })
        .collect()
}

#[test]
fn no_nodelay_leaves_nagle_on_as_the_kernel_sees_it() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    assert_eq!(nodelay_values(&m.addr(), &[]), ["1", "1"]);
    assert_eq!(nodelay_values(&m.addr(), &["--no-nodelay"]), ["0", "0"]);
}

#[test]
fn trace_commands_refused_by_a_stock_memcached_are_warnings() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["--trace-commands", "-t", "200ms"]);
    let refused: Vec<(String, String)> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "trace_refused")
        .map(|w| {
            assert_eq!(w["reply"], "ERROR");
            (
                w["command"].as_str().unwrap().to_string(),
                w["server"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            ("start_trace".to_string(), m.addr()),
            ("stop_trace".to_string(), m.addr())
        ]
    );
    assert!(count(&j, "total.count") > 0);
    assert_usage_error(
        &mcbench(&[
            "run",
            "-s",
            &m.addr(),
            "--trace-commands",
            "--protocol",
            "binary",
        ]),
        "text commands",
    );
    assert_usage_error(&mcbench(&["run", "-s", &m.addr(), "--skip"]), "--rate");
}

#[test]
fn moderate_keeps_a_connection_quiet_for_250us_after_each_answer() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let one_conn = ["-c", "1", "-q", "6k", "-t", "1s", "--no-load"];
    // Requests the server saw per second of the run (drain included).
    // Every arrival of the second is answered, counted as failed, or
    // counted as unsent (still waiting for a quiet connection when
    // sending stopped): none is lost.
    let rate = |extra: &[&str]| {
        let before = served(&m);
        let (_, j) = run_json(&[&["run", "-s", &m.addr()][..], &one_conn[..], extra].concat());
        let arrivals =
            count(&j, "total.count") + count(&j, "total.errors") + count(&j, "errors.unsent");
        assert!(
            (5400..6600).contains(&arrivals),
            "{arrivals} arrivals at 6000/s for 1 s"
        );
        let warned = j["warnings"].as_array().unwrap().iter().any(|w| {
            ["rate_missed", "late_schedule", "worker_saturated"]
                .contains(&w["kind"].as_str().unwrap())
        });
        let rate = (served(&m) - before) as f64 / (f(&j, "duration_s") + 0.05);
        (rate, warned)
    };
    // One connection at depth 1 that waits 250 µs after each answer sends
    // fewer than 4000 requests a second, whatever the rate asked.
    let (moderated, _) = rate(&["--moderate"]);
    assert!(moderated <= 4000.0, "{moderated}/s with --moderate");
    // Without it the same connection is not held to that bound: it
    // serves well over 4000/s, or the run says the client could not.
    let (free, warned) = rate(&[]);
    assert!(
        free > 4400.0 || warned,
        "{free}/s without --moderate, and no warning"
    );
    assert_usage_error(&mcbench(&["run", "-s", &m.addr(), "--moderate"]), "--rate");
}
