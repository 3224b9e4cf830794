//! `mcbench run` over every protocol and transport, against a real
//! memcached (and redis-server when installed): the run completes, every
//! op of the mix gets its kind of reply, and the hits mcbench counts are
//! the hits the server counted.

use crate::support;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use support::*;

/// Every command of every memcached protocol. incr/decr need values of at
/// most 20 digits, which appends would outgrow: they run in a mix of
/// their own.
const FULL_MIX: &str = "get=4,gets=1,gat=1,gats=1,touch=1,set=2,add=1,replace=1,cas=1,incr=1,\
                        decr=1,delete=1,mget=1";
const APPEND_MIX: &str = "get=2,append=1,prepend=1";

/// A full-mix run: each op's kind of reply shows up and nothing fails.
fn check_full_mix(j: &Value, what: &str) {
    let errors: u64 = j["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(errors, 0, "{what}: errors {}", j["errors"]);
    for class in [
        "stored",
        "not_stored",
        "deleted",
        "touched",
        "num",
        "value",
        "end",
    ] {
        assert!(
            count(j, &format!("responses.{class}")) > 0,
            "{what}: no '{class}' replies: {}",
            j["responses"]
        );
    }
    for op in [
        "get", "gets", "gat", "gats", "touch", "add", "replace", "cas", "incr", "decr", "delete",
        "mget",
    ] {
        assert!(
            count(j, &format!("ops.{op}.count")) > 0,
            "{what}: no {op} ops"
        );
    }
    // Each reply is one request: the classes add up to the ops.
    let replies: u64 = j["responses"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(replies, count(j, "total.count"), "{what}");
}

fn full_mix_args<'a>(server: &'a str, protocol: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "-s",
        server,
        "--protocol",
        protocol,
        "-t",
        "1s",
        "-c",
        "2",
        "-d",
        "4",
        "-r",
        "500",
        "-V",
        "8",
        "--expiry",
        "300",
        "--mix",
        FULL_MIX,
        "--multiget",
        "3",
    ]
}

/// append and prepend store; nothing fails.
fn check_appends(server: &str, protocol: &str) {
    let (out, j) = run_json(&[
        "run",
        "-s",
        server,
        "--protocol",
        protocol,
        "-x",
        "600",
        "-r",
        "100",
        "--mix",
        APPEND_MIX,
    ]);
    assert!(out.status.success(), "{protocol}: {}", stderr(&out));
    assert_eq!(
        count(&j, "responses.stored"),
        count(&j, "ops.append.count") + count(&j, "ops.prepend.count"),
        "{protocol}: {}",
        j["responses"]
    );
    assert_eq!(count(&j, "gets.misses"), 0, "{protocol}");
}

#[test]
fn every_protocol_runs_the_full_mix_over_tcp() {
    let _machine = shared_machine();
    for protocol in ["ascii", "meta", "binary"] {
        let m = Memcached::start(&[]);
        let addr = m.addr();
        let (out, j) = run_json(&full_mix_args(&addr, protocol));
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        check_full_mix(&j, protocol);
        assert_eq!(j["spec"]["protocol"], protocol);
        // The server saw the hits mcbench counted (the load phase only sets).
        assert_eq!(
            count(&j, "gets.hits"),
            m.stat("get_hits") + m.stat("touch_hits") - touches(&j),
            "{protocol}"
        );
        check_appends(&addr, protocol);
    }
}

/// Touches hit through `touch_hits` but are not retrievals.
fn touches(j: &Value) -> u64 {
    count(j, "responses.touched")
}

/// `add` of keys that all exist: loud, every reply is NOT_STORED.
fn adds_of_loaded_keys(server: &str, protocol: &str, quiet: bool) -> Value {
    let mut args = vec![
        "run",
        "-s",
        server,
        "--protocol",
        protocol,
        "-x",
        "1000",
        "-c",
        "2",
        "--mix",
        "add=1",
        "-r",
        "100",
    ];
    if quiet {
        args.push("--noreply");
    }
    let (out, j) = run_json(&args);
    assert!(out.status.success(), "{protocol}: {}", stderr(&out));
    assert_eq!(count(&j, "total.count"), 1000, "{protocol}");
    assert!(
        f(&j, "total.latency_us.p50") > 5.0,
        "{protocol}: quiet requests are timed"
    );
    j
}

#[test]
fn quiet_requests_are_fenced_and_timed() {
    let _machine = shared_machine();
    for protocol in ["ascii", "meta", "binary"] {
        let m = Memcached::start(&[]);
        let addr = m.addr();
        let loud = adds_of_loaded_keys(&addr, protocol, false);
        assert_eq!(count(&loud, "responses.not_stored"), 1000, "{protocol}");
        let quiet = adds_of_loaded_keys(&addr, protocol, true);
        if protocol == "ascii" {
            // Text noreply hides failures too: nothing but the fence came.
            assert_eq!(count(&quiet, "responses.stored"), 1000, "{protocol}");
        } else {
            // Meta and binary still report the failure, then the fence.
            assert_eq!(count(&quiet, "responses.not_stored"), 1000, "{protocol}");
            let per_op = |j: &Value| count(j, "bytes.rx") as f64 / 1000.0;
            assert!(
                // The fence's reply: `MN\r\n` or a 24-byte noop.
                per_op(&quiet) >= per_op(&loud) + 3.9,
                "{protocol}: no fence came back"
            );
        }
    }
}

#[test]
fn meta_flags_base64_keys_and_vivify() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let addr = m.addr();
    // Keys loaded in text, read back base64-encoded: every one hits, and
    // the flags cost what they should on the wire.
    let load = mcbench(&["run", "-s", &addr, "--load-only", "-r", "200"]);
    assert!(load.status.success(), "{}", stderr(&load));
    let gets = |flags: &str| {
        let mut args = vec![
            "run",
            "-s",
            &addr,
            "--protocol",
            "meta",
            "--no-load",
            "-u",
            "0",
            "-x",
            "2000",
            "-r",
            "200",
        ];
        if !flags.is_empty() {
            args.extend(["--meta-flags", flags]);
        }
        let (out, j) = run_json(&args);
        assert!(out.status.success(), "{flags}: {}", stderr(&out));
        assert_eq!(
            count(&j, "gets.misses"),
            0,
            "{flags}: every key names a loaded item"
        );
        let per_op = |what: &str| count(&j, what) as f64 / 2000.0;
        (per_op("bytes.tx"), per_op("bytes.rx"))
    };
    let (plain_tx, plain_rx) = gets("");
    let (b64_tx, _) = gets("b");
    // A 30-byte key is 40 in base64, and ` b` is 2 more.
    assert!(
        (b64_tx - plain_tx - 12.0).abs() < 1.0,
        "{plain_tx} -> {b64_tx}"
    );
    let (_, kts_rx) = gets("k,t,s");
    // ` k<30-byte key>` (32), ` t-1` (4) and ` s200` (5) come back with
    // every hit.
    assert!(
        (kts_rx - plain_rx - 41.0).abs() < 1.0,
        "{plain_rx} -> {kts_rx}"
    );
    // Vivify on a fresh server: each miss leaves a stub, and a stub is a
    // miss too.
    let fresh = Memcached::start(&[]);
    let fresh_addr = fresh.addr();
    let (_, j) = run_ok(
        &fresh_addr,
        &[
            "--protocol",
            "meta",
            "--meta-flags",
            "N30",
            "--no-load",
            "-u",
            "0",
            "-x",
            "1000",
            "-r",
            "50",
        ],
    );
    assert_eq!(
        (count(&j, "gets.hits"), count(&j, "gets.misses")),
        (0, 1000)
    );
    assert_eq!(
        fresh.stat("curr_items"),
        50,
        "every key asked for was vivified"
    );
    let out = mcbench(&["run", "--meta-flags", "k"]);
    assert_usage_error(&out, "--meta-flags are for --protocol meta");
}

#[test]
fn runs_over_a_unix_socket() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let _m = Memcached::start_unix(&path);
    let server = format!("unix:{}", path.display());
    for protocol in ["ascii", "binary"] {
        let (out, j) = run_json(&full_mix_args(&server, protocol));
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        check_full_mix(&j, &format!("unix {protocol}"));
    }
}

#[test]
fn runs_over_udp_with_replies_in_several_datagrams() {
    let _machine = shared_machine();
    let m = Memcached::start_udp();
    let server = format!("udp:127.0.0.1:{}", m.port);
    // 4 keys of 1,000 bytes: each multiget reply spans several datagrams
    // (memcached 1.6: one per value, and a bare header per miss).
    let (_, j) = run_ok(
        &server,
        &[
            "-t",
            "1s",
            "-c",
            "2",
            "-d",
            "2",
            "-r",
            "200",
            "-V",
            "1000",
            "--mix",
            "get=3,set=1,delete=1",
            "--multiget",
            "4",
        ],
    );
    assert!(count(&j, "ops.mget.count") > 100, "{}", j["ops"]);
    assert!(count(&j, "gets.hits") > 0);
    assert!(count(&j, "responses.deleted") > 0);
    // Loopback loses nothing: every answer was counted, none timed out,
    // none failed to parse.
    let errors: u64 = j["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(errors, 0, "{}", j["errors"]);
    assert_eq!(m.stat("get_hits"), count(&j, "gets.hits"));
}

/// Several requests due on one UDP socket go out in one `sendmmsg`, each
/// its own datagram: memcached counts every one, and strace sees the
/// batches.
#[test]
fn batched_datagrams_go_out_in_one_sendmmsg_each_counted() {
    let _machine = shared_machine();
    let m = Memcached::start_udp();
    let server = format!("udp:127.0.0.1:{}", m.port);
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let json = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=sendmmsg", BIN, "run", "-s", &server])
        .args(["-c", "2", "-d", "16", "--refill-batch", "8", "-x", "3000"])
        .args(["-r", "500", "--no-load", "--json"])
        .arg(json.path())
        .env_remove("MEMCACHED_SERVERS")
        .output()
        .expect("strace runs (apt-get install strace)");
    let trace = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{trace}");
    let j: Value = serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    assert_eq!(count(&j, "total.count"), 3000, "{}", j["errors"]);
    assert_eq!(m.stat("cmd_get") + m.stat("cmd_set") - before, 3000);
    // Batches of 8 (or 16 at the start) datagrams per call.
    let batches: Vec<u64> = trace
        .lines()
        .filter(|l| l.contains("sendmmsg(") && !l.contains("resumed"))
        .filter_map(|l| l.rsplit("= ").next()?.trim().parse().ok())
        .collect();
    assert!(batches.len() >= 100, "{} sendmmsg calls", batches.len());
    assert!(batches.iter().all(|&n| n >= 2), "{batches:?}");
}

#[test]
fn every_memcached_protocol_runs_the_full_mix_over_udp() {
    let _machine = shared_machine();
    for protocol in ["ascii", "meta", "binary"] {
        let m = Memcached::start_udp();
        let server = format!("udp:127.0.0.1:{}", m.port);
        let (out, j) = run_json(&full_mix_args(&server, protocol));
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        check_full_mix(&j, &format!("udp {protocol}"));
    }
}

#[test]
fn udp_measures_each_protocols_requests_against_the_datagram() {
    // 20 keys of 50 bytes: ~1 KB as a text multiget, ~1.8 KB in meta.
    let args = |protocol| {
        vec![
            "run",
            "-s",
            "udp:127.0.0.1:9",
            "--protocol",
            protocol,
            "-K",
            "50",
            "--mix",
            "get=1,mget=1",
            "--multiget",
            "20",
            "--no-load",
            "-x",
            "1",
            "--timeout",
            "1s",
        ]
    };
    let out = mcbench(&args("meta"));
    assert_usage_error(&out, "multiget of 20 keys");
    let out = mcbench(&args("ascii"));
    assert!(!stderr(&out).contains("datagram"), "{}", stderr(&out));
}

#[test]
fn udp_refuses_a_value_that_cannot_fit_a_datagram() {
    let out = mcbench(&["run", "-s", "udp:127.0.0.1:9", "-V", "2000"]);
    assert_usage_error(&out, "1400-byte datagram");
}

#[test]
fn udp_requests_without_a_reply_time_out_as_errors() {
    let _machine = shared_machine();
    // A UDP port nobody answers on.
    let sink = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = format!("udp:{}", sink.local_addr().unwrap());
    let (out, j) = run_json(&[
        "run",
        "-s",
        &server,
        "--no-load",
        "-x",
        "20",
        "-c",
        "1",
        "-d",
        "20",
    ]);
    assert_eq!(count(&j, "errors.udp_timeout"), 20, "{}", stderr(&out));
    assert_eq!(
        count(&j, "total.count"),
        0,
        "a lost request is no latency sample"
    );
}

#[test]
fn commands_a_protocol_lacks_are_refused_up_front() {
    let out = mcbench(&[
        "run",
        "-s",
        "127.0.0.1:9",
        "--protocol",
        "resp",
        "--mix",
        "get=1,touch=1",
    ]);
    assert_usage_error(&out, "no 'touch' command");
    // A text get has no quiet form: --noreply would quiet only the preload.
    let out = mcbench(&["run", "--mix", "get=1", "--noreply"]);
    assert_usage_error(&out, "no command the run measures has a quiet form");
    let out = mcbench(&[
        "run",
        "--protocol",
        "binary",
        "--mix",
        "get=1",
        "--noreply",
        "-s",
        "127.0.0.1:9",
    ]);
    assert!(!stderr(&out).contains("quiet form"), "{}", stderr(&out));
    let out = mcbench(&["run", "--mix", "get=1,mget=1", "--getq-freq", "10"]);
    assert_usage_error(&out, "--getq-freq");
    let out = mcbench(&["run", "--protocol", "gopher"]);
    assert_usage_error(&out, "unknown protocol 'gopher'");
}

// --- authentication ---------------------------------------------------

#[test]
fn text_authentication_with_memcached_y() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth");
    std::fs::write(&auth, "bench:s3cret\n").unwrap();
    let m = Memcached::start(&["-Y", auth.to_str().unwrap()]);
    let addr = m.addr();
    for protocol in ["ascii", "meta"] {
        let (out, j) = run_json(&[
            "run",
            "-s",
            &addr,
            "--protocol",
            protocol,
            "-x",
            "500",
            "--user",
            "bench",
            "--password",
            "s3cret",
        ]);
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        assert_eq!(
            count(&j, "gets.hits") + count(&j, "gets.misses"),
            count(&j, "ops.get.count")
        );
        assert_eq!(count(&j, "gets.misses"), 0, "{protocol}: loaded keys hit");
        let out = mcbench(&[
            "run",
            "-s",
            &addr,
            "--protocol",
            protocol,
            "-x",
            "10",
            "--user",
            "bench",
            "--password",
            "wrong",
        ]);
        assert_eq!(out.status.code(), Some(1), "{protocol}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("authentication failed"),
            "{}",
            stderr(&out)
        );
    }
    // Without credentials requests are refused, and the report says so.
    let (_, j) = run_json(&["run", "-s", &addr, "--no-load", "-x", "10", "-c", "1"]);
    assert!(count(&j, "errors.auth") > 0, "{}", j["errors"]);
}

/// memcached `-S` with a SASL database holding one PLAIN user; `None`
/// when this machine lacks saslpasswd2 (sasl2-bin) — CI installs it.
fn sasl_memcached(dir: &std::path::Path) -> Option<Memcached> {
    support::sasl_conf(dir)?;
    Some(Memcached::start_env(&["-S"], &[("SASL_CONF_PATH", dir)]))
}

#[test]
fn sasl_plain_over_binary() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let m = sasl_memcached(dir.path())
        .expect("saslpasswd2 is missing: scripts/deps installs sasl2-bin");
    let addr = m.addr();
    let (_, j) = run_ok(
        &addr,
        &[
            "--protocol",
            "binary",
            "-x",
            "500",
            "-U",
            "bench",
            "-P",
            "s3cret",
        ],
    );
    assert_eq!(count(&j, "gets.misses"), 0);
    assert!(
        j["spec"].get("password").is_none(),
        "the password is never written"
    );
    // A refusal is no hang: `mcbench` fails the test past its bound.
    let out = mcbench(&[
        "run",
        "-s",
        &addr,
        "--protocol",
        "binary",
        "-x",
        "10",
        "-U",
        "bench",
        "-P",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authentication failed"),
        "{}",
        stderr(&out)
    );
}

// --- RESP -------------------------------------------------------------

#[test]
fn resp_workload_against_redis_counts_hits_like_redis() {
    let _machine = shared_machine();
    let redis = Redis::start().expect("redis-server is missing: scripts/deps installs it");
    let server = format!("127.0.0.1:{}", redis.port);
    let (_, j) = run_ok(
        &server,
        &[
            "--protocol",
            "resp",
            "-t",
            "1s",
            "-c",
            "4",
            "-d",
            "4",
            "-r",
            "1000",
            "-V",
            "8",
            "--miss-ratio",
            "0.2",
            "--mix",
            "get=6,set=1,delete=1,incr=1,append=1,mget=1",
            "--multiget",
            "3",
        ],
    );
    assert!(count(&j, "gets.misses") > 0 && count(&j, "gets.hits") > 0);
    assert_eq!(count(&j, "gets.hits"), redis.info("keyspace_hits"));
    // GET and MGET are the only lookups of this mix that redis counts.
    assert_eq!(count(&j, "gets.misses"), redis.info("keyspace_misses"));
    assert!(count(&j, "responses.num") > 0 && count(&j, "responses.deleted") > 0);
    // Appends outgrow what INCRBY takes as a number: redis's own errors.
    assert!(count(&j, "responses.resp_error") > 0, "{}", j["responses"]);
    assert_eq!(
        count(&j, "errors.resp_error"),
        count(&j, "responses.resp_error")
    );
    assert_eq!(count(&j, "errors.error"), 0, "{}", j["errors"]);
}

/// A UDP server that answers every get with one hit split over two
/// numbered datagrams, sent in reverse order (as an older memcached could
/// number them and a network could reorder them), plus a stray datagram.
fn reordering_udp_server() -> String {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, peer)) = socket.recv_from(&mut buf) {
            if n < 8 {
                continue;
            }
            let id = [buf[0], buf[1]];
            let frame = |seq: u8, total: u8, payload: &[u8]| {
                let mut d = vec![id[0], id[1], 0, seq, 0, total, 0, 0];
                d.extend_from_slice(payload);
                d
            };
            // The value is the key asked for's: `get <key>\r\n`.
            let request = String::from_utf8_lossy(&buf[8..n]);
            let key = request.trim_end().strip_prefix("get ").unwrap_or("k");
            let head = format!("VALUE {key} 0 5\r\nhe");
            let stray = [id[0] ^ 0x55, id[1], 0, 0, 0, 2, 0, 0, b'x'];
            let _ = socket.send_to(&stray, peer);
            let _ = socket.send_to(&frame(1, 2, b"llo\r\nEND\r\n"), peer);
            let _ = socket.send_to(&frame(0, 2, head.as_bytes()), peer);
        }
    });
    addr
}

#[test]
fn udp_reassembles_numbered_datagrams_out_of_order() {
    let _machine = shared_machine();
    let server = format!("udp:{}", reordering_udp_server());
    let (_, j) = run_ok(
        &server,
        &["--no-load", "-u", "0", "-x", "200", "-c", "2", "-d", "4"],
    );
    assert_eq!(count(&j, "gets.hits"), 200, "{}", j["errors"]);
    assert_eq!(count(&j, "errors.packet_disorder"), 200);
    assert_eq!(count(&j, "errors.udp_timeout"), 0);
}

/// memaslap's facebook test: sets over TCP, multigets over UDP, to the
/// same servers in one run, as the server's own counters show.
#[test]
fn facebook_sends_sets_over_tcp_and_multigets_over_udp() {
    let _machine = shared_machine();
    let m = Memcached::start_udp();
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "--facebook",
            "--multiget",
            "20",
            "-K",
            "20",
            "--conn-sock",
            "3",
            "-c",
            "2",
            "-t",
            "1s",
            "-r",
            "1000",
        ],
    );
    let (mgets, sets) = (f(&j, "ops.mget.count"), f(&j, "ops.set.count"));
    assert!(mgets > 100.0 && sets > 10.0, "{}", j["ops"]);
    // Every key of every multiget, and every set beside the preload's. A
    // reply datagram lost on the way back (a udp_timeout here) was still
    // counted by the server.
    let lost = f(&j, "errors.udp_timeout");
    let cmd_get = m.stat("cmd_get") as f64;
    assert!(
        (mgets * 20.0..=(mgets + lost) * 20.0).contains(&cmd_get),
        "{cmd_get} for {mgets} multigets, {lost} lost"
    );
    assert_eq!(m.stat("cmd_set") as f64, 1000.0 + sets);
    // 2 connections, each a UDP socket and 3 TCP connections.
    assert_eq!(f(&j, "connections.opened"), 8.0);
    // Against a server without UDP the sets still arrive over TCP, and no
    // multiget reaches it: they went over UDP.
    let tcp_only = Memcached::start(&[]);
    let (out, j) = run_json(&[
        "run",
        "-s",
        &tcp_only.addr(),
        "--facebook",
        "--multiget",
        "20",
        "-K",
        "20",
        "-c",
        "1",
        "-t",
        "1s",
        "-r",
        "1000",
        "-u",
        "0.5",
    ]);
    // Half the requests (the sets) succeed: a run, not a failure.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tcp_only.stat("cmd_get"), 0, "{}", stderr(&out));
    assert!(tcp_only.stat("cmd_set") > 1000, "{}", stderr(&out));
    assert!(j["ops"]["mget"].is_null(), "{}", j["ops"]);
    // The unanswered multigets are counted, not passed for throughput.
    assert!(f(&j, "errors.udp_timeout") > 0.0, "{}", j["errors"]);
}

#[test]
fn facebook_refuses_what_it_cannot_route() {
    for (args, needle) in [
        (
            &["-s", "udp:127.0.0.1:1", "--facebook"][..],
            "names one transport",
        ),
        (
            &["-s", "127.0.0.1:1", "--facebook", "-q", "1000"][..],
            "--rate",
        ),
        (
            &["-s", "127.0.0.1:1", "--conn-sock", "3"][..],
            "give --facebook",
        ),
        (&["--facebook"][..], "needs --server"),
        (
            &["-s", "127.0.0.1:1", "--facebook", "-R"][..],
            "--reconnect",
        ),
        (
            &[
                "-s",
                "127.0.0.1:1",
                "--facebook",
                "--multiget",
                "100",
                "-K",
                "200",
            ][..],
            "datagram",
        ),
    ] {
        let mut all = vec!["run", "-t", "1s"];
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}

/// A facebook run whose server dies ends (every connection lost) rather
/// than waiting for ever on sockets that can no longer send.
#[test]
fn facebook_groups_are_lost_whole_when_the_server_dies() {
    let _machine = shared_machine();
    let mut m = Memcached::start_udp();
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "--facebook",
            "--conn-sock",
            "2",
            "-c",
            "2",
            "-x",
            "100M",
            "-r",
            "1000",
            "--no-load",
            "--json",
            "-",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(500));
    m.crash();
    let out = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("every connection was lost"),
        "{}",
        stderr(&out)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(f(&j, "total.count") > 100.0);
    assert_eq!(f(&j, "connections.lost"), 6.0, "{}", j["connections"]);
}

#[test]
fn udp_multigets_of_values_over_a_datagram_are_reassembled() {
    let _machine = shared_machine();
    let m = Memcached::start_udp();
    let load = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "1000",
        "-V",
        "2000",
    ]);
    assert!(load.status.success(), "{}", stderr(&load));
    let udp = format!("udp:{}", m.addr());
    let (_, j) = run_ok(
        &udp,
        &[
            "--multiget",
            "10",
            "-V",
            "2000",
            "-r",
            "1000",
            "-u",
            "0",
            "--no-load",
            "-t",
            "1s",
        ],
    );
    let n = f(&j, "total.count");
    assert!(n > 100.0, "{}", j["total"]);
    assert_eq!(f(&j, "gets.hits"), 10.0 * n);
    assert_eq!(f(&j, "total.errors"), 0.0, "{}", j["errors"]);
    assert_eq!(f(&j, "errors.packet_drop"), 0.0);
    assert_eq!(m.stat("get_hits") as f64, f(&j, "gets.hits"));
}
