//! The HTML report as Chromium lays it out: the answer first, every
//! chart's lines told apart and clear of their legend, the settings as
//! flags, the numbers those of the JSON, at a desktop's width and a
//! phone's; for one run, an open loop with server stats, a failed run and
//! several runs.

use crate::support;

use serde_json::Value;
use std::path::Path;
use support::*;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A headline figure as printed (one decimal), against the JSON's value.
fn assert_printed(printed: &str, json: f64, what: &str) {
    let number = printed.trim().trim_start_matches('≥').trim();
    let v: f64 = number
        .parse()
        .unwrap_or_else(|_| panic!("{what}: {printed:?}"));
    assert!(
        (v - json).abs() <= 0.051,
        "{what}: the page says {v}, the JSON {json}"
    );
}

/// The JSON's total-latency percentile: its estimate where it has one
/// (the lower bound of a censored one, which the page prints `≥ X`).
fn json_percentile(j: &Value, p: f64) -> f64 {
    let total = &j["total"];
    let estimate = total["latency_ci"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["percentile"].as_f64() == Some(p)));
    match estimate {
        Some(e) if e["censored"] == true => num(&e["lower_us"]),
        Some(e) => num(&e["value_us"]),
        None => num(&total["latency_us"][match p {
            50.0 => "p50",
            99.0 => "p99",
            _ => "p999",
        }]),
    }
}

/// What every page must be, whatever its runs: self-contained; the answer
/// first and the settings after every chart; each chart's lines in
/// distinct colours, a run's in distinct dashes, listed truthfully by a
/// legend that covers none of their points; the tables' totals those of
/// the `runs`' JSON; settings that read as flags, never JSON.
fn assert_well_made(page: &Path, probe: &Value, runs: &[&Value]) {
    let text = std::fs::read_to_string(page).unwrap();
    for needle in ["<script", " src=", " href=", "url(", "@import"] {
        assert!(!text.contains(needle), "the page refers out: {needle}");
    }
    let sections: Vec<&str> = probe["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(sections.first(), Some(&"answer"), "{sections:?}");
    // The numbers are on the first screen of a laptop (768 px high).
    assert!(
        num(&probe["headline_bottom"]) < 768.0,
        "{}",
        probe["headline_bottom"]
    );
    assert_eq!(sections.last(), Some(&"settings"), "{sections:?}");
    let spectrum = sections.iter().position(|s| *s == "spectrum");
    assert_eq!(
        sections.get(spectrum.unwrap() + 1),
        Some(&"parts"),
        "{sections:?}"
    );
    // Each latency-parts bar is split as its figures are, edge to edge.
    for stack in probe["stacks"].as_array().unwrap() {
        let width = num(&stack["width"]);
        let parts: Vec<f64> = stack["parts"].as_array().unwrap().iter().map(num).collect();
        let values: Vec<f64> = stack["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect();
        let (drawn, sum) = (parts.iter().sum::<f64>(), values.iter().sum::<f64>());
        assert!(width > 50.0 && (drawn - width).abs() <= 1.5, "{stack}");
        for (p, v) in parts.iter().zip(&values) {
            // Figures print to 0.1 µs; bars are laid out to the pixel.
            let share = v / sum * width;
            assert!((p - share).abs() <= 1.5 + 0.05 / sum * width, "{stack}");
        }
    }
    for chart in probe["charts"].as_array().unwrap() {
        let title = chart["title"].as_str().unwrap();
        let lines = chart["lines"].as_array().unwrap();
        assert!(!lines.is_empty(), "{title}: no line drawn");
        let mut strokes: Vec<&str> = lines
            .iter()
            .map(|l| l["stroke"].as_str().unwrap())
            .collect();
        strokes.sort();
        strokes.dedup();
        assert_eq!(
            strokes.len(),
            lines.len(),
            "{title}: two lines share a colour: {chart}"
        );
        // A run's lines differ in dash too: as many dashes as the most
        // lines one run has (runs draw the same number in a chart).
        let mut dashes: Vec<&str> = lines.iter().map(|l| l["dash"].as_str().unwrap()).collect();
        dashes.sort();
        dashes.dedup();
        let per_run = lines.len().div_ceil(runs.len()).min(4);
        assert!(
            dashes.len() >= per_run,
            "{title}: dashes {dashes:?}: {chart}"
        );
        for l in lines {
            assert_eq!(
                l["in_legend"], 0,
                "{title}: the legend covers a point: {chart}"
            );
            let listed = chart["legend"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["stroke"] == l["stroke"] && s["dash"] == l["dash"]);
            assert!(listed, "{title}: a line the legend does not show: {chart}");
        }
    }
    // The summary table's total rows: each run's count and p50 as its
    // JSON has them (columns: run, op, requests, ok/s, p50, ...).
    let totals: Vec<&Value> = probe["summary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r[1] == "total")
        .collect();
    assert_eq!(totals.len(), runs.len(), "{}", probe["summary"]);
    for (row, j) in totals.iter().zip(runs) {
        assert_eq!(row[2], j["total"]["count"].to_string(), "{row}");
        let p50 = num(&j["total"]["latency_us"]["p50"]);
        assert_printed(row[4].as_str().unwrap(), p50, "the table's p50");
    }
    let settings = probe["settings"].as_array().unwrap();
    assert!(!settings.is_empty());
    for cell in settings {
        let cell = cell.as_str().unwrap();
        assert!(
            !cell.contains('{') && !cell.contains("null"),
            "settings cell {cell:?}"
        );
    }
}

/// At a phone's width the page does not scroll sideways, charts shrink to
/// fit, and no legend covers a line.
fn assert_fits_a_phone(page: &Path) {
    let phone = probe_page(page, 390);
    let width = num(&phone["client_width"]);
    assert!(num(&phone["scroll_width"]) <= width, "{phone}");
    for c in phone["charts"].as_array().unwrap() {
        assert!(num(&c["width"]) <= width, "{c}");
        for l in c["lines"].as_array().unwrap() {
            assert_eq!(l["in_legend"], 0, "{c}");
        }
    }
}

/// The spectrum charts: each run's latency solid, its service time dashed.
fn assert_spectra(probe: &Value, runs: usize) {
    let spectra: Vec<&Value> = probe["charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["title"]
                .as_str()
                .unwrap()
                .ends_with("latency by percentile")
        })
        .collect();
    assert!(spectra.len() >= 3, "get, set and total: {probe}");
    for c in spectra {
        let dashes: Vec<&str> = c["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["dash"].as_str().unwrap())
            .collect();
        let solid = dashes.iter().filter(|d| **d == "solid").count();
        assert_eq!(solid, runs, "{c}");
        assert_eq!(dashes.len() - solid, runs, "{c}");
    }
}

fn titles(probe: &Value) -> Vec<String> {
    probe["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap().to_string())
        .collect()
}

fn changed(probe: &Value) -> Vec<String> {
    probe["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_open_loop_run_with_server_stats_answers_first() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let (_, j) = run_to(
        dir.path(),
        "r",
        &m.addr(),
        &[
            "-t",
            "3s",
            "-i",
            "1s",
            "-q",
            "2000",
            "--server-stats",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    // The server is the judge of the counts the page prints: it saw the
    // preload's 10,000 sets and every measured request, besides any
    // still unanswered when the run stopped.
    let served = m.stat("cmd_get") + m.stat("cmd_set");
    let unanswered = ["cut_off", "timeout", "connection_lost"]
        .map(|c| j["errors"][c].as_u64().unwrap())
        .iter()
        .sum::<u64>();
    let counted = 10_000 + j["total"]["count"].as_u64().unwrap();
    let beyond = served
        .checked_sub(counted)
        .unwrap_or_else(|| panic!("the server saw {served} commands, the JSON {counted}"));
    assert!(
        beyond <= unanswered,
        "{served} commands, {unanswered} unanswered"
    );
    let probe = probe_page(&html, 1280);
    assert_well_made(&html, &probe, &[&j]);
    assert_spectra(&probe, 1);
    // A bar per op type and total, per percentile the JSON took apart.
    let taken_apart = |k: &str| j[k]["latency_parts"]["at"].as_array().unwrap().len();
    let bars = taken_apart("total")
        + ["get", "set"]
            .map(|op| j["ops"][op].clone())
            .iter()
            .map(|o| o["latency_parts"]["at"].as_array().map_or(0, Vec::len))
            .sum::<usize>();
    assert_eq!(probe["stacks"].as_array().unwrap().len(), bars);
    let figures = &probe["figures"];
    assert_printed(
        figures["ok_rate"][0].as_str().unwrap(),
        num(&j["total"]["ok_rate"]),
        "ok/s",
    );
    assert_printed(
        figures["error_rate"][0].as_str().unwrap(),
        num(&j["total"]["error_rate"]),
        "err/s",
    );
    for (key, p) in [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9)] {
        assert_printed(
            figures[key][0].as_str().unwrap(),
            json_percentile(&j, p),
            key,
        );
    }
    // The verdict is the JSON's (whether this machine kept up is its own).
    let verdict = probe["verdict"][0].as_str().unwrap();
    match j["client"]["client_bound"].as_bool().unwrap() {
        true => assert!(
            verdict.starts_with("The client was the bottleneck"),
            "{verdict}"
        ),
        false => assert!(verdict.starts_with("The client kept up"), "{verdict}"),
    }
    let titles = titles(&probe);
    for title in [
        "Throughput: answered without error",
        "Latency over time",
        "Send lag (intended send → sent), p99",
        "Errors by class",
        "Client CPU: the load's worker threads",
        "Commands per server (its own stats)",
        "Hit ratio per server (its own stats)",
        "Evictions per server (its own stats)",
        "Server CPU per command (rusage_user + rusage_system)",
    ] {
        assert!(
            titles.iter().any(|t| t == title),
            "no {title:?} in {titles:?}"
        );
    }
    // The client CPU drawn per interval is the load threads' share of what
    // the kernel charged the whole process.
    let threads: f64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| num(&i["client_cpu_s"]))
        .sum();
    let process = num(&j["client"]["cpu_user_s"]) + num(&j["client"]["cpu_sys_s"]);
    assert!(
        threads > 0.0 && threads <= process + 0.01,
        "{threads} s of {process} s"
    );
    // In the command line's words: what was given, and nothing that was not.
    let changed = changed(&probe);
    let server = format!("-s {}", m.addr());
    for words in [
        server.as_str(),
        "-q 2000",
        "-t 3s",
        "-i 1s",
        "--server-stats",
    ] {
        assert!(
            changed.iter().any(|c| c == words),
            "{words:?} not in {changed:?}"
        );
    }
    assert_eq!(changed.len(), 5, "{changed:?}");
    // The defaults are mcbench's, not those of the environment the
    // report is made in.
    let again = dir.path().join("again.html");
    let json = path_in(dir.path(), "r.json");
    let out = mcbench_env(
        &["report", &json, "--html", again.to_str().unwrap()],
        &[
            ("MEMCACHED_SERVERS", "10.9.9.9:1"),
            ("MCBENCH_USER", "someone"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(probe_page(&again, 1280)["changed"], probe["changed"]);
    assert_fits_a_phone(&html);
    screenshot(&html, "open-loop.png");
}

#[test]
fn several_runs_share_the_charts_a_colour_each() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, a) = run_to(
        d,
        "a",
        &m.addr(),
        &["-t", "2s", "-i", "1s", "-q", "1000", "--label", "slow"],
    );
    let (_, b) = run_to(d, "b", &m.addr(), &["-t", "2s", "-i", "1s", "-q", "3000"]);
    let both = d.join("both.html");
    let out = mcbench(&[
        "report",
        &path_in(d, "a.json"),
        &path_in(d, "b.json"),
        "--html",
        both.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let probe = probe_page(&both, 1280);
    assert_well_made(&both, &probe, &[&a, &b]);
    assert_spectra(&probe, 2);
    // Named by the label, else by the server.
    let headers = &probe["headers"];
    assert_eq!(headers[1], "slow", "{headers}");
    assert_eq!(headers[2], format!("run 2: {}", m.addr()), "{headers}");
    // Run 1 draws in #1F77B4, run 2 in #FF7F0E (the palette's first two),
    // in every chart.
    for c in probe["charts"].as_array().unwrap() {
        for colour in ["#1F77B4", "#FF7F0E"] {
            let drawn = c["lines"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["stroke"] == colour);
            assert!(drawn, "{colour} missing from {c}");
        }
    }
    // Side by side, with the ratio to the first.
    let ok = &probe["figures"]["ok_rate"];
    assert_printed(
        ok[0].as_str().unwrap(),
        num(&a["total"]["ok_rate"]),
        "run 1 ok/s",
    );
    assert_printed(
        ok[1].as_str().unwrap(),
        num(&b["total"]["ok_rate"]),
        "run 2 ok/s",
    );
    let ratio = format!(
        "({:.2}×)",
        num(&b["total"]["ok_rate"]) / num(&a["total"]["ok_rate"])
    );
    let page = std::fs::read_to_string(&both).unwrap();
    assert!(page.contains(&ratio), "no {ratio} on the page");
    let p99 = &probe["figures"]["p99"];
    assert_printed(
        p99[1].as_str().unwrap(),
        json_percentile(&b, 99.0),
        "run 2 p99",
    );
    // The settings: a column each, the rate differs.
    let changed = changed(&probe);
    assert!(changed.contains(&"-q 1000".to_string()) && changed.contains(&"-q 3000".to_string()));
    assert!(changed.contains(&"--label slow".to_string()), "{changed:?}");
    assert_fits_a_phone(&both);
    screenshot(&both, "two-runs.png");
    // compare draws the same page beside its table (--force: the rates
    // differ); never over an input.
    let compared = d.join("compared.html");
    let (a_json, b_json) = (path_in(d, "a.json"), path_in(d, "b.json"));
    let out = mcbench(&[
        "compare",
        &a_json,
        &b_json,
        "--force",
        "--html",
        compared.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("slow"), "{}", stdout(&out));
    let again = probe_page(&compared, 1280);
    assert_eq!(again["headers"], probe["headers"]);
    assert_eq!(again["figures"], probe["figures"]);
    let over = mcbench(&["compare", &a_json, &b_json, "--force", "--html", &a_json]);
    assert_usage_error(&over, "--html");
    assert!(
        read_json(&d.join("a.json"))["total"].is_object(),
        "a.json kept"
    );
}

#[test]
fn a_closed_loop_run_has_no_send_lag_to_draw() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("c.html");
    let (_, j) = run_to(
        dir.path(),
        "c",
        &m.addr(),
        &[
            "-t",
            "2s",
            "-i",
            "1s",
            "-c",
            "2",
            "-d",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    let probe = probe_page(&html, 1280);
    assert_well_made(&html, &probe, &[&j]);
    assert_spectra(&probe, 1);
    let titles = titles(&probe);
    assert!(
        titles.iter().any(|t| t == "Latency over time"),
        "{titles:?}"
    );
    assert!(
        !titles.iter().any(|t| t.starts_with("Send lag")),
        "{titles:?}"
    );
    let figures = &probe["figures"];
    for (key, p) in [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9)] {
        assert_printed(
            figures[key][0].as_str().unwrap(),
            json_percentile(&j, p),
            key,
        );
    }
    assert_eq!(
        changed(&probe),
        [
            format!("-s {}", m.addr()),
            "-c 2".into(),
            "-d 2".into(),
            "-t 2s".into(),
            "-i 1s".into()
        ]
    );
    assert_fits_a_phone(&html);
    screenshot(&html, "closed-loop.png");
}

#[test]
fn a_failed_run_says_so_before_any_number() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::CloseAfter(200));
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("f.html");
    let json = path_in(dir.path(), "f.json");
    let out = mcbench(&[
        "run",
        "-s",
        &addr,
        "-t",
        "3s",
        "-i",
        "1s",
        "--no-load",
        "--json",
        &json,
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let why = j["failure"].as_str().expect("the JSON says why");
    let probe = probe_page(&html, 1280);
    assert_well_made(&html, &probe, &[&j]);
    let verdict = probe["verdict"][0].as_str().unwrap();
    assert!(
        verdict.starts_with("The run failed") && verdict.contains(why),
        "{verdict}"
    );
    let figures = &probe["figures"];
    assert_printed(
        figures["ok_rate"][0].as_str().unwrap(),
        num(&j["total"]["ok_rate"]),
        "ok/s",
    );
    for (key, p) in [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9)] {
        assert_printed(
            figures[key][0].as_str().unwrap(),
            json_percentile(&j, p),
            key,
        );
    }
    screenshot(&html, "failed.png");
}
