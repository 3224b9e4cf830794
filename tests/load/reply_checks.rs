//! Replies are checked against their requests: a server that answers with
//! another key's value, a key asked once twice, the previous request's
//! answer, a binary frame with another opaque, or a value cut short is
//! caught (a `protocol` error that closes the connection, or under
//! `--verify` a `verify_failed`), never counted as a hit.
//!
//! The judge is a scripted server that stores what it is sent and lies in
//! one known way: what it sent is known exactly.

use crate::support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use support::*;

/// How the scripted server lies to a retrieval.
#[derive(Clone, Copy, PartialEq)]
enum Lie {
    /// The truth: a control for the others.
    None,
    /// Each hit is sent under another key's name.
    OtherKey,
    /// Each hit is sent twice.
    Twice,
    /// Each get is answered with the previous get's answer.
    Previous,
    /// Each hit's data is the stored value cut by its last byte (the
    /// header says the shorter length: well formed, but wrong).
    Short,
}

/// What the scripted server sent: lies told, and hits in all.
#[derive(Default)]
struct Told {
    lies: AtomicU64,
    hits: AtomicU64,
}

/// A text-protocol server that stores sets and answers gets with `lie`.
fn lying_server(lie: Lie) -> (String, Arc<Told>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let told = Arc::new(Told::default());
    let counts = told.clone();
    thread::spawn(move || {
        let store = Arc::new(std::sync::Mutex::new(HashMap::new()));
        for stream in listener.incoming().flatten() {
            let (store, counts) = (store.clone(), counts.clone());
            thread::spawn(move || serve_ascii(stream, lie, &store, &counts));
        }
    });
    (addr, told)
}

type Store = std::sync::Mutex<HashMap<String, Vec<u8>>>;

fn serve_ascii(stream: TcpStream, lie: Lie, store: &Store, told: &Told) {
    let _ = stream.set_nodelay(true);
    let mut out = stream.try_clone().unwrap();
    let mut input = BufReader::new(stream);
    let mut previous = b"END\r\n".to_vec();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["set", key, _, _, len, rest @ ..] => {
                let mut data = vec![0; len.parse::<usize>().unwrap() + 2];
                if input.read_exact(&mut data).is_err() {
                    return;
                }
                data.truncate(data.len() - 2);
                store.lock().unwrap().insert(key.to_string(), data);
                if rest.contains(&"noreply") {
                    continue;
                }
                b"STORED\r\n".to_vec()
            }
            ["get" | "gets", keys @ ..] => {
                let truth = answer(keys, Lie::None, store, told);
                let reply = match lie {
                    Lie::Previous => std::mem::replace(&mut previous, truth),
                    _ => answer(keys, lie, store, told),
                };
                if reply != truth_of(keys, store) {
                    told.lies.fetch_add(1, Ordering::Relaxed);
                }
                reply
            }
            ["version"] => b"VERSION 1.6.0\r\n".to_vec(),
            _ => b"ERROR\r\n".to_vec(),
        };
        if out.write_all(&reply).is_err() {
            return;
        }
    }
}

/// The true answer to a get of `keys`.
fn truth_of(keys: &[&str], store: &Store) -> Vec<u8> {
    answer(keys, Lie::None, store, &Told::default())
}

/// A get's answer, told with `lie`; counts the hits.
fn answer(keys: &[&str], lie: Lie, store: &Store, told: &Told) -> Vec<u8> {
    let store = store.lock().unwrap();
    let mut reply = Vec::new();
    for key in keys {
        let Some(data) = store.get(*key) else {
            continue;
        };
        if lie == Lie::None {
            told.hits.fetch_add(1, Ordering::Relaxed);
        }
        let (name, data) = match lie {
            Lie::OtherKey => (format!("{key}x"), &data[..]),
            Lie::Short if !data.is_empty() => (key.to_string(), &data[..data.len() - 1]),
            _ => (key.to_string(), &data[..]),
        };
        let copies = if lie == Lie::Twice { 2 } else { 1 };
        for _ in 0..copies {
            reply.extend_from_slice(format!("VALUE {name} 0 {}\r\n", data.len()).as_bytes());
            reply.extend_from_slice(data);
            reply.extend_from_slice(b"\r\n");
        }
    }
    reply.extend_from_slice(b"END\r\n");
    reply
}

/// Hits counted over every op.
fn hits(j: &serde_json::Value) -> f64 {
    let ops = j["ops"].as_object().expect("ops");
    ops.values().filter_map(|op| op["hits"].as_f64()).sum()
}

/// A short run against `addr`: a small key space, preloaded, then gets
/// and sets on 2 connections; `extra` flags after.
fn run_against(addr: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec![
        "run",
        "-s",
        addr,
        "-t",
        "1s",
        "-c",
        "2",
        "-r",
        "50",
        "--value-size",
        "20",
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn the_truth_passes_every_check() {
    let _machine = shared_machine();
    let (addr, told) = lying_server(Lie::None);
    let (out, j) = run_against(&addr, &["--multiget", "3", "--verify", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f(&j, "errors.protocol"), 0.0, "{}", j["errors"]);
    assert_eq!(f(&j, "checks.verify_failed"), 0.0, "{}", j["checks"]);
    assert!(told.hits.load(Ordering::Relaxed) > 0);
    assert_eq!(told.lies.load(Ordering::Relaxed), 0);
    assert!(hits(&j) > 0.0, "{}", j["ops"]);
}

/// Each lie that names the wrong keys closes the connection as a protocol
/// error, and none of its values is counted as a hit.
#[test]
fn values_for_keys_not_asked_are_protocol_errors() {
    let _machine = shared_machine();
    for (lie, extra) in [
        (Lie::OtherKey, &[][..]),
        (Lie::Twice, &[][..]),
        (Lie::Previous, &[][..]),
        (Lie::OtherKey, &["--multiget", "3"][..]),
        (Lie::Twice, &["--multiget", "3"][..]),
    ] {
        let (addr, told) = lying_server(lie);
        let (out, j) = run_against(&addr, extra);
        let lies = told.lies.load(Ordering::Relaxed) as f64;
        assert!(lies > 0.0, "{extra:?}: the server told no lie");
        let protocol = f(&j, "errors.protocol");
        assert!(protocol >= 1.0, "{extra:?}: {}", j["errors"]);
        // A lie is answered by closing: no more lies were read than
        // connections were lost (each reopened one may be lied to once).
        assert!(
            protocol <= f(&j, "connections.lost"),
            "{extra:?}: {} {}",
            j["errors"],
            j["connections"]
        );
        assert_eq!(
            hits(&j),
            0.0,
            "{extra:?}: a lie was counted as a hit: {}",
            j["ops"]
        );
        assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

/// A value cut short, with a header that says so, is well formed: under
/// `--verify` it is a `verify_failed`, and the run fails.
#[test]
fn a_value_cut_short_fails_verification() {
    let _machine = shared_machine();
    let (addr, told) = lying_server(Lie::Short);
    let (out, j) = run_against(&addr, &["--verify", "1"]);
    assert!(told.lies.load(Ordering::Relaxed) > 0);
    assert_eq!(f(&j, "errors.protocol"), 0.0, "{}", j["errors"]);
    assert!(f(&j, "checks.verified") > 0.0, "{}", j["checks"]);
    assert_eq!(
        f(&j, "checks.verify_failed"),
        f(&j, "checks.verified"),
        "{}",
        j["checks"]
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn the_value_limit_admits_what_servers_legitimately_return() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // incr lengthens 1-byte digit values; binary incr answers 8 bytes.
    for protocol in ["ascii", "binary", "meta"] {
        let (out, j) = run_json(&[
            "run",
            "-s",
            &m.addr(),
            "--protocol",
            protocol,
            "-V",
            "1",
            "-r",
            "5",
            "--mix",
            "get=1,incr=1",
            "--delta",
            "1000",
            "-x",
            "400",
            "-c",
            "1",
        ]);
        assert!(out.status.success(), "{protocol}: {}", stderr(&out));
        assert_eq!(f(&j, "errors.protocol"), 0.0, "{protocol}: {}", j["errors"]);
        assert!(
            f(&j, "responses.num") > 100.0,
            "{protocol}: {}",
            j["responses"]
        );
    }
    // Without a preload the keys may hold larger values other runs wrote.
    let load = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "50",
        "-V",
        "5000",
    ]);
    assert!(load.status.success(), "{}", stderr(&load));
    let (_, j) = run_ok(
        &m.addr(),
        &["--no-load", "-r", "50", "-V", "10", "-u", "0", "-x", "200"],
    );
    assert_eq!(f(&j, "errors.protocol"), 0.0, "{}", j["errors"]);
    assert_eq!(f(&j, "gets.hits"), 200.0);
}
