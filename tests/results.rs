//! Results as data: the histograms a run keeps, read back by readers that
//! are not mcbench's (the hdrhistogram crate's decoder and log reader,
//! Python's csv, Chromium), re-rendered, merged and compared.

mod support;

use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

/// A histogram as the JSON holds it, decoded by the hdrhistogram crate.
fn hdr(v: &Value) -> Histogram<u64> {
    let text = v.as_str().unwrap_or_else(|| panic!("no histogram in {v}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("a V2 compressed histogram")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Runs `mcbench run -s addr args... --json DIR/name.json` and returns the
/// output and the parsed JSON.
fn run_to(dir: &Path, name: &str, addr: &str, args: &[&str]) -> (std::process::Output, Value) {
    let json = p(dir, &format!("{name}.json"));
    let mut all = vec!["run", "-s", addr, "--json", &json];
    all.extend(args);
    let out = mcbench(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = read_json(Path::new(&json));
    (out, j)
}

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
        &["-t", "1s", "--percentiles", "25,50,75,99.9"],
    );
    let text = stdout(&out);
    assert!(text.contains("p25") && text.contains("p99.9") && !text.contains("p90"));
    let again = mcbench(&["report", &p(dir.path(), "r.json")]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), text);
    // Another percentile, from the kept histogram.
    let other = mcbench(&["report", &p(dir.path(), "r.json"), "--percentiles", "33"]);
    let other = stdout(&other);
    let want = hdr(&j["ops"]["get"]["latency_hdr"]).value_at_quantile(0.33) as f64 / 1e3;
    let row = other
        .lines()
        .find(|l| l.starts_with("get "))
        .expect("a get row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // op, ops, ops/s, min, mean, stdev, p33, max
    assert!(other.contains("p33") && !other.contains("p25"), "{other}");
    let got: f64 = cells[6].parse().unwrap();
    assert!((got - want).abs() <= 0.05 + want * 1e-3, "{got} vs {want}");
}

/// The sample at nearest rank `q` of sorted `v`: HdrHistogram's quantile,
/// up to its 3 significant digits.
fn exact_quantile(v: &[u64], q: f64) -> (u64, u64) {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    (v[rank.saturating_sub(2)], v[rank.min(v.len() - 1)])
}

fn sample_latencies(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("intended_ns\top\tlatency_ns\tservice_ns\treply")
    );
    lines
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 5, "{l}");
            let latency: u64 = cols[2].parse().unwrap();
            let service: u64 = cols[3].parse().unwrap();
            assert!(latency >= service, "{l}");
            assert!(["get", "set"].contains(&cols[1]), "{l}");
            latency
        })
        .collect()
}

#[test]
fn merged_runs_give_the_percentiles_of_every_sample() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, a) = run_to(d, "a", &m.addr(), &["-x", "6000", "--save", &p(d, "a.tsv")]);
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
            &p(d, "b.tsv"),
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
        &p(d, "a.json"),
        &p(d, "b.json"),
        "--json",
        &p(d, "m.json"),
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
    let max_ns = f(&merged, "total.latency_us.max") * 1e3;
    let top = *all.last().unwrap() as f64;
    assert!(max_ns >= top - 0.5 && max_ns <= top * 1.002 + 1.0);
}

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
            &p(d, "s.tsv"),
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
        "--save-rate needs --save",
    );
    for bad in ["0", "1.5", "-1"] {
        let rate = format!("--save-rate={bad}");
        let out = mcbench(&["run", "--save", &p(d, "x.tsv"), &rate]);
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
            &p(d, "r.hlog"),
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
            &p(d, "r.csv"),
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
    "time": [float(r["time_s"]) for r in total],
}))
"#;
    let out = Command::new("python3")
        .args(["-c", script, &p(d, "r.csv")])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py: Value = serde_json::from_slice(&out.stdout).unwrap();
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
            "errors"
        ]
    );
    assert_eq!(f(&py, "count"), f(&j, "total.count"));
    assert_eq!(f(&py, "get_hits"), f(&j, "gets.hits"));
    let intervals = j["intervals"].as_array().unwrap();
    for (i, s) in intervals.iter().enumerate() {
        let csv_p99 = py["p99"][i].as_f64().unwrap();
        assert!((csv_p99 - f(s, "ops.total.p99_us")).abs() < 1e-3);
        assert!((py["time"][i].as_f64().unwrap() - f(s, "time_s")).abs() < 1e-6);
    }
}

/// Chromium, or a failure saying how to get it: the HTML test must not
/// pass without it.
fn chromium() -> PathBuf {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            let ok = Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| PathBuf::from(b))
        })
        .expect("the HTML test needs Chromium: apt-get install chromium (see .ci/run)")
}

/// Renders `page` in headless Chromium with a probe script added, and
/// returns, per chart, its data lines (polylines of 3+ points that laid
/// out with a width) and their colours.
fn drawn_charts(page: &Path) -> Vec<(usize, Vec<String>)> {
    let probe = r#"<script>
const charts = [...document.querySelectorAll('figure.chart svg')].map(svg => {
  const lines = [...svg.querySelectorAll('polyline')]
    .filter(l => l.points.numberOfItems >= 3 && l.getBBox().width > 0);
  return [lines.length, [...new Set(lines.map(l => l.getAttribute('stroke')))]];
});
document.body.setAttribute('data-drawn', JSON.stringify(charts));
</script></body>"#;
    let html = std::fs::read_to_string(page).unwrap();
    let probed = page.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", probe)).unwrap();
    let out = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", probed.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom.find("data-drawn=\"").expect("Chromium ran the probe") + 12;
    let json = dom[at..].split('"').next().unwrap().replace("&quot;", "\"");
    serde_json::from_str(&json).unwrap()
}

fn screenshot(page: &Path, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(name);
    let _ = std::fs::remove_file(&png);
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1600,3000",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let size = std::fs::metadata(&png).map_or(0, |m| m.len());
    assert!(
        size > 20_000,
        "screenshot {size} bytes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    png
}

#[test]
fn html_report_draws_every_chart_in_chromium() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let html = d.join("a.html");
    run_to(
        d,
        "a",
        &m.addr(),
        &[
            "-t",
            "3s",
            "-i",
            "1s",
            "-q",
            "2000",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    run_to(d, "b", &m.addr(), &["-t", "3s", "-i", "1s", "-q", "3000"]);
    let text = std::fs::read_to_string(&html).unwrap();
    // Self-contained: nothing is fetched when the page is opened.
    for needle in ["<script", " src=", " href=", "url(", "@import"] {
        assert!(!text.contains(needle), "the page refers out: {needle}");
    }
    // Spectra of get, set and total; throughput, latency, send lag, errors.
    let charts = drawn_charts(&html);
    assert_eq!(charts.len(), 7, "{charts:?}");
    for (i, (lines, _)) in charts.iter().enumerate() {
        assert!(*lines >= 1, "chart {i} drew no data: {charts:?}");
    }
    screenshot(&html, "run.png");
    // Two runs overlay in one set of charts, a colour each.
    let both = d.join("both.html");
    let out = mcbench(&[
        "report",
        &p(d, "a.json"),
        &p(d, "b.json"),
        "--html",
        both.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let charts = drawn_charts(&both);
    assert_eq!(charts.len(), 7);
    for (i, (_, colours)) in charts.iter().enumerate() {
        assert!(colours.len() >= 2, "chart {i} shows one run: {charts:?}");
    }
    screenshot(&both, "two-runs.png");
}

#[test]
fn compare_sets_runs_side_by_side_and_refuses_other_workloads() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, a) = run_to(d, "a", &m.addr(), &["-t", "1s", "-q", "2000"]);
    // Threads and seed say how the load was made, not what it was.
    let (_, b) = run_to(
        d,
        "b",
        &m.addr(),
        &["-t", "1s", "-q", "2000", "-T", "2", "--seed", "5"],
    );
    run_to(d, "c", &m.addr(), &["-t", "1s", "-q", "2000", "-u", "0.5"]);
    let out = mcbench(&["compare", &p(d, "a.json"), &p(d, "b.json")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let want = format!("({:.2}×)", f(&b, "total.rate") / f(&a, "total.rate"));
    let row = text.lines().find(|l| l.starts_with("ops/s")).unwrap();
    assert!(row.contains(&want), "{row} lacks {want}");
    let p99 = text
        .lines()
        .find(|l| l.starts_with("latency p99 "))
        .unwrap();
    assert!(
        p99.contains(&format!("{:.1}", f(&b, "total.latency_us.p99"))),
        "{p99}"
    );
    assert!(!stderr(&out).contains("differ"), "{}", stderr(&out));
    let refused = mcbench(&["compare", &p(d, "a.json"), &p(d, "c.json")]);
    assert_usage_error(&refused, "mix");
    let forced = mcbench(&["compare", &p(d, "a.json"), &p(d, "c.json"), "--force"]);
    assert!(forced.status.success());
    assert!(stderr(&forced).contains("mix"));
}

#[test]
fn text_report_names_the_wire_and_every_reply_class() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // Every key is preloaded, so every add is refused: NOT_STORED.
    let (out, j) = run_json(&[
        "run",
        "-s",
        &m.addr(),
        "-x",
        "500",
        "--mix",
        "add=1",
        "--protocol",
        "meta",
        "--expiry",
        "30",
        "-R",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
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
fn outputs_are_created_before_any_traffic() {
    let _machine = shared_machine();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let missing = p(dir.path(), "no/such/dir/f");
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

#[test]
fn a_failing_stdout_still_writes_the_files() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = p(dir.path(), "r.json");
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
