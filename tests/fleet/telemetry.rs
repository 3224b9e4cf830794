//! `--metrics-listen` on a master: its endpoint serves the agents'
//! intervals merged, and each agent's own, judged by memcached's counts.

use crate::support;

use support::prometheus::{dashboard_queries, samples, text_when_done, Prometheus};
use support::*;

const TOKEN: &str = "test-token-0123456789abcdef";

#[test]
fn a_masters_endpoint_serves_its_agents_merged_to_the_servers_count() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let agents: Vec<AgentProc> = (0..2).map(|_| AgentProc::start(&tf, &[])).collect();
    let target = format!("127.0.0.1:{}", free_port());
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let mut args = vec![
        "run",
        "-s",
        &addr,
        "-t",
        "2s",
        "-c",
        "4",
        "-q",
        "2000",
        "--no-load",
        "--label",
        "fleet",
        "--token-file",
        &tf,
        "--metrics-listen",
        &target,
        "--metrics-hold",
        "60s",
    ];
    for a in &agents {
        args.extend(["--agent", &a.addr[..]]);
    }
    let child = spawn_mcbench(&args, &[]);
    let text = text_when_done(&target, "fleet");
    let out = wait_bounded(child, std::time::Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    // The merge (no agent label) is what the server counted...
    let merged: f64 = samples(&text, "mcbench_requests_total", &[], &["agent="])
        .iter()
        .sum();
    assert_eq!(merged as u64, served, "{text}");
    // ...and each agent's own adds up to it, every agent with a share.
    let mut shares = 0.0;
    for a in &agents {
        let label = format!("agent=\"{}\"", a.addr);
        let own: f64 = samples(&text, "mcbench_requests_total", &[&label], &[])
            .iter()
            .sum();
        assert!(own > 0.0, "{label} in {text}");
        shares += own;
    }
    assert_eq!(shares, merged);
    // So does the merged latency histogram.
    let counted: f64 = samples(&text, "mcbench_latency_seconds_count", &[], &["agent="])
        .iter()
        .sum();
    assert_eq!(counted, merged);
}

/// The run's merged latency histogram over all its intervals, p99, s.
fn intervals_p99_s(intervals: &[serde_json::Value]) -> f64 {
    let mut h = hdr(&intervals[0]["ops"]["total"]["latency_hdr"]);
    for i in &intervals[1..] {
        h.add(hdr(&i["ops"]["total"]["latency_hdr"])).unwrap();
    }
    h.value_at_quantile(0.99) as f64 / 1e9
}

#[test]
fn a_prometheus_scraping_only_the_master_stores_the_servers_count_and_the_merged_p99() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let agents: Vec<AgentProc> = (0..2).map(|_| AgentProc::start(&tf, &[])).collect();
    let target = format!("127.0.0.1:{}", free_port());
    let prometheus = Prometheus::start(std::slice::from_ref(&target), true);
    prometheus.wait_scraping();
    let json = path_in(dir.path(), "fleet.json");
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let mut args = vec![
        "run",
        "-s",
        &addr,
        "-t",
        "3s",
        "-c",
        "4",
        "-q",
        "2000",
        "--no-load",
        "--label",
        "fleet",
        "--token-file",
        &tf,
        "--metrics-listen",
        &target,
        "--metrics-hold",
        "30s",
        "--json",
        &json,
    ];
    for a in &agents {
        args.extend(["--agent", &a.addr[..]]);
    }
    // The hold ends once Prometheus (the only scraper) has read the end.
    let out = wait_bounded(
        spawn_mcbench(&args, &[]),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    let v = read_json(dir.path().join("fleet.json").as_path());
    let series = "mcbench_intervals_total{run=\"fleet\",agent=\"\"}";
    let at = prometheus.last_sample_at(series).expect("scraped");
    let merged = "sum(mcbench_requests_total{run=\"fleet\",agent=\"\"})";
    assert_eq!(prometheus.number_at(merged, at), Some(served as f64));
    let agents_sum = "sum(mcbench_requests_total{run=\"fleet\",agent!=\"\"})";
    assert_eq!(prometheus.number_at(agents_sum, at), Some(served as f64));
    let q = "histogram_quantile(0.99, sum(mcbench_latency_seconds{run=\"fleet\",agent=\"\"}))";
    let stored = prometheus.number_at(q, at).unwrap();
    let p99 = intervals_p99_s(v["intervals"].as_array().unwrap());
    // A native bucket at schema 5 spans a factor 2^(1/32).
    let base = 2f64.powf(1.0 / 32.0);
    assert!(
        p99 / base <= stored && stored <= p99 * base,
        "p99 {stored} s in Prometheus, {p99} s in the run"
    );
    // The dashboard's per-agent panels have an answer for each agent.
    for (title, expr) in dashboard_queries("fleet") {
        if expr.contains("agent!=\"\"") {
            let rows = prometheus.query_at(&expr, Some(at));
            assert_eq!(rows.as_array().unwrap().len(), 2, "{title}: {expr}: {rows}");
        }
    }
}

#[test]
fn an_agents_own_endpoint_serves_its_share_under_its_agent_label() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let own = format!("127.0.0.1:{}", free_port());
    let agent = AgentProc::start(&tf, &["--metrics-listen", &own]);
    // Before its first share an agent names no run: it serves nothing.
    let idle = support::prometheus::http_get(&own, "/metrics", "");
    assert_eq!(idle, Some((200, Vec::new())));
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let out = mcbench(&[
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
        "share",
        "--token-file",
        &tf,
        "--agent",
        &agent.addr,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    // The share is over, and the agent still serves it until the next.
    let text = text_when_done(&own, "share");
    let requests = samples(&text, "mcbench_requests_total", &["agent=\""], &[]);
    assert_eq!(requests.iter().sum::<f64>() as u64, served, "{text}");
    // Every series of it carries the agent's name: none would pass for
    // a master's merge.
    let unlabelled = text
        .lines()
        .filter(|l| l.starts_with("mcbench_") && !l.contains("agent=\""))
        .count();
    assert_eq!(unlabelled, 0, "{text}");
    // A hold is a run's, not an agent's.
    let refused = mcbench(&[
        "agent",
        "--token-file",
        &tf,
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-hold",
        "1s",
    ]);
    assert_usage_error(&refused, "--metrics-hold");
}
