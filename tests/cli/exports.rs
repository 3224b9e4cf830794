//! Each export read back by a reader that is not mcbench's: the
//! hdrhistogram crate's log reader and Python's csv (Chromium reads the
//! HTML in tests/cli/html.rs); `--save`'s samples; and outputs that exist
//! before any traffic and survive a failing stdout.

use crate::support;

use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use support::*;

#[test]
fn save_rate_keeps_the_share_asked() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, j) = run_to(
        d,
        "r",
        &m.addr(),
        &[
            "-x",
            "20000",
            "--save",
            &path_in(d, "s.tsv"),
            "--save-rate",
            "0.1",
        ],
    );
    let n = f(&j, "total.count");
    let kept = sample_latencies(&d.join("s.tsv")).len() as f64;
    // Binomial(20000, 0.1): mean 2000, sd 42; 6 sd either side.
    assert!(
        (kept - n * 0.1).abs() < 6.0 * (n * 0.1 * 0.9).sqrt(),
        "{kept} of {n}"
    );
    assert_usage_error(
        &mcbench(&["run", "--save-rate", "0.5"]),
        "not provided:\n  --save <FILE>",
    );
    for bad in ["0", "1.5", "-1"] {
        let rate = format!("--save-rate={bad}");
        let out = mcbench(&["run", "--save", &path_in(d, "x.tsv"), &rate]);
        assert_usage_error(&out, "--save-rate");
    }
}

#[test]
fn hdr_log_reads_back_with_the_hdrhistogram_log_reader() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, j) = run_to(
        d,
        "r",
        &m.addr(),
        &[
            "-t",
            "3s",
            "-i",
            "1s",
            "-q",
            "2000",
            "--hdr-log",
            &path_in(d, "r.hlog"),
        ],
    );
    let log = std::fs::read(d.join("r.hlog")).unwrap();
    let (mut untagged, mut tagged_get, mut starts) = (Vec::new(), 0u64, 0);
    for entry in IntervalLogIterator::new(&log) {
        match entry.expect("a valid interval log") {
            LogEntry::StartTime(_) | LogEntry::BaseTime(_) => starts += 1,
            LogEntry::Interval(i) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .unwrap();
                let h: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .unwrap();
                match i.tag().map(|t| t.as_str().to_string()) {
                    None => untagged.push(h),
                    Some(t) if t == "get" => tagged_get += h.len(),
                    Some(t) => assert_eq!(t, "set"),
                }
            }
        }
    }
    assert_eq!(starts, 2, "StartTime and BaseTime");
    let intervals = j["intervals"].as_array().unwrap();
    assert_eq!(untagged.len(), intervals.len());
    let total: u64 = untagged.iter().map(Histogram::len).sum();
    assert_eq!(total as f64, f(&j, "total.count"));
    assert_eq!(tagged_get as f64, f(&j, "ops.get.count"));
    for (h, s) in untagged.iter().zip(intervals) {
        assert_eq!(
            h.value_at_quantile(0.99) as f64 / 1e3,
            f(s, "ops.total.p99_us")
        );
    }
}

#[test]
fn csv_reads_back_with_python_csv() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, j) = run_to(
        d,
        "r",
        &m.addr(),
        &[
            "-t",
            "3s",
            "-i",
            "1s",
            "-q",
            "2000",
            "--percentiles",
            "50,99,99.9",
            "--csv",
            &path_in(d, "r.csv"),
        ],
    );
    let script = r#"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
total = [r for r in rows if r["op"] == "total"]
print(json.dumps({
    "fields": list(rows[0].keys()),
    "count": sum(int(r["count"]) for r in total),
    "get_hits": sum(int(r["hits"]) for r in rows if r["op"] == "get"),
    "p99": [float(r["p99_us"]) for r in total],
    "p99_lower": [float(r["p99_lower_us"]) for r in total],
    "p99_upper": [float(r["p99_upper_us"]) if r["p99_upper_us"] else None for r in total],
    "time": [float(r["time_s"]) for r in total],
}))
"#;
    let py: Value = serde_json::from_slice(&python(script, &[&path_in(d, "r.csv")])).unwrap();
    let fields: Vec<&str> = py["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "time_s",
            "interval_s",
            "op",
            "count",
            "rate",
            "p50_us",
            "p99_us",
            "p99.9_us",
            "max_us",
            "hits",
            "misses",
            "errors",
            "p50_lower_us",
            "p50_upper_us",
            "p99_lower_us",
            "p99_upper_us",
            "p99.9_lower_us",
            "p99.9_upper_us",
            "client_queue_mean_us",
            "client_queue_p99_us",
            "send_path_mean_us",
            "send_path_p99_us",
            "network_server_mean_us",
            "network_server_p99_us",
            "client_receive_mean_us",
            "client_receive_p99_us",
        ]
    );
    assert_eq!(f(&py, "count"), f(&j, "total.count"));
    assert_eq!(f(&py, "get_hits"), f(&j, "gets.hits"));
    let intervals = j["intervals"].as_array().unwrap();
    for (i, s) in intervals.iter().enumerate() {
        let csv_p99 = py["p99"][i].as_f64().unwrap();
        assert!((csv_p99 - f(s, "ops.total.p99_us")).abs() < 1e-3);
        // Each interval's p99 lies in its 95 % interval, which has a
        // finite upper bound from 368 samples on.
        let lower = py["p99_lower"][i].as_f64().unwrap();
        let upper = py["p99_upper"][i].as_f64();
        assert_eq!(
            upper.is_some(),
            f(s, "ops.total.count") >= 368.0,
            "{upper:?}"
        );
        assert!(
            lower <= csv_p99 && upper.is_none_or(|u| csv_p99 <= u),
            "{lower} {csv_p99} {upper:?}"
        );
        assert!((py["time"][i].as_f64().unwrap() - f(s, "time_s")).abs() < 1e-6);
    }
}

/// An op name from a saved result with a comma, quotes and a formula in
/// it never reaches a CSV: a result naming an op mcbench does not send is
/// refused as it is read (exit 2), and no file is written. (The CSV
/// writer quotes every cell and makes a formula inert all the same:
/// `report::csv`'s tests.)
#[test]
fn an_op_named_as_a_formula_is_refused_before_any_csv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = quick_result(d, "r.json", &[]);
    let evil = r#"=HYPERLINK("http://x","a,b")"#;
    let mut j = read_json(Path::new(&saved));
    for s in j["intervals"].as_array_mut().unwrap() {
        let ops = s["ops"].as_object_mut().unwrap();
        let get = ops.remove("get").unwrap();
        ops.insert(evil.to_string(), get);
    }
    std::fs::write(&saved, serde_json::to_vec(&j).unwrap()).unwrap();
    let csv = path_in(d, "r.csv");
    let out = mcbench(&["report", &saved, "--csv", &csv]);
    assert_usage_error(&out, "mcbench does not send");
    assert!(!Path::new(&csv).exists());
}

#[test]
fn outputs_are_created_before_any_traffic() {
    let _machine = shared_machine();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let missing = path_in(dir.path(), "no/such/dir/f");
    let folder = dir.path().to_str().unwrap().to_string();
    for flag in ["--json", "--csv", "--html", "--hdr-log", "--save"] {
        for path in [&missing, &folder] {
            let out = mcbench(&["run", "-s", &addr, "-t", "1s", flag, path]);
            assert_usage_error(&out, flag);
        }
    }
    assert!(
        listener.accept().is_err(),
        "a refused output must not connect to the server"
    );
}

#[test]
fn outputs_never_share_a_file_and_a_failed_run_empties_none() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let r = path_in(dir.path(), "r.json");
    let out = mcbench(&["run", "-t", "1s", "--json", &r, "--csv", &r]);
    assert_usage_error(&out, "the same file");
    let out = mcbench(&[
        "run",
        "-t",
        "1s",
        "--html",
        &r,
        "--save",
        &format!("{}/./r.json", dir.path().display()),
    ]);
    assert_usage_error(&out, "the same file");
    // A run that fails (nothing listens) leaves an older result whole.
    std::fs::write(&r, "older results").unwrap();
    let port = free_port().to_string();
    let out = mcbench(&[
        "run",
        "-s",
        &format!("127.0.0.1:{port}"),
        "-t",
        "1s",
        "--json",
        &r,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&r).unwrap(), "older results");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "temporary files left: {left:?}");
}

#[test]
fn a_failing_stdout_still_writes_the_files() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(BIN)
        .args(["run", "-s", &m.addr(), "-t", "1s", "--json", &json])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("stdout"), "{}", stderr(&out));
    assert!(f(&read_json(Path::new(&json)), "total.count") > 0.0);
}

#[test]
fn an_output_that_is_a_pipe_or_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // The reader: the pipe's contents, once its writer closes it.
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read(&path));
    });
    let m = Memcached::start(&[]);
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "-t",
        "300ms",
        "--json",
        fifo.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Renamed over, the pipe would be a plain file now, its reader left
    // waiting for a writer that never comes.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the pipe's reader got the results")
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&got).unwrap();
    assert!(count(&j, "total.count") > 0);
}
