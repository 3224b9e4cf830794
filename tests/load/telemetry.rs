//! `--metrics-listen` judged by a real Prometheus and by memcached: the
//! counters Prometheus stored are the server's counts, and the p99 it
//! reads from the classic and the native histograms is the run's own
//! within the buckets' resolution.

use crate::support;

use serde_json::Value;
use std::time::Duration;
use support::prometheus::{
    dashboard_queries, openmetrics_parsed, samples, text_when_done, text_when_done_as, Prometheus,
    OPENMETRICS,
};
use support::*;

/// The run's latency histogram over its first `k` intervals, merged.
fn first_intervals_p99_s(intervals: &[Value], k: usize) -> f64 {
    let mut h = hdr(&intervals[0]["ops"]["total"]["latency_hdr"]);
    for i in &intervals[1..k] {
        h.add(hdr(&i["ops"]["total"]["latency_hdr"])).unwrap();
    }
    h.value_at_quantile(0.99) as f64 / 1e9
}

/// The default classic bounds (five per decade from 1 µs), seconds.
fn classic_bounds() -> Vec<f64> {
    (0..=35).map(|k| 10f64.powf(k as f64 / 5.0 - 6.0)).collect()
}

#[test]
fn prometheus_stores_the_servers_counts_and_the_runs_p99() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let target = format!("127.0.0.1:{}", free_port());
    let native = Prometheus::start(std::slice::from_ref(&target), true);
    let classic = Prometheus::start(std::slice::from_ref(&target), false);
    // Scraping from the run's first second, the dashboard's rates have
    // samples to work on.
    native.wait_scraping();
    classic.wait_scraping();
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let (out, v) = run_json(&[
        "run",
        "-s",
        &addr,
        "-t",
        "4s",
        "-c",
        "4",
        "-q",
        "2000",
        "--no-load",
        "--label",
        "prom",
        "--metrics-listen",
        &target,
        "--metrics-hold",
        "20s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert_eq!(count(&v, "total.count"), served);
    let intervals = v["intervals"].as_array().unwrap();
    let mut saw_the_end = false;
    for (p, is_native) in [(&native, true), (&classic, false)] {
        // What the endpoint served last, read at that scrape's instant.
        let at = p
            .last_sample_at("mcbench_intervals_total{run=\"prom\"}")
            .expect("scraped at least once");
        let k = p
            .number_at("mcbench_intervals_total{run=\"prom\"}", at)
            .unwrap() as usize;
        assert!(
            (1..=intervals.len()).contains(&k),
            "{k} of {}",
            intervals.len()
        );
        let want: u64 = intervals[..k]
            .iter()
            .map(|i| count(i, "ops.total.count"))
            .sum();
        let stored = p
            .number_at("sum(mcbench_requests_total{run=\"prom\"})", at)
            .unwrap();
        assert_eq!(stored as u64, want, "native: {is_native}");
        if k == intervals.len() {
            // The hold kept the endpoint up for a scrape of the end.
            saw_the_end = true;
            assert_eq!(stored as u64, served);
        }
        let p99 = first_intervals_p99_s(intervals, k);
        let (q, lo, hi) = if is_native {
            let q = "histogram_quantile(0.99, sum(mcbench_latency_seconds{run=\"prom\"}))";
            // A native bucket at schema 5 spans a factor 2^(1/32).
            let base = 2f64.powf(1.0 / 32.0);
            (p.number_at(q, at).unwrap(), p99 / base, p99 * base)
        } else {
            let q = "histogram_quantile(0.99, sum by (le) (mcbench_latency_seconds_bucket{run=\"prom\"}))";
            let b = classic_bounds();
            let i = b.partition_point(|x| *x < p99 * (1.0 - 1e-9));
            let lo = if i == 0 { 0.0 } else { b[i - 1] };
            (p.number_at(q, at).unwrap(), lo * 0.99, b[i] * 1.01)
        };
        eprintln!("native {is_native}: {k} intervals, {stored} requests, p99 {q} s (run {p99} s)");
        assert!(
            lo <= q && q <= hi,
            "native {is_native}: p99 {q} s in Prometheus, {p99} s in the run"
        );
        dashboard_answers(p, at, stored, &v, k);
    }
    assert!(saw_the_end, "no Prometheus scraped the final counts");
}

/// Every query of the Grafana dashboard (`deploy/grafana/mcbench.json`),
/// its variables set to this run, answered by `p` at `at`: a misspelt
/// metric or label leaves its panel empty. Only what a one-server run
/// without agents or failures lacks may be empty; the parts need the
/// kernel's stamps, which the run's own result says it had.
fn dashboard_answers(p: &Prometheus, at: f64, stored: f64, run: &Value, k: usize) {
    let stamped = !run["latency_parts"].is_null();
    // The gauge is the last interval's verdict, as the run measured it.
    let lag = hdr(&run["intervals"][k - 1]["send_lag_hdr"]).value_at_quantile(0.99);
    let bound = f64::from(u8::from(lag as f64 / 1e9 * 1e6 > 1000.0));
    let queries = dashboard_queries("prom");
    assert!(
        queries.len() > 15,
        "{} queries in the dashboard",
        queries.len()
    );
    for (title, expr) in queries {
        let answer = p.query_at(&expr, Some(at));
        let may_be_empty = ["failures_total", "server_", "agent!=\"\""]
            .iter()
            .any(|m| expr.contains(m))
            || (expr.contains("part_seconds") && !stamped);
        assert!(
            may_be_empty || !answer.as_array().unwrap().is_empty(),
            "panel {title:?}: {expr} answers nothing"
        );
        let number = || {
            answer[0]["value"][1]
                .as_str()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        match &title[..] {
            "Requests answered" => assert_eq!(number(), stored, "{expr}"),
            "Client-bound" => assert_eq!(number(), bound, "{expr}: lag p99 {lag} ns"),
            _ => {}
        }
    }
}

#[test]
fn the_text_promtool_accepts_holds_the_servers_count_and_releases_the_hold() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let target = format!("127.0.0.1:{}", free_port());
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "-t",
            "2s",
            "-c",
            "2",
            "-q",
            "1000",
            "--no-load",
            "--label",
            "text",
            "--metrics-listen",
            &target,
            "--metrics-hold",
            "60s",
            "--json",
            "-",
        ],
        &[],
    );
    let text = text_when_done(&target, "text");
    // The scrape released the hold: the run ends well before its 60 s.
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    let requests: f64 = samples(&text, "mcbench_requests_total", &[], &[])
        .iter()
        .sum();
    assert_eq!(requests as u64, served);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(count(&v, "total.count"), served);
    // Each op's histogram counts what its counter does.
    for op in ["get", "set"] {
        let label = format!("op=\"{op}\"");
        let counted = samples(&text, "mcbench_latency_seconds_count", &[&label], &[]);
        let req = samples(&text, "mcbench_requests_total", &[&label], &[]);
        assert_eq!(counted, req, "{op}");
    }
    // Prometheus's own linter reads the text.
    let promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .output_with_stdin(text.as_bytes());
    let said =
        String::from_utf8_lossy(&promtool.stdout) + String::from_utf8_lossy(&promtool.stderr);
    assert!(promtool.status.success(), "{said}");
    // And the scrape configs deploy/ ships.
    for config in ["prometheus.yml", "kubernetes.yml"] {
        let file = format!("{}/deploy/prometheus/{config}", env!("CARGO_MANIFEST_DIR"));
        let checked = std::process::Command::new("promtool")
            .args(["check", "config", &file])
            .output()
            .unwrap();
        assert!(checked.status.success(), "{config}: {checked:?}");
    }
}

/// The OpenMetrics text a Prometheus without native histograms asks for,
/// read by the Prometheus client library's own parser: it holds the
/// server's count under a counter family named without `_total`.
#[test]
fn openmetrics_text_is_read_by_the_client_librarys_parser() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let target = format!("127.0.0.1:{}", free_port());
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "-t",
            "1s",
            "-c",
            "2",
            "-q",
            "1000",
            "--no-load",
            "--label",
            "om",
            "--metrics-listen",
            &target,
            "--metrics-hold",
            "60s",
        ],
        &[],
    );
    let text = text_when_done_as(&target, "om", OPENMETRICS);
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert!(text.ends_with("# EOF\n"));
    let families = openmetrics_parsed(&text);
    let family = |name: &str, kind: &str| {
        let f = families
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f[0] == name)
            .unwrap_or_else(|| panic!("no family {name}: {families}"));
        assert_eq!(f[1], kind, "{name}");
        f[2].as_array().unwrap().clone()
    };
    let sum = |samples: &[Value], name: &str| -> u64 {
        let values = samples.iter().filter(|s| s[0] == name);
        values.map(|s| s[2].as_f64().unwrap()).sum::<f64>() as u64
    };
    let requests = family("mcbench_requests", "counter");
    assert_eq!(sum(&requests, "mcbench_requests_total"), served);
    // The parser checked each histogram's buckets against its count.
    let latency = family("mcbench_latency_seconds", "histogram");
    assert_eq!(sum(&latency, "mcbench_latency_seconds_count"), served);
}

#[test]
fn a_scan_serves_every_probe_and_is_done_only_after_the_last() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let target = format!("127.0.0.1:{}", free_port());
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "scan.json");
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let child = spawn_mcbench(
        &[
            "scan",
            "-s",
            &addr,
            "--rates",
            "1k,2k",
            "-t",
            "1s",
            "-w",
            "0s",
            "--no-load",
            "--label",
            "scan",
            "--metrics-listen",
            &target,
            "--metrics-hold",
            "60s",
            "--json",
            &json,
        ],
        &[],
    );
    let text = text_when_done(&target, "scan");
    let out = wait_bounded(child, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    let requests: f64 = samples(&text, "mcbench_requests_total", &[], &[])
        .iter()
        .sum();
    assert_eq!(requests as u64, served, "both probes, as memcached counted");
    let scan = read_json(dir.path().join("scan.json").as_path());
    let runs = scan["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let intervals: usize = runs
        .iter()
        .map(|r| r["intervals"].as_array().unwrap().len())
        .sum();
    let exported = samples(&text, "mcbench_intervals_total", &[], &[]);
    assert_eq!(exported, [intervals as f64]);
    // The target is the last probe's.
    assert_eq!(samples(&text, "mcbench_target_rate", &[], &[]), [2000.0]);
}

trait WithStdin {
    fn output_with_stdin(&mut self, input: &[u8]) -> std::process::Output;
}

impl WithStdin for std::process::Command {
    /// Runs the command with `input` on its stdin and its output captured.
    fn output_with_stdin(&mut self, input: &[u8]) -> std::process::Output {
        use std::io::Write;
        let mut child = self
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }
}

#[test]
fn an_address_in_use_or_beyond_loopback_is_refused_before_any_traffic() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let addr = m.addr();
    let conns = m.stat("total_connections");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-s", &addr, "-t", "1s", "--no-load"];
        args.extend(extra);
        mcbench(&args)
    };
    let out = run(&["--metrics-listen", &taken]);
    assert_usage_error(&out, &format!("--metrics-listen {taken}"));
    let out = run(&["--metrics-listen", "0.0.0.0:0"]);
    assert_usage_error(&out, "--metrics-allow-remote");
    let out = run(&[
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-buckets",
        "1ms,100us",
    ]);
    assert_usage_error(&out, "bounds must increase");
    let out = run(&["--metrics-hold", "1s"]);
    assert_usage_error(&out, "--metrics-listen");
    // Refused before any traffic: the server saw no connection of them.
    assert_eq!(
        m.stat("total_connections"),
        conns + 1,
        "only this stat read's own"
    );
}
