//! The seed tools' loads as memcached counts them: each personality must
//! leave the counters the real tool leaves. The real tools are not in the
//! suite: each test names the counts the real one gave (run beside mcbench
//! by `bench/seeds.py` on a fresh memcached), and asserts memcached's own
//! `stats` after mcbench's run of the same line.

use crate::support;

use support::tools::*;
use support::*;

fn json_duration(path: &str) -> f64 {
    f(&read_json(std::path::Path::new(path)), "duration_s")
}

/// `-d 20`: memaslap keeps get:set 9:1 per key (its `get_opt` counts a
/// multi-get's every key): the real one sent 842 20-key gets beside 1,881
/// sets (16,840:1,881, 9:1), where mcbench once sent 86 sets beside 857.
/// `-P` has no effect, as in memaslap (its throttle's integer division
/// is always 0: the real one ran 76,849 ops/s at `-P 40k`), and says so.
#[test]
fn memaslap_multigets_keep_the_proportion_per_key() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(&format!("-s {} -t 1s -d 20 -P 2k", m.addr()), &[]);
    let out = run_tool(dir.path(), "memaslap", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (keys, sets) = (m.stat("cmd_get"), m.stat("cmd_set"));
    let per_key = keys as f64 / sets as f64;
    assert!((8.0..10.0).contains(&per_key), "{keys} keys, {sets} sets");
    assert_eq!(field(&text, "cmd_get: "), keys, "{text}");
    assert_eq!(field(&text, "cmd_set: "), sets, "{text}");
    assert!(text.contains("get proportion: get_prop=0.90"), "{text}");
    // memaslap's k is 1,024.
    assert!(stderr(&out).contains("-P/--tps 2048 has no effect, as in memaslap"));
}

/// `-w` with a configuration of gets only: memaslap presets each
/// concurrency's whole window before it reads (16,384 sets for `-c 16
/// -w 1k`, 65,536 for 4k), where mcbench once wrote one key each (16).
#[test]
fn memaslap_presets_every_window_where_nothing_writes() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gets"), "cmd\n0 0\n1 1\n").unwrap();
    let args = line(&format!("-s {} -F gets -t 1s -c 16 -w 1k", m.addr()), &[]);
    // -t ends it: the 2 s cap cuts the preset too, and a loaded CI
    // machine once reached it at 16,300 of 16,384.
    let out = run_tool_capped(dir.path(), "memaslap", &args, 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_set"), 16 * 1024);
    assert_eq!(m.stat("curr_items"), 16 * 1024);
    // Every read is of a preset key.
    assert!(m.stat("get_hits") > 0);
    assert_eq!(m.stat("get_misses"), 0);
}

/// `-p 2` on two plain memcacheds: memaslap writes each key to one writer
/// and reads any server, so about half its gets miss (the real one: ~50 %);
/// mcbench once read only the other server (every get a miss) and
/// preloaded 10,000 keys its printed `cmd_set` left out.
#[test]
fn memaslap_replication_reads_any_server_and_prints_every_set() {
    let _m = shared_machine();
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let dir = tempfile::tempdir().unwrap();
    let servers = format!("{},{}", a.addr(), b.addr());
    let args = line(&format!("-s {servers} -p 2 -t 1s"), &[]);
    let out = run_tool(dir.path(), "memaslap", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let sets = a.stat("cmd_set") + b.stat("cmd_set");
    let gets = a.stat("cmd_get") + b.stat("cmd_get");
    let misses = a.stat("get_misses") + b.stat("get_misses");
    assert_eq!(field(&text, "cmd_set: "), sets, "{text}");
    assert_eq!(field(&text, "cmd_get: "), gets, "{text}");
    let share = misses as f64 / gets as f64;
    assert!((0.4..0.6).contains(&share), "{misses} of {gets} missed");
    // Both servers took writes and reads.
    for m in [&a, &b] {
        assert!(m.stat("cmd_set") > sets / 4 && m.stat("cmd_get") > gets / 4);
    }
}

/// twemperf's `-c I/N` only seeds an instance's draws: every instance
/// writes the same keys, `mcp:00000001` on (hex from 1). After two
/// instances of 500 calls, memcached holds 500 items of 1,000 sets; with
/// twemperf's names a later instance finds every key (mcbench once found
/// 399 of 1,000). At `--call-rate=0` it busy-polls, as twemperf spins,
/// and it opens the connections twemperf opens, no more.
#[test]
fn mcperf_instances_write_the_same_keys_under_twemperfs_names() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let port = m.port.to_string();
    for client in ["0/2", "1/2"] {
        let args = line(
            &format!("-s 127.0.0.1 -p {port} --num-calls=500 -c {client}"),
            &[],
        );
        let out = run_tool(dir.path(), "mcperf", &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).contains("--busy-poll"), "{}", stderr(&out));
    }
    assert_eq!(m.stat("cmd_set"), 1000);
    assert_eq!(m.stat("curr_items"), 500);
    let keys: Vec<String> = (1..=500).map(|n| format!("mcp:{n:08x}")).collect();
    let found = raw_get(&m, &keys.join(" ")).matches("VALUE ").count();
    assert_eq!(found, 500);
    // Paced calls keep to their rate: no busy-polling.
    let args = line(
        &format!("-s 127.0.0.1 -p {port} --num-calls=10 --call-rate=1000 -m get"),
        &[],
    );
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--busy-poll"), "{}", stderr(&out));
    assert_eq!(m.stat("get_hits"), 500 + 10);
    // It opens its --num-conns and no more (mcbench once held 4 more,
    // idle, as for a preload, where twemperf opens none).
    let before = m.stat("total_connections");
    let args = line(
        &format!("-s 127.0.0.1 -p {port} --num-conns=10 --num-calls=5"),
        &[],
    );
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Each stats read is a connection too: the later one's own.
    assert_eq!(m.stat("total_connections") - before, 10 + 1);
}

/// mutilate without agents reads `-C` as its connections per server per
/// thread, each at `-q` over `-c`'s connections, and ignores `-Q` and `-D`
/// (they only share `-q` with agents): at `-q 1000 -C 2` memcached counts
/// about 2,000 gets a second (the real mutilate: 19,959 gets in 2 s at
/// `-q 10000`, where mcbench once ran only -Q's 1,997).
#[test]
fn mutilate_without_agents_reads_c_big_as_its_connections() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "c.json");
    let args = line(
        &format!(
            "-s {} --noload -q 1000 -Q 200 -D 4 -C 2 -t 1 --mcbench-json {json}",
            m.addr()
        ),
        &[],
    );
    let before = m.stat("total_connections");
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("-Q and -D have no effect without agents"));
    // -C 2 connections, each at -q over -c's one: 2,000 gets/s held (not
    // -Q's 200). The server's count is at most that rate and its spread
    // (a loaded host may fall short, never over).
    let conns = m.stat("total_connections") - before;
    assert_eq!(conns, 2 + 1, "the run's 2 and this stats connection");
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(f(&j, "spec.rate"), 2000.0);
    let rate = m.stat("cmd_get") as f64 / json_duration(&json);
    assert!(rate < 2300.0, "{rate:.0} gets/s");
}

/// Each of mutilate's threads preloads the whole key space: `-T 24` left
/// 240,000 sets on memcached; `-T 2` leaves 20,000.
#[test]
fn mutilate_preloads_once_per_thread() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(&format!("-s {} -T 2 --loadonly", m.addr()), &[]);
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_set"), 20_000);
    assert_eq!(m.stat("curr_items"), 10_000);
}

/// A step of mutilate's `--scan` is a preload and `-t` at the step's
/// rate, without warm-up: 3 steps of 1 s at 2k, 4k and 6k leave 30,000
/// sets and about 12,000 gets (mcbench once warmed up 1 s a step, twice
/// mutilate's gets, and preloaded once).
#[test]
fn mutilate_scan_steps_are_mutilates() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(&format!("-s {} --scan 2000:6000:2000 -t 1", m.addr()), &[]);
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_set"), 30_000);
    // At most the 12,000 the steps ask for and their Poisson spread: a 1 s
    // warm-up a step would add as many again. (No least: a loaded host may
    // fall short of a step's rate.)
    let gets = m.stat("cmd_get");
    assert!(gets < 14_500, "{gets} gets");
}
