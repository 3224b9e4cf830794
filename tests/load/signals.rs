//! Signals and process limits: mcbench killed outright leaves no embedded
//! memcached behind, and a file-size limit is a reported write error, not
//! a death by SIGXFSZ.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// The PIDs of `parent`'s children named `name`, from /proc.
fn children(parent: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split at ')'.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let comm = head.split_once(" (").map_or("", |(_, c)| c);
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if comm == name && ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    // A zombie is dead: its parent has not reaped it yet.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
}

#[test]
fn a_killed_mcbench_leaves_no_embedded_memcached() {
    let _machine = shared_machine();
    let mut child = Command::new(BIN)
        .args(["run", "-t", "30s", "-q", "100"])
        .env_remove("MEMCACHED_SERVERS")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let server = loop {
        if let Some(&pid) = children(child.id(), "memcached").first() {
            break pid;
        }
        assert!(Instant::now() < deadline, "no embedded memcached started");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(server) {
        assert!(
            Instant::now() < deadline,
            "memcached {server} outlived mcbench"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_file_size_limit_is_a_write_error_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let json = path_in(dir.path(), "r.json");
    let mut cmd = Command::new(BIN);
    cmd.args([
        "run",
        "-s",
        &server,
        "-x",
        "300",
        "--no-load",
        "--json",
        &json,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    with_rlimit(&mut cmd, libc::RLIMIT_FSIZE, 1024);
    let out = wait_bounded(cmd.spawn().unwrap(), Duration::from_secs(30));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{:?}: {}",
        out.status,
        stderr(&out)
    );
    assert!(stderr(&out).contains("File too large"), "{}", stderr(&out));
}

/// Waits until process `pid` catches SIGINT (its handler is installed),
/// from the `SigCgt` mask in /proc.
fn wait_for_sigint_handler(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (libc::SIGINT - 1)) != 0 {
            return;
        }
        assert!(Instant::now() < deadline, "no SIGINT handler installed");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `mcbench run` with `args` (and a 60 s `--timeout`, the wait a
/// signal must cut short), sends SIGINT once it catches it and `settle`
/// later, and checks it stopped for it with its JSON written, long before
/// the timeout; returns the JSON.
fn interrupted_run(args: &[&str], settle: Duration) -> serde_json::Value {
    interrupted_run_by(libc::SIGINT, args, settle)
}

/// `interrupted_run`, stopped by `signal`: its exit code 128 + `signal`,
/// its name in `stopped_by`, and nothing but the JSON left beside it (no
/// temporary file).
fn interrupted_run_by(signal: i32, args: &[&str], settle: Duration) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend(["--timeout", "60s", "--json", &json]);
    let child = spawn_mcbench(&all, &[]);
    let pid = child.id();
    wait_for_sigint_handler(pid);
    std::thread::sleep(settle);
    // SAFETY: a process this test started and has not reaped.
    unsafe { libc::kill(pid as i32, signal) };
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(128 + signal), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGTERM => "SIGTERM",
        _ => "SIGINT",
    };
    assert_eq!(j["stopped_by"], name, "{j}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    j
}

/// A TCP listener whose accept queue is full: a connect to it waits for
/// ever (the kernel drops its SYNs). Keep both alive while it is used.
fn full_listener() -> (std::net::TcpListener, Vec<std::net::TcpStream>, String) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a socket this function owns.
    let listener = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as u16;
        addr.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as u32;
        assert_eq!(libc::bind(fd, std::ptr::addr_of!(addr).cast(), len), 0);
        assert_eq!(libc::listen(fd, 0), 0);
        std::net::TcpListener::from_raw_fd(fd)
    };
    let addr = listener.local_addr().unwrap();
    // Fill the queue; a connect that does not complete in a moment shows
    // it is full.
    let mut held = Vec::new();
    loop {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
        assert!(held.len() < 64, "the accept queue never filled");
    }
    (listener, held, addr.to_string())
}

#[test]
fn sigint_while_connecting_stops_at_once_with_the_results_written() {
    let _machine = shared_machine();
    let (_listener, _held, addr) = full_listener();
    let j = interrupted_run(&["-s", &addr, "-c", "2"], Duration::from_millis(300));
    assert_eq!(f(&j, "total.count"), 0.0);
}

#[test]
fn sigint_while_server_stats_waits_stops_at_once_with_the_results_written() {
    let _machine = shared_machine();
    // It answers gets and sets at once and never `stats`.
    let addr = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    // The sampler is waiting for its first `stats` a second in.
    let args = [
        "-s",
        &addr,
        "--no-load",
        "-u",
        "0",
        "-t",
        "5m",
        "--server-stats",
    ];
    interrupted_run(&args, Duration::from_secs(1));
}

/// An agent stops on SIGTERM or SIGINT with the signal's exit code, as a
/// service manager expects, rather than dying by the signal.
#[test]
fn an_agent_exits_143_on_sigterm_and_130_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let token = secret_file(dir.path(), "token", "signals-token-0123456789abcdef\n");
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let child = Command::new(BIN)
            .args(["agent", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        wait_for_sigint_handler(pid);
        // SAFETY: a process this test started and has not reaped.
        unsafe { libc::kill(pid as i32, signal) };
        let out = wait_bounded(child, Duration::from_secs(30));
        assert_eq!(
            out.status.code(),
            Some(code),
            "{:?}: {}",
            out.status,
            stderr(&out)
        );
    }
}

/// A run killed by SIGKILL leaves its output's temporary file behind; the
/// next run writing the same path removes it.
#[test]
fn a_temporary_left_by_a_killed_run_is_removed_by_the_next() {
    let _machine = shared_machine();
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let temporaries = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".r.json.mcbench-"))
            .count()
    };
    let mut child = spawn_mcbench(
        &[
            "run",
            "-s",
            &server,
            "--no-load",
            "-t",
            "60s",
            "--json",
            &json,
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while temporaries() == 0 {
        assert!(Instant::now() < deadline, "no temporary file was made");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(temporaries(), 1, "SIGKILL leaves the temporary");
    let out = mcbench(&[
        "run",
        "-s",
        &server,
        "--no-load",
        "-x",
        "10",
        "--json",
        &json,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(temporaries(), 0, "the orphan was not removed");
    assert!(std::path::Path::new(&json).is_file());
}

#[test]
fn a_signal_counts_the_requests_it_cut_off() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::StallAfter(0));
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "-t",
            "30s",
            "-q",
            "1000",
            "--no-load",
            "--json",
            &json,
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(700));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    // Every request sent is on the books: none answered, all cut off.
    assert_eq!(f(&j, "total.count"), 0.0);
    assert!(f(&j, "errors.cut_off") > 100.0, "{}", j["errors"]);
    assert_eq!(j["failure"], serde_json::Value::Null);
}

#[test]
fn a_signal_during_the_preload_is_no_client_verdict() {
    let _machine = shared_machine();
    let m = Memcached::start(&["-m", "1024"]);
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-r",
            "5M",
            "-t",
            "10s",
            // The full report, whose client line would give a CPU per request.
            "--details",
            "--json",
            &json,
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(800));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(j["client"]["client_bound"], false, "{}", j["warnings"]);
    assert_eq!(j["preloaded"], serde_json::Value::Null);
    assert!(!stdout(&out).contains("CLIENT-BOUND"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("preload not finished"),
        "{}",
        stdout(&out)
    );
    // Nothing measured: no verdict on the client, no CPU per request.
    let text = stdout(&out);
    assert!(!text.contains("the client kept up"), "{text}");
    assert!(!text.contains("ns/op"), "{text}");
    assert!(
        text.contains("stopped by SIGINT before any request was measured"),
        "{text}"
    );
}

/// A server that answers a TLS client's hello with one byte a second:
/// the handshake never ends, and no single read ever waits long.
fn dribbling_tls_server() -> String {
    serve_each(|mut s| {
        use std::io::Write;
        // A handshake record's header, then its body, a byte at a time.
        for b in [0x16u8, 0x03, 0x03, 0x40, 0x00].iter().chain(&[0u8; 64]) {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    })
}

/// A TLS handshake is bounded by the connect timeout in all, not read by
/// read: a server that sends a byte a second fails the run at 2 s (it was
/// still running at 30 s, deaf to signals), with no temporary file left.
#[test]
fn a_tls_handshake_a_byte_a_second_is_bounded_by_the_connect_timeout() {
    let _machine = shared_machine();
    let addr = dribbling_tls_server();
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "--tls",
            "-s",
            &addr,
            "-c",
            "1",
            "-t",
            "2s",
            "--timeout",
            "2s",
            "--connect-timeout",
            "2s",
            "--json",
            &json,
        ],
        &[],
    );
    let out = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not finish within the connect timeout"),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(
        left.iter()
            .all(|e| !e.file_name().to_string_lossy().ends_with(".tmp")),
        "{left:?}"
    );
}

/// A signal during that handshake ends the run at once (it waited out the
/// connect timeout), its result written.
#[test]
fn sigint_during_a_tls_handshake_stops_at_once_with_the_results_written() {
    let _machine = shared_machine();
    let addr = dribbling_tls_server();
    let j = interrupted_run(
        &["--tls", "-s", &addr, "-c", "1", "--connect-timeout", "60s"],
        Duration::from_millis(500),
    );
    assert_eq!(f(&j, "total.count"), 0.0);
}

/// SIGHUP (the terminal closed) stops a run as SIGINT does: exit 129, the
/// results so far written, no temporary file left.
#[test]
fn sighup_stops_a_run_with_its_results_written() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(Duration::from_millis(1)));
    let args = ["-s", &addr, "--no-load", "-t", "60s"];
    let j = interrupted_run_by(libc::SIGHUP, &args, Duration::from_millis(700));
    assert!(f(&j, "total.count") > 0.0);
}

/// `--between` runs in a process group of its own: a signal stops it (a
/// 20 s sleep here) at once, and the set ends with the runs it has.
#[test]
fn sigint_during_between_stops_the_command_and_writes_the_runs_so_far() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "set.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "--no-load",
            "-t",
            "1s",
            "--repeat",
            "3",
            "--between",
            "sleep 20",
            "--json",
            &json,
        ],
        &[],
    );
    let pid = child.id();
    // The first run is over once its line is printed; the sleep then runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while children(pid, "sh").is_empty() {
        assert!(std::time::Instant::now() < deadline, "--between never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sleeper = children(pid, "sh");
    // SAFETY: a process this test started and has not reaped.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    // One run written: as a run (a set of several would be a run set).
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(j["schema"], "mcbench.run/2");
    assert!(f(&j, "total.count") > 0.0);
    // The shell (and its sleep) is gone.
    std::thread::sleep(Duration::from_millis(100));
    assert!(sleeper.iter().all(|p| !alive(*p)), "{sleeper:?}");
}

/// A rate no machine holds is refused before any traffic; a rate far past
/// this one's still ends at `-t` (it counted its unsent arrivals one by
/// one for seconds, and above 10^10 a second never ended).
#[test]
fn an_impossible_rate_is_refused_and_a_huge_one_ends_at_its_time() {
    let _machine = shared_machine();
    let addr = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let out = mcbench(&["run", "-s", &addr, "--no-load", "-q", "1e10", "-t", "1s"]);
    assert_usage_error(&out, "beyond any client");
    let dir = tempfile::tempdir().unwrap();
    let json = path_in(dir.path(), "r.json");
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &addr,
            "--no-load",
            "-q",
            "9e8",
            "-t",
            "1s",
            "-c",
            "4",
            "--json",
            &json,
        ],
        &[],
    );
    let out = wait_bounded(child, Duration::from_secs(30));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    let dropped = f(&j, "errors.client_overload") + f(&j, "errors.unsent");
    // Close to 9e8 arrivals in the second, nearly all never sent.
    assert!(dropped > 1e8, "{}", j["errors"]);
}

/// `report --merge --html` of many results, stopped by SIGTERM while it
/// loads or renders: it ends with 143, and leaves either no page or a
/// whole one, and no temporary file.
#[test]
fn a_signal_during_report_leaves_no_temporary_and_no_partial_page() {
    let dir = tempfile::tempdir().unwrap();
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let one = path_in(dir.path(), "r.json");
    let out = mcbench(&[
        "run", "-s", &server, "-x", "3000", "-i", "100ms", "--json", &one,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let mut args = vec!["report".to_string(), "--merge".into()];
    for i in 0..60 {
        let copy = runs.join(format!("r{i}.json"));
        std::fs::copy(&one, &copy).unwrap();
        args.push(copy.to_str().unwrap().into());
    }
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let html = out_dir.join("page.html");
    args.extend(["--html".into(), html.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn_mcbench(&args, &[]);
    let pid = child.id();
    wait_for_sigint_handler(pid);
    // SAFETY: a process this test started and has not reaped.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(left.iter().all(|f| f == "page.html"), "{left:?}");
    if let Ok(page) = std::fs::read_to_string(&html) {
        assert!(page.trim_end().ends_with("</html>"), "a partial page");
    }
}

/// `top` and `stats` against a server that never answers `stats`, with a
/// 60 s timeout: SIGINT ends each at once, with 130.
#[test]
fn sigint_ends_top_and_stats_waiting_for_a_silent_server() {
    let server = fake_server(Misbehaviour::Stall);
    for cmd in ["top", "stats"] {
        let child = spawn_mcbench(&[cmd, "-s", &server, "--timeout", "60s"], &[]);
        let pid = child.id();
        wait_for_sigint_handler(pid);
        // Into the wait for the reply (a signal before it is seen too).
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: a process this test started and has not reaped.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        // A command that did not yield would wait the 60 s: it fails
        // there, at half of them.
        let out = wait_bounded(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(130), "{cmd}: {}", stderr(&out));
    }
}
