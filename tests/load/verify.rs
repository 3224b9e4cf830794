//! memaslap's checks against a real memcached: values this run stored
//! check out, another client's writes and a flush behind mcbench's back
//! are caught, and short expiries hit before and miss after.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::tools::*;
use support::*;

/// Sends `command` to the server over and over until `stop`, reading each
/// answer: another client, behind mcbench's back.
fn meddle(addr: String, command: Vec<u8>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut buf = [0u8; 256];
        let mut sent = 0;
        while !stop.load(Ordering::Relaxed) {
            s.write_all(&command).unwrap();
            let _ = s.read(&mut buf).unwrap();
            sent += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        sent
    })
}

#[test]
fn values_this_run_stored_check_out() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (out, j) = run_ok(
        &m.addr(),
        &[
            "-t",
            "1s",
            "-r",
            "500",
            "-u",
            "0.3",
            "--verify",
            "1",
            "-V",
            "uniform:1,3000",
            "-d",
            "4",
        ],
    );
    let c = &j["checks"];
    // Every get hit (preloaded, by the server's count) and was checked;
    // none failed.
    assert_eq!(f(c, "verified"), m.stat("get_hits") as f64, "{c}");
    assert!(f(c, "verified") > 1000.0, "{c}");
    assert_eq!(f(c, "verify_failed") + f(c, "verify_misses"), 0.0, "{c}");
    assert!(!stderr(&out).contains("CHECKS FAILED"), "{}", stderr(&out));
    // Over the binary protocol and UDP too.
    let addr = m.addr();
    for extra in [&["--protocol", "binary"][..], &["--protocol", "meta"][..]] {
        let mut args = vec![
            "run", "-s", &addr, "-t", "0.5s", "-r", "200", "--verify", "1",
        ];
        args.extend(extra);
        let (out, j) = run_json(&args);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stderr(&out));
        assert!(f(&j, "checks.verified") > 100.0, "{extra:?}");
        assert_eq!(
            f(&j, "checks.verify_failed"),
            0.0,
            "{extra:?}: {}",
            j["checks"]
        );
    }
    let udp = Memcached::start_udp();
    let (_, j) = run_ok(
        &udp.addr(),
        &["--udp", "-t", "0.5s", "-r", "200", "--verify", "1"],
    );
    assert!(f(&j, "checks.verified") > 100.0);
    assert_eq!(f(&j, "checks.verify_failed"), 0.0, "{}", j["checks"]);
}

#[test]
fn a_value_overwritten_by_another_client_fails_verification() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // Keys of 30 bytes, as mcbench makes them: key 3 of a 10-key space.
    let key = "mcb:00000000000000000000000003";
    let value = "x".repeat(200);
    let set = format!("set {key} 0 0 200\r\n{value}\r\n").into_bytes();
    let stop = Arc::new(AtomicBool::new(false));
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-t",
            "1.5s",
            "-r",
            "10",
            "-u",
            "0",
            "-c",
            "1",
            "--verify",
            "1",
            "--verbose",
            "--json",
            "-",
        ],
        &[],
    );
    // After the preload (10 keys: well under the first 300 ms).
    std::thread::sleep(Duration::from_millis(300));
    let meddler = meddle(m.addr(), set, stop.clone());
    let out = wait_bounded(child, Duration::from_secs(20));
    // Failed checks fail the run (exit 1), its report written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    stop.store(true, Ordering::Relaxed);
    assert!(meddler.join().unwrap() > 10);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &j["checks"];
    assert!(f(c, "verify_failed") > 0.0, "{c}");
    // Only that key failed: the others still check out.
    let examples = c["examples"].as_array().unwrap();
    assert!(!examples.is_empty());
    for e in examples {
        let e = e.as_str().unwrap();
        assert!(
            e.starts_with(&format!("verify_failed: {key}: expected 200 B")),
            "{e}"
        );
        assert!(e.contains("got 200 B \"xxxxxxxx"), "{e}");
    }
    // One key of ten: the failed share stays near a tenth, whenever the
    // meddling began.
    assert!(f(c, "verified") > 4.0 * f(c, "verify_failed"), "{c}");
    let text = stderr(&out);
    assert!(text.contains("CHECKS FAILED"), "{text}");
    assert!(text.contains(&format!("  verify_failed: {key}")), "{text}");
}

#[test]
fn a_flush_behind_mcbenchs_back_is_caught_as_misses() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let stop = Arc::new(AtomicBool::new(false));
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-t",
            "1.5s",
            "-r",
            "100",
            "-u",
            "0.1",
            "--verify",
            "1",
            "--exp-verify",
            "0.2",
            "--json",
            "-",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(400));
    let flusher = meddle(m.addr(), b"flush_all\r\n".to_vec(), stop.clone());
    let out = wait_bounded(child, Duration::from_secs(20));
    // Failed checks fail the run (exit 1), its report written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    stop.store(true, Ordering::Relaxed);
    flusher.join().unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &j["checks"];
    assert!(f(c, "verify_misses") > 0.0, "{c}");
    assert!(f(c, "unexpired_unget") > 0.0, "{c}");
    assert_eq!(f(c, "expired_get"), 0.0, "{c}");
}

/// `t` of 2000 ops/s with 30 % of sets expiring in 2 s, against a
/// scripted `server` with nothing preloaded.
fn expiring_run(server: &str, t: &str) -> (std::process::Output, serde_json::Value) {
    run_json(&[
        "run",
        "-s",
        server,
        "-t",
        t,
        "-q",
        "2000",
        "-u",
        "0.2",
        "--exp-verify",
        "0.3",
        "--no-load",
    ])
}

#[test]
fn short_expiries_hit_before_and_miss_after_without_false_alarms() {
    // memcached's clock is a 1 s timer of its main thread: on a loaded
    // machine it runs late, and an item set then expires early by as much
    // (a run beside the other tests once saw 16 of ~1,500 checked keys miss
    // just inside `CLOCK_SLACK_NS`). The run has the machine to itself.
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("memcached.log");
    let m = Memcached::start_logged(&[], &log);
    // 2 s expiries (the default) over 6 s: keys are read back before and
    // after theirs.
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-t",
            "6s",
            "-q",
            "2000",
            "-u",
            "0.2",
            "--exp-verify",
            "0.3",
            "--verify",
            "1",
        ],
    );
    let c = &j["checks"];
    // By the server's log, 30 % of the run's sets (after the preload's),
    // all run long, expire in 2 s.
    let preload = count(&j, "spec.keys") as usize;
    for share in expiring_share(&logged_sets(&log)[preload..], 2) {
        assert!((share - 0.3).abs() < 0.01, "{share}");
    }
    // The server saw gets of them after their expiry.
    assert!(m.stat("get_expired") > 0);
    assert!(f(c, "exp_checked") > 500.0, "{c}");
    assert_eq!(f(c, "expired_get"), 0.0, "{c}");
    assert_eq!(f(c, "unexpired_unget"), 0.0, "{c}");
    assert_eq!(f(c, "verify_failed"), 0.0, "{c}");
    // Expiring keys are apart from the key space: their misses are no
    // verify_misses, and every other key stayed.
    assert_eq!(f(c, "verify_misses"), 0.0, "{c}");
    // The server saw expiring keys expire: gets of them missed.
    assert!(f(&j, "gets.misses") > 0.0);
    // A server that keeps what should have expired is caught.
    let (out, j) = expiring_run(&fake_server(Misbehaviour::NeverForgets), "4s");
    // Failed checks fail the run, though every request was answered.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let c = &j["checks"];
    assert!(f(c, "expired_get") > 100.0, "{c}");
    assert_eq!(f(c, "unexpired_unget"), 0.0, "{c}");
    // And one that forgets at once.
    let forgetful = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let (out, j) = expiring_run(&forgetful, "1s");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--tolerate-check-failures"),
        "{}",
        stderr(&out)
    );
    let c = &j["checks"];
    assert!(f(c, "unexpired_unget") > 100.0, "{c}");
    assert_eq!(f(c, "expired_get"), 0.0, "{c}");
    // Asked to, they are a warning only.
    let out = mcbench(&[
        "run",
        "-s",
        &forgetful,
        "-x",
        "500",
        "--exp-verify",
        "0.3",
        "--no-load",
        "--tolerate-check-failures",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("CHECKS FAILED"), "{}", stdout(&out));
}

#[test]
fn checks_that_cannot_work_are_refused() {
    for (args, needle) in [
        (&["--verify", "1.5"][..], "--verify is a share"),
        (&["--verify", "1", "--mix", "get=9,append=1"][..], "append"),
        (&["--verify", "1", "--mix", "set=1"][..], "no get"),
        (
            &["--exp-verify", "0.1", "--mix", "get=1"][..],
            "both set and get",
        ),
        (&["--verbose"][..], "--verbose"),
    ] {
        let mut all = vec!["run", "-s", "127.0.0.1:1", "-t", "1s"];
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}

/// The sets a memcached `-vv` log records, in the order it read them:
/// each one's key and expiry.
fn logged_sets(log: &Path) -> Vec<(String, u64)> {
    let text = String::from_utf8_lossy(&std::fs::read(log).unwrap()).into_owned();
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 6 && w[0].starts_with('<') && w[1] == "set")
                .then(|| (w[2].to_string(), w[4].parse().unwrap()))
        })
        .collect()
}

/// The share of `sets` that carry an expiry, each of them `ttl`; and the
/// same share in each half of the run.
fn expiring_share(sets: &[(String, u64)], ttl: u64) -> [f64; 3] {
    let share = |s: &[(String, u64)]| {
        for (key, exp) in s {
            assert!(*exp == 0 || *exp == ttl, "{key} expires in {exp} s");
        }
        s.iter().filter(|(_, e)| *e > 0).count() as f64 / s.len().max(1) as f64
    };
    let half = sets.len() / 2;
    [share(sets), share(&sets[..half]), share(&sets[half..])]
}

/// memaslap's `-v 0.2 -e 0.05 -b` line (memaslap(1)). By the server's own
/// log, 5 % of the sets, all run long, carry memaslap's 60 s expiry, each
/// on a key of its own. With nothing behind its back no check fails and
/// no get misses at the server; after flushes behind its back, the task
/// window's lost keys are verify_misses and the expiring ones
/// unexpired_unget, each detailed (-b) and none more than the server's
/// own misses.
#[test]
fn memaslap_verify_line_expires_its_share_and_catches_lost_keys() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("memcached.log");
    let m = Memcached::start_logged(&[], &log);
    let args = line(
        "-s 127.0.0.1:11211 -t 2m -v 0.2 -e 0.05 -b",
        &[("127.0.0.1:11211", &m.addr())],
    );
    // -t 2m cut at 5 s: enough sets on a loaded machine for the share.
    let out = run_tool_capped(dir.path(), "memaslap", &args, 5);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let sets = logged_sets(&log);
    assert_eq!(sets.len() as u64, m.stat("cmd_set"));
    assert!(sets.len() > 1000, "{}", sets.len());
    // memaslap expires a connection's first set (its share rounds up per
    // connection): each of the 16 adds up to one set to a half's share.
    let slack = 0.01 + 16.0 / (sets.len() / 2) as f64;
    for share in expiring_share(&sets, 60) {
        assert!(
            (share - 0.05).abs() < slack,
            "{share} of {} sets",
            sets.len()
        );
    }
    let expiring: Vec<&String> = sets
        .iter()
        .filter(|(_, e)| *e > 0)
        .map(|(k, _)| k)
        .collect();
    let distinct: std::collections::HashSet<_> = expiring.iter().collect();
    assert_eq!(
        distinct.len(),
        expiring.len(),
        "each expiring set has a key of its own"
    );
    for name in [
        "verify_misses: ",
        "verify_failed: ",
        "expired_get: ",
        "unexpired_unget: ",
    ] {
        assert_eq!(field(&text, name), 0, "{name}\n{text}");
    }
    assert_eq!(m.stat("get_misses"), 0);
    assert_eq!(field(&text, "get_misses: "), 0);

    // Flushes behind its back.
    let misses0 = m.stat("get_misses");
    let stop = Arc::new(AtomicBool::new(false));
    let flusher = {
        let (addr, stop) = (m.addr(), stop.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            let flushes = meddle(addr, b"flush_all\r\n".to_vec(), stop.clone());
            flushes.join().unwrap()
        })
    };
    let out = run_tool(dir.path(), "memaslap", &args);
    stop.store(true, Ordering::Relaxed);
    assert!(flusher.join().unwrap() > 0);
    // Failed checks fail the run (exit 1), its layout written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let (lost, unexpired) = (
        field(&text, "verify_misses: "),
        field(&text, "unexpired_unget: "),
    );
    assert!(lost > 0 && unexpired > 0, "{text}");
    assert_eq!(
        field(&text, "verify_failed: ") + field(&text, "expired_get: "),
        0,
        "{text}"
    );
    assert!(lost + unexpired <= m.stat("get_misses") - misses0, "{text}");
    assert_eq!(field(&text, "get_misses: "), m.stat("get_misses") - misses0);
    // -b: the first failures, each with its key.
    let details: Vec<&str> = text.lines().filter(|l| l.starts_with('\t')).collect();
    assert!(!details.is_empty(), "{text}");
    for d in details {
        let missed = d
            .strip_prefix("\tverify_misses: ")
            .or(d.strip_prefix("\tunexpired_unget: "));
        assert!(missed.is_some_and(|k| k.starts_with("mcb:")), "{d}");
    }
}
