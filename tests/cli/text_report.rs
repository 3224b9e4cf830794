//! The text report: the default one leads with the answer on one screen,
//! `--details` prints the full report as it was before, and colour shows
//! on a terminal only.
//!
//! `fixtures/report/closed.json` is a run saved by `mcbench run -t 2s -c 2
//! --json` against an embedded memcached; `closed-details.txt` is what
//! `mcbench report` printed of it before the brief report existed (the
//! binary of commit c5692ed), and `closed.txt` the brief report of it.

use crate::support;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

const FIXTURE: &str = "tests/fixtures/report/closed.json";

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(format!("tests/fixtures/report/{name}")).unwrap()
}

/// Each line of `got` against `want`'s, naming the first that differs.
fn same_lines(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {} differs; the whole report:\n{got}", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "line counts differ:\n{got}"
    );
}

#[test]
fn the_default_report_is_the_answer_on_one_screen() {
    let out = mcbench(&["report", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    same_lines(&text, &fixture_text("closed.txt"));
    assert!(text.lines().count() <= 25, "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }
    // The answer first: throughput, the tail, the client, the precision.
    let heads: Vec<&str> = text
        .lines()
        .skip(1)
        .take(4)
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(heads, ["throughput", "latency", "verdict", "precision"]);
}

/// The headline's figures are the saved result's: its rate, and the
/// verdict's value and interval at p50, p99 and p99.9.
#[test]
fn the_headline_holds_the_saved_results_figures() {
    let saved: Value = serde_json::from_str(&fixture_text("closed.json")).unwrap();
    let text = stdout(&mcbench(&["report", FIXTURE]));
    let line = |label: &str| {
        let prefix = format!("  {label} ");
        text.lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {label} line: {text}"))
            .to_string()
    };
    let ok = f(&saved, "total.ok_rate");
    assert!(
        line("throughput").contains(&format!(" {ok:.0} ok/s, 0 err/s")),
        "{text}"
    );
    let latency = line("latency");
    let checks = saved["verdict"]["checks"].as_array().unwrap();
    for p in [50.0, 99.0, 99.9] {
        let c = checks.iter().find(|c| c["percentile"] == p).unwrap();
        let value = f(c, "value_us");
        let spread = match c["relative_half_width"].as_f64() {
            Some(h) if h < 0.1 => format!("±{:.1}%", h * 100.0),
            Some(h) => format!("±{:.0}%", h * 100.0),
            None => "±∞".into(),
        };
        let cell = format!("p{p} {value:.1} µs {spread}");
        assert!(latency.contains(&cell), "{cell} not in {latency}");
    }
    // Each op's row has its own rate.
    for op in ["get", "set"] {
        let rate = f(&saved, &format!("ops.{op}.ok_rate"));
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{op} ")))
            .unwrap();
        assert!(row.contains(&format!(" {rate:.1} ")), "{rate} in {row}");
    }
}

#[test]
fn details_prints_the_full_report_as_it_was() {
    let out = mcbench(&["report", "--details", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    same_lines(&stdout(&out), &fixture_text("closed-details.txt"));
}

/// `script` gives mcbench a terminal for its stdout.
fn on_a_terminal(env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("script");
    let line = format!("{BIN} report {FIXTURE}");
    cmd.args(["-qec", &line, "/dev/null"])
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn colour_shows_on_a_terminal_and_never_in_a_pipe_or_with_no_color() {
    let green = "\u{1b}[32mthe client kept up";
    let tty = on_a_terminal(&[]);
    assert!(tty.contains(green), "{tty:?}");
    assert!(tty.contains("\u{1b}[33mp50 needs ~2.0× longer"), "{tty:?}");
    assert!(!on_a_terminal(&[("NO_COLOR", "1")]).contains('\u{1b}'));
    let piped = stdout(&mcbench_env(&["report", FIXTURE], &[("TERM", "xterm")]));
    assert!(!piped.contains('\u{1b}'), "{piped:?}");
    let details = stdout(&mcbench(&["report", "--details", FIXTURE]));
    assert!(!details.contains('\u{1b}'), "{details:?}");
}

/// Live runs: service time where the client made requests wait (an open
/// loop), not where a closed loop's sends follow their slots at once; the
/// parts where they were measured; `--details` always prints both.
#[test]
fn service_time_and_parts_show_only_where_they_say_something() {
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(2)));
    // p50 and p90 of 2 ms answers: a loaded host's fraction of a
    // millisecond between a slot's freeing and its send is not 5 % of it.
    let common = ["--no-load", "-c", "2", "-t", "1s", "--percentiles", "50,90"];
    let run = |more: &[&str]| {
        let mut args = vec!["run", "-s", &server];
        args.extend(common);
        args.extend(more);
        let out = mcbench(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let closed = run(&[]);
    assert!(closed.contains("Latency (intended send"), "{closed}");
    assert!(!closed.contains("Service time"), "{closed}");
    assert!(!closed.contains("Latency parts"), "{closed}");
    let details = run(&["--details"]);
    assert!(details.contains("Service time (actual send"), "{details}");
    assert!(details.contains("Latency parts: not measured"), "{details}");
    assert!(details.contains("Verdict on precision"), "{details}");
    let open = run(&["-q", "200"]);
    assert!(open.contains("Service time (actual send"), "{open}");
    assert!(
        open.contains("send lag") && !open.contains("send lag: n/a"),
        "{open}"
    );
    let stamped = run(&["--kernel-stamps", "on"]);
    assert!(
        stamped.contains("Latency parts (kernel stamps)"),
        "{stamped}"
    );
}
