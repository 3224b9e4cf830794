//! memaslap's replication test (`--rep-write N`) against real servers:
//! two independent memcached (nothing replicates: every replica read
//! misses), a redis-server primary with a `--replicaof` replica over RESP
//! (replica reads hit, and the lag probe sees its writes), a memcached
//! that dies and returns mid-run, and a yrmcds master/slave pair failing
//! over inside a network namespace the test creates. The servers' own
//! counters are the independent reader of where requests went.

use crate::support;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use support::*;

/// Per interval, per server: requests answered.
fn served(j: &Value) -> Vec<Vec<u64>> {
    j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["servers"]
                .as_array()
                .unwrap_or_else(|| panic!("no per-server rows in {i}"))
                .iter()
                .map(|s| s["count"].as_u64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn two_independent_memcached_miss_every_replica_read() {
    let _m = shared_machine();
    let a = Memcached::start(&[]);
    let b = Memcached::start(&[]);
    let (_, j) = run_json(&[
        "run",
        "-s",
        &a.addr(),
        "-s",
        &b.addr(),
        "--rep-write",
        "2",
        "-t",
        "1s",
        "--rep-lag-rate",
        "20",
        "--timeout",
        "200ms",
        "-r",
        "2000",
    ]);
    let rep = &j["replication"];
    let gets = count(&j, "ops.get.count");
    assert!(gets > 1000, "{gets} gets");
    // Both servers are up: every read goes to the server its key was not
    // written to, and nothing copies keys between them.
    assert_eq!(count(rep, "replica_reads"), gets);
    assert_eq!(count(rep, "replica_misses"), gets);
    assert_eq!(count(rep, "other_misses"), 0);
    assert_eq!(f(rep, "replica_miss_ratio"), 1.0);
    // The probe never sees its writes on the other server.
    let lag = &rep["lag"];
    assert_eq!(count(lag, "seen"), 0);
    assert!(count(lag, "unseen") >= 1, "{lag}");
    assert_eq!(count(lag, "failed"), 0);
    // The servers agree: every lookup they saw missed (the run's gets and
    // every poll of the probe), and they stored the preload, the run's
    // sets and the probe's writes.
    let polls = hdr(&lag["poll_rtt_hdr"]).len();
    let stat = |name: &str| a.stat(name) + b.stat(name);
    assert_eq!(stat("get_hits"), 0);
    assert_eq!(stat("get_misses"), gets + polls);
    assert_eq!(
        stat("cmd_set"),
        2000 + count(&j, "ops.set.count") + count(lag, "probes")
    );
    // Each writer holds the keys placed on it: both hold some.
    assert!(a.stat("curr_items") > 500 && b.stat("curr_items") > 500);
}

#[test]
fn open_loop_reads_go_to_the_other_server_too() {
    let _m = shared_machine();
    let a = Memcached::start(&[]);
    let b = Memcached::start(&[]);
    let (_, j) = run_json(&[
        "run",
        "-s",
        &a.addr(),
        "-s",
        &b.addr(),
        "--rep-write",
        "2",
        "-q",
        "4000",
        "-t",
        "1s",
        "--rep-lag-rate",
        "0",
        "-r",
        "2000",
    ]);
    let gets = count(&j, "ops.get.count");
    assert!(gets > 2000, "{gets}");
    assert_eq!(count(&j["replication"], "replica_reads"), gets);
    assert_eq!(count(&j["replication"], "replica_misses"), gets);
    assert_eq!(a.stat("get_misses") + b.stat("get_misses"), gets);
}

#[test]
fn redis_replica_serves_the_reads_and_the_probe_measures_its_lag() {
    let _m = shared_machine();
    let Some(primary) = Redis::start_with(&["--repl-diskless-sync-delay", "0"]) else {
        panic!("redis-server is missing: scripts/deps installs it");
    };
    let port = primary.port.to_string();
    let replica = Redis::start_with(&["--replicaof", "127.0.0.1", &port]).unwrap();
    // After the first copy the primary holds writes back from the
    // replica until the replica acknowledges it (about once a second):
    // the run starts once a write made after that copy shows on the
    // replica: the second of two writes seen in turn (the first may have
    // come in the copy).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen_in_turn = 0;
    for n in 0u32.. {
        let value = format!("{:04}", n % 10_000);
        resp(
            &primary,
            &format!("*3\r\n$3\r\nSET\r\n$5\r\nready\r\n$4\r\n{value}\r\n"),
        );
        thread::sleep(Duration::from_millis(50));
        let got = resp(&replica, "*2\r\n$3\r\nGET\r\n$5\r\nready\r\n");
        if got == format!("$4\r\n{value}\r\n") {
            seen_in_turn += 1;
            if seen_in_turn == 2 {
                break;
            }
        } else {
            seen_in_turn = 0;
        }
        assert!(Instant::now() < deadline, "the replica never caught up");
    }
    let lookups = |r: &Redis| r.info("keyspace_hits") + r.info("keyspace_misses");
    let (looked_up, hits_before) = (lookups(&replica), replica.info("keyspace_hits"));
    let (_, j) = run_json(&[
        "run",
        "--protocol",
        "resp",
        "-s",
        &primary.addr(),
        "-s",
        &replica.addr(),
        "--rep-write",
        "1",
        "-t",
        "2s",
        "--rep-lag-rate",
        "50",
        "-r",
        "2000",
    ]);
    let rep = &j["replication"];
    let gets = count(&j, "ops.get.count");
    assert!(gets > 1000, "{gets} gets");
    assert_eq!(count(rep, "replica_reads"), gets);
    // Replication keeps up: the preload was copied before the reads came.
    assert!(
        count(rep, "replica_misses") * 100 <= gets,
        "replication misses: {rep}\n{}\n{}\n{}\nthe replica logged:\n{}",
        j["errors"],
        j["responses"],
        j["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["replica"].to_string())
            .collect::<Vec<_>>()
            .join(" "),
        replica.log() + "\nthe primary logged:\n" + &primary.log()
    );
    let lag = &rep["lag"];
    let (probes, seen) = (count(lag, "probes"), count(lag, "seen"));
    assert!(probes >= 20, "{lag}");
    assert!(seen + 1 >= probes, "{lag}");
    assert_eq!(count(lag, "unseen"), 0);
    let lags = hdr(&lag["lag_hdr"]);
    assert_eq!(lags.len(), seen);
    assert!(
        lags.min() > 0 && lags.value_at_quantile(0.5) < 100_000_000,
        "{lag}"
    );
    // redis counts the lookups: none on the primary, every read and poll
    // on the replica.
    assert_eq!(lookups(&primary), 0);
    let polls = hdr(&lag["poll_rtt_hdr"]).len();
    assert_eq!(lookups(&replica) - looked_up, gets + polls);
    assert_eq!(
        replica.info("keyspace_hits") - hits_before,
        count(&j, "gets.hits") + seen,
        "each seen probe was found once"
    );
}

/// One RESP command (as bytes) and its whole short reply.
fn resp(redis: &Redis, command: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(redis.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(command.as_bytes()).unwrap();
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn a_dead_server_passes_its_reads_to_the_rest_and_is_reconnected() {
    let _m = shared_machine();
    let a = Memcached::start(&[]);
    let mut b = Memcached::start(&[]);
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &a.addr(),
            "-s",
            &b.addr(),
            "--rep-write",
            "2",
            "-t",
            "6s",
            "-i",
            "250ms",
            "--rep-lag-rate",
            "0",
            "--json",
            "-",
        ],
        &[],
    );
    // Measuring has begun once the servers see gets (the preload sets),
    // and goes on a while with both up.
    let deadline = Instant::now() + Duration::from_secs(20);
    while b.try_stat("cmd_get").unwrap_or(0) < 1000 {
        assert!(Instant::now() < deadline, "the run never started measuring");
        thread::sleep(Duration::from_millis(20));
    }
    thread::sleep(Duration::from_millis(500));
    b.crash();
    thread::sleep(Duration::from_millis(600));
    // Reopening is tried after pauses of 0.1, 0.2, 0.4, 0.8 and 1.6 s: the
    // fifth try, 3.1 s after the crash, finds it back even on a busy
    // machine, well before the run's end.
    b.restart();
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = served(&j);
    let down = rows
        .iter()
        .position(|r| r[1] == 0)
        .unwrap_or_else(|| panic!("no interval without the dead server: {rows:?}"));
    assert!(down > 0 && rows[down][0] > 0, "{rows:?}");
    let back = rows[down..]
        .iter()
        .position(|r| r[1] > 0)
        .unwrap_or_else(|| {
            panic!(
                "the server was never used again: {rows:?}\n{}\n{}\npid {:?} vs {}",
                j["connections"],
                j["errors"],
                b.try_stat("pid"),
                b.pid()
            )
        });
    assert!(rows[down + back][0] > 0, "{rows:?}");
    assert!(
        count(&j, "connections.reopened") >= 1,
        "{}",
        j["connections"]
    );
    // The restarted memcached saw the run's requests.
    assert!(b.stat("cmd_get") + b.stat("cmd_set") > 100);
}

/// A server down when the run starts is passed over, as one that dies
/// mid-run: the run goes on with the other, says so, and uses the server
/// once it is up. Every server down is a failed run, at once.
#[test]
fn a_server_down_at_the_start_is_passed_over_until_it_comes_up() {
    let _m = shared_machine();
    let a = Memcached::start(&[]);
    let mut b = Memcached::start(&[]);
    b.crash();
    let (a_addr, b_addr) = (a.addr(), b.addr());
    let run = |servers: &[&str], seconds: &str| {
        let mut args = vec!["run"];
        for s in servers {
            args.extend(["-s", s]);
        }
        args.extend(["--rep-write", "2", "-t", seconds, "-i", "250ms"]);
        spawn_mcbench(
            &[&args[..], &["--rep-lag-rate", "0", "--json", "-"]].concat(),
            &[],
        )
    };
    let child = run(&[&a_addr, &b_addr], "4s");
    let deadline = Instant::now() + Duration::from_secs(20);
    while a.try_stat("cmd_get").unwrap_or(0) < 1000 {
        assert!(Instant::now() < deadline, "the run never started measuring");
        thread::sleep(Duration::from_millis(20));
    }
    thread::sleep(Duration::from_millis(300));
    b.restart();
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warning = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "down_at_start")
        .unwrap_or_else(|| panic!("{}", j["warnings"]));
    assert_eq!(warning["server"], b_addr.as_str(), "{warning}");
    assert!(stderr(&out).contains("was down at the start"));
    let rows = served(&j);
    assert_eq!(rows[0][1], 0, "{rows:?}");
    assert!(
        rows.iter().any(|r| r[1] > 0),
        "never used once up: {rows:?}"
    );
    assert!(
        count(&j, "connections.reopened") >= 1,
        "{}",
        j["connections"]
    );
    // The server, up again, saw the run's requests.
    assert!(b.stat("cmd_get") + b.stat("cmd_set") > 100);
    // Both down: nothing to run against.
    b.crash();
    let out = mcbench(&[
        "run",
        "-s",
        &b_addr,
        "-s",
        "127.0.0.1:1",
        "--rep-write",
        "1",
        "-t",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("every server is down"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn yrmcds_master_fails_over_to_its_slave_in_a_network_namespace() {
    let _m = shared_machine();
    let present = Command::new("yrmcdsd").arg("-h").output().is_ok();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "yrmcdsd is missing: scripts/deps installs the yrmcds package"
        );
        eprintln!("skipped: yrmcdsd is not installed (scripts/deps installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (role, vip, port) in [("m", "127.0.0.1", 22111), ("s", "127.0.0.2", 22112)] {
        std::fs::create_dir_all(format!("{d}/{role}")).unwrap();
        std::fs::write(
            format!("{d}/{role}.conf"),
            format!(
                "virtual_ip = {vip}\nport = {port}\nrepl_port = 22113\nmax_connections = 1000\n\
                 temp_dir = \"{d}/{role}\"\nlog.threshold = info\nlog.file = \"{d}/{role}.log\"\n\
                 buckets = 10000\nmemory_limit = 64M\nworkers = 2\ncounter.enable = false\n"
            ),
        )
        .unwrap();
    }
    // The master crashes (SIGKILL: a yrmcdsd master sometimes spins on
    // SIGTERM instead of exiting, which left the script waiting on it).
    // The master owns 127.0.0.1; the slave's virtual IP 127.0.0.2 is on no
    // interface until the master is gone and the test adds it, as an
    // operator (or keepalived) would: then the slave takes over (and binds
    // the replication port the master held).
    let script = format!(
        "set -e\nip link set lo up\n\
         yrmcdsd -f {d}/m.conf & M=$!\nsleep 0.5\n\
         yrmcdsd -f {d}/s.conf & S=$!\nsleep 1\n\
         {bin} run -s 127.0.0.1:22111 -s 127.0.0.2:22112 --rep-write 1 -t 5s -i 250ms \
         --timeout 3s --rep-lag-rate 0 --json {d}/out.json > {d}/out.txt 2>&1 & B=$!\n\
         for i in $(seq 200); do [ \"$(grep -c '^\\[' {d}/out.txt)\" -ge 4 ] && break; sleep 0.1; done\n\
         set +e\nkill -9 $M\nwait $M\nip addr add 127.0.0.2/32 dev lo\n\
         wait $B\necho \"mcbench exit $?\"\nkill -9 $S\nwait $S\nexit 0\n",
        bin = BIN
    );
    std::fs::write(format!("{d}/failover.sh"), script).unwrap();
    let namespace = Command::new("unshare")
        .args([
            "-n",
            "--fork",
            "--pid",
            "--kill-child",
            "bash",
            &format!("{d}/failover.sh"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) runs");
    let out = wait_bounded(namespace, Duration::from_secs(60));
    let said = stdout(&out);
    let report = std::fs::read_to_string(format!("{d}/out.txt")).unwrap_or_default();
    assert!(
        said.contains("mcbench exit 0"),
        "{said}{}\nmcbench said:\n{report}",
        stderr(&out)
    );
    let j = read_json(&dir.path().join("out.json"));
    assert_eq!(j["completed"], true, "{report}");
    let rows = served(&j);
    // First the master serves everything (the slave refuses clients), then
    // nothing (the outage), then the promoted slave.
    assert!(rows[0][0] > 0 && rows[0][1] == 0, "{rows:?}");
    let failed_over = rows
        .iter()
        .position(|r| r[1] > 0)
        .unwrap_or_else(|| panic!("the slave never served: {rows:?}\n{report}"));
    // The interval of the failover may hold both; after it, only the slave.
    assert!(
        rows[failed_over + 1..].iter().all(|r| r[0] == 0),
        "{rows:?}"
    );
    let outage = j["intervals"].as_array().unwrap()[..=failed_over]
        .iter()
        .any(|i| {
            i["errors"].as_u64().unwrap() > 0 || i["ops"]["total"]["count"].as_u64() == Some(0)
        });
    assert!(outage, "no outage in the intervals:\n{report}");
    // The promoted slave had every key the master stored: its reads of
    // keys written to the master all hit.
    let rep = &j["replication"];
    assert!(count(rep, "replica_reads") > 1000, "{rep}");
    assert_eq!(count(rep, "replica_misses"), 0, "{rep}");
}

#[test]
fn replication_refuses_what_it_cannot_do() {
    let one = "127.0.0.1:1";
    let two = ["-s", "127.0.0.1:1", "-s", "127.0.0.1:2"];
    let cases: &[(&[&str], &str)] = &[
        (&["-s", one, "--rep-write", "1"], "at least two servers"),
        (&["--rep-write", "3"], "1 to 2"),
        (&["--rep-write", "0"], "1 to 2"),
        (&["--rep-write", "1", "--udp"], "UDP"),
        (&["--rep-write", "1", "--multiget", "4"], "multigets"),
        (&["--rep-write", "1", "--no-load"], "--no-load"),
        (
            &["--rep-write", "1", "--distribution", "none"],
            "--distribution none",
        ),
        (&["--rep-write", "1", "--rep-lag-rate=-1"], "--rep-lag-rate"),
        (&["--rep-lag-rate", "5"], "not provided:\n  --rep-write <N>"),
        (
            &["--rep-lag-poll", "2s"],
            "not provided:\n  --rep-write <N>",
        ),
        (
            &["--rep-write", "1", "--rep-lag-poll", "2s"],
            "--rep-lag-poll",
        ),
        (
            &[
                "--rep-write",
                "1",
                "--rep-lag-rate",
                "0",
                "--rep-lag-poll",
                "1ms",
            ],
            "runs none",
        ),
        (&["--rep-write", "1", "--facebook"], "--facebook"),
        (&["--rep-write", "1", "--num-conns", "10"], "--num-conns"),
        (&["--rep-write", "1", "--window", "100"], "--window"),
        (&["--rep-write", "1", "--load-only"], "--load-only"),
        (
            &["--rep-write", "1", "--mix", "get=8,set=1,delete=1"],
            "delete in the mix",
        ),
        (&["--rep-write", "1", "--mix", "gets=1,cas=1"], "in the mix"),
        (&["--rep-write", "1", "--expiry", "5"], "--expiry"),
        (&["--rep-write", "1", "--verify", "0.1"], "--verify"),
        (&["--rep-write", "1", "--getset"], "--getset"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run"];
        if !args.contains(&"-s") {
            all.extend(two);
        }
        all.extend_from_slice(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}
