//! `mcbench search` and `mcbench scan` against a scripted server that
//! serves exactly `CAPACITY` requests a second, whatever the machine's
//! speed (`capped_server`): the knee every curve must find is known.
//! Each test judges a client on time (a late one's points are
//! client-bound, neither pass nor fail), so each has the machine to
//! itself (`quiet_machine`).

use crate::support;

use serde_json::Value;
use std::time::Duration;
use support::*;

/// The scripted server's capacity, ops/s.
const CAPACITY: f64 = 4_500.0;

/// The workload: open loop, light on the client (a few thousand gets a
/// second), enough connections that the server's queue, not the client's,
/// holds the overload at first.
const PACED: &[&str] = &[
    "-c",
    "16",
    "--mix",
    "get=100",
    "--no-load",
    "-t",
    "700ms",
    "-w",
    "300ms",
];

fn with(addr: &str, head: &[&str], tail: &[&str]) -> Vec<String> {
    head.iter()
        .chain(["-s", addr].iter())
        .chain(PACED)
        .chain(tail)
        .map(|s| s.to_string())
        .collect()
}

fn run(args: &[String], limit: Duration) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    wait_bounded(spawn_mcbench(&args, &[]), limit)
}

fn points(curve: &Value) -> &Vec<Value> {
    curve["points"].as_array().unwrap()
}

/// A client-bound point's run shows the client late by its own record:
/// its send-lag histogram (read by the hdrhistogram crate) has a p99
/// over 1 ms, or it warns of a tail made in the client or a saturated
/// worker. On a loaded machine a point may be client-bound, but never
/// without cause.
fn assert_client_late(curve: &Value) {
    for (p, run) in points(curve).iter().zip(curve["runs"].as_array().unwrap()) {
        if p["verdict"] != "client_bound" {
            continue;
        }
        let lag_p99_us = hdr(&run["client"]["send_lag_hdr"]).value_at_quantile(0.99) as f64 / 1e3;
        let warned = run["warnings"].as_array().unwrap().iter().any(|w| {
            ["client_tail", "worker_saturated", "measure_late"]
                .contains(&w["kind"].as_str().unwrap())
        });
        assert!(
            lag_p99_us > 1000.0 || warned,
            "client-bound without cause: {p}"
        );
    }
}

/// Verdicts of `points` far from the knee, where the server's queue
/// decides them whatever the machine does: at most 0.9 × `CAPACITY` the
/// SLO holds (or the client was late: neither), from 1.1 × it fails.
fn assert_knee_at_capacity(points: &[Value]) {
    for p in points {
        let (rate, verdict) = (f(p, "offered_rate"), p["verdict"].as_str().unwrap());
        if rate <= 0.9 * CAPACITY {
            assert_ne!(verdict, "fail", "below the knee: {p}");
        }
        if rate >= 1.1 * CAPACITY {
            assert_ne!(verdict, "pass", "past the knee: {p}");
        }
        // A decided point's 95 % interval of the SLO's p50 lies wholly on
        // its side of the 5 ms bound.
        match verdict {
            "pass" => assert!(f(p, "slo_upper_us") <= 5_000.0, "{p}"),
            "fail" if p["why"].as_str().unwrap_or("").contains("at 95 %") => {
                assert!(f(p, "slo_lower_us") > 5_000.0, "{p}")
            }
            _ => {}
        }
    }
}

/// `--updown` runs the rates back down; a server that kept a state from
/// the way up (it slowed after 4,000 requests) answers the way down later
/// than the way up at the same rate: hysteresis. The SLO's percentile,
/// whose intervals are compared, is p50: a p99 of a 3 s run at 1,000/s
/// (some 27 beyond) lost its upper bound to one hiccup of a loaded host,
/// and so could not be compared (seen in CI and here, alone on the host).
#[test]
fn a_scan_up_and_down_flags_a_server_that_kept_a_state() {
    let _machine = quiet_machine();
    let server = slows_after(4_000, Duration::from_millis(10));
    let out = run(
        &with(
            &server,
            &["scan", "--rates", "1k,2k", "--updown", "--slo", "p50:50ms"],
            &["-t", "3s", "--json", "-"],
        ),
        Duration::from_secs(60),
    );
    let curve: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let rates: Vec<f64> = points(&curve)
        .iter()
        .map(|p| f(p, "offered_rate"))
        .collect();
    assert_eq!(rates, [1_000.0, 2_000.0, 1_000.0]);
    // 1k up: about 3,300 requests, all fast; 1k down: all 10 ms late
    // (16 connections serve up to 1,600/s so).
    assert_eq!(
        curve["hysteresis"],
        serde_json::json!([1_000.0]),
        "{}",
        stderr(&out)
    );
    assert!(curve["outcome"]
        .as_str()
        .unwrap()
        .contains("HYSTERESIS at 1000"));
}

#[test]
fn the_search_finds_the_knee_the_scan_draws() {
    let _machine = quiet_machine();
    let server = capped_server(CAPACITY);
    let dir = tempfile::tempdir().unwrap();
    let (scan_json, html, csv) = (
        path_in(dir.path(), "scan.json"),
        path_in(dir.path(), "scan.html"),
        path_in(dir.path(), "scan.csv"),
    );
    let out = run(
        &with(
            &server,
            &["scan", "--rates", "2k:8k:1k", "--slo", "p50:5ms"],
            &["--json", &scan_json, "--html", &html, "--csv", &csv],
        ),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let scan = read_json(dir.path().join("scan.json").as_path());
    assert_eq!(scan["schema"], "mcbench.curve/1");
    let pts = points(&scan);
    assert_eq!(pts.len(), 7);
    assert_eq!(scan["runs"].as_array().unwrap().len(), 7);
    for (i, p) in pts.iter().enumerate() {
        assert_eq!(f(p, "offered_rate"), 2_000.0 + 1_000.0 * i as f64);
        // Each point is its run, read from the run's own histogram.
        let run = &scan["runs"][i];
        assert_eq!(f(p, "p50_us"), f(run, "total.latency_us.p50"));
        assert_eq!(f(p, "achieved_rate"), f(run, "total.rate"));
    }
    assert_knee_at_capacity(pts);
    assert_client_late(&scan);
    let verdicts: Vec<&str> = pts.iter().map(|p| p["verdict"].as_str().unwrap()).collect();
    let judged = |v: &str| verdicts.iter().filter(|&&x| x == v).count();
    // A point the client was late on is neither pass nor fail (a machine
    // loaded beside the test makes them; src/app/curve/search.rs drives
    // the search through such probes exactly); with none, the knee is
    // judged from both sides.
    assert!(
        judged("client_bound") > 0 || (judged("pass") >= 2 && judged("fail") >= 2),
        "{verdicts:?}"
    );

    let search_json = path_in(dir.path(), "search.json");
    let out = run(
        &with(
            &server,
            &["search", "--slo", "p50:5ms", "--min-rate", "2k"],
            &["--json", &search_json],
        ),
        Duration::from_secs(240),
    );
    let search = read_json(dir.path().join("search.json").as_path());
    let probes = points(&search);
    assert_knee_at_capacity(probes);
    assert_client_late(&search);
    let lowest_fail = probes
        .iter()
        .filter(|p| p["verdict"] == "fail")
        .map(|p| f(p, "offered_rate"))
        .fold(f64::INFINITY, f64::min);
    match (search["answer"].as_f64(), search["client_ceiling"].as_f64()) {
        // The client was late at the knee, twice (a loaded host): the
        // search answers with the most it delivered meeting the SLO, and
        // says it is the client's ceiling; never more than the server
        // serves.
        (Some(answer), Some(ceiling)) => {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            assert_eq!(answer, ceiling);
            assert!(
                stdout(&out).contains("the CLIENT's ceiling"),
                "{}",
                stdout(&out)
            );
            assert!(answer <= 1.1 * CAPACITY, "{answer}");
            let (last, _) = probes.split_last().unwrap();
            assert_eq!(last["verdict"], "client_bound", "{last}");
        }
        (Some(answer), None) => {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            assert!(stdout(&out).contains("the highest rate meeting p50 ≤ 5000 µs"));
            // The answer passed twice (a probe the client was late on is
            // run again, and is neither), and the lowest rate that failed
            // is within the precision above it.
            let at_answer: Vec<&Value> = probes
                .iter()
                .filter(|p| f(p, "offered_rate") == answer)
                .collect();
            let passes = at_answer.iter().filter(|p| p["verdict"] == "pass").count();
            assert!(passes >= 2, "{at_answer:?}");
            assert!(at_answer.iter().all(|p| p["verdict"] != "fail"));
            assert!(at_answer.iter().any(|p| p["repeat"] == true));
            // The range: from the answer to the lowest rate that failed,
            // with only undecided probes (their 95 % intervals straddling
            // the bound) between, and no gap between probes over 2 %.
            let range = search["answer_range"]
                .as_array()
                .expect("a range with the answer");
            assert_eq!(range[0].as_f64(), Some(answer));
            assert_eq!(range[1].as_f64(), Some(lowest_fail));
            let mut inside: Vec<f64> = probes
                .iter()
                .map(|p| f(p, "offered_rate"))
                .filter(|r| *r > answer && *r < lowest_fail)
                .collect();
            for p in probes.iter().filter(|p| {
                let r = f(p, "offered_rate");
                r > answer && r < lowest_fail
            }) {
                assert!(
                    ["undecided", "client_bound"].contains(&p["verdict"].as_str().unwrap()),
                    "{p}"
                );
            }
            inside.extend([answer, lowest_fail]);
            inside.sort_by(f64::total_cmp);
            for w in inside.windows(2) {
                assert!((w[1] - w[0]) / answer <= 0.02 + 1e-9, "{inside:?}");
            }
            assert!(stdout(&out).contains(&format!(
                "at 95 % it lies in [{answer:.0}, {lowest_fail:.0}]"
            )));
            assert!(
                (0.9 * CAPACITY..1.1 * CAPACITY).contains(&answer),
                "search {answer} against the server's capacity {CAPACITY}\n{}",
                stderr(&out)
            );
        }
        // A client late twice on one probe: the search stops with exit 1
        // and says so (its probes are judged above, as far as the knee
        // decides them).
        (None, _) => {
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert!(
                stderr(&out).contains("the client, not the server, limits the first rate"),
                "{}",
                stderr(&out)
            );
        }
    }
    check_csv_against_json(&csv, &scan);
    let charts = drawn_charts(dir.path().join("scan.html").as_path());
    assert_eq!(charts.len(), 1, "one latency–throughput chart: {charts:?}");
    assert_eq!(charts[0].0, 3, "p50, p99 and p99.9 drawn: {charts:?}");
}

/// Python's csv module reads the scan's CSV: the same points as the JSON.
fn check_csv_against_json(csv: &str, scan: &Value) {
    let script = r#"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(json.dumps([[float(r["offered_rate"]), float(r["p99_us"]), r["verdict"]] for r in rows]))
"#;
    let rows: Vec<(f64, f64, String)> = serde_json::from_slice(&python(script, &[csv])).unwrap();
    assert_eq!(rows.len(), points(scan).len());
    for (row, p) in rows.iter().zip(points(scan)) {
        assert_eq!(row.0, f(p, "offered_rate"));
        assert!((row.1 - f(p, "p99_us")).abs() < 1e-3);
        assert_eq!(row.2, p["verdict"].as_str().unwrap());
    }
}

#[test]
fn a_bound_unmet_at_the_lowest_rate_fails_the_search() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "s.json");
    // A light load, not the saturating one: no p50 is 1 µs at any rate,
    // and a busy-polling worker pinned to one CPU of a shared 2-CPU host
    // was late twice in a row at 20k multigets/s (CI, 0d3ab87).
    let args: Vec<String> = [
        "search",
        "--slo",
        "p50:1us",
        "--min-rate",
        "2k",
        "-s",
        &m.addr(),
        "-c",
        "4",
        "--no-load",
        "-t",
        "700ms",
        "-w",
        "300ms",
        "--json",
        &json,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(&args, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let search = read_json(dir.path().join("s.json").as_path());
    assert!(search["answer"].is_null());
    assert_client_late(&search);
    let probes = points(&search);
    // A client late twice on the lowest rate (a loaded machine) decides
    // nothing, and says so; else the bound is missed there.
    if probes.len() == 2 && probes.iter().all(|p| p["verdict"] == "client_bound") {
        assert!(
            stderr(&out).contains("the client, not the server, limits the first rate, 2000"),
            "{}",
            stderr(&out)
        );
    } else {
        assert_missed_at_the_lowest_rate(&out, probes);
    }
}

/// The search's end when a bound is missed at its lowest rate (2,000/s).
fn assert_missed_at_the_lowest_rate(out: &std::process::Output, probes: &[Value]) {
    assert!(
        stderr(out).contains("is not met even at the lowest rate, 2000 ops/s"),
        "{}",
        stderr(out)
    );
    // One probe, at the lowest rate (run again first if the client was
    // late on it).
    let (last, before) = probes.split_last().unwrap();
    assert!(before.iter().all(|p| p["verdict"] == "client_bound"));
    assert!(before.len() <= 1);
    assert_eq!(last["verdict"], "fail");
    assert_eq!(f(last, "offered_rate"), 2_000.0);
    assert!(f(last, "p50_us") > 1.0);
}

/// One client thread and 32 connections against memcached, an SLO no
/// rate misses (p50 ≤ 2 s; a p99's upper bound, from some 40 samples
/// beyond in a 1 s probe, was lost to one hiccup of the host, undecided
/// at the first probe, in 2 of 3 runs here): the search doubles from
/// 4,000 ops/s until the
/// thread is the limit (its connections could carry far more), wherever
/// that is on this machine. It answers with the most the client carried
/// with the SLO met, named as the client's ceiling, and exits 0; the
/// server counted every request the probes measured.
#[test]
fn a_search_that_meets_the_clients_ceiling_answers_with_it() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "s.json");
    let args: Vec<String> = [
        "search",
        "--slo",
        "p50:2s",
        "--min-rate",
        "4000",
        "-T",
        "1",
        "-c",
        "32",
        "-s",
        &m.addr(),
        "--no-load",
        "--mix",
        "get=1",
        "-t",
        "1s",
        "-w",
        "0",
        "--json",
        &json,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(&args, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("the CLIENT's ceiling"), "{report}");
    let search = read_json(dir.path().join("s.json").as_path());
    let ceiling = f(&search, "client_ceiling");
    assert_eq!(f(&search, "answer"), ceiling);
    let probes = points(&search);
    let (last, before) = probes.split_last().unwrap();
    assert_eq!(last["verdict"], "client_bound", "{last}");
    // The answer: the best rate that passed, or the client-bound probe's
    // own delivered rate where its interval lay under the bound.
    let best_pass = before
        .iter()
        .filter(|p| p["verdict"] == "pass")
        .map(|p| f(p, "offered_rate"))
        .fold(0.0, f64::max);
    let delivered = match last["slo_upper_us"].as_f64() {
        Some(u) if u <= 2e6 => f(last, "achieved_rate"),
        _ => 0.0,
    };
    assert_eq!(ceiling, best_pass.max(delivered), "{probes:?}");
    // The server's own count: at least every answer the probes measured.
    let answered: f64 = search["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| f(r, "total.count"))
        .sum();
    assert!(m.stat("cmd_get") as f64 >= answered, "{answered} answered");
}

#[test]
fn a_profile_lends_the_search_its_slo_or_says_it_has_none() {
    let _machine = quiet_machine();
    let out = mcbench(&["search", "--profile", "mcperf-3", "-s", "127.0.0.1:1"]);
    assert_usage_error(&out, "p99.9");
    let out = mcbench(&["search", "-s", "127.0.0.1:1"]);
    assert_usage_error(&out, "--slo");
    let out = mcbench(&["search", "--slo", "p99:fast", "-s", "127.0.0.1:1"]);
    assert_usage_error(&out, "not an SLO");
    // The bracket is --bracket; --precision is run's P:W target, in
    // search as in run (they were once one name, two meanings).
    let out = mcbench(&[
        "search",
        "--slo",
        "p99:1ms",
        "--bracket",
        "0",
        "-s",
        "127.0.0.1:1",
    ]);
    assert_usage_error(&out, "--bracket");
    let out = mcbench(&[
        "search",
        "--slo",
        "p99:1ms",
        "--precision",
        "2%",
        "-s",
        "127.0.0.1:1",
    ]);
    assert_usage_error(&out, "PERCENTILE:HALF-WIDTH");

    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "s.json");
    // One probe allowed: the search stops there, but the point is
    // written with the profile's SLO (memcache-perf's p99 10 ms).
    let out = run(
        &[
            "search",
            "--profile",
            "mcperf-2",
            "-c",
            "2",
            "-s",
            &m.addr(),
            "--max-probes",
            "1",
            "--bracket",
            "50%",
            "-t",
            "200ms",
            "-w",
            "0s",
            "--json",
            &json,
        ]
        .map(String::from),
        Duration::from_secs(60),
    );
    // Its end depends on the machine (no answer after one probe; or the
    // bound missed, or the client late, at 1000/s): never a pass.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let search = read_json(dir.path().join("s.json").as_path());
    assert_eq!(f(&search, "slo.percentile"), 99.0);
    assert_eq!(f(&search, "slo.bound_us"), 10_000.0);
    assert_eq!(f(&search, "precision"), 0.5);
    assert!((1..=2).contains(&points(&search).len()));
    assert_eq!(search["runs"][0]["spec"]["value_size"], "fixed:1000");
}

#[test]
fn outputs_and_flags_a_series_cannot_take_are_refused_before_any_traffic() {
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let log = path_in(dir.path(), "x.hlog");
    for (args, needle) in [
        (
            vec!["scan", "--rates", "1k", "--hdr-log", &log],
            "--hdr-log",
        ),
        (vec!["scan", "--rates", "1k", "--each"], "--each"),
        (vec!["scan", "--rates", "0:1k:1k"], "above 0"),
        (vec!["search", "--slo", "p99:1ms", "--save", &log], "--save"),
        (
            vec![
                "search",
                "--slo",
                "p99:1ms",
                "--min-rate",
                "5k",
                "--max-rate",
                "1k",
            ],
            "--max-rate",
        ),
    ] {
        let mut args = args;
        args.extend(["-s", "127.0.0.1:1"]);
        assert_usage_error(&mcbench(&args), needle);
    }
    assert!(!dir.path().join("x.hlog").exists());
}

#[test]
fn a_signal_ends_the_scan_with_the_points_so_far_written() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "s.json");
    let child = spawn_mcbench(
        &[
            "scan",
            "-s",
            &m.addr(),
            "--rates",
            "1k,2k,3k,4k",
            "--slo",
            "p99:1s",
            "-t",
            "1s",
            "-w",
            "0s",
            "--json",
            &json,
        ],
        &[],
    );
    // The signal once the second run is measuring: the first point's row,
    // then an interval line of the second run, read from stderr as they
    // come (no sleep: a loaded machine starts late).
    let mut child = child;
    let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in lines.map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    let mut row_seen = false;
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the scan's progress");
        row_seen |= line.trim_start().starts_with("1 ");
        if row_seen && line.starts_with('[') {
            break;
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(30));
    let err = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{err}");
    let scan = read_json(dir.path().join("s.json").as_path());
    let n = points(&scan).len();
    // The second run, or (the signal handled late) the third, is cut.
    assert!((2..=3).contains(&n), "{n} points\n{err}");
    assert!(scan["outcome"]
        .as_str()
        .unwrap()
        .contains("stopped by SIGINT"));
    // The run the signal cut is kept, without a verdict.
    assert!(points(&scan)[n - 1]["verdict"].is_null());
    assert!(!points(&scan)[0]["verdict"].is_null());
}

/// A run of a scan that fails (here its preload: every reply is garbage)
/// measured no server: the scan stops there with exit 1 and says why, the
/// point judged a failure even without an SLO; mutilate's layout prints no
/// row of zeros for it.
#[test]
fn a_scan_stops_at_a_run_that_failed() {
    let _machine = quiet_machine();
    let server = fake_server(Misbehaviour::Garbage);
    let args = [
        "scan", "--rates", "1k,2k", "-s", &server, "-c", "2", "-t", "1s",
    ];
    let out = mcbench(&[&args[..], &["--json", "-"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("stopped at 1000 ops/s: that run FAILED (preload: "),
        "{err}"
    );
    let curve: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = points(&curve);
    assert_eq!(points.len(), 1, "{curve}");
    assert_eq!(points[0]["verdict"], "fail", "{}", points[0]);
    let out = mcbench(&[
        "mutilate",
        "-s",
        &server,
        "--scan",
        "1000:2000:1000",
        "-t",
        "1",
        "-B",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(rows.len(), 1, "only the header: {rows:?}");
    assert!(rows[0].starts_with("#type"), "{rows:?}");
}
