//! The mutilate fork's cache-workload modes (seed `mutilate-fork.md`):
//! `--getsetorset`, `--successful`, `--miss-window`; each read back from
//! memcached's own counters.

use crate::support;

use support::*;

fn delta(m: &Memcached, stat: &str, before: u64) -> u64 {
    m.stat(stat) - before
}

#[test]
fn getsetorset_sends_the_mix_s_sets_and_fills_every_miss() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (sets, misses) = (m.stat("cmd_set"), m.stat("get_misses"));
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "--no-load",
            "--getsetorset",
            "-u",
            "0.3",
            "-x",
            "5000",
            "-c",
            "1",
        ],
    );
    let (direct, fills) = (count(&j, "ops.set.count"), count(&j, "ops.fill.count"));
    assert!(
        direct > 1000 && fills > 1000,
        "{direct} sets, {fills} fills"
    );
    assert_eq!(delta(&m, "cmd_set", sets), direct + fills);
    // Every miss while sending was filled (one connection at depth 1: the
    // last answer may come after sending stopped).
    let missed = delta(&m, "get_misses", misses);
    assert_eq!(missed, count(&j, "gets.misses"));
    assert!(
        fills <= missed && fills + 1 >= missed,
        "{fills} fills, {missed} misses"
    );
}

#[test]
fn successful_leaves_error_replies_out_of_latency_and_throughput() {
    let _machine = shared_machine();
    // Items of at most 1 KiB: every 2000-byte set is refused.
    let m = Memcached::start(&["-I", "1k", "-o", "slab_chunk_max=1024"]);
    let args = |successful: bool| {
        let mut a = vec![
            "--no-load",
            "--mix",
            "get=50,set=50",
            "-V",
            "2000",
            "-x",
            "4000",
        ];
        if successful {
            a.push("--successful");
        }
        a
    };
    let gets = m.stat("cmd_get");
    let (out, j) = run_json(&[&["run", "-s", &m.addr()][..], &args(true)[..]].concat());
    // memcached refuses each set before counting it: the client's -x is
    // the other reader (every request is a get the server counted, or a
    // refused set).
    let served_gets = delta(&m, "cmd_get", gets);
    let refused = 4000 - served_gets;
    assert!(refused > 1000, "{refused}");
    assert_eq!(count(&j, "errors.server_error"), refused);
    assert_eq!(count(&j, "ops.set.count"), 0);
    // The set row still shows its refusals: out of its count, not hidden.
    assert_eq!(count(&j, "ops.set.errors"), refused);
    assert_eq!(count(&j, "ops.set.ok"), 0);
    assert_eq!(count(&j, "ops.get.count"), served_gets);
    assert_eq!(count(&j, "total.count"), served_gets);
    assert_eq!(count(&j, "total.ok"), served_gets);
    assert_eq!(count(&j, "total.errors"), refused);
    // Half the requests failing is a run that completed, not a failed one.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let gets = m.stat("cmd_get");
    let (_, j) = run_json(&[&["run", "-s", &m.addr()][..], &args(false)[..]].concat());
    let refused = 4000 - delta(&m, "cmd_get", gets);
    assert_eq!(count(&j, "ops.set.count"), refused);
    assert_eq!(count(&j, "ops.set.errors"), refused);
}

#[test]
fn miss_window_shows_the_cache_warming_up() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let misses = m.stat("get_misses");
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "--no-load",
            "--getset",
            "-u",
            "0",
            "-x",
            "20000",
            "--miss-window",
            "5000",
        ],
    );
    let windows = j["miss_windows"].as_array().unwrap();
    let total = count(&j, "total.count");
    assert_eq!(windows.len() as u64, total.div_ceil(5000));
    let (last, full) = windows.split_last().unwrap();
    assert!(full.iter().all(|w| count(w, "requests") == 5000));
    assert!(count(last, "requests") <= 5000);
    let sum = |field: &str| windows.iter().map(|w| count(w, field)).sum::<u64>();
    assert_eq!(sum("requests"), total);
    assert_eq!(sum("misses"), delta(&m, "get_misses", misses));
    // Filling every miss warms the cache: the first window misses most.
    let ratio = |w: &serde_json::Value| f(w, "miss_ratio");
    assert!(ratio(&windows[0]) > 0.5 && ratio(last) < ratio(&windows[0]) / 2.0);
    assert_usage_error(
        &mcbench(&["run", "-s", &m.addr(), "--miss-window", "0"]),
        "at least 1",
    );
    // With a preload and two workers: windows count measured answers only,
    // each worker's numbered from 0, whatever the intervals.
    let misses = m.stat("get_misses");
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-T",
            "2",
            "-i",
            "100ms",
            "-x",
            "30000",
            "--miss-window",
            "1000",
            "-u",
            "0",
            "--miss-ratio",
            "0.5",
        ],
    );
    let windows = j["miss_windows"].as_array().unwrap();
    let sum = |field: &str| windows.iter().map(|w| count(w, field)).sum::<u64>();
    assert_eq!(sum("requests"), count(&j, "total.count"));
    assert_eq!(sum("misses"), delta(&m, "get_misses", misses));
    for worker in [0, 1] {
        let indexes: Vec<u64> = windows
            .iter()
            .filter(|w| count(w, "worker") == worker)
            .map(|w| count(w, "index"))
            .collect();
        assert!(indexes.len() >= 14, "worker {worker}: {indexes:?}");
        assert!(indexes.iter().enumerate().all(|(i, x)| *x == i as u64));
    }
}

/// `calls` of one command in Redis's own `INFO commandstats` (0 if never).
fn redis_calls(redis: &Redis, cmd: &str) -> u64 {
    redis
        .info_text("commandstats", &format!("cmdstat_{cmd}"))
        .and_then(|v| {
            v.split(',')
                .find_map(|kv| kv.strip_prefix("calls="))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn assoc_stores_keys_as_redis_hash_fields() {
    let _machine = shared_machine();
    let redis = Redis::start().expect("redis-server is missing: scripts/deps installs it");
    let server = format!("127.0.0.1:{}", redis.port);
    let (_, j) = run_ok(
        &server,
        &[
            "--protocol",
            "resp",
            "--assoc",
            "4",
            "-K",
            "30",
            "-r",
            "2000",
            "-x",
            "3000",
            "-u",
            "0.2",
        ],
    );
    // Redis's own count: every get an HGET, every set (the preload's too)
    // an HSET, and no plain GET or SET.
    assert_eq!(redis_calls(&redis, "hget"), count(&j, "ops.get.count"));
    assert_eq!(
        redis_calls(&redis, "hset"),
        2000 + count(&j, "ops.set.count")
    );
    assert_eq!(redis_calls(&redis, "get") + redis_calls(&redis, "set"), 0);
    // Every preloaded key was found in its hash.
    assert_eq!(count(&j, "gets.misses"), 0);
    assert_eq!(count(&j, "total.errors"), 0);
    // The hashes are the keys without their last 4 bytes: fewer than the
    // keys (keys differing only there share one).
    let hashes: u64 = redis
        .info_text("keyspace", "db0")
        .and_then(|v| {
            v.split(',')
                .find_map(|kv| kv.strip_prefix("keys="))
                .map(String::from)
        })
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(hashes < 2000 && hashes > 0, "{hashes} hashes");
    assert_usage_error(
        &mcbench(&["run", "-s", &server, "--assoc", "4"]),
        "--protocol resp",
    );
    assert_usage_error(
        &mcbench(&[
            "run",
            "-s",
            &server,
            "--protocol",
            "resp",
            "--assoc",
            "4",
            "--mix",
            "get=9,delete=1",
        ]),
        "delete",
    );
}

#[test]
fn delete90_deletes_nine_keys_in_ten_halfway_through_the_queries() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (gets, hits, misses) = (
        m.stat("cmd_get"),
        m.stat("delete_hits"),
        m.stat("delete_misses"),
    );
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-r",
            "10000",
            "-x",
            "20000",
            "-u",
            "0",
            "--getset",
            "--delete90",
            "--miss-window",
            "1000",
            "-c",
            "1",
        ],
    );
    // The preload wrote every key: each delete finds its key.
    assert_eq!(delta(&m, "delete_hits", hits), 9000);
    assert_eq!(delta(&m, "delete_misses", misses), 0);
    // The deletes are not queries: -x counts the gets alone.
    assert_eq!(delta(&m, "cmd_get", gets), 20000);
    assert_eq!(count(&j, "ops.delete.count"), 9000);
    // Nothing missed before the halfway point; after it, the deleted keys
    // miss until refilled.
    let windows = j["miss_windows"].as_array().unwrap();
    let ratio = |w: &serde_json::Value| w["miss_ratio"].as_f64().unwrap_or(0.0);
    assert!(windows[..10].iter().all(|w| ratio(w) == 0.0), "{windows:?}");
    assert!(windows[10..].iter().any(|w| ratio(w) > 0.3), "{windows:?}");
}

#[test]
fn delete90_needs_getset_and_a_number_of_queries() {
    let (_, addr) = silent_listener();
    for (args, needle) in [
        (vec!["--delete90", "-x", "100"], "--getset"),
        (vec!["--delete90", "--getset", "-t", "1s"], "--ops"),
        (
            vec!["--delete90", "--getset", "-x", "100", "--rate", "1000"],
            "open loop",
        ),
    ] {
        let mut all = vec!["run", "-s", &addr];
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}
