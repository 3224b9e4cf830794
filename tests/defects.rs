//! The defects a new user found, each with the test that failed before
//! its fix: bad input that got through, semantics that differed from the
//! seeds', flags across layers, numbers that lied.

mod support;

use std::time::Duration;
use support::*;

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let fifo = fifo.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "-s", ""], "empty server address"),
        (&["run", "-s", " "], "empty server address"),
        (&["run", "-s", "localhost:99999"], "no server address"),
        (
            &["run", "--timeout", "0"],
            "--timeout must be at least 1 ms",
        ),
        (
            &["run", "--threads", "100000"],
            "--threads must be at most 256",
        ),
        (
            &["run", "--max-value-size", "2G"],
            "--max-value-size must be between",
        ),
        (&["run", "--config", "/dev/zero"], "not a regular file"),
        (&["run", "--config", fifo], "not a regular file"),
        (&["run", "-F", "/dev/zero"], "not a regular file"),
        (
            &["run", "-q", "1000", "--arrival", "normal:1,100"],
            "negative gaps",
        ),
        (
            &["run", "-q", "1000", "--arrival", "uniform:-9,11"],
            "negative gaps",
        ),
        (&["run", "--load", "--no-load"], "cannot be used with"),
        (
            &["run", "-r", "18446744073709551615"],
            "--keys must be at most 2^62",
        ),
    ];
    for (args, needle) in cases {
        assert_usage_error(&mcbench(args), needle);
    }
    let out = mcbench_env(&["run", "-t", "1s"], &[("MEMCACHED_SERVERS", "")]);
    assert_usage_error(&out, "empty server address");
    // A bad value in a run file names the file and the key.
    let file = dir.path().join("run.toml");
    std::fs::write(&file, "threads = \"lots\"\n").unwrap();
    let out = mcbench(&["run", "--config", file.to_str().unwrap()]);
    assert_usage_error(&out, &format!("{}: key 'threads'", file.display()));
}

#[test]
fn an_unknown_host_is_a_failed_run_not_bad_usage() {
    let out = mcbench(&["run", "-s", "no-such-host.invalid:11211", "-t", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot resolve server 'no-such-host.invalid'"));
}

#[test]
fn client_slices_of_a_huge_key_space_do_not_overflow() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // 2^62 keys: total × index overflowed u64 before.
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-r",
            "4611686018427387904",
            "--client",
            "1/2",
            "--no-load",
            "-x",
            "100",
            "-u",
            "0",
        ],
    );
    assert_eq!(f(&j, "total.count"), 100.0);
}

#[test]
fn later_layers_override_earlier_ones_and_typed_conflicts_are_refused() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.toml");
    std::fs::write(
        &file,
        "duration = \"30s\"\nprotocol = \"meta\"\nno-load = true\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    // The typed -x replaces the file's duration, -B its protocol, --load
    // its no-load.
    let (_, j) = run_ok(&m.addr(), &["--config", file, "-x", "300", "-B", "--load"]);
    assert_eq!(j["spec"]["stop"]["ops"], 300);
    assert_eq!(j["spec"]["protocol"], "binary");
    assert_eq!(j["spec"]["load"], "load");
    // Without typed flags the file's values hold.
    let (_, j) = run_ok(&m.addr(), &["--config", file, "-t", "1s"]);
    assert_eq!(j["spec"]["protocol"], "meta");
    assert_eq!(j["spec"]["load"], "no_load");
    // Typed together, they conflict.
    assert_usage_error(
        &mcbench(&["run", "-t", "1s", "-x", "5"]),
        "cannot be used with",
    );
    assert_usage_error(
        &mcbench(&["run", "--protocol", "meta", "-B"]),
        "cannot be used with",
    );
}

#[test]
fn twemperf_uniform_sizes_exclude_their_upper_bound() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "300",
        "-V",
        "u10,12",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut seen = std::collections::BTreeSet::new();
    for id in 0..300 {
        let key = format!("mcb:{id:0>26}");
        let reply = raw_get(&m, &key);
        let header = reply.lines().next().unwrap();
        let len: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
        seen.insert(len);
    }
    // [10, 12): 10 and 11, each likely; never 12.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), [10, 11]);
}

#[test]
fn a_rate_is_taken_with_a_suffix() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["-q", "4k", "-t", "1s"]);
    assert_eq!(f(&j, "spec.rate"), 4000.0);
}

#[test]
fn window_runs_do_not_claim_a_preload() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let out = mcbench(&["run", "-s", &m.addr(), "--window", "100", "-t", "1s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("not preloaded (each window fills"), "{text}");
    assert!(!text.contains("keys preloaded"), "{text}");
}

#[test]
fn the_wait_for_answers_that_never_come_is_not_measured_time() {
    let _machine = shared_machine();
    // 50 answers, then silence: the run sends for 1 s, then waits 1 s.
    let addr = fake_server(Misbehaviour::StallAfter(50));
    let (out, j) = run_json(&[
        "run",
        "-s",
        &addr,
        "-t",
        "1s",
        "-q",
        "1000",
        "-c",
        "1",
        "--timeout",
        "1s",
        "--no-load",
        "-u",
        "0",
    ]);
    // Each request unanswered for --timeout is counted as it times out and
    // the run goes on: 95 % failed is a run with a warning, not a failed one
    // (the verdict's rule is 99 %).
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f(&j, "total.count"), 50.0);
    // Measured: the second of sending, not the wait after it.
    let secs = f(&j, "duration_s");
    assert!((0.9..1.3).contains(&secs), "duration_s {secs}");
    // The one request in flight timed out; the arrivals that waited for
    // its connection were never sent (`-t` ends sending), so the server
    // failed none of them.
    assert_eq!(f(&j, "errors.timeout"), 1.0, "{}", j["errors"]);
    assert!(f(&j, "errors.unsent") > 800.0, "{}", j["errors"]);
}

#[test]
fn a_signal_counts_the_requests_it_cut_off() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::StallAfter(0));
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "-t",
            "30s",
            "-q",
            "1000",
            "--no-load",
            "--json",
            &json,
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(700));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    // Every request sent is on the books: none answered, all cut off.
    assert_eq!(f(&j, "total.count"), 0.0);
    assert!(f(&j, "errors.cut_off") > 100.0, "{}", j["errors"]);
    assert_eq!(j["failure"], serde_json::Value::Null);
}

#[test]
fn a_signal_during_the_preload_is_no_client_verdict() {
    let _machine = shared_machine();
    let m = Memcached::start(&["-m", "1024"]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-r",
            "5M",
            "-t",
            "10s",
            "--json",
            &json,
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(800));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(j["client"]["client_bound"], false, "{}", j["warnings"]);
    assert_eq!(j["preloaded"], serde_json::Value::Null);
    assert!(!stdout(&out).contains("CLIENT-BOUND"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("preload not finished"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn udp_multigets_of_values_over_a_datagram_are_reassembled() {
    let _machine = shared_machine();
    let m = Memcached::start_udp();
    let load = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "1000",
        "-V",
        "2000",
    ]);
    assert!(load.status.success(), "{}", stderr(&load));
    let udp = format!("udp:{}", m.addr());
    let (_, j) = run_ok(
        &udp,
        &[
            "--multiget",
            "10",
            "-V",
            "2000",
            "-r",
            "1000",
            "-u",
            "0",
            "--no-load",
            "-t",
            "1s",
        ],
    );
    let n = f(&j, "total.count");
    assert!(n > 100.0, "{}", j["total"]);
    assert_eq!(f(&j, "gets.hits"), 10.0 * n);
    assert_eq!(f(&j, "total.errors"), 0.0, "{}", j["errors"]);
    assert_eq!(f(&j, "errors.packet_drop"), 0.0);
    assert_eq!(m.stat("get_hits") as f64, f(&j, "gets.hits"));
}

#[test]
fn the_embedded_server_needs_descriptors_checked_up_front() {
    let script = format!("ulimit -n 256 && ulimit -Hn 256 && exec {BIN} run -t 1s");
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_usage_error(&out, "file descriptors");
}

#[test]
fn the_value_limit_admits_what_servers_legitimately_return() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // incr lengthens 1-byte digit values; binary incr answers 8 bytes.
    for protocol in ["ascii", "binary", "meta"] {
        let (out, j) = run_json(&[
            "run",
            "-s",
            &m.addr(),
            "--protocol",
            protocol,
            "-V",
            "1",
            "-r",
            "5",
            "--mix",
            "get=1,incr=1",
            "--delta",
            "1000",
            "-x",
            "400",
            "-c",
            "1",
        ]);
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        assert_eq!(f(&j, "errors.protocol"), 0.0, "{protocol}: {}", j["errors"]);
        assert!(
            f(&j, "responses.num") > 100.0,
            "{protocol}: {}",
            j["responses"]
        );
    }
    // Without a preload the keys may hold larger values other runs wrote.
    let load = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "50",
        "-V",
        "5000",
    ]);
    assert!(load.status.success(), "{}", stderr(&load));
    let (_, j) = run_ok(
        &m.addr(),
        &["--no-load", "-r", "50", "-V", "10", "-u", "0", "-x", "200"],
    );
    assert_eq!(f(&j, "errors.protocol"), 0.0, "{}", j["errors"]);
    assert_eq!(f(&j, "gets.hits"), 200.0);
}

#[test]
fn a_rate_too_low_to_send_anything_is_no_failure() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // 0.1 ops/s for 1 s: most likely no arrival at all.
    let (_, j) = run_ok(
        &m.addr(),
        &["-q", "0.1", "--arrival", "fixed", "-t", "1s", "--no-load"],
    );
    assert_eq!(f(&j, "total.count"), 0.0);
    assert_eq!(j["failure"], serde_json::Value::Null);
    let missed = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "rate_missed");
    assert!(missed, "{}", j["warnings"]);
}
