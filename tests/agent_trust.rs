//! An agent as a trust boundary: a hostile client holding the token gets
//! no file read and no share past the agent's limits; a master that goes
//! away stops what it started; loose token files, plain text beyond
//! loopback and passwords in clear are refused before any traffic.

#![cfg(feature = "agents")]

mod support;

use clap::Parser;
use mcbench::agent::pb::agent_client::AgentClient;
use mcbench::agent::pb::{HelloRequest, PrepareRequest};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const TOKEN: &str = "trust-token-0123456789abcdef";

/// An agent on a free loopback port; killed (by its PID) when dropped.
struct AgentProc {
    child: Child,
    addr: String,
}

impl AgentProc {
    fn start(token_file: &str, extra: &[&str]) -> AgentProc {
        let addr = format!("127.0.0.1:{}", free_port());
        let child = Command::new(BIN)
            .args(["agent", "--listen", &addr, "--token-file", token_file])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until_listening(&addr, || std::net::TcpStream::connect(&addr).is_ok());
        AgentProc { child, addr }
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run's spec as `mcbench run ARGS` makes it, as JSON: what a hostile
/// client sends as a share.
fn spec_json(args: &[&str]) -> String {
    let argv = ["mcbench", "run"].iter().chain(args);
    let spec = match mcbench::cli::Cli::parse_from(argv).command {
        mcbench::cli::Command::Run(a) => a.to_spec().unwrap(),
        _ => unreachable!(),
    };
    serde_json::to_string(&spec).unwrap()
}

/// Sends `spec_json` to the agent at `addr` as a Prepare with the token;
/// the agent's answer.
fn prepare(addr: &str, spec_json: String) -> Result<u64, tonic::Status> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let header: tonic::metadata::MetadataValue<_> = format!("Bearer {TOKEN}").parse().unwrap();
        let mut client = AgentClient::with_interceptor(channel, move |mut r: tonic::Request<()>| {
            r.metadata_mut().insert("authorization", header.clone());
            Ok(r)
        });
        client
            .hello(HelloRequest {
                protocol_version: 1,
            })
            .await?;
        let req = PrepareRequest {
            spec_json,
            name: "hostile".into(),
            password: String::new(),
        };
        Ok(client.prepare(req).await?.into_inner().preloaded)
    })
}

/// A watch on `path` that sees any open of it (inotify `IN_OPEN`).
struct OpenWatch(i32);

impl OpenWatch {
    fn new(path: &std::path::Path) -> OpenWatch {
        let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: plain inotify calls on a descriptor this watch owns.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_NONBLOCK);
            assert!(fd >= 0);
            assert!(
                libc::inotify_add_watch(fd, name.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS) >= 0
            );
            OpenWatch(fd)
        }
    }

    /// Whether anything opened or read the file since the watch began.
    fn touched(&self) -> bool {
        let mut buf = [0u8; 4096];
        // SAFETY: reads into a buffer of its own size.
        let n = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
        n > 0
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this watch's own.
        unsafe { libc::close(self.0) };
    }
}

/// A share naming a trace on the agent's machine is refused without the
/// file being opened, and a share past the agent's limits is refused
/// without locking it: the next share is taken.
#[test]
fn an_agent_reads_no_file_a_share_names_and_keeps_to_its_limits() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "1,password-line,14,10,0,get,0\n").unwrap();
    let agent = AgentProc::start(&tf, &["--max-keys", "1000"]);
    let traced = spec_json(&[
        "-s",
        &m.addr(),
        "--trace",
        secret.to_str().unwrap(),
        "-t",
        "1s",
    ]);
    let watch = OpenWatch::new(&secret);
    let refused = prepare(&agent.addr, traced).unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("trace"), "{refused:?}");
    assert!(
        !watch.touched(),
        "the agent opened the file the share named"
    );
    assert_eq!(m.stat("cmd_get"), 0);
    let huge = spec_json(&["-s", &m.addr(), "-r", "4611686018427387904", "-t", "1s"]);
    let refused = prepare(&agent.addr, huge).unwrap_err();
    assert!(refused.message().contains("--max-keys"), "{refused:?}");
    assert_eq!(m.stat("cmd_set"), 0, "a refused share preloaded");
    // Not locked: a share within the limits is taken, and preloaded.
    let fine = spec_json(&["-s", &m.addr(), "-r", "1000", "-t", "1s"]);
    assert_eq!(prepare(&agent.addr, fine).unwrap(), 1000);
    assert_eq!(m.stat("cmd_set"), 1000);
}

/// A master stopped during the agents' preload leaves no agent
/// preloading: the server stops seeing sets, and the next master is not
/// refused as busy.
#[test]
fn a_master_gone_during_the_preload_stops_the_agent() {
    let _machine = shared_machine();
    let m = Memcached::start(&["-m", "1024"]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let agent = AgentProc::start(&tf, &[]);
    let args = |keys: &'static str| {
        let a = [
            "run",
            "-s",
            &m.addr(),
            "-r",
            keys,
            "-t",
            "1s",
            "--agent",
            &agent.addr,
        ];
        let mut v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        v.extend(["--token-file".into(), tf.clone()]);
        v
    };
    let big: Vec<String> = args("5000000");
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    let master = spawn_mcbench(&big, &[]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while m.stat("cmd_set") < 1000 {
        assert!(
            Instant::now() < deadline,
            "the agent never began its preload"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a process this test started and has not reaped.
    unsafe { libc::kill(master.id() as i32, libc::SIGINT) };
    let out = wait_bounded(master, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    // The sets stop: two readings a second apart agree, well short of
    // the 5 million keys.
    let settled = Instant::now() + Duration::from_secs(20);
    let mut last = m.stat("cmd_set");
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = m.stat("cmd_set");
        if now == last {
            break;
        }
        assert!(Instant::now() < settled, "the agent went on preloading");
        last = now;
    }
    assert!(last < 5_000_000, "{last} sets: the preload was not stopped");
    let small: Vec<String> = args("1000");
    let small: Vec<&str> = small.iter().map(String::as_str).collect();
    let out = mcbench(&small);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// What is refused before any traffic: a token file others may read, an
/// agent in plain text beyond loopback, a password to agents in clear.
#[test]
fn loose_tokens_plain_text_beyond_loopback_and_passwords_in_clear_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let loose = dir.path().join("loose");
    std::fs::write(&loose, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let loose = loose.to_str().unwrap();
    let out = mcbench(&["agent", "--token-file", loose]);
    assert_usage_error(&out, &format!("chmod 600 {loose}"));
    let out = mcbench(&[
        "run",
        "-s",
        "127.0.0.1:1",
        "--agent",
        "127.0.0.1:9",
        "--token-file",
        loose,
    ]);
    assert_usage_error(&out, "chmod 600");
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let out = mcbench(&["agent", "--listen", "0.0.0.0:0", "--token-file", &tf]);
    assert_usage_error(&out, "--insecure-plaintext");
    let out = mcbench(&[
        "run",
        "-s",
        "127.0.0.1:1",
        "-t",
        "1s",
        "--agent",
        "127.0.0.1:9",
        "--token-file",
        &tf,
        "--protocol",
        "binary",
        "-U",
        "bench",
        "-P",
        "secret",
    ]);
    assert_usage_error(&out, "only over TLS");
}
