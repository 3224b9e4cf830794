//! `mcbench agent` and `mcbench run --agent`: shares, one start, exact
//! merges, a wrong token, and agents lost under each `--on-agent-loss`.

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::*;

const TOKEN: &str = "test-token-0123456789abcdef";

/// An agent process on a free loopback port, killed (by its PID) when
/// dropped.
struct AgentProc {
    child: Child,
    addr: String,
}

impl AgentProc {
    fn start(token_file: &std::path::Path, extra: &[&str]) -> AgentProc {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(BIN)
            .args(["agent", "--listen", &addr, "--token-file"])
            .arg(token_file)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until_listening(&addr, || std::net::TcpStream::connect(&addr).is_ok());
        AgentProc { child, addr }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What the agent said on stderr (after it was killed).
    fn stderr(&mut self) -> String {
        use std::io::Read;
        self.kill();
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        self.kill();
    }
}

fn token_file(dir: &std::path::Path, token: &str) -> String {
    let p = dir.join("token");
    std::fs::write(&p, format!("{token}\n")).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn three_agents_merge_to_the_servers_own_count() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agents: Vec<AgentProc> = (0..3)
        .map(|i| {
            let weight = if i == 0 { "2" } else { "1" };
            AgentProc::start(std::path::Path::new(&tf), &["--lambda-mul", weight])
        })
        .collect();
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let mut args = vec![
        "run",
        "-s",
        &addr,
        "-t",
        "2s",
        "-c",
        "8",
        "--token-file",
        &tf,
    ];
    for a in &agents {
        args.extend(["--agent", &a.addr[..]]);
    }
    let (out, v) = run_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = v["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // Weight 2 of 4: half the connections, so about half the load.
    let rates: Vec<f64> = rows.iter().map(|r| r["rate"].as_f64().unwrap()).collect();
    assert!(rates.iter().all(|r| *r > 0.0), "{rates:?}");
    // Every agent preloaded its own slice of the 10,000 keys, once.
    let server_ops = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert_eq!(
        count(&v, "total.count") + 10_000,
        server_ops,
        "{}",
        stderr(&out)
    );
    // The merged histogram holds every agent's requests.
    assert_eq!(
        hdr(&v["total"]["latency_hdr"]).len(),
        count(&v, "total.count")
    );
    // The text report goes to stderr when the JSON takes stdout.
    assert!(stderr(&out).contains("Agents (3;"), "{}", stderr(&out));
    assert!(stderr(&out).contains("clock offset"), "{}", stderr(&out));
}

#[test]
fn a_wrong_token_is_refused_and_logged() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let mut agent = AgentProc::start(std::path::Path::new(&tf), &[]);
    let other = dir.path().join("other");
    std::fs::write(&other, "another-token-0123456789\n").unwrap();
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "-t",
        "1s",
        "--agent",
        &agent.addr,
        "--token-file",
        other.to_str().unwrap(),
    ]);
    assert_usage_error(&out, "refused the token");
    assert_eq!(m.stat("cmd_get") + m.stat("cmd_set"), before, "no traffic");
    assert!(agent.stderr().contains("refused a call from 127.0.0.1"));
}

#[test]
fn a_lost_agent_fails_the_run_or_is_reported_under_continue() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    for policy in ["fail", "continue"] {
        let keep = AgentProc::start(std::path::Path::new(&tf), &[]);
        let mut lose = AgentProc::start(std::path::Path::new(&tf), &[]);
        let json = dir.path().join(format!("{policy}.json"));
        let child = spawn_mcbench(
            &[
                "run",
                "-s",
                &m.addr(),
                "-t",
                "3s",
                "-c",
                "4",
                "--token-file",
                &tf,
                "--agent",
                &keep.addr,
                "--agent",
                &lose.addr,
                "--on-agent-loss",
                policy,
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
        );
        std::thread::sleep(Duration::from_millis(1500));
        lose.kill();
        let out = wait_bounded(child, Duration::from_secs(60));
        let v = read_json(&json);
        let rows = v["agents"].as_array().unwrap();
        let lost = rows
            .iter()
            .find(|r| r["name"] == lose.addr.as_str())
            .unwrap();
        assert!(lost["lost_at_s"].as_f64().unwrap() > 0.5, "{lost}");
        assert!(
            v["warnings"].to_string().contains("agent_lost"),
            "{}",
            v["warnings"]
        );
        // The other agent's requests are kept either way.
        assert!(count(&v, "total.count") > 0);
        match policy {
            "fail" => {
                assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
                assert!(v["failure"].as_str().unwrap().contains(&lose.addr));
            }
            _ => {
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
                assert!(stdout(&out).contains("AGENT LOST"), "{}", stdout(&out));
            }
        }
    }
}

#[test]
fn agent_flags_are_checked_before_any_traffic() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, "abc\n").unwrap();
    let out = mcbench(&["agent", "--token-file", short.to_str().unwrap()]);
    assert_usage_error(&out, "at least 16");
    let tf = token_file(dir.path(), TOKEN);
    let out = mcbench(&[
        "run",
        "-t",
        "1s",
        "--agent",
        "127.0.0.1:1",
        "--token-file",
        &tf,
    ]);
    assert_usage_error(&out, "--agent needs --server");
}
