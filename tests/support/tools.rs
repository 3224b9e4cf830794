//! Running the seed tools' command lines as a user would: a seed's line
//! with our servers in it, run through its personality, and the fields of
//! the old tools' layouts read back.

use super::{wait_bounded, BIN};
use std::process::Output;

/// A seed's example line with its servers replaced by ours, split as a
/// shell would (the seeds quote nothing).
pub fn line(text: &str, swaps: &[(&str, &str)]) -> Vec<String> {
    let mut t = text.to_string();
    for (from, to) in swaps {
        t = t.replace(from, to);
    }
    t.split_whitespace().map(String::from).collect()
}

/// Runs `mcbench TOOL ARGS... --mcbench-duration CAP` in `dir`. The cap
/// is 2 s where the old tool's own time ends a line (memaslap's,
/// mutilate's and memcache-perf's `-t`, and their long defaults), and
/// 60 s for mcperf, whose lines have no time: their counts and schedules
/// end them, and a loaded machine must not cut what a test counts. A
/// test that wants an mcperf line cut gives its cap (`run_tool_capped`).
pub fn run_tool(dir: &std::path::Path, tool: &str, args: &[String]) -> Output {
    let cap = if tool == "mcperf" { 60 } else { 2 };
    run_tool_capped(dir, tool, args, cap)
}

/// `run_tool` with a cap of `seconds`: a line its own count ends is given
/// a cap no loaded machine reaches first.
pub fn run_tool_capped(dir: &std::path::Path, tool: &str, args: &[String], seconds: u64) -> Output {
    let mut cmd = std::process::Command::new(BIN);
    cmd.current_dir(dir)
        .arg(tool)
        .args(args)
        .args(["--mcbench-duration", &format!("{seconds}s")])
        .env_remove("MEMCACHED_SERVERS")
        .env("HOME", dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // A guard against a hang, not a measure: a preload the cap does not
    // end (memcache-perf's profiles store 1,000,000 records) may take
    // a minute on a loaded machine.
    let limit = std::time::Duration::from_secs(seconds.max(60) + 120);
    wait_bounded(cmd.spawn().unwrap(), limit)
}

/// The value after `name` on the line that starts with it.
pub fn field(text: &str, name: &str) -> u64 {
    let l = text
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no '{name}' in:\n{text}"));
    l[name.len()..]
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("'{name}' has no number: {l}"))
}

/// mutilate's and memcache-perf's `Total QPS = X (N / Ts)` line: the line,
/// N (the requests answered) and T (the seconds divided by).
pub fn total_qps(text: &str) -> (&str, u64, f64) {
    let qps = text
        .lines()
        .find(|l| l.starts_with("Total QPS = "))
        .unwrap_or_else(|| panic!("no Total QPS in:\n{text}"));
    let inner = qps.split('(').nth(1).unwrap();
    let (n, secs) = inner.split_once(" / ").unwrap();
    let secs = secs.trim_end_matches("s)").parse().unwrap();
    (qps, n.parse().unwrap(), secs)
}

/// The lines of `text` that start with each of `names`, in that order.
pub fn assert_in_order(text: &str, names: &[&str]) {
    let mut at = 0;
    let lines: Vec<&str> = text.lines().collect();
    for name in names {
        let found = lines[at..]
            .iter()
            .position(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no '{name}' after line {at} in:\n{text}"));
        at += found + 1;
    }
}
