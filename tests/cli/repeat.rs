//! `run --repeat`, `mcbench ab` and `compare` of two sets: every run kept,
//! each run a run of its own as the server counts them, and a change from
//! A to B called real only when its bootstrap interval leaves out zero.

use crate::support;

use serde_json::Value;
use std::time::Duration;
use support::*;

#[test]
fn repeat_keeps_every_run_and_each_is_a_run_the_server_saw() {
    let server = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let set = path_in(dir.path(), "set.json");
    let before = server.stat("cmd_get");
    let conns_before = server.stat("total_connections");
    let out = mcbench(&[
        "run",
        "-s",
        &server.addr(),
        "--no-load",
        "-c",
        "2",
        "-t",
        "500ms",
        "--repeat",
        "3",
        "--json",
        &set,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = read_json(dir.path().join("set.json").as_path());
    assert_eq!(j["schema"], "mcbench.runs/1");
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    // The server's own count: every get of the three runs, no more.
    let gets: f64 = runs.iter().map(|r| f(r, "ops.get.count")).sum();
    assert_eq!((server.stat("cmd_get") - before) as f64, gets);
    // Fresh connections per run: 2 each, and this test's `stats` reads.
    let opened = server.stat("total_connections") - conns_before;
    assert!(opened >= 6, "{opened} connections for 3 runs of 2");
    let text = stdout(&out);
    assert!(
        text.contains("3 runs of one configuration") && text.contains("p99 µs"),
        "{text}"
    );
}

#[test]
fn repeat_refuses_outputs_that_hold_one_run() {
    let out = mcbench(&[
        "run",
        "-s",
        "127.0.0.1:1",
        "--repeat",
        "2",
        "--csv",
        "x.csv",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--repeat does not take --csv"),
        "{}",
        stderr(&out)
    );
    let out = mcbench(&["run", "-s", "127.0.0.1:1", "--between", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

fn run_file(dir: &std::path::Path, name: &str, server: &str) -> String {
    let path = path_in(dir, name);
    std::fs::write(
        &path,
        format!(
            "server = [\"{server}\"]\nno-load = true\nconnections = 4\nduration = \"600ms\"\ninterval = \"200ms\"\n"
        ),
    )
    .unwrap();
    path
}

fn difference<'a>(j: &'a Value, metric: &str) -> &'a Value {
    j["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {}", j["differences"]))
}

#[test]
fn ab_calls_a_slower_server_worse_beyond_the_noise() {
    let fast = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(1)));
    let slow = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(3)));
    let dir = tempfile::tempdir().unwrap();
    let a = run_file(dir.path(), "a.toml", &fast);
    let b = run_file(dir.path(), "b.toml", &slow);
    let out = mcbench(&["ab", &a, &b, "--repeat", "4", "--json", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["schema"], "mcbench.ab/1");
    assert_eq!(j["a"]["runs"].as_array().unwrap().len(), 4);
    assert_eq!(j["b"]["runs"].as_array().unwrap().len(), 4);
    // 1 ms against 3 ms a request: p50 about triples, the rate a third.
    let p50 = difference(&j, "p50 µs");
    assert_eq!(p50["real"], true, "{p50}");
    assert_eq!(p50["better"], false, "{p50}");
    assert!(f(p50, "change.lower") > 0.5, "{p50}");
    assert!(
        p50["floor"].as_f64().is_some(),
        "4 runs of A give a floor: {p50}"
    );
    let rate = difference(&j, "ok ops/s");
    assert_eq!(rate["real"], true, "{rate}");
    assert!(f(rate, "change.upper") < -0.3, "{rate}");
    // The runs went in turn: A's and B's start times interleave.
    let start = |set: &str, i: usize| f(&j[set]["runs"][i], "started_unix_s");
    for i in 0..4 {
        assert!(start("a", i) < start("b", i), "run {i}");
        if i > 0 {
            assert!(start("b", i - 1) < start("a", i), "run {i}");
        }
    }
    assert!(stderr(&out).contains("real: WORSE"), "{}", stderr(&out));
}

#[test]
fn compare_of_two_sets_reports_each_change_with_its_interval() {
    let fast = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(1)));
    let slow = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(3)));
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (path_in(dir.path(), "a.json"), path_in(dir.path(), "b.json"));
    for (server, path) in [(&fast, &a), (&slow, &b)] {
        let out = mcbench(&[
            "run",
            "-s",
            server,
            "--no-load",
            "-t",
            "500ms",
            "--repeat",
            "2",
            "--json",
            path,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = mcbench(&["compare", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let p50 = text
        .lines()
        .find(|l| l.trim_start().starts_with("p50 µs"))
        .unwrap_or_default();
    assert!(p50.contains("real: WORSE"), "{text}");
    assert!(
        text.contains("not run in turn") && text.contains("no A/A floor"),
        "{text}"
    );
    // A set beside a single result is refused.
    let single = quick_result(dir.path(), "one.json", &[]);
    let out = mcbench(&["compare", &a, &single]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `ab` whose report cannot be written (stdout is `/dev/full`) fails with
/// exit 1 and writes its JSON all the same (it panicked with 101 and
/// wrote nothing).
#[test]
fn ab_into_a_full_stdout_fails_with_its_json_written() {
    let fast = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    let a = run_file(dir.path(), "a.toml", &fast);
    let b = run_file(dir.path(), "b.toml", &fast);
    let json = path_in(dir.path(), "ab.json");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(BIN)
        .args(["ab", &a, &b, "--repeat", "2", "--json", &json])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to stdout"),
        "{}",
        stderr(&out)
    );
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(j["schema"], "mcbench.ab/1");
}
