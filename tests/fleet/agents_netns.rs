//! Agents on hosts of their own: each in a network namespace the test
//! creates, beside a hub namespace holding memcached and the master, all
//! joined by veth pairs on a bridge in the hub. Addresses (10.213.0.0/24)
//! exist inside the namespaces only. Needs root and `ip` (iproute2), as
//! CI has; without them these tests fail rather than pass unseen.

use crate::support;

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

const TOKEN: &str = "netns-token-0123456789abcdef";
const HUB_IP: &str = "10.213.0.1";
const MEMCACHED: &str = "10.213.0.1:11211";
const AGENT_PORT: u16 = 5556;

fn agent_ip(i: usize) -> String {
    format!("10.213.0.{}", 11 + i)
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The namespaces of one test: a hub and `n` agent hosts. Dropping it
/// deletes them all, also when the test failed.
struct Lab {
    hub: String,
    hosts: Vec<String>,
}

impl Lab {
    fn new(n: usize) -> Lab {
        static LABS: AtomicUsize = AtomicUsize::new(0);
        let tag = format!(
            "mcb{}x{}",
            std::process::id(),
            LABS.fetch_add(1, Ordering::Relaxed)
        );
        // Built before any namespace exists: its drop removes what was made.
        let lab = Lab {
            hub: format!("{tag}h"),
            hosts: (0..n).map(|i| format!("{tag}a{i}")).collect(),
        };
        let hub = lab.hub.as_str();
        ip(&["netns", "add", hub]);
        ip(&["-n", hub, "link", "set", "lo", "up"]);
        ip(&["-n", hub, "link", "add", "br0", "type", "bridge"]);
        ip(&[
            "-n",
            hub,
            "addr",
            "add",
            &format!("{HUB_IP}/24"),
            "dev",
            "br0",
        ]);
        ip(&["-n", hub, "link", "set", "br0", "up"]);
        for (i, host) in lab.hosts.iter().enumerate() {
            let port = format!("v{i}");
            ip(&["netns", "add", host]);
            ip(&["-n", host, "link", "set", "lo", "up"]);
            ip(&[
                "-n", hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
                host,
            ]);
            ip(&["-n", hub, "link", "set", &port, "master", "br0"]);
            ip(&["-n", hub, "link", "set", &port, "up"]);
            let addr = format!("{}/24", agent_ip(i));
            ip(&["-n", host, "addr", "add", &addr, "dev", "eth0"]);
            ip(&["-n", host, "link", "set", "eth0", "up"]);
        }
        lab
    }

    /// `program args` inside namespace `ns` (`ip netns exec` execs it, so
    /// the child's PID is the program's).
    fn command(ns: &str, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, program])
            .env_remove("MEMCACHED_SERVERS");
        cmd
    }

    /// `f` run on a thread that entered namespace `ns`.
    fn inside<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            s.spawn(|| {
                let file = std::fs::File::open(format!("/var/run/netns/{ns}")).unwrap();
                let entered = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(entered, 0, "setns {ns}");
                f()
            })
            .join()
            .unwrap()
        })
    }

    /// memcached in the hub, on its bridge address only.
    fn memcached(&self) -> Proc {
        let mut cmd = Lab::command(&self.hub, "memcached");
        cmd.args([
            "-u", "root", "-l", HUB_IP, "-p", "11211", "-U", "0", "-c", "4096",
        ]);
        let p = Proc::spawn(cmd);
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.stat("pid").is_none() {
            assert!(Instant::now() < deadline, "memcached did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    /// One of the hub memcached's `stats`.
    fn stat(&self, name: &str) -> Option<u64> {
        Lab::inside(&self.hub, || stat_at(MEMCACHED, name))
    }

    fn ops(&self) -> u64 {
        self.stat("cmd_get").unwrap() + self.stat("cmd_set").unwrap()
    }

    /// `mcbench agent` on host `i`, listening on `listen` (the lab's own
    /// network: plain text, said so); returns once it says it listens.
    fn agent(&self, i: usize, listen: &str, token_file: &str) -> Proc {
        let args = ["agent", "--listen", listen, "--token-file", token_file];
        self.serve(i, &[&args[..], &["--insecure-plaintext"]].concat(), &[])
    }

    /// `mcbench args` serving on host `i`, with `env`; returns once it
    /// says it listens.
    fn serve(&self, i: usize, args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut cmd = Lab::command(&self.hosts[i], BIN);
        cmd.args(args).envs(env.iter().copied());
        let p = Proc::spawn(cmd);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !p.said("listening on") {
            assert!(Instant::now() < deadline, "agent {i}: {}", p.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    /// `mcbench args` in namespace `ns`, bounded to 60 s.
    fn mcbench(ns: &str, args: &[&str]) -> Output {
        let mut cmd = Lab::command(ns, BIN);
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        wait_bounded(cmd.spawn().unwrap(), Duration::from_secs(60))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in self.hosts.iter().chain([&self.hub]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// A process the test started in a namespace, its stderr collected;
/// killed by its PID when dropped.
struct Proc {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Proc { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn said(&self, what: &str) -> bool {
        self.stderr().contains(what)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

fn token_file(dir: &std::path::Path) -> String {
    secret_file(dir, "token", &format!("{TOKEN}\n"))
}

#[test]
fn three_hosts_merge_to_the_servers_count_and_one_histograms_percentiles() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path());
    let lab = Lab::new(3);
    let _memcached = lab.memcached();
    let _agents: Vec<Proc> = (0..3)
        .map(|i| lab.agent(i, &format!("{}:{AGENT_PORT}", agent_ip(i)), &tf))
        .collect();
    let load = ["run", "-s", MEMCACHED, "-t", "3s", "-c", "6", "-q", "6000"];
    let json = dir.path().join("agents.json");
    let mut args: Vec<String> = load.iter().map(|s| s.to_string()).collect();
    args.extend(["--token-file".into(), tf.clone()]);
    args.extend(["--json".into(), json.to_str().unwrap().into()]);
    for i in 0..3 {
        args.extend(["--agent".into(), format!("{}:{AGENT_PORT}", agent_ip(i))]);
    }
    let before = lab.ops();
    let out = Lab::mcbench(&lab.hub, &args.iter().map(|s| &s[..]).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = read_json(&json);
    // Every request the agents counted reached the server, and no other:
    // the three 10,000-key preload slices, then the measured load.
    assert_eq!(
        count(&merged, "total.count") + 10_000,
        lab.ops() - before,
        "{}",
        stderr(&out)
    );
    let rows = merged["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let row_sum: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(row_sum, count(&merged, "total.count"));
    // The intervals streamed as they closed add up to the whole results.
    let streamed: u64 = merged["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| count(i, "ops.total.count"))
        .sum();
    assert_eq!(streamed, count(&merged, "total.count"));
    for (i, r) in rows.iter().enumerate() {
        assert!(r["finished"].as_bool().unwrap(), "{r}");
        assert!(stderr(&out).contains(&format!("agent {}:{AGENT_PORT}", agent_ip(i))));
    }
    // The merged percentiles are those of one histogram holding every
    // request: the intervals each agent streamed, summed here by the
    // hdrhistogram crate, are the merged whole, and the percentiles read
    // from it are the ones reported. (How close one process on one host
    // comes to that is a benchmark: bench/agents.py.)
    let mut union = hdr(&merged["intervals"][0]["ops"]["total"]["latency_hdr"]);
    union.reset();
    for i in merged["intervals"].as_array().unwrap() {
        union.add(hdr(&i["ops"]["total"]["latency_hdr"])).unwrap();
    }
    let total = hdr(&merged["total"]["latency_hdr"]);
    assert_eq!(union, total, "the intervals' union is the merged histogram");
    for (p, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
        let want = total.value_at_quantile(q) as f64 / 1e3;
        let got = f(&merged, &format!("total.latency_us.{p}"));
        assert!(
            (got - want).abs() <= want * 1e-3,
            "{p}: {got} µs, the histogram {want} µs"
        );
    }
}

#[test]
fn a_host_lost_mid_run_is_reported_under_each_policy_with_its_data_kept() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path());
    let lab = Lab::new(2);
    let _memcached = lab.memcached();
    let keep_addr = format!("{}:{AGENT_PORT}", agent_ip(0));
    let lose_addr = format!("{}:{AGENT_PORT}", agent_ip(1));
    for policy in ["fail", "continue"] {
        let _keep = lab.agent(0, &keep_addr, &tf);
        let mut lose = lab.agent(1, &lose_addr, &tf);
        let before = lab.ops();
        let json = dir.path().join(format!("{policy}.json"));
        let mut cmd = Lab::command(&lab.hub, BIN);
        cmd.args(["run", "-s", MEMCACHED, "-t", "4s", "-c", "4", "-i", "500ms"])
            .args([
                "--token-file",
                &tf,
                "--agent",
                &keep_addr,
                "--agent",
                &lose_addr,
            ])
            .args(["--on-agent-loss", policy, "--json", json.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // Killed once the master has printed two live lines: both agents
        // have sent their first two intervals (or the lost one lags two
        // behind), so a second of its work is in the master's hands.
        let said = Arc::new(Mutex::new(String::new()));
        let (lines, seen) = std::sync::mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        let keep_said = said.clone();
        let stderr_thread = std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                if line.starts_with('[') {
                    let _ = lines.send(());
                }
                keep_said.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        for _ in 0..2 {
            seen.recv_timeout(Duration::from_secs(30))
                .expect("a live line from the master");
        }
        lose.kill();
        let out = wait_bounded(child, Duration::from_secs(60));
        stderr_thread.join().unwrap();
        let err = said.lock().unwrap().clone();
        let v = read_json(&json);
        let server = lab.ops() - before;
        let rows = v["agents"].as_array().unwrap();
        let lost = rows
            .iter()
            .find(|r| r["name"] == lose_addr.as_str())
            .unwrap();
        let kept = rows
            .iter()
            .find(|r| r["name"] == keep_addr.as_str())
            .unwrap();
        // After the second interval closed, before the 4 s run's end.
        let at = lost["lost_at_s"].as_f64().unwrap();
        assert!((1.0..4.0).contains(&at), "{lost}");
        assert!(!lost["lost_why"].as_str().unwrap().is_empty(), "{lost}");
        // The lost host's intervals before it went count in the result:
        // the server saw them, and less besides than they hold: what it
        // did after its last interval sent (about one 0.5 s interval)
        // against the two or more it sent.
        let lost_count = count(lost, "count");
        assert!(lost_count > 0, "{lost}");
        let total = count(&v, "total.count") + 10_000;
        assert!(
            total <= server && server - total < lost_count,
            "counted {total} with the preload, the server {server}, the lost agent {lost_count}"
        );
        assert_eq!(lost_count + count(kept, "count"), count(&v, "total.count"));
        assert!(v["warnings"].to_string().contains("agent_lost"));
        assert_eq!(v["completed"], false);
        match policy {
            "fail" => {
                assert_eq!(out.status.code(), Some(1), "{err}");
                assert!(v["failure"].as_str().unwrap().contains(&lose_addr));
            }
            _ => {
                assert_eq!(out.status.code(), Some(0), "{err}");
                assert!(stdout(&out).contains("AGENT LOST"), "{}", stdout(&out));
                assert!(stdout(&out).contains(&lose_addr), "{}", stdout(&out));
            }
        }
    }
}

#[test]
fn loopback_agents_are_unreachable_and_wrong_tokens_refused_across_hosts() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path());
    let lab = Lab::new(2);
    let _memcached = lab.memcached();
    // Bound to its host's loopback: the hub cannot reach it ...
    let local = lab.agent(0, &format!("127.0.0.1:{AGENT_PORT}"), &tf);
    let from_hub = format!("{}:{AGENT_PORT}", agent_ip(0));
    let out = Lab::mcbench(
        &lab.hub,
        &[
            "run",
            "-s",
            MEMCACHED,
            "-t",
            "1s",
            "--token-file",
            &tf,
            "--agent",
            &from_hub,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot connect"), "{}", stderr(&out));
    // ... while a master on its own host can.
    let here = format!("127.0.0.1:{AGENT_PORT}");
    let out = Lab::mcbench(
        &lab.hosts[0],
        &[
            "run",
            "-s",
            MEMCACHED,
            "-t",
            "1s",
            "--token-file",
            &tf,
            "--agent",
            &here,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    drop(local);
    // A wrong token from the hub is refused before any traffic, and the
    // agent logs the hub's address.
    let agent = lab.agent(1, &format!("{}:{AGENT_PORT}", agent_ip(1)), &tf);
    let other = secret_file(dir.path(), "other", "another-token-0123456789\n");
    let before = lab.ops();
    let out = Lab::mcbench(
        &lab.hub,
        &[
            "run",
            "-s",
            MEMCACHED,
            "-t",
            "1s",
            "--token-file",
            &other,
            "--agent",
            &format!("{}:{AGENT_PORT}", agent_ip(1)),
        ],
    );
    assert_usage_error(&out, "refused the token");
    assert_eq!(lab.ops(), before, "no traffic");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !agent.said(&format!("refused a call from {HUB_IP}")) {
        assert!(Instant::now() < deadline, "{}", agent.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The seeds' agent example, verbatim but for host names: eight agents
/// (`mutilate -T 16 -A` on four hosts, memcache-perf's on four), then
/// mutilate's and memcache-perf's master lines against all eight.
#[test]
fn the_seeds_agent_lines_run_on_eight_hosts() {
    let _m = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path());
    let lab = Lab::new(8);
    let _memcached = lab.memcached();
    let env = [("MCBENCH_TOKEN_FILE", tf.as_str())];
    let _agents: Vec<Proc> = (0..8)
        .map(|i| {
            let tool = if i < 4 { "mutilate" } else { "memcache-perf" };
            lab.serve(i, &[tool, "-T", "16", "-A"], &env)
        })
        .collect();
    for tool in ["mutilate", "memcache-perf"] {
        let run = |line: &str, json: &str| {
            let mut cmd = Lab::command(&lab.hub, BIN);
            cmd.arg(tool)
                .args(line.split_whitespace().map(|w| match w {
                    "memcached_server" => MEMCACHED.to_string(),
                    a if a.starts_with("agent") => agent_ip(a[5..].parse::<usize>().unwrap() - 1),
                    w => w.to_string(),
                }))
                .args(["--mcbench-duration", "2s", "--mcbench-json", json])
                .env("MCBENCH_TOKEN_FILE", &tf)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            wait_bounded(cmd.spawn().unwrap(), Duration::from_secs(90))
        };
        let load = dir.path().join(format!("{tool}-load.json"));
        let out = run("-s memcached_server --loadonly", load.to_str().unwrap());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let gets0 = lab.stat("cmd_get").unwrap();
        let json = dir.path().join(format!("{tool}.json"));
        let out = run(
            "-s memcached_server --noload \
             -B -T 16 -Q 1000 -D 4 -C 4 \
             -a agent1 -a agent2 -a agent3 -a agent4 \
             -a agent5 -a agent6 -a agent7 -a agent8 \
             -c 4 -q 200000"
                .replace('\\', " ")
                .as_str(),
            json.to_str().unwrap(),
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = read_json(&json);
        assert_eq!(v["agents"].as_array().unwrap().len(), 8);
        // 4 connections × 16 threads on each of 8 agents: 512, as the
        // seed counts them; the master's -C 4 × -T 16 probe on its own.
        assert_eq!(count(&v, "connections.opened"), 512, "{}", stderr(&out));
        assert_eq!(count(&v, "measure.connections"), 64);
        let probe = count(&v, "measure.total.count");
        assert!((1500..=2500).contains(&probe), "-Q 1000 for 2 s: {probe}");
        // Every get the server answered was counted by an agent or the
        // master: answered, or (eight 16-thread agents overload this
        // 2-core machine) given up on after --timeout and counted as a
        // timeout, never passed off as throughput.
        let gets = lab.stat("cmd_get").unwrap() - gets0;
        let answered = count(&v, "total.count") + probe;
        let timed_out = count(&v, "errors.timeout") + count(&v, "measure.total.errors");
        assert!(
            answered <= gets && gets <= answered + timed_out,
            "answered {answered}, timed out {timed_out}, server {gets}"
        );
        // The run is client-bound exactly when an agent was.
        let any = v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["client_bound"] == true);
        assert_eq!(v["client"]["client_bound"], any, "{}", v["warnings"]);
        let text = stdout(&out);
        assert!(text.starts_with("#type"), "{text}");
        assert!(text.contains(&format!("({answered} / ")), "{text}");
    }
}
