//! `--measure-connections`: a second group of connections at its own low
//! rate beside the load, counted and reported apart (mutilate's -C/-Q/-D).

use crate::support;

use support::*;

#[test]
fn the_measurement_group_is_counted_and_reported_apart() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let (out, j) = run_ok(
        &m.addr(),
        &[
            "-c",
            "2",
            "-d",
            "8",
            "-t",
            "1s",
            "--no-load",
            "--measure-connections",
            "2",
            "--measure-rate",
            "400",
            "--measure-depth",
            "2",
        ],
    );
    let measure = &j["measure"];
    assert_eq!(f(measure, "connections"), 2.0);
    assert_eq!(f(measure, "rate"), 400.0);
    assert_eq!(f(measure, "depth"), 2.0);
    // The group keeps its own schedule: ~400 requests over the second.
    let group = f(measure, "total.count");
    let secs = f(&j, "duration_s");
    assert!(
        (group - 400.0 * secs).abs() < 0.25 * 400.0 * secs,
        "{group} in {secs} s"
    );
    // The server saw both groups' requests, and nothing else.
    let load = f(&j, "total.count");
    let served = (m.stat("cmd_get") + m.stat("cmd_set") - before) as f64;
    assert_eq!(served, load + group, "load {load}, measurement {group}");
    // Each group's latency comes from its own histogram.
    assert_eq!(
        f(measure, "total.latency_us.p50"),
        hdr(&measure["total"]["latency_hdr"]).value_at_quantile(0.5) as f64 / 1e3
    );
    assert!(stderr(&out).contains("Measurement connections (2 per server, 400 ops/s, depth 2)"));
}

#[test]
fn a_scan_reads_the_measurement_group() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "scan.json");
    let out = mcbench(&[
        "scan",
        "-s",
        &m.addr(),
        "--rates",
        "2k,4k",
        "-t",
        "500ms",
        "-w",
        "0s",
        "--measure-connections",
        "1",
        "--measure-rate",
        "300",
        "--json",
        &json,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let scan = read_json(dir.path().join("scan.json").as_path());
    for (p, run) in scan["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(scan["runs"].as_array().unwrap())
    {
        assert_eq!(p["group"], "measure");
        assert_eq!(f(p, "p99_us"), f(run, "measure.total.latency_us.p99"));
        // The achieved rate is the load's.
        assert_eq!(f(p, "achieved_rate"), f(run, "total.rate"));
    }
}

#[test]
fn measurement_flags_alone_or_with_the_wrong_run_are_refused() {
    let _machine = shared_machine();
    for (args, needle) in [
        (
            vec!["--measure-rate", "100"],
            "not provided:\n  --measure-connections <N>",
        ),
        (
            vec!["--measure-depth", "2"],
            "not provided:\n  --measure-connections <N>",
        ),
        (vec!["--measure-connections", "1", "-x", "100"], "--ops"),
        (vec!["--measure-connections", "0"], "at least 1"),
        (
            vec!["--measure-connections", "1", "--measure-rate", "0"],
            "positive",
        ),
        (
            vec!["--measure-connections", "1", "--num-conns", "5", "-t", "1s"],
            "--num-conns",
        ),
    ] {
        let mut all = vec!["run", "-s", "127.0.0.1:1"];
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}

#[test]
fn a_measurement_group_late_to_its_schedule_makes_the_run_client_bound() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-c",
            "2",
            "-t",
            "2s",
            "--measure-connections",
            "1",
            "--measure-rate",
            "5000",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    // Frozen for 300 ms mid-run: about 1,500 of the group's ~10,000
    // arrivals come 0-300 ms late, so its send lag p99 is far over 1 ms.
    std::thread::sleep(std::time::Duration::from_millis(900));
    let pid = child.id() as i32;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = wait_bounded(child, std::time::Duration::from_secs(60));
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let j = read_json(&json);
    let late = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "measure_late")
        .unwrap_or_else(|| panic!("no measure_late in {}", j["warnings"]));
    assert!(late["send_lag_p99_us"].as_f64().unwrap() > 1000.0, "{late}");
    assert_eq!(j["client"]["client_bound"], true);
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
