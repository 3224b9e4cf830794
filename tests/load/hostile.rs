//! Servers that stop answering, refuse every request or answer nothing
//! useful: every phase ends within `--timeout` of its last progress, with
//! exit 1, a message naming the phase and the server, and the counts so
//! far; error replies never pass for throughput.

use crate::support;

use support::*;

/// The three phases that refill only when answers come.
const PHASES: [(&str, &[&str]); 3] = [
    ("preload", &["-t", "1s"]),
    ("preload (--load-only)", &["--load-only"]),
    ("measured run", &["--no-load", "-x", "100"]),
];

fn assert_stall_ends(addr: &str, reconnect: bool) {
    for (phase, flags) in PHASES {
        let mut args = vec!["run", "-s", addr, "--timeout", "1s", "-r", "100", "-c", "2"];
        args.extend(flags);
        if reconnect {
            args.push("-R");
        }
        // When it ends (exactly `--timeout` after the last progress) is
        // tested on the worker's manual clock (src/engine/worker/tests/
        // stall.rs); here, that it ends, how, and with what report.
        let (out, j) = run_json(&args);
        assert_eq!(out.status.code(), Some(1), "{phase}: {}", stderr(&out));
        let why = format!("{phase}: no answer from {addr}");
        assert!(stderr(&out).contains(&why), "{phase}: {}", stderr(&out));
        // The report is there, failed, with its counts.
        assert_eq!(j["completed"], false);
        assert!(j["failure"].as_str().unwrap().contains(&why));
        assert_eq!(f(&j, "total.count"), 0.0);
        assert!(stdout(&out).is_empty() || !stdout(&out).contains("kept up"));
    }
}

#[test]
fn a_listener_that_never_accepts_ends_every_phase() {
    let _machine = shared_machine();
    let (_listener, addr) = silent_listener();
    assert_stall_ends(&addr, false);
    assert_stall_ends(&addr, true);
}

#[test]
fn a_server_that_reads_and_never_answers_ends_every_phase() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::Stall);
    assert_stall_ends(&addr, false);
    assert_stall_ends(&addr, true);
}

#[test]
fn a_server_that_dribbles_half_an_answer_ends_every_phase() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::Dribble);
    assert_stall_ends(&addr, false);
    assert_stall_ends(&addr, true);
}

#[test]
fn a_server_that_refuses_everything_fails_the_run() {
    let _machine = shared_machine();
    // memcached -Y asks for authentication; no credentials are given.
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth");
    std::fs::write(&auth, "bench:secret\n").unwrap();
    let m = Memcached::start(&["-Y", auth.to_str().unwrap()]);
    // The preload is refused: a failed run, nothing measured.
    let (out, j) = run_json(&["run", "-s", &m.addr(), "-t", "1s", "-r", "100"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    // It stops once the failure is certain: past 1 of the 100 sets.
    assert!(text.contains("preload: stopped once"), "{text}");
    assert!(text.contains("of its 100 sets had failed"), "{text}");
    assert!(
        !text.contains("kept up") && !text.contains("keys preloaded"),
        "{text}"
    );
    assert_eq!(f(&j, "total.count"), 0.0);
    // Without the preload every request is refused: ok/s is 0, not the rate.
    let (out, j) = run_json(&["run", "-s", &m.addr(), "-t", "1s", "--no-load"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--user and --password"),
        "{}",
        stderr(&out)
    );
    assert!(f(&j, "total.count") > 100.0);
    assert_eq!(f(&j, "total.ok_rate"), 0.0);
    assert!(f(&j, "total.error_rate") > 100.0);
    // Gets are refused as unauthenticated, sets as client errors: all fail.
    assert_eq!(f(&j, "total.errors"), f(&j, "total.count"));
    assert!(f(&j, "errors.auth") > 0.0);
}

#[test]
fn a_value_longer_than_any_the_run_stores_is_a_protocol_error() {
    let _machine = shared_machine();
    // The flood's header claims a 900 MB value; the run stores at most
    // 1 MB. Before, each connection's budget (1000 keys × 1 MB) let one
    // server grow the client to 2 GB.
    let addr = fake_server(Misbehaviour::Flood);
    let (out, j) = run_json(&[
        "run",
        "-s",
        &addr,
        "-t",
        "2s",
        "-c",
        "2",
        "--multiget",
        "1000",
        "-V",
        "1000000",
        "-u",
        "0",
        "--no-load",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(f(&j, "errors.protocol"), 2.0, "{}", j["errors"]);
    assert!(f(&j, "client.peak_rss_bytes") < 100e6, "{}", j["client"]);
}

/// A UDP server whose every reply announces 65,535 datagrams and sends
/// one: the header is refused (a real reply has at most 1,024), so the
/// datagrams counted lost never exceed the requests sent.
#[test]
fn a_udp_header_cannot_inflate_the_drop_count() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, peer)) = socket.recv_from(&mut buf) {
            if n >= 8 {
                let mut d = vec![buf[0], buf[1], 0, 0, 0xff, 0xff, 0, 0];
                d.extend_from_slice(b"VALUE k 0 5\r\nhe");
                let _ = socket.send_to(&d, peer);
            }
        }
    });
    let server = format!("udp:{addr}");
    let (out, j) = run_json(&[
        "run",
        "-s",
        &server,
        "--no-load",
        "-u",
        "0",
        "-x",
        "4",
        "-c",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(count(&j, "errors.packet_drop") <= 4, "{}", j["errors"]);
    assert_eq!(count(&j, "errors.udp_timeout"), 4, "{}", j["errors"]);
}

/// A timeout shorter than a connect on loopback would call every server
/// unreachable: refused before any traffic.
#[test]
fn a_timeout_below_a_millisecond_is_refused() {
    let out = mcbench(&["run", "-s", "127.0.0.1:1", "--timeout", "1ns"]);
    assert_usage_error(&out, "(or --timeout) must be at least 1 ms");
}

/// A server that refuses every set (`SERVER_ERROR out of memory`): the
/// preload fails once 1 % of its sets have, and stops there rather than
/// send every one. The server counts what it was sent.
#[test]
fn a_preload_stops_once_its_failure_is_certain() {
    use std::io::{BufRead, BufReader, Read as _, Write as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    let _machine = shared_machine();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let sets = std::sync::Arc::new(AtomicU64::new(0));
    let counted = sets.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut out = stream.try_clone().unwrap();
                let mut input = BufReader::new(stream);
                let mut line = String::new();
                while input.read_line(&mut line).unwrap_or(0) > 0 {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    let reply: &[u8] = match words.as_slice() {
                        ["set", _, _, _, len, ..] => {
                            let mut data = vec![0; len.parse::<usize>().unwrap() + 2];
                            if input.read_exact(&mut data).is_err() {
                                return;
                            }
                            counted.fetch_add(1, Ordering::Relaxed);
                            b"SERVER_ERROR out of memory storing object\r\n"
                        }
                        ["get", ..] => b"END\r\n",
                        _ => b"ERROR\r\n",
                    };
                    line.clear();
                    if out.write_all(reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let (out, _) = run_json(&["run", "-s", &addr, "-r", "100000", "-t", "1s", "-c", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("preload: stopped once"),
        "{}",
        stderr(&out)
    );
    // 1 % of 100,000 is 1,000; what was in flight then comes on top.
    let sent = sets.load(Ordering::Relaxed);
    assert!((1_001..5_000).contains(&sent), "{sent} sets sent");
}
