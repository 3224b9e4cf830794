//! When answers are read: `--read-delay` (a closed loop that reads them
//! in batches, on purpose late, and says so) and `--read-answers` (an open
//! loop that reads them at its next arrival, timed by the kernel's stamps).

use crate::support;

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
    // The server's 2 ms, never less; timed when read, each answer would
    // take the 5 ms pause besides. (Between the two: this machine's
    // wake-ups, whatever else runs on it.)
    assert!((2000.0..4000.0).contains(&p50), "p50 {p50} µs");
    assert!(p90 < 5000.0, "p90 {p90} µs");
    let rate = f(&j, "total.ok_rate");
    assert!(
        rate < 150.0,
        "a 2 ms answer and a 5 ms pause each: {rate}/s"
    );
}

/// An answer bigger than one read, or than the socket's buffer, is read
/// whole with the pause before it: the pause comes before reads that
/// start answers. Over TCP and a unix socket (whose
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
        // How many pauses the reads took is asserted exactly on the
        // worker's manual clock (src/engine/worker/tests/read_delay.rs);
        // here, over real sockets, that every answer came whole.
        assert_eq!(f(&j, "errors.protocol"), 0.0, "{addr}");
    }
    // The server's own count (the TCP one's `stats`).
    assert_eq!(tcp.stat("get_hits"), 40);
}

/// The preload is not measured against anything: it is never delayed.
/// That it reads at once is timed exactly on the worker's manual clock
/// (`src/engine/worker/tests/read_delay.rs`); here, that a delayed run
/// still preloads every key of a real memcached.
#[test]
fn the_preload_reads_at_once() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &["-r", "2000", "-c", "1", "-x", "10", "--read-delay", "10ms"],
    );
    assert_eq!(f(&j, "gets.misses"), 0.0);
    assert!(m.stat("cmd_set") >= 2000);
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
        (
            &["run", "--num-conns", "10", "--read-delay", "1ms"],
            "--read-delay does not go with --num-conns",
        ),
        (
            &["run", "--measure-connections", "1", "--read-delay", "1ms"],
            "--read-delay does not go with --measure-connections",
        ),
        (
            &[
                "run",
                "-s",
                "127.0.0.1:9",
                "--facebook",
                "--read-delay",
                "1ms",
            ],
            "--read-delay does not go with --facebook",
        ),
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
        // The server's 2 ms, never less; timed when read at the next
        // arrival (5 ms apart on average at 200/s), p50 would be over
        // 5 ms and p90 over 13.
        assert!((2000.0..4000.0).contains(&p50), "{when}: p50 {p50} µs");
        assert!(p90 < 5000.0, "{when}: p90 {p90} µs");
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

/// One `--save` row: intended send, latency and service time, ns.
struct Saved {
    intended: u64,
    latency: u64,
    service: u64,
}

fn saved_rows(path: &std::path::Path) -> Vec<Saved> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows: Vec<Saved> = text
        .lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<u64> = l
                .split('\t')
                .enumerate()
                .filter(|(i, _)| [0, 2, 3].contains(i))
                .map(|(_, v)| v.parse().unwrap())
                .collect();
            Saved {
                intended: cols[0],
                latency: cols[1],
                service: cols[2],
            }
        })
        .collect();
    rows.sort_by_key(|r| r.intended);
    rows
}

/// What a client that adds nothing would have measured: the run's own
/// schedule, in order, into `conns` depth-1 connections, first come first
/// served, each request taking the service time it had (actual send →
/// answer, as saved). The latencies, sorted.
fn simulate(rows: &[Saved], conns: usize) -> Vec<u64> {
    let mut latencies: Vec<u64> = fifo(rows, conns, |start, r| start + r.service)
        .map(|(start, r)| start + r.service - r.intended)
        .collect();
    latencies.sort_unstable();
    latencies
}

/// How many arrivals found no connection whose answer had come, with the
/// answers when they really came (intended + latency): the waits a client
/// may count that never leaves an answer unread when it needs the slot.
/// A client late to an arrival finds more answers in, and waits less.
fn waits_allowed(rows: &[Saved], conns: usize) -> usize {
    fifo(rows, conns, |_, r| r.intended + r.latency)
        .filter(|&(start, r)| start > r.intended)
        .count()
}

/// Requests in intended order into `conns` depth-1 connections, first
/// come first served: each with when it starts, a connection being busy
/// until `busy_until(start, request)`.
fn fifo<'a>(
    rows: &'a [Saved],
    conns: usize,
    busy_until: impl Fn(u64, &Saved) -> u64 + 'a,
) -> impl Iterator<Item = (u64, &'a Saved)> + 'a {
    use std::cmp::Reverse;
    let mut free: std::collections::BinaryHeap<Reverse<u64>> =
        (0..conns).map(|_| Reverse(0)).collect();
    rows.iter().map(move |r| {
        let Reverse(first_free) = free.pop().expect("conns > 0");
        let start = r.intended.max(first_free);
        free.push(Reverse(busy_until(start, r)));
        (start, r)
    })
}

/// The value at or below which `p` % of the sorted `v` lie, µs.
fn percentile(v: &[u64], p: f64) -> f64 {
    let k = ((p / 100.0 * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[k] as f64 / 1000.0
}

/// An open loop of gets at `rate` on `conns` connections of one worker
/// against `addr`, for `secs`, every request saved: its JSON and saved
/// rows (checked to be every answer, in intended order).
fn saved_open_loop(
    dir: &std::path::Path,
    addr: &str,
    name: &str,
    (rate, conns, secs): (&str, &str, &str),
    extra: &[&str],
) -> (serde_json::Value, Vec<Saved>) {
    let save = dir.join(format!("{name}.tsv"));
    let mut args = vec![
        "--no-load",
        "--mix",
        "get=1",
        "-q",
        rate,
        "-c",
        conns,
        "-T",
        "1",
        "-t",
        secs,
        "--save",
    ];
    args.push(save.to_str().unwrap());
    args.extend_from_slice(extra);
    let (_, j) = run_to(dir, name, addr, &args);
    let rows = saved_rows(&save);
    assert_eq!(
        rows.len(),
        count(&j, "total.count") as usize,
        "{name}: every answer saved"
    );
    assert!(rows.iter().all(|r| r.latency >= r.service));
    (j, rows)
}

/// p90 and p99 from the intended send are the simulation's of the run's
/// own schedule into `conns` connections. The client's own lateness (a
/// CPU shared with other load) is no read policy's doing: it widens the
/// bound by the send lag's p99.
fn assert_tail_simulated(j: &serde_json::Value, rows: &[Saved], conns: usize, name: &str) {
    let lag = f(j, "client.send_lag_us.p99");
    let truth = simulate(rows, conns);
    for (key, p) in [("p90", 90.0), ("p99", 99.0)] {
        let got = f(j, &format!("total.latency_us.{key}"));
        let want = percentile(&truth, p);
        assert!(
            got <= want * 1.15 + 2.0 * lag && got >= want * 0.9,
            "{name}: {key} {got} µs, simulated {want} µs, send lag p99 {lag} µs"
        );
    }
}

/// The open loop's first promise, whatever the read policy: no arrival
/// waits for a connection whose answer is already in. A server answers
/// each get after 2 ms; 8 connections take 2,000 arrivals a second, so
/// that some arrivals find all 8 busy. The requests counted as waiting
/// must be no more than those that found every answer still out, and p90
/// and p99 from the intended send those of a simulation of the run's own
/// saved schedule into its 8 connections with the service times the
/// requests had. Reading late used to leave a slot answered but busy until
/// the next arrival, which then waited for it: 13-15 % waits where 6-7 %
/// found every answer out, and requests waiting behind those.
#[test]
fn no_arrival_waits_for_a_connection_already_answered() {
    let _machine = quiet_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(
        std::time::Duration::from_millis(2),
    ));
    let dir = tempfile::tempdir().unwrap();
    for policy in ["late", "at-once"] {
        let (j, rows) = saved_open_loop(
            dir.path(),
            &addr,
            policy,
            ("2000", "8", "3s"),
            &["--read-answers", policy],
        );
        assert!(rows.len() > 5000, "{policy}: {} answers", rows.len());
        let waits = count(&j, "client.waits") as usize;
        let allowed = waits_allowed(&rows, 8);
        // Here 5-8 % of arrivals find every answer out: some waits.
        assert!(
            allowed > 50,
            "{policy}: {allowed} arrivals found all 8 busy"
        );
        assert!(
            waits <= allowed + allowed / 10 + 10,
            "{policy}: {waits} waited for a connection; {allowed} found every answer out"
        );
        assert_tail_simulated(&j, &rows, 8, policy);
    }
}

/// A request that waits for a connection goes out as soon as the answer
/// that frees it is in, not at the worker's next arrival: one connection
/// at 200 arrivals a second to a server that answers after 2 ms, so that
/// about 40 % of arrivals wait, must have p90 and p99 of the simulation of
/// its own schedule. A late reader that slept through answers to its next
/// arrival (5 ms apart on average) while requests waited added that to
/// each of them.
#[test]
fn a_waiting_request_goes_out_as_its_connection_is_answered() {
    let _machine = quiet_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(
        std::time::Duration::from_millis(2),
    ));
    let dir = tempfile::tempdir().unwrap();
    let (j, rows) = saved_open_loop(dir.path(), &addr, "late", ("200", "1", "4s"), &[]);
    assert!(rows.len() > 600, "{} answers", rows.len());
    assert!(count(&j, "client.waits") > 100, "some arrivals wait");
    assert_tail_simulated(&j, &rows, 1, "late");
}

/// The same promise where it is exact: one connection, memcached, an
/// arrival every 10 ms. Each answer is in within a fraction of that, so no
/// arrival may find the connection busy, whichever way answers are read.
/// Reading late used to count every arrival but the first as waiting: its
/// wake-up sent it before reading the answer that freed the connection.
#[test]
fn an_answered_connection_is_free_for_the_next_arrival() {
    let _machine = shared_machine();
    let policies: [&[&str]; 3] = [
        &["--read-answers", "late"],
        &["--read-answers", "at-once"],
        &["--coalesce", "1ms"],
    ];
    for policy in policies {
        let m = Memcached::start(&[]);
        let mut args = vec![
            "--no-load",
            "--mix",
            "get=1",
            "-q",
            "100",
            "--arrival",
            "fixed",
            "-c",
            "1",
            "-T",
            "1",
            "-t",
            "2s",
        ];
        args.extend(policy);
        let (_, j) = run_ok(&m.addr(), &args);
        let answered = count(&j, "total.count");
        assert_eq!(m.stat("cmd_get"), answered, "{policy:?}: the server's gets");
        assert!(answered >= 150, "{policy:?}: {answered} answers");
        // A 10 ms stall of memcached's would be a wait, and no one's fault.
        let waits = count(&j, "client.waits");
        assert!(
            waits <= answered / 20,
            "{policy:?}: {waits} of {answered} arrivals waited for the connection"
        );
    }
}
