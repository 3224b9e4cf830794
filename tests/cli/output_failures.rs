//! A failing stdout or stderr (a full disk, a closed pipe) never panics:
//! a failing stderr never stops a run or its files, and a failing stdout
//! is exit 1 with a message, after the files are written.

use crate::support;

use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

fn full() -> Stdio {
    Stdio::from(std::fs::File::create("/dev/full").unwrap())
}

/// mcbench `args` with stdout and stderr as given, bounded in time.
fn with(args: &[&str], stdout: Stdio, stderr: Stdio) -> std::process::Output {
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    wait_bounded(child, Duration::from_secs(30))
}

/// A pipe whose reader is gone before anything is written.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[0]) };
    Stdio::from(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) })
}

#[test]
fn a_failing_stderr_never_stops_a_run_or_its_files() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // "piped" is the control: both commands do write to stderr.
    for name in ["piped", "full", "closed"] {
        let json = path_in(dir.path(), &format!("{name}.json"));
        let args = [
            "run",
            "-s",
            &m.addr(),
            "-t",
            "1s",
            "-i",
            "0.2s",
            "--json",
            &json,
        ];
        let out = with(&args, Stdio::null(), stderr_of(name));
        assert_eq!(out.status.code(), Some(0), "{name}");
        assert_eq!(name == "piped", !out.stderr.is_empty(), "{name}");
        assert!(f(&read_json(std::path::Path::new(&json)), "total.count") > 0.0);
        let rates = "2000:4000:2000";
        let curve = path_in(dir.path(), &format!("{name}-scan.json"));
        let args = [
            "scan",
            "-s",
            &m.addr(),
            "--rates",
            rates,
            "-t",
            "0.3s",
            "--json",
            &curve,
        ];
        let out = with(&args, Stdio::null(), stderr_of(name));
        assert_eq!(out.status.code(), Some(0), "scan, stderr {name}");
        assert_eq!(name == "piped", !out.stderr.is_empty(), "scan, {name}");
        assert!(std::path::Path::new(&curve).exists());
    }
}

/// A stderr read back (`piped`), or one that fails: `/dev/full`, or a
/// pipe no one reads.
fn stderr_of(name: &str) -> Stdio {
    match name {
        "piped" => Stdio::piped(),
        "full" => full(),
        _ => closed_pipe(),
    }
}

#[test]
fn a_failing_stdout_is_exit_1_with_a_message() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let trace = path_in(dir.path(), "t.csv");
    std::fs::write(&trace, "0,k1,2,10,1,get,0\n1,k2,2,10,1,set,0\n").unwrap();
    let addr = m.addr();
    for args in [
        &["stats", "-s", &addr, "settings"][..],
        &["slabs", "-s", &addr],
        &["top", "-s", &addr, "--iterations", "1"],
        &["profiles"],
        &["trace-stat", "--trace-format", "twitter", &trace],
        &["run", "-s", &addr, "-x", "100"],
    ] {
        let out = with(args, full(), Stdio::piped());
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("to stdout: No space left on device"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[cfg(feature = "agents")]
#[test]
fn an_agent_with_a_failing_stderr_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let token = secret_file(dir.path(), "token", "0123456789abcdef0123\n");
    let port = free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(BIN)
        .args(["agent", "--token-file", &token, "--listen", &listen])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(full())
        .spawn()
        .unwrap();
    // It says it listens (on stderr, which fails) and goes on serving.
    wait_until_listening("agent", || std::net::TcpStream::connect(&listen).is_ok());
    std::thread::sleep(Duration::from_millis(300));
    let exited = child.try_wait().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(exited.is_none(), "the agent exited: {exited:?}");
}
