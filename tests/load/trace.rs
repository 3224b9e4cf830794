//! Trace replay (`--trace`, `--read-file`): synthetic traces in each
//! format, made here, replayed against memcached and read back from its
//! own counters and items. No real trace data is committed.

use crate::support;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use support::*;

/// One synthetic request: what the generator means, written in each
/// format by its own encoder below (never by mcbench's decoder).
#[derive(Clone)]
struct Req {
    time_s: u32,
    id: u64,
    /// 1 get, 3 set, 9 delete (libCacheSim's op codes).
    op: u8,
    size: u32,
    client: u32,
    /// The traced cache's answer to a get.
    hit: bool,
}

/// `n` requests over `seconds`, on 100 keys: 70 % gets, 20 % sets, 10 %
/// deletes; every 25th get a recorded miss.
fn requests(n: usize, seconds: u32) -> Vec<Req> {
    (0..n)
        .map(|i| {
            let op = match i % 10 {
                0 | 5 => 3,
                7 => 9,
                _ => 1,
            };
            Req {
                // Unix times, as real traces have.
                time_s: 1_600_000_000 + (i as u64 * u64::from(seconds) / n as u64) as u32,
                id: (i as u64 * 7919) % 100,
                op,
                size: 10 + (i as u32 * 37) % 490,
                client: (i % 5) as u32,
                hit: i % 25 != 1,
            }
        })
        .collect()
}

fn count(reqs: &[Req], op: u8) -> u64 {
    reqs.iter().filter(|r| r.op == op).count() as u64
}

fn op_name(op: u8) -> &'static str {
    match op {
        1 => "get",
        3 => "set",
        _ => "delete",
    }
}

/// Twitter: `time,key,key size,value size,client,op,ttl`. Keys are
/// `key:NN`, stated 12 bytes long; a recorded miss has value size 0.
fn twitter(reqs: &[Req]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in reqs {
        let value = if r.op == 1 && !r.hit { 0 } else { r.size };
        let ttl = if r.op == 3 { 600 } else { 0 };
        writeln!(
            out,
            "{},key:{:02},12,{value},{},{},{ttl}",
            r.time_s,
            r.id,
            r.client,
            op_name(r.op)
        )
        .unwrap();
    }
    out
}

/// The key a Twitter line's `key:NN` becomes at its stated 12 bytes.
fn twitter_key(id: u64) -> String {
    format!("key:{id:02}______")
}

fn oracle(reqs: &[Req], out: &mut Vec<u8>) {
    for r in reqs {
        out.extend_from_slice(&r.time_s.to_le_bytes());
        out.extend_from_slice(&r.id.to_le_bytes());
        out.extend_from_slice(&r.size.to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
}

fn opns(reqs: &[Req]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in reqs {
        out.extend_from_slice(&r.time_s.to_le_bytes());
        out.extend_from_slice(&r.id.to_le_bytes());
        out.extend_from_slice(&r.size.to_le_bytes());
        out.push(r.op);
        out.extend_from_slice(&(r.client as u16).to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    out
}

/// lcs v3: the 8,192-byte header, then 36-byte records.
fn lcs_v3(reqs: &[Req], version: u64) -> Vec<u8> {
    let magic = 0x1234_5678_9abc_def0u64;
    let mut out = Vec::new();
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&version.to_le_bytes());
    out.resize(8192 - 8, 0);
    out.extend_from_slice(&magic.to_le_bytes());
    for r in reqs {
        out.extend_from_slice(&r.time_s.to_le_bytes());
        out.extend_from_slice(&r.id.to_le_bytes());
        out.extend_from_slice(&i64::from(r.size).to_le_bytes());
        out.extend_from_slice(&(u32::from(r.op) | r.client << 8).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    out
}

/// Meta KV 2022: `key,op,size,op_count,key_size`, each record twice.
fn meta_2022(reqs: &[Req]) -> Vec<u8> {
    let mut out = b"key,op,size,op_count,key_size\n".to_vec();
    for r in reqs {
        let op = ["GET", "SET", "DELETE"][usize::from(r.op / 3).min(2)];
        writeln!(out, "m{},{op},{},2,8", r.id, r.size).unwrap();
    }
    out
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 3).unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The server's counters a replay moves.
struct Counters {
    gets: u64,
    sets: u64,
    deletes: u64,
    misses: u64,
}

fn counters(m: &Memcached) -> Counters {
    Counters {
        gets: m.stat("cmd_get"),
        sets: m.stat("cmd_set"),
        deletes: m.stat("delete_hits") + m.stat("delete_misses"),
        misses: m.stat("get_misses"),
    }
}

fn moved(m: &Memcached, before: &Counters) -> Counters {
    let now = counters(m);
    Counters {
        gets: now.gets - before.gets,
        sets: now.sets - before.sets,
        deletes: now.deletes - before.deletes,
        misses: now.misses - before.misses,
    }
}

fn replay(m: &Memcached, args: &[&str]) -> (Counters, serde_json::Value) {
    let before = counters(m);
    let (_, j) = run_ok(&m.addr(), args);
    (moved(m, &before), j)
}

#[test]
fn a_twitter_trace_replays_its_ops_keys_sizes_and_hit_ratio() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let reqs = requests(1000, 2);
    let trace = write(dir.path(), "c1.csv", &twitter(&reqs));
    let m = Memcached::start(&[]);
    let hits_before = m.stat("get_hits");
    // One connection keeps the trace's order, so its last write stands.
    let (moved, j) = replay(
        &m,
        &[
            "--trace",
            trace.to_str().unwrap(),
            "--trace-timing",
            "ignore",
            "-c",
            "1",
        ],
    );
    assert_eq!(moved.gets, count(&reqs, 1));
    assert_eq!(moved.sets, count(&reqs, 3));
    assert_eq!(moved.deletes, count(&reqs, 9));
    assert_eq!(count_of(&j, "trace.records"), 1000);
    // The trace's own hit ratio: the generator's recorded misses.
    let gets = reqs.iter().filter(|r| r.op == 1);
    let recorded = gets.clone().filter(|r| r.hit).count() as f64 / gets.count() as f64;
    let seen = f(&j, "trace.recorded_hit_ratio");
    assert!((seen - recorded).abs() < 1e-9, "{seen} vs {recorded}");
    // The server's, as memcached counted it.
    let server = (m.stat("get_hits") - hits_before) as f64 / moved.gets as f64;
    assert!((f(&j, "trace.server_hit_ratio") - server).abs() < 1e-9);
    // Each key holds what the trace last did to it: a value of the last
    // set's stated size, or nothing after a delete.
    let mut last: HashMap<u64, Option<u32>> = HashMap::new();
    for r in &reqs {
        match r.op {
            3 => last.insert(r.id, Some(r.size)),
            9 => last.insert(r.id, None),
            _ => None,
        };
    }
    for (id, state) in last {
        let reply = raw_get(&m, &twitter_key(id));
        match state {
            Some(size) => assert!(
                reply.starts_with(&format!("VALUE {} 0 {size}\r\n", twitter_key(id))),
                "key {id}: {reply}"
            ),
            None => assert_eq!(reply, "END\r\n", "key {id}"),
        }
    }
}

fn count_of(j: &serde_json::Value, path: &str) -> u64 {
    support::count(j, path)
}

#[test]
fn binary_and_meta_traces_are_streamed_from_zstd_and_found_by_themselves() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let reqs = requests(1000, 2);
    let m = Memcached::start(&[]);
    let ignore = ["--trace-timing", "ignore", "-c", "1"];
    let run = |name: &str, bytes: &[u8], format: &str| {
        let path = write(dir.path(), name, &zstd(bytes));
        let mut args = vec!["--trace", path.to_str().unwrap()];
        args.extend(ignore);
        let (moved, j) = replay(&m, &args);
        assert_eq!(j["trace"]["format"], format, "{name}");
        assert_eq!(count_of(&j, "trace.records"), 1000, "{name}");
        moved
    };
    // oracleGeneral names no op: every record a get, each miss filled.
    let mut bytes = Vec::new();
    oracle(&reqs, &mut bytes);
    let c = run("w.oracleGeneral.zst", &bytes, "oracle-general");
    assert_eq!(c.gets, 1000);
    assert!(
        c.misses > 0 && c.sets == c.misses,
        "{} sets, {} misses",
        c.sets,
        c.misses
    );
    // Binary ids are keys of 16 hex digits.
    let reply = raw_get(&m, &format!("{:016x}", reqs[0].id));
    assert!(reply.starts_with("VALUE "), "{reply}");
    for (name, bytes, format) in [
        (
            "w.oracleGeneralOpNS.zst",
            opns(&reqs),
            "oracle-general-opns",
        ),
        ("w.bin.zst", lcs_v3(&reqs, 3), "lcs"),
    ] {
        let c = run(name, &bytes, format);
        assert_eq!(
            (c.gets, c.sets, c.deletes),
            (count(&reqs, 1), count(&reqs, 3), count(&reqs, 9)),
            "{name}"
        );
    }
    // Meta's op_count: each record is two requests.
    let c = run("kv.csv.zst", &meta_2022(&reqs), "meta-kv");
    assert_eq!(
        (c.gets, c.sets, c.deletes),
        (
            2 * count(&reqs, 1),
            2 * count(&reqs, 3),
            2 * count(&reqs, 9)
        )
    );
}

#[test]
fn trace_speed_replays_the_timestamps_as_an_open_loop() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // 2 s of trace, 400 requests a second.
    let trace = write(dir.path(), "t.csv", &twitter(&requests(800, 2)));
    let m = Memcached::start(&[]);
    let path = trace.to_str().unwrap();
    let (_, real) = run_ok(&m.addr(), &["--trace", path]);
    let (_, fast) = run_ok(&m.addr(), &["--trace", path, "--trace-speed", "4x"]);
    let (_, ignored) = run_ok(&m.addr(), &["--trace", path, "--trace-timing", "ignore"]);
    let (d1, d4) = (f(&real, "duration_s"), f(&fast, "duration_s"));
    // A schedule is never run early: the last record is due at 2 s (0.5 s
    // at 4x). Nor late, unless the run says its client was.
    let on_time = |j: &serde_json::Value, d: f64, due: f64| {
        d >= 0.9 * due && (d < 1.3 * due || j["client"]["client_bound"] == true)
    };
    assert!(
        on_time(&real, d1, 2.0),
        "1x took {d1} s: {}",
        real["client"]
    );
    assert!(
        on_time(&fast, d4, 0.5),
        "4x took {d4} s: {}",
        fast["client"]
    );
    for j in [&real, &fast] {
        assert_eq!(count_of(j, "total.count"), 800);
        // An open loop: lag against each request's intended time is kept.
        assert_eq!(j["client"]["open_loop"], true, "{}", j["client"]);
    }
    // Timing ignored: a closed loop, at the client's and server's pace
    // (how fast that is, is the machine's).
    assert_eq!(count_of(&ignored, "total.count"), 800);
    assert_eq!(
        ignored["client"]["open_loop"], false,
        "{}",
        ignored["client"]
    );
}

#[test]
fn read_file_sends_its_keys_with_the_mix_or_the_forks_ops() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let m = Memcached::start(&[]);
    // `key,value size` lines: ops from the mix, here sets only.
    let mut lines = Vec::new();
    for i in 0..300 {
        writeln!(lines, "rf:{i},{}", 100 + i).unwrap();
    }
    let file = write(dir.path(), "keys.txt", &lines);
    let (c, j) = replay(
        &m,
        &["--read-file", file.to_str().unwrap(), "-u", "1", "-c", "1"],
    );
    assert_eq!((c.sets, c.gets), (300, 0));
    assert_eq!(count_of(&j, "total.count"), 300);
    assert!(raw_get(&m, "rf:7").starts_with("VALUE rf:7 0 107\r\n"));
    // The fork's `time,app,req,key,value size`: req 1 get, 2 set.
    let mut lines = Vec::new();
    for i in 0..200 {
        writeln!(lines, "{i},3,{},fk:{},64", 1 + i % 2, i / 2).unwrap();
    }
    let file = write(dir.path(), "fork.txt", &lines);
    let (c, _) = replay(&m, &["--read_file", file.to_str().unwrap(), "-c", "1"]);
    assert_eq!((c.gets, c.sets, c.misses), (100, 100, 100));
}

#[test]
fn trace_clients_keep_each_clients_requests_in_order_on_one_connection() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // Each client sets a key and reads it straight back; clients
    // interleave. Pipelined 8 deep on 4 connections, a get can only miss
    // if it overtakes its client's set on another connection.
    let mut lines = Vec::new();
    for i in 0..2000u32 {
        let (client, pair) = (i % 8, i / 16);
        let op = if (i / 8) % 2 == 0 { "set" } else { "get" };
        writeln!(lines, "0,c{client}:{pair},0,32,{client},{op},0").unwrap();
    }
    let trace = write(dir.path(), "clients.csv", &lines);
    let m = Memcached::start(&[]);
    let (c, _) = replay(
        &m,
        &[
            "--trace",
            trace.to_str().unwrap(),
            "--trace-timing",
            "ignore",
            "--trace-clients",
            "-c",
            "4",
            "-d",
            "8",
        ],
    );
    assert_eq!((c.gets, c.sets), (1000, 1000));
    assert_eq!(c.misses, 0, "a get overtook its own client's set");
}

#[test]
fn a_malformed_line_fails_the_run_by_its_number_and_keeps_what_ran() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = twitter(&requests(1000, 1));
    bytes.extend_from_slice(b"1,key:01,12,oops,1,get,0\n");
    bytes.extend_from_slice(&twitter(&requests(10, 1)));
    let trace = write(dir.path(), "bad.csv", &bytes);
    let m = Memcached::start(&[]);
    let json = dir.path().join("r.json");
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--trace",
        trace.to_str().unwrap(),
        "--trace-timing",
        "ignore",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 1001") && stderr(&out).contains("value size"));
    let j = read_json(&json);
    assert_eq!(count_of(&j, "total.count"), 1000);
    assert!(j["trace"]["error"].as_str().unwrap().contains("line 1001"));
}

#[test]
fn bad_trace_input_is_refused_before_any_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "t.csv", &twitter(&requests(10, 1)));
    let good = good.to_str().unwrap();
    let garbage = write(dir.path(), "g.dat", &[0u8, 1, 2, 3, 0xff, 9]);
    let mut bad_lcs = lcs_v3(&requests(3, 1), 3);
    bad_lcs[8] = 42;
    let bad_lcs = write(dir.path(), "v.lcs", &bad_lcs);
    let missing = dir.path().join("none.csv");
    // No server: a refusal must come before any connection.
    let (_, unused) = silent_listener();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--trace", missing.to_str().unwrap()], "cannot read"),
        (vec!["--trace", garbage.to_str().unwrap()], "--trace-format"),
        (vec!["--trace", bad_lcs.to_str().unwrap()], "lcs version 42"),
        (
            vec!["--trace", good, "--trace-format", "frob"],
            "unknown trace format",
        ),
        (
            vec!["--trace", good, "--rate", "1000"],
            "--trace-timing ignore",
        ),
        (vec!["--trace", good, "--load"], "no key space to preload"),
        (vec!["--trace", good, "--trace-clients"], "closed loop"),
        (vec!["--trace", good, "--trace-speed", "0"], "--trace-speed"),
        (vec!["--trace", good, "--multiget", "4"], "multigets"),
        (
            vec!["--trace-clients"],
            "<--trace <FILE>|--read-file <FILE>>",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run", "-s", &unused];
        all.extend(args.iter().copied());
        let out = mcbench(&all);
        assert_usage_error(&out, needle);
    }
}

#[test]
fn memory_stays_flat_however_long_the_trace() {
    // Alone: its 450k requests flat out would starve the other tests'
    // servers on this 2-core machine.
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // Keys of 200 bytes: a replay that held the long trace whole would
    // take ~80 MB more than the short one. Both runs close intervals
    // (each keeps a set of histograms), so that only the trace differs.
    let long_trace = |n: usize| {
        let mut out = Vec::new();
        for i in 0..n {
            let op = if i % 4 == 0 { "set" } else { "get" };
            writeln!(out, "0,{:0>200},200,16,0,{op},0", i % 5000).unwrap();
        }
        zstd(&out)
    };
    let m = Memcached::start(&[]);
    let peak_kb = |name: &str, n: usize| {
        let path = write(dir.path(), name, &long_trace(n));
        let out = std::process::Command::new("/usr/bin/time")
            .args([
                "-f",
                "%M",
                env!("CARGO_BIN_EXE_mcbench"),
                "run",
                "-s",
                &m.addr(),
            ])
            .args([
                "--trace",
                path.to_str().unwrap(),
                "--trace-timing",
                "ignore",
            ])
            .args(["-c", "4", "-d", "16", "--interval", "100ms"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stderr(&out);
        let kb: u64 = text.lines().last().unwrap().trim().parse().unwrap();
        kb
    };
    let short = peak_kb("short.csv.zst", 50_000);
    let long = peak_kb("long.csv.zst", 400_000);
    assert!(
        long < short + 12 * 1024,
        "peak RSS grew with the trace: {short} KiB for 50k lines, {long} KiB for 400k"
    );
}

#[test]
fn a_trace_that_ends_within_the_warm_up_fails_saying_so() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // 100 requests at 1,000/s: gone in 0.1 s of a 1 s warm-up.
    let trace = write(dir.path(), "short.csv", &twitter(&requests(100, 1)));
    let m = Memcached::start(&[]);
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--trace",
        trace.to_str().unwrap(),
        "--trace-timing",
        "ignore",
        "--rate",
        "1000",
        "-w",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shorter than the warm-up"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_replay_on_several_servers_sends_each_key_where_the_distribution_puts_it() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<Vec<u8>> = (0..60)
        .map(|i| format!("ns:obj:{i}").into_bytes())
        .collect();
    let mut lines = Vec::new();
    for i in 0..600 {
        let key = String::from_utf8(keys[i % 60].clone()).unwrap();
        writeln!(lines, "{},{key},0,100,0,get,0", i / 300).unwrap();
    }
    let trace = write(dir.path(), "spread.csv", &lines);
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let servers = ["-s", &a.addr(), "-s", &b.addr()];
    // `mcbench route` agrees with libmemcached (tests/load/placement.rs).
    let mut route_args = servers.to_vec();
    route_args.extend(["--distribution", "ketama"]);
    let homes = route_keys(&route_args, &keys);
    let on_b = (0..600).filter(|i| homes[i % 60] == 1).count() as u64;
    assert!(on_b > 0 && on_b < 600);
    for timing in [
        &["--trace-timing", "ignore"][..],
        &["--trace-speed", "10x"][..],
    ] {
        let before = (a.stat("cmd_get"), b.stat("cmd_get"));
        let mut args = vec!["run"];
        args.extend(servers);
        args.extend([
            "--distribution",
            "ketama",
            "--trace",
            trace.to_str().unwrap(),
        ]);
        args.extend(timing);
        let out = mcbench(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let moved = (a.stat("cmd_get") - before.0, b.stat("cmd_get") - before.1);
        assert_eq!(moved, (600 - on_b, on_b), "{timing:?}");
    }
}

#[test]
fn ops_count_the_traces_first_requests_over_every_worker() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let reqs = requests(5000, 2);
    let trace = write(dir.path(), "x.csv", &twitter(&reqs));
    let m = Memcached::start(&[]);
    let path = trace.to_str().unwrap();
    let first = &reqs[..3000];
    for extra in [
        &["--trace-timing", "ignore"][..],
        &["--trace-speed", "20x"][..],
    ] {
        let mut args = vec!["--trace", path, "-T", "2", "-x", "3000"];
        args.extend(extra);
        let (c, j) = replay(&m, &args);
        assert_eq!(count_of(&j, "total.count"), 3000, "{extra:?}");
        assert_eq!(
            (c.gets, c.sets, c.deletes),
            (count(first, 1), count(first, 3), count(first, 9)),
            "{extra:?}"
        );
    }
}

#[test]
fn a_ttl_over_thirty_days_still_keeps_the_item() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // memcached reads an exptime over 30 days as a Unix time: sent as
    // given, 40 days would be 1970 and the item gone at once.
    let trace = write(dir.path(), "ttl.csv", b"0,long:ttl,0,64,0,set,3456000\n");
    let m = Memcached::start(&[]);
    replay(
        &m,
        &[
            "--trace",
            trace.to_str().unwrap(),
            "--trace-timing",
            "ignore",
        ],
    );
    let reply = raw_get(&m, "long:ttl");
    assert!(reply.starts_with("VALUE long:ttl 0 64\r\n"), "{reply}");
}

#[test]
fn flags_of_the_generated_workload_and_untimed_or_piped_traces_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tw = write(dir.path(), "t.csv", &twitter(&requests(10, 1)));
    let tw = tw.to_str().unwrap();
    let meta = write(dir.path(), "kv.csv", &meta_2022(&requests(10, 1)));
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (_, unused) = silent_listener();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--trace", meta.to_str().unwrap()], "no timestamps"),
        (
            vec!["--trace", fifo.to_str().unwrap()],
            "not a regular file",
        ),
        (vec!["--trace", tw, "-u", "0.5"], "-u/--update"),
        (vec!["--trace", tw, "-r", "500"], "-r/--keys"),
        (vec!["--trace", tw, "--key-prefix", "x:"], "--key-prefix"),
        (vec!["--trace", tw, "-x", "10", "-w", "1s"], "warm-up"),
        (vec!["--trace", tw, "--arrival", "fixed"], "--arrival"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run", "-s", &unused];
        all.extend(args.iter().copied());
        assert_usage_error(&mcbench(&all), needle);
    }
}

#[test]
fn trace_clients_of_a_lost_connection_fail_and_the_replay_still_ends() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // Eight clients on two connections; the first connection is closed
    // after 20 answers (the fake server is slow: 400 requests). Its clients' later requests must fail as
    // no_connection, not wait for ever for a connection that is gone.
    let mut lines = Vec::new();
    for i in 0..400u32 {
        writeln!(lines, "0,k{},0,32,{},get,0", i % 100, i % 8).unwrap();
    }
    let trace = write(dir.path(), "lost.csv", &lines);
    let addr = fake_server(Misbehaviour::FirstClosesAfter(20));
    let json = dir.path().join("r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "--trace",
            trace.to_str().unwrap(),
            "--trace-timing",
            "ignore",
            "--trace-clients",
            "-c",
            "2",
            "-d",
            "4",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    let out = wait_bounded(child, std::time::Duration::from_secs(60));
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let j = read_json(&json);
    let failed = count_of(&j, "errors.no_connection") + count_of(&j, "errors.connection_lost");
    assert!(count_of(&j, "errors.no_connection") > 0, "{}", j["errors"]);
    assert_eq!(count_of(&j, "total.count") + failed, 400, "{}", j["errors"]);
}

/// A trace whose last timestamp is 4e9 s after the others: a replay would
/// wait 127 years. Refused before any traffic without `--time-limit`;
/// with one, replayed up to the gap and cut by the limit.
#[test]
fn a_gap_of_years_in_a_trace_is_refused_without_a_time_limit() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("gap.csv");
    let lines = "1,key:01,12,10,0,get,0\n2,key:02,12,10,0,get,0\n3,key:03,12,10,0,get,0\n4000000003,key:04,12,10,0,get,0\n";
    std::fs::write(&trace, lines).unwrap();
    let trace = trace.to_str().unwrap();
    let base = [
        "run",
        "-s",
        &m.addr(),
        "--trace",
        trace,
        "--trace-speed",
        "100x",
    ];
    let out = mcbench(&base);
    assert_usage_error(
        &out,
        "463.0 days between records 3 and 4 (replayed at 100x)",
    );
    assert_eq!(m.stat("cmd_get"), 0, "a refused replay sent requests");
    let mut bounded = base.to_vec();
    bounded.extend(["--time-limit", "2s", "--json", "-"]);
    let out = mcbench(&bounded);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_get"), 3, "the records before the gap");
}
