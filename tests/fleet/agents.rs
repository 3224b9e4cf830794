//! `mcbench agent` and `mcbench run --agent`: shares, one start, exact
//! merges, a wrong token, and agents lost under each `--on-agent-loss`.

use crate::support;

use std::time::Duration;
use support::*;

const TOKEN: &str = "test-token-0123456789abcdef";

fn token_file(dir: &std::path::Path, token: &str) -> String {
    secret_file(dir, "token", &format!("{token}\n"))
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
            AgentProc::start(&tf, &["--lambda-mul", weight])
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
        "-q",
        "4000",
        "-i",
        "1s",
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
    // Weight 2 of 4: half the rate (2,000 ops/s), the others 1,000 each.
    let rates: Vec<f64> = rows.iter().map(|r| r["rate"].as_f64().unwrap()).collect();
    for (rate, want) in rates.iter().zip([2000.0, 1000.0, 1000.0]) {
        assert!((rate - want).abs() < want * 0.15, "{rates:?}");
    }
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
    // So do the latency's parts, of nearly every request: the kernel may
    // leave one unstamped (CI once saw 7,984 of 7,985 over three agents
    // beside other tests' loads), and the report says how many it took
    // apart.
    let (stamped, all) = (
        count(&v, "total.latency_parts.requests"),
        count(&v, "total.count"),
    );
    assert!(
        stamped <= all && all - stamped <= all / 1000,
        "{stamped} of {all}"
    );
    let of = format!("; {stamped} of {all} stamped");
    assert!(stderr(&out).contains(&of), "{of} in {}", stderr(&out));
    // The text report goes to stderr when the JSON takes stdout.
    assert!(stderr(&out).contains("Agents (3;"), "{}", stderr(&out));
    assert!(stderr(&out).contains("clock offset"), "{}", stderr(&out));
    // -i: a live line per interval, of every agent's interval merged.
    let intervals = v["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2);
    let mut unstamped_in_intervals = 0;
    for i in intervals {
        let get = &i["ops"]["get"];
        let line = format!(
            "[{:>7.1}s] get {:.0}/s p50 {:.1}",
            f(i, "time_s"),
            f(get, "rate"),
            f(get, "p50_us")
        );
        assert!(stderr(&out).contains(&line), "{line} in {}", stderr(&out));
        // The merged interval holds the agents' load-thread CPU: some,
        // and no more than three agents of one load thread each can use
        // (a core each, with slack for where the thread clocks are read).
        // Each interval carries the parts of every agent's stamped
        // requests in it: the requests the kernel left unstamped are the
        // run's own (CI once saw 3,965 of an interval's 3,968).
        let parts = i["ops"]["total"]["parts_hdr"].as_array().unwrap();
        assert_eq!(parts.len(), 4, "{i}");
        let (in_parts, in_interval) = (hdr(&parts[2]).len(), count(i, "ops.total.count"));
        assert!(in_parts <= in_interval, "{in_parts} of {in_interval}");
        unstamped_in_intervals += in_interval - in_parts;
        let cpu = f(i, "client_cpu_s");
        assert!(cpu > 0.0 && cpu <= 3.0 * 1.5 * f(i, "duration_s"), "{i}");
    }
    assert!(
        unstamped_in_intervals <= all - stamped,
        "{unstamped_in_intervals} unstamped in the intervals, {} in the run",
        all - stamped
    );
    // The merged result loads again, every check of a saved one holding.
    let saved = path_in(dir.path(), "merged.json");
    std::fs::write(&saved, &out.stdout).unwrap();
    let again = mcbench(&["report", &saved, "--json", "-"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(count(&again, "total.count"), count(&v, "total.count"));
}

/// `--precision` over agents: the master judges every agent's intervals
/// merged, and tells each agent when the run is precise enough; each then
/// ends its share as at -t, a run complete, well before -t.
#[test]
fn precision_over_agents_ends_every_share_once_the_merge_is_precise() {
    let _m = shared_machine();
    // Each answer's wait drawn anew over 1-201 ms: the p90's tail is made
    // of the server's independent draws, as the verdict needs, whatever
    // this host's hiccups (over 0.5-1.5 ms, CI once saw them cluster the
    // tail, and the whole run's verdict overrule the judge that stopped on
    // the first intervals).
    let server = fake_server(Misbehaviour::AnswersAfterUniform(
        Duration::from_millis(1),
        Duration::from_millis(201),
    ));
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agents: Vec<AgentProc> = (0..2).map(|_| AgentProc::start(&tf, &[])).collect();
    let mut args = vec![
        "run",
        "-s",
        &server,
        "--no-load",
        "-c",
        "16",
        "-t",
        "40s",
        "--interval",
        "250ms",
        "--precision",
        "p90:10%",
        "--token-file",
        &tf,
    ];
    for a in &agents {
        args.extend(["--agent", &a.addr[..]]);
    }
    let (out, v) = run_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let secs = f(&v, "duration_s");
    assert!(
        secs < 39.0,
        "ran {secs} s: the agents were not told it was enough"
    );
    assert_eq!(v["completed"], true, "{}", stderr(&out));
    assert!(v["stopped_by"].is_null());
    for row in v["agents"].as_array().unwrap() {
        assert_eq!(row["finished"], true, "{row}");
    }
    assert_eq!(v["verdict"]["long_enough"], true, "{}", v["verdict"]);
    // Judged on the merge: the master's p90 interval, from both agents'
    // histograms, is within 10 %.
    let p90 = v["verdict"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["percentile"] == 90.0)
        .unwrap()
        .clone();
    assert_eq!(p90["named"], true, "{p90}");
    assert!(f(&p90, "relative_half_width") <= 0.10, "{p90}");
    assert_eq!(
        hdr(&v["total"]["latency_hdr"]).len(),
        count(&v, "total.count")
    );
}

#[test]
fn a_wrong_token_is_refused_and_logged() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let mut agent = AgentProc::start(&tf, &[]);
    let other = secret_file(dir.path(), "other", "another-token-0123456789\n");
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
        &other,
    ]);
    assert_usage_error(&out, "refused the token");
    assert_eq!(m.stat("cmd_get") + m.stat("cmd_set"), before, "no traffic");
    assert!(agent.stderr().contains("refused a call from 127.0.0.1"));
}

#[test]
fn tls_agents_need_the_masters_trust_and_the_right_name() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let (cert, key) = self_signed(dir.path());
    let (cert, key) = (&cert[..], &key[..]);
    let agent = AgentProc::start(&tf, &["--tls-cert", cert, "--tls-key", key]);
    let addr = m.addr();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "-s",
            &addr,
            "-t",
            "1s",
            "-c",
            "2",
            "--token-file",
            &tf,
        ];
        args.extend(["--agent", &agent.addr]);
        args.extend(extra);
        mcbench(&args)
    };
    let out = run(&["--agent-tls-ca", cert]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Agents (1;"), "{}", stdout(&out));
    // A master without TLS cannot talk to it: the agent really serves TLS.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--agent-tls-ca"), "{}", stderr(&out));
    // The certificate must carry the name the master checks.
    let out = run(&[
        "--agent-tls-ca",
        cert,
        "--agent-tls-domain",
        "elsewhere.example",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("elsewhere.example"),
        "{}",
        stderr(&out)
    );
    // Not a certificate: a usage error before any call.
    assert_usage_error(
        &run(&["--agent-tls-ca", key]),
        "not a PEM file holding a CERTIFICATE",
    );
    // Over TLS the password goes with the share: a server that asks for
    // authentication (memcached -Y) takes the agent's preload and load.
    let auth = dir.path().join("auth");
    std::fs::write(&auth, "bench:secret\n").unwrap();
    let secured = Memcached::start(&["-Y", auth.to_str().unwrap()]);
    let secured_addr = secured.addr();
    let out = mcbench(&[
        "run",
        "-s",
        &secured_addr,
        "-t",
        "1s",
        "-c",
        "2",
        "-r",
        "500",
        "--token-file",
        &tf,
        "--agent",
        &agent.addr,
        "--agent-tls-ca",
        cert,
        "-U",
        "bench",
        "-P",
        "secret",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sets = authenticated_stat(&secured_addr, "bench secret", "cmd_set");
    assert!(sets >= 500, "{sets} sets: the preload did not authenticate");
}

/// One value of `stats` from a memcached that asks for text
/// authentication (`-Y`), after authenticating as `credentials`.
fn authenticated_stat(addr: &str, credentials: &str, name: &str) -> u64 {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let n = credentials.len();
    let login = format!("set auth 0 0 {n}\r\n{credentials}\r\nstats\r\n");
    s.write_all(login.as_bytes()).unwrap();
    let prefix = format!("STAT {name} ");
    for line in BufReader::new(s).lines() {
        let line = line.unwrap();
        if let Some(v) = line.strip_prefix(&prefix) {
            return v.trim().parse().unwrap();
        }
        assert!(line != "END", "no stat {name}");
    }
    panic!("no stat {name}")
}

#[test]
fn the_masters_probe_connections_are_reported_apart() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agent = AgentProc::start(&tf, &[]);
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let addr = m.addr();
    let (out, v) = run_json(&[
        "run",
        "-s",
        &addr,
        "-t",
        "2s",
        "-c",
        "2",
        // A load's batched refills are its own: the probe is an open loop.
        "-d",
        "4",
        "--refill-batch",
        "2",
        "--measure-connections",
        "1",
        "--measure-rate",
        "500",
        "--token-file",
        &tf,
        "--agent",
        &agent.addr,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let probe = count(&v, "measure.total.count");
    // 500/s for 2 s from the master itself.
    assert!((800..=1200).contains(&probe), "{probe}");
    assert_eq!(count(&v, "measure.connections"), 1);
    // The agent's load and the probe's requests, each counted once.
    assert_eq!(
        count(&v, "total.count") + probe + 10_000,
        m.stat("cmd_get") + m.stat("cmd_set") - before
    );
    assert_eq!(
        v["agents"][0]["count"].as_u64(),
        Some(count(&v, "total.count"))
    );
}

#[test]
fn a_signal_stops_master_and_agents_with_the_results_so_far() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agent = AgentProc::start(&tf, &[]);
    let json = dir.path().join("r.json");
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-t",
            "20s",
            "-c",
            "2",
            "--token-file",
            &tf,
            "--agent",
            &agent.addr,
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(2500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v = read_json(&json);
    assert_eq!(v["stopped_by"], "SIGINT");
    assert!(count(&v, "total.count") > 0);
    // The master told the agent to stop: its whole result so far came
    // back (its CPU with it), and what it had in flight is `cut_off`.
    assert_eq!(v["agents"][0]["finished"], true, "{}", v["agents"]);
    assert!(v["agents"][0]["cpu_ns_per_op"].as_f64().unwrap() > 0.0);
    let counted = count(&v, "total.count") + 10_000;
    let server = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert!(
        counted <= server && server <= counted + count(&v, "errors.cut_off"),
        "counted {counted}, server {server}"
    );
    // The agent stopped too.
    std::thread::sleep(Duration::from_millis(2000));
    let settled = m.stat("cmd_get") + m.stat("cmd_set");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(m.stat("cmd_get") + m.stat("cmd_set"), settled);
}

#[test]
fn agent_flags_are_checked_before_any_traffic() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let short = secret_file(dir.path(), "short", "abc\n");
    let out = mcbench(&["agent", "--token-file", &short]);
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
    let twice = ["run", "-s", "127.0.0.1:1", "-t", "1s", "--token-file", &tf];
    let out = mcbench(
        &[
            &twice[..],
            &["--agent", "127.0.0.1:9", "--agent", "127.0.0.1:9"],
        ]
        .concat(),
    );
    assert_usage_error(&out, "given twice");
    let out = mcbench(&[&twice[..], &["--agent", "127.0.0.1:9", "--save", "s.tsv"]].concat());
    assert_usage_error(&out, "--agent with --save");
    let out = mcbench(&[
        "scan",
        "-s",
        "127.0.0.1:1",
        "--rates",
        "100,200",
        "-t",
        "1s",
        "--agent",
        "127.0.0.1:9",
        "--token-file",
        &tf,
    ]);
    assert_usage_error(&out, "--agent with scan");
    // A loss policy without agents would do nothing: refused.
    let out = mcbench(&["run", "-t", "1s", "--on-agent-loss", "continue"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--agent"), "{}", stderr(&out));
}

/// An agent stopped on its own host (SIGINT there) part way into its
/// share is a lost agent, not a finished one: the master's run fails
/// (exit 1) naming it, its intervals so far kept and marked lost. It was
/// exit 0, INCOMPLETE, with no failure and the agent "ok".
#[test]
fn an_agent_stopped_on_its_host_fails_the_run_with_its_share_kept() {
    let _m = shared_machine();
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(1)));
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agents: Vec<AgentProc> = (0..2).map(|_| AgentProc::start(&tf, &[])).collect();
    let json = path_in(dir.path(), "r.json");
    let mut args = vec![
        "run",
        "-s",
        &server,
        "--no-load",
        "-c",
        "4",
        "-t",
        "6s",
        "--interval",
        "500ms",
        "--token-file",
        &tf,
        "--json",
        &json,
    ];
    for a in &agents {
        args.extend(["--agent", &a.addr[..]]);
    }
    let master = spawn_mcbench(&args, &[]);
    std::thread::sleep(Duration::from_millis(3_500));
    // SAFETY: an agent this test started and has not reaped.
    unsafe { libc::kill(agents[1].pid() as i32, libc::SIGINT) };
    let out = wait_bounded(master, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = read_json(std::path::Path::new(&json));
    let failure = v["failure"].as_str().unwrap_or_default();
    assert!(
        failure.contains(&agents[1].addr) && failure.contains("stopped"),
        "{}",
        v["failure"]
    );
    let rows = v["agents"].as_array().unwrap();
    assert_eq!(rows[0]["finished"], true, "{}", rows[0]);
    assert_eq!(rows[1]["finished"], false, "{}", rows[1]);
    assert!(rows[1]["lost_at_s"].as_f64().is_some(), "{}", rows[1]);
    // What it sent before it stopped is counted.
    assert!(rows[1]["count"].as_u64().unwrap() > 0, "{}", rows[1]);
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "agent_lost"));
}

/// The master opens none of the load's connections: its own descriptor
/// limit does not bound the run (the agent's does, checked where it runs).
/// The same run made here is refused under that limit, before traffic.
#[test]
fn the_masters_descriptor_limit_does_not_bound_what_its_agents_open() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = token_file(dir.path(), TOKEN);
    let agent = AgentProc::start(&tf, &[]);
    let conns = m.stat("total_connections");
    let addr = m.addr();
    let args = ["run", "-s", &addr, "-c", "200", "-x", "2000", "--no-load"];
    let master = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.args(args).args(extra);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        with_rlimit(&mut cmd, libc::RLIMIT_NOFILE, 128);
        wait_bounded(cmd.spawn().unwrap(), Duration::from_secs(60))
    };
    let out = master(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("file descriptors"),
        "{}",
        stderr(&out)
    );
    let out = master(&["--token-file", &tf, "--agent", &agent.addr]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The agent's 200, and this read of the count.
    let seen = m.stat("total_connections") - conns;
    assert!(seen > 200, "{seen}: {}", stderr(&out));
}
