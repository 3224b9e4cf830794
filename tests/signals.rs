//! Signals and process limits: mcbench killed outright leaves no embedded
//! memcached behind, and a file-size limit is a reported write error, not
//! a death by SIGXFSZ.

mod support;

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
