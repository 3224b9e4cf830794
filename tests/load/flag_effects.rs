//! Flags that had no test failing when they did nothing: each is checked
//! against what the server saw or what the request stream was.

use crate::support;

use std::path::Path;
use support::*;

/// Coefficient of variation of the gaps between intended sends.
fn gap_dispersion(samples: &Path) -> f64 {
    let text = std::fs::read_to_string(samples).unwrap();
    let mut at: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().parse().unwrap())
        .collect();
    at.sort_by(f64::total_cmp);
    gaps_cv(&at)
}

/// Coefficient of variation of the gaps between sorted instants.
fn gaps_cv(at: &[f64]) -> f64 {
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
    var.sqrt() / mean
}

#[test]
fn fixed_arrivals_are_even_and_exponential_ones_are_poisson() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut cv = Vec::new();
    for arrival in ["fixed", "exponential"] {
        let save = path_in(dir.path(), &format!("{arrival}.tsv"));
        let args = [
            "-q",
            "2000",
            "-x",
            "2000",
            "-c",
            "1",
            "--seed",
            "3",
            "--arrival",
            arrival,
            "--save",
            &save,
        ];
        run_to(dir.path(), arrival, &m.addr(), &args);
        cv.push(gap_dispersion(Path::new(&save)));
    }
    // Even gaps vary not at all; exponential ones as much as their mean.
    assert!(cv[0] < 0.05, "fixed: cv {}", cv[0]);
    assert!((0.85..1.15).contains(&cv[1]), "exponential: cv {}", cv[1]);
}

#[test]
fn threads_run_as_many_workers() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["-T", "3", "-c", "3", "-t", "1s"]);
    let busy = j["client"]["worker_busy"].as_array().unwrap();
    assert_eq!(busy.len(), 3);
    assert!(busy.iter().all(|b| b.as_f64().unwrap() > 0.0), "{busy:?}");
    assert!(m.stat("total_connections") >= 3);
}

#[test]
fn expiry_is_sent_with_every_store() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    for (expiry, name) in [("1", "short"), ("0", "never")] {
        let prefix = format!("{name}:");
        let out = mcbench(&[
            "run",
            "-s",
            &m.addr(),
            "--load-only",
            "-r",
            "10",
            "--expiry",
            expiry,
            "--key-prefix",
            &prefix,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let key = |prefix: &str| format!("{prefix}{:0>width$}", 3, width = 30 - prefix.len());
    assert_eq!(raw_get(&m, &key("short:")), "END\r\n");
    assert!(raw_get(&m, &key("never:")).starts_with("VALUE"));
}

#[test]
fn delta_is_the_amount_of_incr() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let load = mcbench(&["run", "-s", &m.addr(), "--load-only", "-r", "1", "-V", "4"]);
    assert!(load.status.success(), "{}", stderr(&load));
    let key = format!("mcb:{:0>26}", 0);
    // memcached pads an incr result that got shorter with spaces.
    let value = |reply: String| -> u64 { reply.lines().nth(1).unwrap().trim().parse().unwrap() };
    let before = value(raw_get(&m, &key));
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--no-load",
        "-r",
        "1",
        "-c",
        "1",
        "--mix",
        "incr=1",
        "--delta",
        "7",
        "-x",
        "10",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(value(raw_get(&m, &key)), before + 70);
}

#[test]
fn binary_flag_speaks_binary() {
    let _machine = shared_machine();
    // A memcached that speaks only the text protocol refuses -B's frames.
    let m = Memcached::start(&["-B", "ascii"]);
    let (out, _) = run_json(&["run", "-s", &m.addr(), "-B", "-t", "1s", "--no-load"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (_, _) = run_ok(&m.addr(), &["-t", "1s", "--no-load"]);
}

#[test]
fn udp_flag_sends_plain_addresses_over_udp() {
    let _machine = shared_machine();
    // UDP on one port, TCP on another: the UDP port answers only datagrams.
    let udp_port = free_port();
    let m = Memcached::start(&["-U", &udp_port.to_string()]);
    let plain = format!("127.0.0.1:{udp_port}");
    let (_, j) = run_ok(&plain, &["--udp", "-t", "1s", "--no-load", "-u", "0"]);
    assert_eq!(j["servers"][0], format!("udp:{plain}"));
    assert_eq!(m.stat("cmd_get") as f64, f(&j, "total.count"));
    let out = mcbench(&["run", "-s", &plain, "-t", "1s", "--no-load"]);
    assert_eq!(out.status.code(), Some(1), "over TCP nothing listens there");
}

#[test]
fn load_flag_preloads_every_key() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["--load", "-r", "500", "-x", "1000", "-u", "0"]);
    assert_eq!(m.stat("cmd_set"), 500);
    assert_eq!(f(&j, "gets.misses"), 0.0);
}

#[test]
fn credentials_come_from_the_environment() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth");
    std::fs::write(&auth, "bench:secret\n").unwrap();
    let m = Memcached::start(&["-Y", auth.to_str().unwrap()]);
    let args = ["run", "-s", &m.addr(), "-t", "1s", "-r", "100"];
    let right = [("MCBENCH_USER", "bench"), ("MCBENCH_PASSWORD", "secret")];
    let out = mcbench_env(&args, &right);
    assert!(out.status.success(), "{}", stderr(&out));
    let wrong = [("MCBENCH_USER", "bench"), ("MCBENCH_PASSWORD", "nope")];
    let out = mcbench_env(&args, &wrong);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authentication failed"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("nope") && !stdout(&out).contains("nope"));
}

#[test]
fn busy_poll_spins_and_is_not_called_saturation() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    // A slow open loop leaves a sleeping worker idle...
    let args = ["run", "-s", &m.addr(), "-t", "1s", "-q", "200", "--no-load"];
    let (out, j) = run_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let idle = j["client"]["worker_busy"][0].as_f64().unwrap();
    assert!(idle < 0.5, "sleeping worker busy {idle}");
    // ... and a busy-polling one on its CPU all the time, by the OS's
    // count of its CPU time, without a CLIENT-BOUND verdict for it.
    let mut spin = args.to_vec();
    spin.push("--busy-poll");
    let (out, j) = run_json(&spin);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let busy = j["client"]["worker_busy"][0].as_f64().unwrap();
    // All the CPU it is given: all of one on a quiet machine; beside
    // other loads, its share, which even four spinning neighbours on two
    // CPUs leave above 15 % (a sleeper at 200 wake-ups a second uses a
    // few %). Judged on its own, not against the other run.
    assert!(busy > 0.15, "busy-polling worker busy {busy}");
    // (A late send is judged apart: on a shared machine one stall of the
    // spinning thread among 200 sends can set the send lag's p99.)
    let saturated = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "worker_saturated");
    assert!(!saturated, "{}", j["warnings"]);
    assert_eq!(j["spec"]["busy_poll"], true);
    assert!(f(&j, "total.count") > 150.0);
}

/// A server that answers one get every 2 ms, oldest first, and notes how
/// many of the connection's requests were unanswered before each answer:
/// the client's depth as the server sees it. Returns its address and the
/// notes, complete once the client has closed the connection.
fn slow_counting_server() -> (String, std::sync::mpsc::Receiver<Vec<usize>>) {
    use std::io::{ErrorKind, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nonblocking(true).unwrap();
        // As memcached: with Nagle on, an answer would wait for the
        // client's delayed ACK whenever the client has nothing to send.
        s.set_nodelay(true).unwrap();
        let (mut received, mut answered, mut notes) = (0usize, 0usize, Vec::new());
        let mut buf = [0u8; 65536];
        loop {
            std::thread::sleep(std::time::Duration::from_millis(2));
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => received += buf[..n].iter().filter(|&&b| b == b'\n').count(),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            if received > answered {
                notes.push(received - answered);
                answered += 1;
                if s.write_all(b"END\r\n").is_err() {
                    break;
                }
            }
        }
        let _ = tx.send(notes);
    });
    (addr, rx)
}

/// The server's view of the depth over a closed loop of 300 gets on one
/// connection, leaving out the last 16 (the quota running out).
fn depths_seen(extra: &[&str]) -> Vec<usize> {
    let (addr, notes) = slow_counting_server();
    let mut args = vec![
        "run",
        "-s",
        &addr,
        "-c",
        "1",
        "-d",
        "16",
        "-x",
        "300",
        "--mix",
        "get=1",
        "--no-load",
    ];
    args.extend_from_slice(extra);
    let out = mcbench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let notes = notes
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    assert!(notes.len() >= 300, "{} answers", notes.len());
    notes[..notes.len() - 16].to_vec()
}

#[test]
fn depth_keeps_that_many_in_flight_and_refill_batch_lets_it_drain() {
    let _machine = shared_machine();
    // -d 16: each answer is replaced at once, so the server almost always
    // holds 16 (15 when an answer's replacement was still on its way; less
    // only when this shared host stalled the client a tick or two).
    let share = |seen: &[usize], ok: &dyn Fn(usize) -> bool| {
        seen.iter().filter(|&&d| ok(d)).count() as f64 / seen.len() as f64
    };
    let seen = depths_seen(&[]);
    assert!(seen.iter().all(|&d| d <= 16), "beyond the depth: {seen:?}");
    assert!(share(&seen, &|d| d == 16) >= 0.8, "{seen:?}");
    assert!(share(&seen, &|d| d >= 14) >= 0.97, "{seen:?}");
    // --refill-batch 8: refilled once 8 are answered, so it drains to 9.
    let seen = depths_seen(&["--refill-batch", "8"]);
    assert!(seen.iter().all(|&d| d <= 16), "beyond the depth: {seen:?}");
    assert!(share(&seen, &|d| d >= 9) >= 0.97, "{seen:?}");
    assert!(share(&seen, &|d| d <= 10) >= 0.1, "{seen:?}");
    // Beyond the depth, or with an open loop: refused before any traffic.
    assert_usage_error(
        &mcbench(&["run", "-s", "127.0.0.1:1", "-d", "4", "--refill-batch", "5"]),
        "--refill-batch must be between 1 and --depth (4)",
    );
    assert_usage_error(
        &mcbench(&[
            "run",
            "-s",
            "127.0.0.1:1",
            "-d",
            "4",
            "--refill-batch",
            "2",
            "-q",
            "100",
        ]),
        "an open loop",
    );
}

/// From `--save`'s samples: each request's send lag (intended send to
/// its transmit stamp, µs: client queue plus send path; unstamped,
/// intended send to the send call, latency minus service time), sorted;
/// how many separate instants the requests went out at (sends under
/// 20 µs apart are one); and the coefficient of variation of the gaps
/// between sends.
fn sends(samples: &Path) -> (Vec<f64>, usize, f64) {
    let text = std::fs::read_to_string(samples).unwrap();
    let mut lags = Vec::new();
    let mut sent = Vec::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let num = |i: usize| cols[i].parse::<i64>().ok();
        let (intended, latency, service) = (num(0).unwrap(), num(2).unwrap(), num(3).unwrap());
        let lag = match (num(5), num(6)) {
            (Some(queue), Some(send_path)) => queue + send_path,
            _ => latency - service,
        };
        lags.push(lag as f64 / 1e3);
        sent.push(intended + lag);
    }
    lags.sort_by(f64::total_cmp);
    sent.sort();
    let instants = 1 + sent.windows(2).filter(|w| w[1] - w[0] > 20_000).count();
    let sent: Vec<f64> = sent.iter().map(|&t| t as f64).collect();
    (lags, instants, gaps_cv(&sent))
}

#[test]
fn coalesced_arrivals_go_out_together_late_never_early_and_are_measured_so() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // Without --coalesce no window is added: a unit test of the spec
    // (`spec::schedule`) and one of the worker's wake-up (`open_loop`).
    for w in ["0", "200us"] {
        let save = path_in(dir.path(), &format!("{w}.tsv"));
        let args = [
            "-q",
            "5000",
            "-x",
            "5000",
            "-c",
            "4",
            "-r",
            "1000",
            "--save",
            &save,
            "--coalesce",
            w,
        ];
        let (out, json) = run_ok(&m.addr(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let (lags, instants, sent_cv) = sends(Path::new(&save));
        // The report's dispersion of the gaps as sent is the samples'.
        let reported = f(&json, "client.send_gap_cv");
        assert!(
            (reported - sent_cv).abs() < 0.05,
            "reported CV {reported}, the samples' {sent_cv}"
        );
        // Never sent before its intended time.
        assert!(lags[0] >= 0.0, "a send {} µs early", -lags[0]);
        // The intended schedule is untouched: still Poisson.
        let cv = gap_dispersion(Path::new(&save));
        assert!((cv - 1.0).abs() < 0.1, "intended gaps' CV {cv} with {w}");
        if w == "0" {
            continue;
        }
        // The bounds below are one-sided the way a busy machine pushes
        // them (later wake-ups bunch sends more and lag them more), so
        // they hold beside any load. That arrivals share a wake-up is
        // counted exactly on the manual clock (`engine::worker::tests::
        // open_loop`): here a preempted write splits an instant of the
        // kernel's stamps in two, so their count is the machine's.
        eprintln!("{instants} send instants of 5000 arrivals");
        // Sends in bursts, more dispersed than Poisson's CV of 1...
        assert!(sent_cv > 1.1, "CV {sent_cv} of the gaps as sent");
        // ...each later, by a wait that is measured, not hidden: the
        // samples, the report's send lag and its latency count it.
        let p50 = lags[lags.len() / 2];
        assert!(p50 > 80.0, "send lag p50 {p50} µs coalesced");
        assert!(f(&json, "client.send_lag_us.p50") > 80.0, "{json}");
        assert!(f(&json, "total.latency_us.p50") > 80.0, "{json}");
    }
    // Closed loops have no arrivals to gather; a long wait is refused.
    assert_usage_error(
        &mcbench(&["run", "-s", "127.0.0.1:1", "--coalesce", "100us"]),
        "--coalesce gathers an open loop's arrivals",
    );
    assert_usage_error(
        &mcbench(&["run", "-s", "127.0.0.1:1", "-q", "100", "--coalesce", "2ms"]),
        "at most 1ms",
    );
}

/// More busy-polling threads than CPUs this process may use take turns
/// spinning: the run says so. Pinned to one CPU, two threads warn and
/// one does not, whatever the machine's size.
#[test]
fn busy_polling_threads_beyond_the_cpus_are_warned_of() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    for (threads, warned) in [("2", true), ("1", false)] {
        let out = std::process::Command::new("taskset")
            .args([
                "-c",
                "0",
                BIN,
                "run",
                "-s",
                &m.addr(),
                "-t",
                "1s",
                "-c",
                "2",
            ])
            .args(["--no-load", "--busy-poll", "-T", threads, "--json", "-"])
            .output()
            .expect("taskset (util-linux) runs");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let said = j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "busy_poll_oversubscribed" && w["cpus"] == 1);
        assert_eq!(said, warned, "-T {threads}: {}", j["warnings"]);
        assert_eq!(
            stderr(&out).contains("busy-polling threads on 1 CPUs"),
            warned
        );
    }
}

/// incr/decr count numbers up to 2^64-1. A run whose preload stores the
/// default 200-byte values on the keys they count would fail every one:
/// refused before any traffic. With values of 19 digits or fewer, or on
/// absent keys, they run, and memcached counts them.
#[test]
fn counters_over_values_too_long_to_count_are_refused() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let before = m.stat("cmd_set");
    let out = mcbench(&["run", "-s", &m.addr(), "--mix", "get=1,incr=1", "-x", "100"]);
    assert_usage_error(&out, "--value-size 19 or less");
    assert_eq!(m.stat("cmd_set"), before, "no preload was sent");
    let (out, j) = run_json(&[
        "run",
        "-s",
        &m.addr(),
        "--mix",
        "get=1,incr=1",
        "-V",
        "8",
        "-r",
        "50",
        "-x",
        "400",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f(&j, "total.errors"), 0.0, "{}", j["errors"]);
    assert_eq!(m.stat("incr_hits"), count(&j, "ops.incr.count"));
    // Absent keys: NOT_FOUND, no error, and memcached counts each miss.
    let misses = m.stat("decr_misses");
    let (out, j) = run_json(&[
        "run",
        "-s",
        &m.addr(),
        "--no-load",
        "--mix",
        "decr=1",
        "-x",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(f(&j, "total.errors"), 0.0, "{}", j["errors"]);
    assert_eq!(m.stat("decr_misses") - misses, 50);
}

/// The text report prints the rows and lines that carry something: no
/// all-zero `get` row above `mget` with --multiget, no hit line in a run
/// that looked nothing up.
#[test]
fn the_text_report_leaves_out_what_did_not_happen() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let addr = m.addr();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-s", addr.as_str(), "-x", "300", "-r", "100"];
        args.extend_from_slice(extra);
        let out = mcbench(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let text = run(&["--multiget", "4"]);
    assert!(text.lines().any(|l| l.starts_with("mget ")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("get ")), "{text}");
    let text = run(&["--mix", "set=1"]);
    assert!(text.lines().any(|l| l.starts_with("set ")), "{text}");
    assert!(!text.contains("gets: "), "{text}");
    let text = run(&[]);
    assert!(text.contains("gets: "), "{text}");
}
