//! `--server-stats` against a real memcached: the server's own counters
//! over the measured run agree with the client's figures and with what
//! the test reads from the server itself; a second client on the server
//! makes the cross-check speak; the report shows them.

use crate::support;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use support::*;

#[test]
fn the_servers_counters_match_the_clients_and_the_server() {
    let _m = shared_machine();
    // 8 MB of 2 KB values for 20k keys: the run evicts.
    let m = Memcached::start(&["-m", "8"]);
    let dir = tempfile::tempdir().unwrap();
    let html = path_in(dir.path(), "r.html");
    let text = path_in(dir.path(), "r.txt");
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--server-stats",
        "-t",
        "2s",
        "-i",
        "500ms",
        "-r",
        "20000",
        "-V",
        "2000",
        "--json",
        &path_in(dir.path(), "r.json"),
        "--html",
        &html,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::write(&text, &out.stdout).unwrap();
    let j = read_json(&dir.path().join("r.json"));
    let row = &j["server_stats"][0];
    let run = &row["run"];
    // The first `stats` came after the preload, before any measured
    // request; the last after the last answer: the server's counts are the
    // client's.
    assert_eq!(count(run, "get_hits"), count(&j, "gets.hits"));
    assert_eq!(count(run, "get_misses"), count(&j, "gets.misses"));
    assert_eq!(count(run, "cmd_get"), count(&j, "ops.get.count"));
    assert_eq!(count(run, "cmd_set"), count(&j, "ops.set.count"));
    // And the server's own totals hold the preload besides.
    assert_eq!(m.stat("cmd_set"), 20_000 + count(run, "cmd_set"));
    assert_eq!(m.stat("get_hits"), count(run, "get_hits"));
    let evicted = count(run, "evictions");
    assert!(evicted > 0 && evicted <= m.stat("evictions"), "{run}");
    assert!(count(run, "bytes_read") > 0 && count(run, "bytes_written") > 0);
    assert!(f(run, "cpu_ns_per_op") > 0.0);
    // The run's four connections and the sampler's own.
    assert!(count(run, "peak_connections") >= 5, "{run}");
    // Per interval: they add up to the run.
    let intervals = row["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4, "{}", intervals.len());
    let sum: u64 = intervals.iter().map(|i| count(i, "cmd_get")).sum();
    assert_eq!(sum, count(run, "cmd_get"));
    // One round trip per `stats`, on a kept connection opened once.
    assert_eq!(hdr(&row["stats_rtt_hdr"]).len(), intervals.len() as u64 + 1);
    assert_eq!(row["connect_us"].as_array().unwrap().len(), 1);
    assert_eq!(row["settings"]["maxbytes"], "8388608");
    assert!(row["slabs_end"]["active_slabs"].as_str().is_some());
    assert!(row["items_end"]
        .as_object()
        .unwrap()
        .keys()
        .any(|k| k.ends_with(":evicted")));
    assert!(row["moved"]
        .as_object()
        .unwrap()
        .contains_key("evicted_unfetched"));
    assert!(!j["warnings"].to_string().contains("server_counts_disagree"));
    let report = std::fs::read_to_string(&text).unwrap();
    assert!(report.contains("Server stats"), "{report}");
    assert!(report.contains(&format!("{} ", m.addr())));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Hit ratio per server (its own stats)"));
}

/// Another client's gets on the same server, until `done` is set.
fn other_client(addr: String, done: Arc<AtomicBool>) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let mut buf = [0u8; 64];
        let mut sent = 0;
        while !done.load(Ordering::Relaxed) {
            s.write_all(b"get someone-else\r\n").unwrap();
            let n = s.read(&mut buf).unwrap();
            assert!(buf[..n].ends_with(b"END\r\n"));
            sent += 1;
        }
        sent
    })
}

#[test]
fn another_client_on_the_server_is_called_out() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    // The other client sends for the whole run, however late it starts.
    let done = Arc::new(AtomicBool::new(false));
    let other = other_client(m.addr(), done.clone());
    let (out, j) = run_json(&["run", "-s", &m.addr(), "--server-stats", "-t", "1s"]);
    done.store(true, Ordering::Relaxed);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(other.join().unwrap() > 1000);
    let warned = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "server_counts_disagree")
        .unwrap_or_else(|| panic!("no cross-check warning: {}", j["warnings"]));
    assert_eq!(
        warned["client_count"],
        j["gets"]["hits"].as_u64().unwrap() + j["gets"]["misses"].as_u64().unwrap()
    );
    assert!(warned["server_count"].as_u64() > warned["client_count"].as_u64());
}

#[test]
fn server_stats_refuses_what_it_cannot_read() {
    assert_usage_error(
        &mcbench(&[
            "run",
            "-s",
            "127.0.0.1:1",
            "--protocol",
            "resp",
            "--server-stats",
        ]),
        "INFO",
    );
    assert_usage_error(
        &mcbench(&["run", "-s", "udp:127.0.0.1:1", "--server-stats"]),
        "not UDP",
    );
    assert_usage_error(
        &mcbench(&[
            "run",
            "-s",
            "127.0.0.1:1",
            "--server-stats",
            "--protocol",
            "binary",
            "-U",
            "u",
            "-P",
            "p",
        ]),
        "SASL",
    );
}

#[test]
fn each_runs_every_server_alone_from_its_own_preload_then_compares() {
    let _m = shared_machine();
    let roomy = Memcached::start(&["-m", "64"]);
    let small = Memcached::start(&["-m", "4"]);
    let dir = tempfile::tempdir().unwrap();
    let out = mcbench(&[
        "run",
        "-s",
        &roomy.addr(),
        "-s",
        &small.addr(),
        "--each",
        "--server-stats",
        "--label",
        "cache",
        "-t",
        "2s",
        "-i",
        "500ms",
        "-V",
        "1000",
        "-r",
        "10000",
        "--json",
        &path_in(dir.path(), "r.json"),
        "--html",
        &path_in(dir.path(), "r.html"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let runs = [
        read_json(&dir.path().join("r.1.json")),
        read_json(&dir.path().join("r.2.json")),
    ];
    for (j, m) in runs.iter().zip([&roomy, &small]) {
        assert_eq!(j["servers"], serde_json::json!([m.addr()]));
        assert_eq!(j["preloaded"], true);
        // Each server saw its own preload and its own run, nothing else:
        // a set it could not store (out of memory, in its own `stats
        // items`; the small one's LRU falls behind on a loaded machine)
        // is not in its cmd_set, and is an error the run counted.
        let unstored = m.items_sum("outofmemory");
        assert_eq!(count(j, "ops.set.errors"), unstored);
        assert_eq!(
            m.stat("cmd_set") + unstored,
            10_000 + count(j, "ops.set.count")
        );
        assert_eq!(m.stat("cmd_get"), count(j, "ops.get.count"));
        assert_eq!(
            count(&j["server_stats"][0], "run.cmd_get"),
            count(j, "ops.get.count")
        );
    }
    assert_eq!(count(&runs[0]["server_stats"][0], "run.evictions"), 0);
    assert!(count(&runs[1]["server_stats"][0], "run.evictions") > 0);
    let text = stdout(&out);
    let table = text
        .split("the servers compared")
        .nth(1)
        .expect("the comparison");
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no '{name}' row:\n{table}"))
            .to_string()
    };
    assert!(table.contains(&roomy.addr()) && table.contains(&small.addr()));
    // `server evictions  0.0  N (-)`: none on the roomy one, the small
    // one's as its own stats counted them.
    let evictions: Vec<String> = row("server evictions")
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(evictions[2], "0.0", "{table}");
    let small_evictions = count(&runs[1]["server_stats"][0], "run.evictions");
    assert_eq!(
        evictions[3].parse::<f64>().unwrap(),
        small_evictions as f64,
        "{table}"
    );
    // One page: a column per server, named by the label and the server;
    // the small one's evictions drawn from its own stats.
    let probe = probe_page(&dir.path().join("r.html"), 1280);
    let names = [roomy.addr(), small.addr()].map(|a| format!("cache · {a}"));
    assert_eq!(
        probe["headers"],
        serde_json::json!(["", names[0], names[1]])
    );
    let evictions = probe["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "Evictions per server (its own stats)")
        .expect("an evictions chart");
    let legend: Vec<&str> = evictions["legend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(legend, names, "{evictions}");
}

#[test]
fn each_refuses_what_it_cannot_do() {
    let two = ["-s", "127.0.0.1:1", "-s", "127.0.0.1:2"];
    assert_usage_error(
        &mcbench(&["run", "-s", "127.0.0.1:1", "--each"]),
        "at least two",
    );
    let with = |extra: &[&str]| {
        let mut args = vec!["run", "--each"];
        args.extend(two);
        args.extend_from_slice(extra);
        mcbench(&args)
    };
    assert_usage_error(&with(&["--rep-write", "1"]), "--rep-write");
    assert_usage_error(&with(&["--json", "-"]), "not '-'");
    assert_usage_error(&with(&["--save", "/tmp/x"]), "--save");
}

#[test]
fn after_a_warm_up_the_counts_start_at_its_end() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let (out, j) = run_json(&[
        "run",
        "-s",
        &m.addr(),
        "--server-stats",
        "-t",
        "1s",
        "-w",
        "500ms",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = &j["server_stats"][0]["run"];
    // Read as the warm-up ends, while requests are under way: close, not
    // exact; and far from the warm-up's gets added in.
    let (server, client) = (
        count(run, "cmd_get") as f64,
        count(&j, "ops.get.count") as f64,
    );
    assert!((server / client - 1.0).abs() < 0.02, "{server} vs {client}");
    assert!(
        m.stat("cmd_get") as f64 > server * 1.2,
        "the warm-up's gets are not counted"
    );
}

/// A yrmcdsd on a free loopback port, killed (by its PID) on drop.
struct Yrmcds {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Yrmcds {
    /// `None` where yrmcdsd is not installed (never under CI).
    fn start() -> Option<Yrmcds> {
        if std::process::Command::new("yrmcdsd")
            .arg("-h")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "yrmcdsd is missing: scripts/deps installs the yrmcds package"
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let (port, repl) = (free_port(), free_port());
        let d = dir.path().display();
        let conf = dir.path().join("y.conf");
        std::fs::write(
            &conf,
            format!(
                "virtual_ip = 127.0.0.1\nport = {port}\nrepl_port = {repl}\nmax_connections = 100\n\
                 temp_dir = \"{d}\"\nlog.threshold = error\nlog.file = \"{d}/log\"\n\
                 buckets = 10000\nmemory_limit = 16M\nworkers = 1\ncounter.enable = false\n"
            ),
        )
        .unwrap();
        let child = std::process::Command::new("yrmcdsd")
            .arg("-f")
            .arg(&conf)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("yrmcdsd starts");
        wait_until_listening("yrmcdsd", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(Yrmcds {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Yrmcds {
    fn drop(&mut self) {
        // A yrmcdsd master may spin on SIGTERM: SIGKILL, by its PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// yrmcds's `stats` has no `cmd_get`, `cmd_set`, bytes or command
/// counters: those figures are not reported, never 0 — `null` in JSON,
/// `n/a` in the text table and in `compare` — while what it does report
/// (hits) is there.
#[test]
fn a_counter_the_server_lacks_is_not_a_number() {
    let _m = shared_machine();
    let Some(y) = Yrmcds::start() else {
        eprintln!("skipped: yrmcdsd is not installed (scripts/deps installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", y.port);
    let args = ["--server-stats", "-r", "500", "-x", "2000", "-c", "2"];
    let (out, j) = run_to(dir.path(), "y", &addr, &args);
    let run = &j["server_stats"][0]["run"];
    for absent in [
        "cmd_get",
        "cmd_set",
        "ops_per_s",
        "bytes_read",
        "cpu_ns_per_op",
    ] {
        assert!(run[absent].is_null(), "{absent}: {run}");
    }
    assert_eq!(count(run, "get_hits"), count(&j, "gets.hits"), "{run}");
    assert!(count(run, "get_hits") > 0, "{run}");
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with(&addr) && l.contains("n/a"))
        .unwrap_or_else(|| panic!("no row with n/a:\n{text}"));
    assert!(!row.contains(" 0.0 "), "{row}");
    let saved = path_in(dir.path(), "y.json");
    let cmp = mcbench(&["compare", &saved, &saved]);
    assert_eq!(cmp.status.code(), Some(0), "{}", stderr(&cmp));
    let table = stdout(&cmp);
    let line = table
        .lines()
        .find(|l| l.starts_with("server commands/s"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("n/a") && !line.contains("0.0"), "{line}");
}

/// --each with --num-conns: each run has one server, so no key placement
/// is asked of it. Each server sees its own share of connections.
#[test]
fn each_opens_the_connection_schedule_against_every_server() {
    let _m = shared_machine();
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let dir = tempfile::tempdir().unwrap();
    let (before_a, before_b) = (a.stat("total_connections"), b.stat("total_connections"));
    let out = mcbench(&[
        "run",
        "-s",
        &a.addr(),
        "-s",
        &b.addr(),
        "--each",
        "--num-conns",
        "20",
        "--num-calls",
        "5",
        "--json",
        &path_in(dir.path(), "e.json"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for (i, (m, before)) in [(&a, before_a), (&b, before_b)].into_iter().enumerate() {
        // The preload's connections, the 20 of the schedule, the probes.
        assert!(m.stat("total_connections") >= before + 20, "{}", m.addr());
        // Each run made its 20 connections' 5 calls, against its server.
        let j = read_json(&dir.path().join(format!("e.{}.json", i + 1)));
        assert_eq!(count(&j, "total.count"), 100, "{}", m.addr());
        assert_eq!(j["servers"][0], m.addr().as_str(), "{}", j["servers"]);
    }
}
