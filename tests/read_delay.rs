//! When answers are read: `--read-delay` (a closed loop that reads them
//! in batches, on purpose late, and says so) and `--read-answers` (an open
//! loop that reads them at its next arrival, timed by the kernel's stamps).

mod support;

use support::*;

/// With one request in flight, each answer comes to a worker that waits
/// for it, and is read one pause after the wake-up it causes. Over TCP the
/// kernel stamped it as it came, and it is timed by that stamp: latency
/// stays memcached's while the pause halves the rate. A unix stream has
/// no stamps: there the answer is timed when read, the pause included.
#[test]
fn answers_are_read_one_pause_after_they_wake_the_worker() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let tcp = Memcached::start(&[]);
    let _unix = Memcached::start_unix(&path);
    let run = |addr: &str, delay: &str| {
        let (_, j) = run_ok(addr, &["-c", "1", "-x", "300", "--read-delay", delay]);
        assert_eq!(f(&j, "total.count"), 300.0);
        assert_eq!(f(&j, "errors.protocol"), 0.0);
        (f(&j, "total.latency_us.p50"), f(&j, "total.ok_rate"))
    };
    let (at_once, _) = run(&tcp.addr(), "0s");
    assert!(at_once < 1500.0, "p50 {at_once} µs");
    let (stamped, rate) = run(&tcp.addr(), "2ms");
    assert!(stamped < 1500.0, "stamped p50 {stamped} µs");
    assert!(rate < 510.0, "one answer per 2 ms pause, at most: {rate}/s");
    // HdrHistogram reports a bucket's low end (1 µs wide here): 1 % margin.
    let (unstamped, _) = run(&format!("unix:{}", path.display()), "2ms");
    assert!(unstamped >= 1980.0, "unix p50 {unstamped} µs");
}

/// A server that takes 2 ms to answer, read one 5 ms pause later: the
/// stamp times each answer at the server's 2 ms, not at 7 ms, and the
/// next request, sent after the pause, is timed from then.
#[test]
fn delayed_reads_are_timed_when_the_answers_came() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(
        std::time::Duration::from_millis(2),
    ));
    let args = [
        "--no-load",
        "-c",
        "1",
        "-x",
        "100",
        "--mix",
        "get=1",
        "--read-delay",
        "5ms",
    ];
    let (_, j) = run_ok(&addr, &args);
    assert_eq!(f(&j, "total.count"), 100.0);
    let p50 = f(&j, "total.latency_us.p50");
    let p90 = f(&j, "total.latency_us.p90");
    assert!((2000.0..2700.0).contains(&p50), "p50 {p50} µs");
    assert!(p90 < 3500.0, "p90 {p90} µs");
    let rate = f(&j, "total.ok_rate");
    assert!(
        rate < 150.0,
        "a 2 ms answer and a 5 ms pause each: {rate}/s"
    );
}

/// An answer bigger than one read, or than the socket's buffer, is read
/// on at once, not one pause per read or per buffer-full: the pause comes
/// before reads that start answers. Over TCP and a unix socket (whose
/// buffer is the sender's, ~200 KB).
#[test]
fn a_large_answer_waits_one_pause_not_one_per_read() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let tcp = Memcached::start(&[]);
    let _unix = Memcached::start_unix(&path);
    for addr in [tcp.addr(), format!("unix:{}", path.display())] {
        // 1 MB values, 4 in flight: each answer takes many reads, and
        // more than the unix socket holds.
        let (out, j) = run_json(&[
            "run",
            "-s",
            &addr,
            "-r",
            "20",
            "-V",
            "1000000",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "4",
            "-x",
            "40",
            "--read-delay",
            "5ms",
        ]);
        assert!(out.status.success(), "{addr}: {}", stderr(&out));
        assert_eq!(f(&j, "gets.hits"), 40.0, "{addr}");
        // About one pause (6-7 ms here); one per read or per buffer-full
        // is ten or more (70 ms over the unix socket).
        let p50 = f(&j, "total.latency_us.p50");
        assert!(p50 < 20_000.0, "{addr}: p50 {p50} µs");
    }
}

/// The preload is not measured against anything: it is never delayed.
/// 2,000 sets on one connection, one at a time, would take 20 s at one
/// 10 ms pause each.
#[test]
fn the_preload_reads_at_once() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let started = std::time::Instant::now();
    let (_, j) = run_ok(
        &m.addr(),
        &["-r", "2000", "-c", "1", "-x", "10", "--read-delay", "10ms"],
    );
    assert_eq!(f(&j, "gets.misses"), 0.0);
    assert!(m.stat("cmd_set") >= 2000);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
}

#[test]
fn the_delay_is_in_the_spec_and_the_report() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["-x", "100", "--read-delay", "300us"]);
    assert!((f(&j, "spec.read_delay") - 0.0003).abs() < 1e-9);
    let out = mcbench(&["run", "-s", &m.addr(), "-x", "100", "--read-delay", "300us"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reads delayed 300 µs (answers timed by kernel receive stamps)"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let _unix = Memcached::start_unix(&path);
    let unix = format!("unix:{}", path.display());
    let out = mcbench(&["run", "-s", &unix, "-x", "100", "--read-delay", "300us"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reads delayed 300 µs (answers timed up to 300 µs late)"),
        "{text}"
    );
}

#[test]
fn an_open_loop_or_a_long_delay_is_refused() {
    let _machine = shared_machine();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "-q", "1000", "--read-delay", "1ms"],
            "--read-delay is for closed loops",
        ),
        (&["run", "--read-delay", "11ms"], "at most 10ms"),
        (
            &["run", "--load-only", "--read-delay", "1ms"],
            "--load-only measures the preload",
        ),
        (
            &["run", "-s", "udp:127.0.0.1:9", "--read-delay", "1ms"],
            "--read-delay is for streams",
        ),
        (&["run", "--read-delay", "soon"], "invalid duration"),
    ];
    for (args, needle) in cases {
        let out = mcbench(args);
        assert_usage_error(&out, needle);
    }
}

/// Runs an open loop of `--read-answers when` against a server that
/// answers each request 2 ms after it came, on 4 connections at 200/s
/// (rarely two in flight on one): its JSON and the voluntary context
/// switches of all its threads, as the kernel counted them (`wait4`).
fn open_loop_reading(when: &str, addr: &str) -> (serde_json::Value, i64) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let args = [
        "run",
        "-s",
        addr,
        "--no-load",
        "-c",
        "4",
        "-T",
        "1",
        "-q",
        "200",
        "-t",
        "2s",
        "--mix",
        "get=1",
        "--read-answers",
        when,
        "--json",
    ];
    // Reaped by the wait4 below, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mcbench"))
        .args(args)
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: plain out-parameters; the pid is our own child's.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "mcbench did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{when}: status {status}"
    );
    (read_json(&json), usage.ru_nvcsw)
}

/// Read late, answers are still timed by when they came: the server's
/// 2 ms, not 2 ms plus the wait for the next arrival (a median gap of
/// 3.5 ms at 200/s). And the worker sleeps through them: it wakes once
/// per arrival where reading at once wakes it once more per answer.
#[test]
fn answers_read_at_the_next_arrival_are_timed_when_they_came() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(
        std::time::Duration::from_millis(2),
    ));
    let (late, late_switches) = open_loop_reading("late", &addr);
    let (at_once, at_once_switches) = open_loop_reading("at-once", &addr);
    for (j, when) in [(&late, "late"), (&at_once, "at-once")] {
        assert!(
            f(j, "total.count") > 300.0,
            "{when}: {}",
            f(j, "total.count")
        );
        assert_eq!(f(j, "total.errors"), 0.0, "{when}");
        let p50 = f(j, "total.latency_us.p50");
        let p90 = f(j, "total.latency_us.p90");
        assert!((2000.0..2700.0).contains(&p50), "{when}: p50 {p50} µs");
        assert!(p90 < 3500.0, "{when}: p90 {p90} µs");
    }
    assert!(
        (late_switches as f64) < 0.75 * at_once_switches as f64,
        "voluntary context switches: late {late_switches}, at once {at_once_switches}"
    );
}

/// Late reads need a sleeping open loop over TCP; where the run cannot
/// read late, asking for it is a usage error, and the default reads at
/// once without a word.
#[test]
fn late_reads_are_refused_where_answers_cannot_wait() {
    let _machine = shared_machine();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--read-answers", "late"],
            "a closed loop sends on each answer",
        ),
        (
            &["run", "-q", "1000", "--busy-poll", "--read-answers", "late"],
            "--busy-poll never sleeps",
        ),
        (
            &[
                "run",
                "-q",
                "1000",
                "--num-conns",
                "10",
                "--read-answers",
                "late",
            ],
            "--num-conns",
        ),
        (
            &["run", "-q", "1000", "--moderate", "--read-answers", "late"],
            "--moderate spaces sends",
        ),
        (
            &["run", "-q", "1000", "--read-answers", "soon"],
            "invalid value 'soon'",
        ),
    ];
    for (args, needle) in cases {
        assert_usage_error(&mcbench(args), needle);
    }
    for server in ["udp:127.0.0.1:9", "unix:/tmp/none"] {
        let args = ["run", "-s", server, "-q", "1000", "--read-answers", "late"];
        assert_usage_error(&mcbench(&args), "over TCP only");
    }
}
