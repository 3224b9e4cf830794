//! `--metrics-listen` on a master: its endpoint serves the agents'
//! intervals merged, and each agent's own, judged by memcached's counts.

use crate::support;

use support::prometheus::{samples, text_when_done};
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
