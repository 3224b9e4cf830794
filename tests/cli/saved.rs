//! Saved results: the histograms a run keeps, decoded by the hdrhistogram
//! crate; the report rendered again; runs merged (checked against the raw
//! samples) and compared.

use crate::support;

use std::path::Path;
use std::time::Duration;
use support::*;

#[test]
fn histograms_decode_to_the_counts_the_server_saw() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (_, j) = run_to(
        dir.path(),
        "r",
        &m.addr(),
        &["--no-load", "-t", "2s", "-i", "500ms", "-q", "3000"],
    );
    assert_eq!(j["schema"], "mcbench.run/2");
    let total = hdr(&j["total"]["latency_hdr"]);
    // memcached's own counters: every request it answered.
    let server = m.stat("cmd_get") + m.stat("cmd_set");
    assert_eq!(total.len(), server);
    assert_eq!(total.len() as f64, f(&j, "total.count"));
    for op in ["get", "set"] {
        let h = hdr(&j["ops"][op]["latency_hdr"]);
        assert_eq!(h.len() as f64, f(&j, &format!("ops.{op}.count")));
        assert_eq!(hdr(&j["ops"][op]["service_time_hdr"]).len(), h.len());
        let want = h.value_at_quantile(0.99) as f64 / 1e3;
        assert_eq!(f(&j, &format!("ops.{op}.latency_us.p99")), want);
    }
    // The intervals' histograms hold every request once.
    let intervals = j["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4);
    let in_intervals: u64 = intervals
        .iter()
        .map(|s| hdr(&s["ops"]["total"]["latency_hdr"]).len())
        .sum();
    assert_eq!(in_intervals, server);
    // Open loop: a send-lag histogram per interval and for the run.
    assert!(!hdr(&j["client"]["send_lag_hdr"]).is_empty());
    assert!(!hdr(&intervals[0]["send_lag_hdr"]).is_empty());
}

#[test]
fn report_prints_the_run_text_again_with_any_percentiles() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (out, j) = run_to(
        dir.path(),
        "r",
        &m.addr(),
        &["-t", "1s", "-i", "500ms", "--percentiles", "25,50,75,99.9"],
    );
    // The live line prints the same percentiles.
    let live = stderr(&out);
    assert!(
        live.lines()
            .any(|l| l.contains(" p25 ") && l.contains(" p99.9 ") && !l.contains(" p99 ")),
        "{live}"
    );
    let text = stdout(&out);
    assert!(text.contains("p25") && text.contains("p99.9") && !text.contains("p90"));
    let again = mcbench(&["report", &path_in(dir.path(), "r.json")]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), text);
    // Another percentile, from the kept histogram.
    let other = mcbench(&[
        "report",
        &path_in(dir.path(), "r.json"),
        "--percentiles",
        "33",
    ]);
    let other = stdout(&other);
    let want = hdr(&j["ops"]["get"]["latency_hdr"]).value_at_quantile(0.33) as f64 / 1e3;
    let row = other
        .lines()
        .find(|l| l.starts_with("get "))
        .expect("a get row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // op, ok/s, err/s, p33 and its ±, max
    assert!(other.contains("p33") && !other.contains("p25"), "{other}");
    let got: f64 = cells[3].parse().unwrap();
    assert!((got - want).abs() <= 0.05 + want * 1e-3, "{got} vs {want}");
}

/// The sample at nearest rank `q` of sorted `v`: HdrHistogram's quantile,
/// up to its 3 significant digits.
fn exact_quantile(v: &[u64], q: f64) -> (u64, u64) {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    (v[rank.saturating_sub(2)], v[rank.min(v.len() - 1)])
}

#[test]
fn merged_runs_give_the_percentiles_of_every_sample() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, a) = run_to(
        d,
        "a",
        &m.addr(),
        &["-x", "6000", "--save", &path_in(d, "a.tsv")],
    );
    let (_, b) = run_to(
        d,
        "b",
        &m.addr(),
        &[
            "-x",
            "4000",
            "-q",
            "4000",
            "--seed",
            "7",
            "--save",
            &path_in(d, "b.tsv"),
        ],
    );
    let mut all = sample_latencies(&d.join("a.tsv"));
    assert_eq!(all.len() as f64, f(&a, "total.count"));
    let b_samples = sample_latencies(&d.join("b.tsv"));
    assert_eq!(b_samples.len() as f64, f(&b, "total.count"));
    all.extend(b_samples);
    all.sort_unstable();
    let out = mcbench(&[
        "report",
        "--merge",
        &path_in(d, "a.json"),
        &path_in(d, "b.json"),
        "--json",
        &path_in(d, "m.json"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = read_json(&d.join("m.json"));
    assert_eq!(f(&merged, "total.count"), all.len() as f64);
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        let got_ns = f(&merged, &format!("total.latency_us.{name}")) * 1e3;
        let (lo, hi) = exact_quantile(&all, q);
        assert!(
            got_ns >= lo as f64 - 0.5 && got_ns <= hi as f64 * 1.002 + 1.0,
            "{name}: merged {got_ns} ns, samples {lo}..{hi} ns"
        );
    }
    // Per op type and per interval, every count adds up.
    for k in [
        "ops.get.count",
        "ops.get.hits",
        "ops.set.count",
        "gets.misses",
        "bytes.tx",
    ] {
        assert_eq!(f(&merged, k), f(&a, k) + f(&b, k), "{k}");
    }
    let in_intervals: f64 = merged["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| f(s, "ops.total.count"))
        .sum();
    assert_eq!(in_intervals, f(&merged, "total.count"));
    let max_ns = f(&merged, "total.latency_us.max") * 1e3;
    let top = *all.last().unwrap() as f64;
    assert!(max_ns >= top - 0.5 && max_ns <= top * 1.002 + 1.0);
}

#[test]
fn compare_sets_runs_side_by_side_and_refuses_other_workloads() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, a) = run_to(d, "a", &m.addr(), &["-t", "1s", "-q", "2000"]);
    // Threads, seed and label say how the load was made, not what it was.
    let (_, b) = run_to(
        d,
        "b",
        &m.addr(),
        &[
            "-t",
            "1s",
            "-q",
            "2000",
            "-T",
            "2",
            "--seed",
            "5",
            "--label",
            "two-threads",
        ],
    );
    run_to(d, "c", &m.addr(), &["-t", "1s", "-q", "2000", "-u", "0.5"]);
    let out = mcbench(&["compare", &path_in(d, "a.json"), &path_in(d, "b.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // Named by its label, the other by its file.
    assert!(
        text.contains("two-threads") && text.contains("a.json"),
        "{text}"
    );
    let want = format!("({:.2}×)", f(&b, "total.rate") / f(&a, "total.rate"));
    let row = text.lines().find(|l| l.starts_with("ops/s")).unwrap();
    assert!(row.contains(&want), "{row} lacks {want}");
    let p99 = text
        .lines()
        .find(|l| l.starts_with("latency p99 "))
        .unwrap();
    let b_p99 = f(&b, "total.latency_us.p99");
    let shown = if b_p99 >= 10_000.0 {
        format!("{b_p99:.0}")
    } else {
        format!("{b_p99:.1}")
    };
    assert!(p99.contains(&shown), "{p99} lacks {shown}");
    // Other percentiles, from the kept histograms.
    let other = mcbench(&[
        "compare",
        &path_in(d, "a.json"),
        &path_in(d, "b.json"),
        "--percentiles",
        "42",
    ]);
    let other = stdout(&other);
    let want = hdr(&a["total"]["latency_hdr"]).value_at_quantile(0.42) as f64 / 1e3;
    let row = other
        .lines()
        .find(|l| l.starts_with("latency p42 "))
        .expect("a p42 row");
    assert!(row.contains(&format!("{want:.1}")), "{row} lacks {want:.1}");
    assert!(!other.contains("latency p99 "), "{other}");
    assert!(!stderr(&out).contains("differ"), "{}", stderr(&out));
    let refused = mcbench(&["compare", &path_in(d, "a.json"), &path_in(d, "c.json")]);
    assert_usage_error(&refused, "mix");
    let forced = mcbench(&[
        "compare",
        &path_in(d, "a.json"),
        &path_in(d, "c.json"),
        "--force",
    ]);
    assert!(forced.status.success());
    assert!(stderr(&forced).contains("mix"));
}

#[test]
fn text_report_names_the_wire_and_every_reply_class() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // Every key is preloaded, so every add is refused: NOT_STORED.
    let (out, j) = run_ok(
        &m.addr(),
        &[
            "-x",
            "500",
            "--mix",
            "add=1",
            "--protocol",
            "meta",
            "--expiry",
            "30",
            "-R",
            // The full report: its replies line and its table's stdev.
            "--details",
        ],
    );
    let text = stderr(&out);
    assert!(
        text.contains("protocol meta over TCP; reconnect on; expiry 30 s; noreply off"),
        "{text}"
    );
    assert_eq!(f(&j, "responses.not_stored"), 500.0);
    assert!(text.contains("replies: not_stored 500"), "{text}");
    assert!(text.contains("stdev"));
}

#[test]
fn report_never_writes_over_its_own_input() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_to(d, "r", &m.addr(), &["-t", "1s"]);
    let before = std::fs::read(d.join("r.json")).unwrap();
    let r = path_in(d, "r.json");
    assert_usage_error(&mcbench(&["report", &r, "--json", &r]), "the same file");
    let other_name = format!("{}/./r.json", d.display());
    assert_usage_error(
        &mcbench(&["report", &r, "--html", &other_name]),
        "the same file",
    );
    assert_eq!(std::fs::read(d.join("r.json")).unwrap(), before);
}

#[test]
fn old_and_foreign_results_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(&old, r#"{"schema": "mcbench.run/1", "total": {}}"#).unwrap();
    assert_usage_error(
        &mcbench(&["report", old.to_str().unwrap()]),
        "mcbench.run/1",
    );
    let other = dir.path().join("other.json");
    std::fs::write(&other, "[1, 2]").unwrap();
    assert_usage_error(
        &mcbench(&["report", other.to_str().unwrap()]),
        "not an mcbench result",
    );
    let dirname = dir.path().to_str().unwrap();
    assert_usage_error(&mcbench(&["report", dirname]), "not a regular file");
}

/// `report --merge` refuses runs of different workloads, naming the
/// fields, as `compare` does; each machine's slice and share may differ.
#[test]
fn merge_refuses_other_workloads_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |name: &str, extra: &[&str]| quick_result(d, name, extra);
    let a = run("a.json", &["--client", "0/2"]);
    let b = run("b.json", &["--client", "1/2", "-q", "5000", "-c", "2"]);
    let c = run("c.json", &["--client", "1/2", "-u", "0.5", "-K", "20"]);
    let out = mcbench(&["report", "--merge", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = mcbench(&["report", "--merge", &a, &c]);
    assert_usage_error(&out, "--force merges them anyway");
    for field in ["mix: ", "key_size: "] {
        assert!(stderr(&out).contains(field), "{}", stderr(&out));
    }
    let out = mcbench(&["report", "--merge", "--force", &a, &c]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A result of every mode of `run` loads again (each check of a saved
/// result holds for what mcbench itself writes), with its count as run:
/// closed and open loop, a connection schedule, a trace replay, and sets
/// of repeated runs. (Agents' merged results: `tests/fleet/agents.rs`.)
#[test]
fn a_result_of_every_mode_of_run_loads_again() {
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(dir.path(), "trace.csv");
    let lines: String = (0..600)
        .map(|i| {
            format!(
                "{},key{},5,100,1,{},0\n",
                i / 100,
                i % 50,
                ["get", "set"][i % 2]
            )
        })
        .collect();
    std::fs::write(&trace, lines).unwrap();
    let modes: [(&str, &[&str]); 4] = [
        ("closed", &["-x", "2000", "--no-load"]),
        ("open", &["-q", "2000", "-t", "1s", "--no-load"]),
        (
            "churn",
            &["--num-conns", "20", "--conn-rate", "200", "--no-load"],
        ),
        ("trace", &["--trace", &trace, "--trace-timing", "ignore"]),
    ];
    for (mode, flags) in modes {
        let json = path_in(dir.path(), &format!("{mode}.json"));
        let run = [
            &["run", "-s", &server, "-i", "200ms"][..],
            flags,
            &["--json", &json],
        ]
        .concat();
        let out = mcbench(&run);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let saved = read_json(Path::new(&json));
        let out = mcbench(&["report", &json, "--json", "-"]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(count(&saved, "total.count") > 0, "{mode}");
        assert_eq!(
            count(&again, "total.count"),
            count(&saved, "total.count"),
            "{mode}"
        );
    }
    let sets: Vec<String> = ["a", "b"]
        .iter()
        .map(|name| {
            let json = path_in(dir.path(), &format!("{name}.json"));
            let args = [
                "run",
                "-s",
                &server,
                "-x",
                "500",
                "--no-load",
                "--repeat",
                "2",
            ];
            let out = mcbench(&[&args[..], &["--json", &json]].concat());
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            json
        })
        .collect();
    let out = mcbench(&["compare", &sets[0], &sets[1]]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("ok ops/s"), "{}", stdout(&out));
}
