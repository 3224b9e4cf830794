//! `--tls`: memcached (`-Z`) and Redis (`--tls-port`) over TLS, judged by
//! the servers' own counters (read on a plain listener beside the TLS
//! one): the load arrives in every protocol, a wrong CA, name or missing
//! client certificate fails before any traffic with the reason named,
//! churned connections' handshakes are counted and resumed, and a server
//! stall shows in the tail over TLS as over TCP.

use crate::support;

use std::time::Duration;
use support::{
    assert_usage_error, f, hdr, mcbench, run_json, self_signed, shared_machine, spawn_mcbench,
    stderr, wait_bounded, Memcached, Redis,
};

/// The server's certificate (for localhost and 127.0.0.1) and key, in a
/// directory of their own.
fn server_cert(dir: &std::path::Path) -> (String, String) {
    let sub = dir.join("server");
    std::fs::create_dir_all(&sub).unwrap();
    self_signed(&sub)
}

/// `mcbench run -s ADDR --tls --tls-ca CA` and `more`, with `--json -`.
fn run_tls(addr: &str, ca: &str, more: &[&str]) -> (std::process::Output, serde_json::Value) {
    run_json(&[&["run", "-s", addr, "--tls", "--tls-ca", ca][..], more].concat())
}

fn load(m: &Memcached) -> u64 {
    m.stat("cmd_get") + m.stat("cmd_set")
}

#[test]
fn every_memcached_protocol_goes_over_tls_and_the_server_counts_it() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let m = Memcached::start_tls(&cert, &key, "");
    for protocol in ["ascii", "meta", "binary"] {
        let (conns, before) = (m.stat("total_connections"), load(&m));
        let addr = m.tls_addr();
        let more = ["--protocol", protocol, "-c", "3", "-x", "3000", "--no-load"];
        let (out, j) = run_tls(&addr, &cert, &more);
        assert_eq!(out.status.code(), Some(0), "{protocol}: {}", stderr(&out));
        // Its three connections, load's two and this one.
        assert_eq!(m.stat("total_connections") - conns, 3 + 2 + 1, "{protocol}");
        // Every measured request reached the server, and no other.
        assert_eq!(load(&m) - before, f(&j, "total.count") as u64, "{protocol}");
        assert_eq!(m.stat("ssl_handshake_errors"), 0, "{protocol}");
        assert_eq!(j["tls"]["version"], "TLSv1.3", "{protocol}: {}", j["tls"]);
        assert_eq!(j["tls"]["handshakes"], 3, "{protocol}");
        assert_eq!(j["tls"]["verified"], true);
        assert!(j["tls"]["cipher_suite"]
            .as_str()
            .unwrap()
            .starts_with("TLS13_"));
    }
}

/// Binary with SASL PLAIN (memcached `-S`) over TLS: the credentials go
/// inside the TLS session, and the keys the preload stored are the ones
/// the gets find.
#[test]
fn sasl_goes_over_tls() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    support::sasl_conf(dir.path())
        .expect("saslpasswd2 is missing: scripts/deps installs sasl2-bin");
    let m = Memcached::start_tls_with(&cert, &key, "", &["-S"], &[("SASL_CONF_PATH", dir.path())]);
    let addr = m.tls_addr();
    let (out, j) = run_tls(
        &addr,
        &cert,
        &[
            "--protocol",
            "binary",
            "-U",
            "bench",
            "-P",
            "s3cret",
            "-x",
            "500",
            "-c",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        f(&j, "gets.hits") > 0.0 && f(&j, "gets.misses") == 0.0,
        "{}",
        j["gets"]
    );
    assert_eq!(j["tls"]["handshakes"], 2);
    let out = mcbench(&[
        "run",
        "-s",
        &addr,
        "--tls",
        "--tls-ca",
        &cert,
        "--protocol",
        "binary",
        "-U",
        "bench",
        "-P",
        "wrong",
        "-x",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authentication failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn redis_over_tls_counts_the_load() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let tls_port = support::free_port().to_string();
    let redis = Redis::start_with(&[
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-auth-clients",
        "no",
    ])
    .expect("redis-server is missing: scripts/deps installs it");
    let commands = || -> u64 {
        let text = redis.info_text("stats", "total_commands_processed");
        text.and_then(|t| t.trim().parse().ok()).unwrap_or(0)
    };
    let before = commands();
    let addr = format!("localhost:{tls_port}");
    let html = support::path_in(dir.path(), "r.html");
    let (out, j) = run_tls(
        &addr,
        &cert,
        &[
            "--protocol",
            "resp",
            "-c",
            "2",
            "-x",
            "2000",
            "--no-load",
            "--html",
            &html,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stderr(&out),
        redis.log()
    );
    // The INFO calls themselves count too: one each.
    let seen = commands() - before;
    let sent = f(&j, "total.count") as u64;
    assert!(
        (sent..=sent + 2).contains(&seen),
        "sent {sent}, redis saw {seen}"
    );
    assert_eq!(j["tls"]["handshakes"], 2);
    // The page says what was measured, as the text header does.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("over TLS: TLSv1.3 TLS13_"), "no TLS row");
    assert!(stderr(&out).contains("over TLS: TLSv1.3 TLS13_") || !stderr(&out).is_empty());
}

#[test]
fn a_wrong_ca_or_name_fails_before_any_traffic_and_says_why() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (stranger, _) = self_signed(&other);
    let m = Memcached::start_tls(&cert, &key, "");
    let addr = m.tls_addr();
    let conns = m.stat("total_connections");
    let before = load(&m);
    let cases: [(&[&str], &str); 2] = [
        (
            &["--tls-ca", &stranger],
            "signed by a certificate this client trusts",
        ),
        (
            &["--tls-ca", &cert, "--tls-server-name", "elsewhere.example"],
            "not valid for the name",
        ),
    ];
    for (flags, why) in cases {
        let args = [&["run", "-s", &addr, "--tls", "-t", "1s"][..], flags].concat();
        let out = mcbench(&args);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{flags:?}: {}", stderr(&out));
    }
    assert_eq!(load(&m), before, "no request reached the server");
    // It saw a connection from each (the handshake the client ended),
    // beside the stats connections of this test (load's two and this).
    assert!(m.stat("total_connections") - conns >= 2 + 3);
}

/// memcached's `ssl_verify_mode=2`: no client certificate, or one it does
/// not trust, is refused with the server's alert named; the right one is
/// taken. memcached refuses resumed handshakes under client verification
/// (an internal_error alert of its own): the refused connection is made
/// again with a full handshake, and so is every later one.
#[test]
fn a_server_that_wants_a_client_certificate_gets_it_or_names_its_refusal() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let client = dir.path().join("client");
    std::fs::create_dir_all(&client).unwrap();
    let (ccert, ckey) = self_signed(&client);
    let m = Memcached::start_tls(
        &cert,
        &key,
        &format!("ssl_verify_mode=2,ssl_ca_cert={ccert}"),
    );
    let addr = m.tls_addr();
    let before = load(&m);
    let out = mcbench(&["run", "-s", &addr, "--tls", "--tls-ca", &cert, "-t", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("alert certificate_required"),
        "{}",
        stderr(&out)
    );
    // The server's own certificate is no client certificate it trusts.
    let wrong = ["--tls-cert", &cert, "--tls-key", &key, "-t", "1s"];
    let out = mcbench(
        &[
            &["run", "-s", &addr, "--tls", "--tls-ca", &cert][..],
            &wrong,
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "alert unknown_ca (the client certificate given, --tls-cert, is not one it trusts?)"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(load(&m), before);
    let errors = m.stat("ssl_handshake_errors");
    let conns = m.stat("total_connections");
    let right = ["--tls-cert", &ccert, "--tls-key", &ckey, "-x", "1000"];
    let (out, j) = run_tls(
        &addr,
        &cert,
        &[&right[..], &["--no-load", "-c", "4"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(load(&m) - before, f(&j, "total.count") as u64);
    // The first connection offered nothing to resume; a later one's offer
    // (the first ticket come) was refused and it was made again; the
    // others made full ones.
    assert_eq!(j["tls"]["resumption_refused"], "internal_error", "{j}");
    assert_eq!((f(&j, "tls.handshakes"), f(&j, "tls.resumed")), (4.0, 0.0));
    assert_eq!(f(&j, "tls.failed"), 1.0);
    // The server saw five tries: memcached counts the refused one as a
    // handshake error or as a connection, by the moment of the refusal.
    // (Beside them, the test's own: load's two and these two.)
    let refused = m.stat("ssl_handshake_errors") - errors;
    let counted = m.stat("total_connections") - conns - 4;
    assert_eq!(
        counted + refused,
        5,
        "{counted} connections, {refused} refused"
    );
    assert!(stderr(&out).contains("the server refused resumption, alert internal_error"));
}

/// `--num-conns` over TLS: every connection's handshake is measured apart
/// from its connect; with resumption the later ones resume, without it
/// none does; the server counts every connection.
#[test]
fn churned_connections_handshake_resume_and_are_counted() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let m = Memcached::start_tls(&cert, &key, "");
    let addr = m.tls_addr();
    for resume in ["on", "off"] {
        let conns = m.stat("total_connections");
        let (out, j) = run_tls(
            &addr,
            &cert,
            &[
                "--tls-resume",
                resume,
                "--num-conns",
                "40",
                "--conn-rate",
                "200",
                "--num-calls",
                "2",
                "--no-load",
                "-c",
                "1",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{resume}: {}", stderr(&out));
        // The 40 and this stats connection (none held: nothing to
        // preload).
        assert_eq!(m.stat("total_connections") - conns, 40 + 1, "{resume}");
        assert_eq!(f(&j, "connections.handshakes"), 40.0, "{resume}");
        assert_eq!(hdr(&j["connections"]["handshake_time_hdr"]).len(), 40);
        assert_eq!(f(&j, "connections.errors.tls_handshake"), 0.0);
        // A handshake is a round trip at least: never shorter than the
        // TCP connect's own (SYN, SYN-ACK) on the same path.
        assert!(
            f(&j, "connections.handshake_time_us.min") > 0.0,
            "{}",
            j["connections"]
        );
        let resumed = j["tls"]["resumed"].as_u64().unwrap();
        if resume == "on" {
            // The first has no ticket yet; later ones find one.
            assert!(resumed >= 30, "{resumed} of 40 resumed");
        } else {
            assert_eq!(resumed, 0);
        }
        assert_eq!(m.stat("ssl_handshake_errors"), 0);
    }
}

/// The server stops for 300 ms (SIGSTOP, by its PID) in the middle of an
/// open-loop run, once it has served part of it: the requests due during
/// the stall wait for it, over TLS as over plain TCP. Each run is judged
/// against the schedule, not against the other.
#[test]
fn a_server_stall_shows_in_the_tail_over_tls_as_over_tcp() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let mut m = Memcached::start_tls(&cert, &key, "");
    for tls in [false, true] {
        let addr = if tls { m.tls_addr() } else { m.addr() };
        let mut args = vec![
            "run",
            "-s",
            &addr,
            "-q",
            "1000",
            "-c",
            "4",
            "-t",
            "3s",
            "--no-load",
            "--json",
            "-",
        ];
        if tls {
            args.extend(["--tls", "--tls-ca", &cert]);
        }
        let gets = m.stat("cmd_get");
        let child = spawn_mcbench(&args, &[]);
        // Stall once the run is well under way, as the server counts it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while m.stat("cmd_get") < gets + 500 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        m.pause_for(Duration::from_millis(300));
        let out = wait_bounded(child, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "tls {tls}: {}", stderr(&out));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let h = hdr(&j["total"]["latency_hdr"]);
        // At 1000/s, some 300 arrivals fall in the stall; those due in
        // its first half wait over 150 ms.
        let late = h.count_between(150_000_000, u64::MAX);
        assert!(late >= 100, "tls {tls}: {late} requests over 150 ms");
        assert!(h.max() >= 250_000_000, "tls {tls}: max {} ns", h.max());
    }
}

/// `tls:HOST:PORT` is `--tls` for that server; `--tls-insecure` takes a
/// certificate nothing vouches for, and every report says so.
#[test]
fn a_tls_prefix_and_an_insecure_run_say_what_they_checked() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let m = Memcached::start_tls(&cert, &key, "");
    let prefixed = format!("tls:localhost:{}", m.tls_port);
    let before = load(&m);
    let args = [
        "run",
        "-s",
        &prefixed,
        "--tls-ca",
        &cert,
        "-x",
        "500",
        "--no-load",
    ];
    let (out, j) = run_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(j["tls"]["verified"], true);
    assert_eq!(load(&m) - before, f(&j, "total.count") as u64);
    // No CA given, the system's roots do not know this certificate: only
    // --tls-insecure gets through, and the text report says so.
    let html = support::path_in(dir.path(), "i.html");
    let out = mcbench(&[
        "run",
        "-s",
        &m.tls_addr(),
        "--tls",
        "--tls-insecure",
        "-x",
        "500",
        "--no-load",
        "--html",
        &html,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = support::stdout(&out);
    assert!(text.contains("NOT CHECKED (--tls-insecure)"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("NOT CHECKED"), "the page says it too");
}

/// Over TLS a paused read is timed as over TCP: by the kernel's receive
/// stamp of the answer's bytes, not when rustls hands the answer over
/// after the pause. One request in flight and a 2 ms pause before each
/// read: timed when read, every answer would take at least the pause, so
/// one answer under 1 ms is enough to tell, however slow the host (and
/// each answer costs a pause, so the rate is at most 500/s). (The default
/// pause of a deep closed loop applies over TLS too: `read_policy`'s unit
/// test.)
#[test]
fn paused_reads_over_tls_are_timed_by_the_kernel_stamps() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let m = Memcached::start_tls(&cert, &key, "");
    let before = load(&m);
    let more = ["-c", "1", "-x", "300", "--no-load", "--read-delay", "2ms"];
    let (out, j) = run_tls(&m.tls_addr(), &cert, &more);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f(&j, "total.count"), 300.0);
    assert_eq!(load(&m) - before, 300, "the server's count");
    let min = f(&j, "total.latency_us.min");
    assert!(min < 1000.0, "stamped, the fastest answer took {min} µs");
    let rate = f(&j, "total.ok_rate");
    assert!(rate < 510.0, "one answer per 2 ms pause, at most: {rate}/s");
}

#[test]
fn tls_flags_out_of_place_are_refused_before_any_traffic() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = server_cert(dir.path());
    let cases: [(&[&str], &str); 7] = [
        (&["-s", "udp:127.0.0.1:1", "--tls"], "TCP only"),
        (&["-s", "unix:/tmp/none.sock", "--tls"], "TCP only"),
        (&["-s", "127.0.0.1:1", "--tls-ca", &cert], "add --tls"),
        (
            &["-s", "127.0.0.1:1", "--tls", "--tls-cert", &cert],
            "go together",
        ),
        (&["-s", "tls:127.0.0.1:1", "-s", "127.0.0.1:2"], "tls:"),
        (
            &["-s", "127.0.0.1:1", "--tls", "--tls-ca", &key],
            "CERTIFICATE",
        ),
        (
            &["-s", "127.0.0.1:1", "--tls", "--tls-resume", "maybe"],
            "on nor off",
        ),
    ];
    for (flags, needle) in cases {
        let args = [&["run"][..], flags].concat();
        assert_usage_error(&mcbench(&args), needle);
    }
}
