//! Key placement across servers: where each key goes, checked against
//! libmemcached itself (Debian's libmemcached11 through Python ctypes),
//! against twemproxy, and against the servers' own counts.

use crate::support;

use rand::{Rng, SeedableRng};
use std::process::{Command, Stdio};
use support::*;

const ROUTE_PY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/support/libmemcached_route.py"
);

/// Server indexes of `keys` under libmemcached, or `None` (with a message)
/// when the library is not installed. In CI, which installs it, a missing
/// library fails the test.
fn libmemcached_route(
    dist: &str,
    hash: &str,
    servers: &[String],
    keys: &[Vec<u8>],
) -> Option<Vec<usize>> {
    let out = feed_keys(
        Command::new("python3")
            .arg(ROUTE_PY)
            .args([dist, hash])
            .args(servers),
        keys,
    );
    if out.status.code() == Some(3) {
        let why = String::from_utf8_lossy(&out.stderr);
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs libmemcached11: {why}"
        );
        eprintln!("SKIPPED: {why}");
        return None;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect(),
    )
}

/// Server indexes of `keys` under `mcbench route --distribution DIST`.
fn mcbench_route(dist: &str, servers: &[String], keys: &[Vec<u8>]) -> Vec<usize> {
    let mut args = vec!["--distribution", dist];
    for s in servers {
        args.extend(["-s", s.as_str()]);
    }
    route_keys(&args, keys)
}

/// Each key `i` is on server `homes[i]` and on no other (by `get`).
fn assert_keys_at(ms: &[Memcached], homes: &[usize], by: &str) {
    for (i, &home) in homes.iter().enumerate() {
        for (s, m) in ms.iter().enumerate() {
            let found = raw_get(m, &key(i as u64)).starts_with("VALUE");
            assert_eq!(
                found,
                s == home,
                "key {i}: on server {s}? ({by} says {home})"
            );
        }
    }
}

fn server_flags(servers: &[String]) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| ["-s".to_string(), s.clone()])
        .collect()
}

#[test]
fn placement_matches_libmemcached_for_100k_random_keys() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    // Any byte but the line break: bytes from 0x80 up are sign-extended
    // by libmemcached's hashes, which must be matched too.
    let keys: Vec<Vec<u8>> = (0..100_000)
        .map(|_| {
            let len = rng.gen_range(1..=250);
            (0..len)
                .map(|_| loop {
                    let b: u8 = rng.gen_range(0x21..=0xff);
                    if b != 0x7f {
                        break b;
                    }
                })
                .collect()
        })
        .collect();
    // Port 11211 is dropped from ketama's point names; the others kept.
    let weighted = [
        "127.0.0.1:11211:3",
        "127.0.0.1:11212:1",
        "cache-b:11311:2",
        "10.0.0.9:22122:5",
    ];
    let equal = ["127.0.0.1:11211:1", "127.0.0.1:11212:1", "cache-b:11311:1"];
    let mut cases: Vec<(&str, &str, &[&str])> =
        vec![("ketama", "-", &weighted), ("ketama-spy", "-", &weighted)];
    for hash in [
        "one_at_a_time",
        "md5",
        "crc",
        "fnv1_64",
        "fnv1a_64",
        "fnv1_32",
        "fnv1a_32",
        "jenkins",
    ] {
        cases.push(("modula", hash, &equal));
    }
    for (dist, hash, servers) in cases {
        let servers: Vec<String> = servers.iter().map(|s| s.to_string()).collect();
        let Some(want) = libmemcached_route(dist, hash, &servers, &keys) else {
            return;
        };
        let mut args = vec!["--distribution".to_string(), dist.to_string()];
        if hash != "-" {
            args.extend(["--hash".to_string(), hash.to_string()]);
        }
        args.extend(server_flags(&servers));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = route_keys(&args, &keys);
        assert_eq!(got.len(), keys.len());
        let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert_eq!(
            wrong,
            0,
            "{dist}/{hash}: {wrong} of {} keys placed elsewhere",
            keys.len()
        );
        // Every server gets keys: the check is not vacuous.
        assert!(
            (0..servers.len()).all(|s| got.contains(&s)),
            "{dist}/{hash}"
        );
    }
}

/// The run's keys: prefix `k`, 12 bytes.
fn key(id: u64) -> String {
    format!("k{id:011}")
}

const KEY_FLAGS: [&str; 4] = ["--key-prefix", "k", "--key-size", "12"];

#[test]
fn a_preload_puts_each_key_where_libmemcached_would() {
    let _m = shared_machine();
    let ms: Vec<Memcached> = (0..3).map(|_| Memcached::start(&[])).collect();
    let servers: Vec<String> = ms.iter().map(Memcached::addr).collect();
    let mut args = vec!["run", "--load-only", "-r", "300", "-c", "2"];
    args.extend(KEY_FLAGS);
    let flags = server_flags(&servers);
    args.extend(flags.iter().map(String::as_str));
    let out = mcbench(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let keys: Vec<Vec<u8>> = (0..300).map(|i| key(i).into_bytes()).collect();
    // libmemcached's default: modula over one-at-a-time.
    let with_weights: Vec<String> = servers.iter().map(|s| format!("{s}:1")).collect();
    let Some(want) = libmemcached_route("modula", "one_at_a_time", &with_weights, &keys) else {
        return;
    };
    assert_keys_at(&ms, &want, "libmemcached");
}

#[test]
fn zipf_makes_the_server_of_the_hot_key_the_hot_server() {
    let _m = shared_machine();
    let ms: Vec<Memcached> = (0..3).map(|_| Memcached::start(&[])).collect();
    let servers: Vec<String> = ms.iter().map(Memcached::addr).collect();
    let flags = server_flags(&servers);
    let mut args = vec![
        "run",
        "--distribution",
        "ketama",
        "--no-load",
        "--mix",
        "get=1",
        "-r",
        "1000",
        "--key-popularity",
        "zipf:1.3",
        "-x",
        "30000",
        "-c",
        "2",
    ];
    args.extend(KEY_FLAGS);
    args.extend(flags.iter().map(String::as_str));
    let before: Vec<u64> = ms.iter().map(|m| m.stat("cmd_get")).collect();
    let (out, json) = run_json(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = json["per_server"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let counts: Vec<u64> = rows.iter().map(|r| r["count"].as_u64().unwrap()).collect();
    // The servers' own counts agree, request for request.
    for (s, m) in ms.iter().enumerate() {
        assert_eq!(rows[s]["address"], servers[s].as_str());
        assert_eq!(m.stat("cmd_get") - before[s], counts[s], "server {s}");
        assert_eq!(rows[s]["errors"], 0);
    }
    assert_eq!(counts.iter().sum::<u64>(), f(&json, "total.count") as u64);
    // Each server's share is the popularity of the keys ketama puts on
    // it: zipf over ranks, p(k) ∝ (k + 1)^-1.3, key k at rank k.
    let keys: Vec<Vec<u8>> = (0..1000).map(|i| key(i).into_bytes()).collect();
    let homes = mcbench_route("ketama", &servers, &keys);
    let weight = |k: usize| ((k + 1) as f64).powf(-1.3);
    let h: f64 = (0..1000).map(weight).sum();
    let mut expected = [0.0; 3];
    for (k, &s) in homes.iter().enumerate() {
        expected[s] += weight(k) / h;
    }
    for s in 0..3 {
        let share = counts[s] as f64 / 30_000.0;
        assert!(
            (share - expected[s]).abs() < 0.02,
            "server {s}: {share} vs {expected:?} ({counts:?})"
        );
    }
    // The server holding key 0 (≈ 28.5 % of the draws alone) is hot.
    assert!(counts[homes[0]] as f64 > 0.26 * 30_000.0, "{counts:?}");
    let text = stdout(&mcbench(&{
        let mut a = args.clone();
        a.retain(|x| *x != "-x" && *x != "30000");
        a.extend(["-x", "300"]);
        a
    }));
    assert!(
        text.contains("keys placed by ketama over 3 servers"),
        "{text}"
    );
    assert!(text.contains("Per server"), "{text}");
}

#[test]
fn keys_land_where_twemproxy_ketama_puts_them() {
    let _m = shared_machine();
    if which("nutcracker").is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI installs nutcracker");
        eprintln!("SKIPPED: nutcracker (twemproxy) is not installed");
        return;
    }
    let ms: Vec<Memcached> = (0..3).map(|_| Memcached::start(&[])).collect();
    let servers: Vec<String> = ms.iter().map(Memcached::addr).collect();
    let dir = tempfile::tempdir().unwrap();
    let (port, stats) = (free_port(), free_port());
    let conf = dir.path().join("nutcracker.yml");
    let list: String = servers.iter().map(|s| format!("   - {s}:1\n")).collect();
    std::fs::write(
        &conf,
        format!(
            "pool:\n  listen: 127.0.0.1:{port}\n  hash: md5\n  distribution: ketama\n  \
             timeout: 2000\n  servers:\n{list}"
        ),
    )
    .unwrap();
    let mut proxy = Command::new("nutcracker")
        .args([
            "-c",
            conf.to_str().unwrap(),
            "-s",
            &stats.to_string(),
            "-a",
            "127.0.0.1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_listening("nutcracker", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let proxy_addr = format!("127.0.0.1:{port}");
    let mut args = vec![
        "run",
        "--load-only",
        "-r",
        "300",
        "-c",
        "1",
        "-s",
        &proxy_addr,
    ];
    args.extend(KEY_FLAGS);
    let out = mcbench(&args);
    let _ = proxy.kill();
    let _ = proxy.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let keys: Vec<Vec<u8>> = (0..300).map(|i| key(i).into_bytes()).collect();
    let want = mcbench_route("ketama", &servers, &keys);
    assert_keys_at(&ms, &want, "mcbench's ketama");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .chain(["/usr/sbin", "/sbin"].map(|d| std::path::Path::new(d).join(program)))
        .find(|p| p.is_file())
}

#[test]
fn without_placement_every_server_gets_every_key() {
    let _m = shared_machine();
    let ms: Vec<Memcached> = (0..2).map(|_| Memcached::start(&[])).collect();
    let servers = format!("{},{}", ms[0].addr(), ms[1].addr());
    for how in [["--distribution", "none"], ["--roundrobin", "-T2"]] {
        let mut args = vec!["run", "--load-only", "-r", "200", "-c", "2", "-s", &servers];
        args.extend(how);
        args.extend(KEY_FLAGS);
        let before: Vec<u64> = ms.iter().map(|m| m.stat("cmd_set")).collect();
        let out = mcbench(&args);
        assert!(out.status.success(), "{how:?}: {}", stderr(&out));
        // Each server was sent every key by this run (the servers' count).
        for (m, b) in ms.iter().zip(before) {
            assert_eq!(m.stat("cmd_set") - b, 200, "{how:?}");
            assert_eq!(m.stat("curr_items"), 200, "{how:?}");
        }
    }
}

#[test]
fn placement_flags_that_cannot_work_are_refused() {
    let two = "127.0.0.1:1,127.0.0.1:2";
    for (args, needle) in [
        (vec!["-s", "127.0.0.1:1:3,127.0.0.1:2"], "weights"),
        (
            vec!["-s", two, "--distribution", "ketama", "--hash", "crc"],
            "--hash",
        ),
        (
            vec!["-s", two, "--distribution", "rendezvous"],
            "rendezvous",
        ),
        (
            vec!["-s", two, "--roundrobin", "--distribution", "ketama"],
            "--distribution none",
        ),
        (vec!["-s", two, "--num-conns", "10"], "--distribution none"),
        (vec!["-s", "127.0.0.1:9-7"], "port range"),
        (vec!["-s", "127.0.0.1:1:0"], "weight"),
        (vec!["-s", two, "--hash", "fnv9"], "fnv9"),
        (vec!["-s", two, "-T", "3", "-c", "2"], "--threads 3"),
        (
            vec!["-s", two, "--roundrobin", "--num-conns", "5"],
            "--num-conns opens its own",
        ),
        (
            vec!["-s", two, "--roundrobin", "-T", "4", "-c", "1"],
            "-c 2",
        ),
    ] {
        let mut all = vec!["run"];
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
    let out = mcbench(&["route", "-s", "a:1:2,b:1", "k"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("weights"), "{}", stderr(&out));
}

#[test]
fn a_stalled_server_has_the_timeouts_in_its_row() {
    let _m = shared_machine();
    let good = Memcached::start(&[]);
    let stalled = fake_server(Misbehaviour::Stall);
    let servers = format!("{},{stalled}", good.addr());
    let (_, json) = run_json(&[
        "run",
        "-s",
        &servers,
        "--no-load",
        "-t",
        "1s",
        "--timeout",
        "300ms",
        "-c",
        "2",
    ]);
    let rows = json["per_server"].as_array().unwrap();
    let timeouts = f(&json, "errors.timeout");
    assert!(timeouts > 0.0, "{}", json["errors"]);
    // Every timeout is the stalled server's; the other answered all.
    assert_eq!(
        f(&rows[1], "errors"),
        timeouts + f(&json, "errors.connection_lost")
    );
    assert_eq!(f(&rows[1], "count"), 0.0);
    assert_eq!(f(&rows[0], "errors"), 0.0);
    assert_eq!(
        f(&rows[0], "count") as u64,
        good.stat("cmd_get") + good.stat("cmd_set")
    );
    // Servers that never answer: the run gives up after --timeout and
    // books what still waits as timeouts, each against its server.
    let other = fake_server(Misbehaviour::Stall);
    let servers = format!("{stalled},{other}");
    let (out, json) = run_json(&[
        "run",
        "-s",
        &servers,
        "--no-load",
        "-t",
        "5s",
        "--timeout",
        "300ms",
        "-c",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json["per_server"].as_array().unwrap();
    let timeouts = f(&json, "errors.timeout");
    assert!(rows.iter().all(|r| f(r, "errors") > 0.0), "{rows:?}");
    assert_eq!(f(&rows[0], "errors") + f(&rows[1], "errors"), timeouts);
}
