//! An agent as a trust boundary: a hostile client holding the token gets
//! no file read and no share past the agent's limits; a master that goes
//! away stops what it started; loose token files, plain text beyond
//! loopback and passwords in clear are refused before any traffic.

use crate::support;

use clap::Parser;
use mcbench::agent::pb::agent_client::AgentClient;
use mcbench::agent::pb::{HelloRequest, PrepareRequest};
use std::time::{Duration, Instant};
use support::*;

const TOKEN: &str = "trust-token-0123456789abcdef";

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

/// A one-second run on two connections, spread over `agents`, with
/// `extra` flags: its output and JSON.
fn agents_run(
    server: &str,
    token_file: &str,
    agents: &[&str],
    extra: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let mut args = vec!["run", "-s", server, "-t", "1s", "--no-load", "-c", "2"];
    args.extend(["--token-file", token_file]);
    for a in agents {
        args.extend(["--agent", a]);
    }
    args.extend(extra);
    run_json(&args)
}

/// How the fake agent lies.
#[derive(Clone, Copy, PartialEq)]
enum AgentLie {
    /// Its result's get count is 1,000 more than its histogram holds.
    Count,
    /// An interval's op is named as a spreadsheet formula.
    OpName,
    /// Its result's gets found 2^62 keys.
    Hits,
    /// Its result is true but for its rates: 61 M ops/s.
    Rate,
    /// It takes the run, and never sends a word.
    Silent,
}

/// A fake agent: says hello as `hostname`, takes any share, and answers
/// Run with `result` (a real run's JSON) told with `lie`.
struct FakeAgent {
    hostname: String,
    result: String,
    lie: AgentLie,
}

#[tonic::async_trait]
impl mcbench::agent::pb::agent_server::Agent for FakeAgent {
    async fn hello(
        &self,
        _: tonic::Request<HelloRequest>,
    ) -> Result<tonic::Response<mcbench::agent::pb::HelloReply>, tonic::Status> {
        Ok(tonic::Response::new(mcbench::agent::pb::HelloReply {
            protocol_version: mcbench::agent::PROTOCOL_VERSION,
            mcbench_version: "0".into(),
            hostname: self.hostname.clone(),
            cpus: 1,
            weight: 1,
            threads: 0,
        }))
    }

    async fn ping(
        &self,
        _: tonic::Request<mcbench::agent::pb::PingRequest>,
    ) -> Result<tonic::Response<mcbench::agent::pb::PingReply>, tonic::Status> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        Ok(tonic::Response::new(mcbench::agent::pb::PingReply {
            agent_unix_ns: now.as_nanos() as i64,
        }))
    }

    async fn prepare(
        &self,
        _: tonic::Request<PrepareRequest>,
    ) -> Result<tonic::Response<mcbench::agent::pb::PrepareReply>, tonic::Status> {
        Ok(tonic::Response::new(mcbench::agent::pb::PrepareReply {
            preloaded: 0,
        }))
    }

    type RunStream =
        tokio_stream::wrappers::ReceiverStream<Result<mcbench::agent::pb::RunEvent, tonic::Status>>;

    async fn run(
        &self,
        req: tonic::Request<mcbench::agent::pb::RunRequest>,
    ) -> Result<tonic::Response<Self::RunStream>, tonic::Status> {
        use mcbench::agent::pb::{run_event::Event, Final, Interval, OpInterval, RunEvent};
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let mut result: serde_json::Value = serde_json::from_str(&self.result).unwrap();
        if self.lie == AgentLie::Silent {
            tokio::spawn(async move {
                let _held = tx;
                tokio::time::sleep(Duration::from_secs(120)).await;
            });
            return Ok(tonic::Response::new(
                tokio_stream::wrappers::ReceiverStream::new(rx),
            ));
        }
        let event = match self.lie {
            AgentLie::Count => {
                let count = result["ops"]["get"]["count"].as_u64().unwrap();
                result["ops"]["get"]["count"] = (count + 1000).into();
                Event::Final(Final {
                    result_json: result.to_string(),
                })
            }
            AgentLie::Hits | AgentLie::Rate => {
                let (field, value) = match self.lie {
                    AgentLie::Hits => ("hits", 1u64 << 62),
                    _ => ("ok_rate", 61_000_000),
                };
                result["total"][field] = value.into();
                result["total"]["rate"] = value.into();
                Event::Final(Final {
                    result_json: result.to_string(),
                })
            }
            AgentLie::Silent => unreachable!("answered above"),
            AgentLie::OpName => Event::Interval(Interval {
                index: 0,
                time_s: 0.5,
                duration_s: 0.5,
                ops: vec![OpInterval {
                    op: "=HYPERLINK(\"http://x\")".into(),
                    latency_hdr: empty_hdr(),
                    service_time_hdr: empty_hdr(),
                    ..Default::default()
                }],
                send_lag_hdr: empty_hdr(),
                ..Default::default()
            }),
        };
        // Sent when a real agent's would be: the run's second after the
        // start instant.
        let start = req.into_inner().start_unix_ns;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let wait = (start - now.as_nanos() as i64).max(0) as u64 + 1_100_000_000;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_nanos(wait)).await;
            let _ = tx.send(Ok(RunEvent { event: Some(event) })).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        Ok(tonic::Response::new(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
    }

    async fn stop(
        &self,
        _: tonic::Request<mcbench::agent::pb::StopRequest>,
    ) -> Result<tonic::Response<mcbench::agent::pb::StopReply>, tonic::Status> {
        Ok(tonic::Response::new(mcbench::agent::pb::StopReply {
            stopped: true,
        }))
    }
}

/// An empty histogram as the API carries one (V2 compressed).
fn empty_hdr() -> Vec<u8> {
    mcbench::stats::Hdr::empty().bytes().to_vec()
}

/// Serves `agent` on a free loopback port, in a thread of its own.
fn serve_fake(agent: FakeAgent) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            tonic::transport::Server::builder()
                .add_service(mcbench::agent::pb::agent_server::AgentServer::new(agent))
                .serve_with_incoming(incoming)
                .await
                .unwrap();
        });
    });
    addr
}

/// A lying agent is a lost agent: with a real one beside it and
/// `--on-agent-loss continue`, the report holds the real agent's counts
/// (what memcached saw), names the liar and why, and nothing it chose to
/// print reaches the terminal unescaped.
#[test]
fn an_agent_that_does_not_add_up_is_lost_and_loses_nothing_else() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let sample = path_in(dir.path(), "sample.json");
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "-t",
        "1s",
        "--no-load",
        "--json",
        &sample,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sample = read_json(std::path::Path::new(&sample));
    for lie in [
        AgentLie::Count,
        AgentLie::OpName,
        AgentLie::Hits,
        AgentLie::Rate,
        AgentLie::Silent,
    ] {
        let fake = serve_fake(FakeAgent {
            hostname: "evil\u{1b}]0;owned\u{7}\u{1b}[2J".into(),
            result: sample.to_string(),
            lie,
        });
        let real = AgentProc::start(&tf, &[]);
        let before = m.stat("cmd_get") + m.stat("cmd_set");
        let csv = path_in(dir.path(), "r.csv");
        let (out, j) = agents_run(
            &m.addr(),
            &tf,
            &[&real.addr, &fake],
            &["--on-agent-loss", "continue", "--csv", &csv],
        );
        let err = stderr(&out);
        assert!(
            !err.contains('\u{1b}'),
            "an escape reached the terminal: {err:?}"
        );
        assert_eq!(out.status.code(), Some(0), "{err}");
        let rows = j["agents"].as_array().unwrap();
        let liar = rows.iter().find(|r| r["name"] == fake.as_str()).unwrap();
        let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
        let why = match lie {
            AgentLie::Count => "its result does not add up: total: a count of",
            AgentLie::OpName => "mcbench does not send",
            AgentLie::Hits => "total: 4611686018427387904 hits and",
            // Its counts add up (they are the sample run's), but a rate
            // is not its count over its time.
            AgentLie::Rate => "total: rate says 61000000",
            // Given up on after three intervals, the timeout and 2 s.
            AgentLie::Silent => "nothing for",
        };
        assert!(liar["lost_why"].as_str().unwrap().contains(why), "{liar}");
        // Only the real agent's requests count, as the server saw them.
        assert_eq!(f(&j, "total.count") as u64, served, "{}", j["total"]);
        let table = std::fs::read_to_string(&csv).unwrap();
        assert!(!table.contains("HYPERLINK"), "{table}");
    }
}

/// The agent's CPU time so far, s (user + system, from /proc).
fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // utime and stime are fields 14 and 15 of stat, 12 and 13 here.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// Whether the agent has closed `s`: a read sees the end or a reset.
fn closed_by_peer(mut s: &std::net::TcpStream) -> bool {
    use std::io::Read;
    s.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 64];
    loop {
        match s.read(&mut byte) {
            Ok(0) => return true,
            Ok(_) => continue, // the server's own preface and settings
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// Opens `n` connections to `addr` that say `hello` and nothing more.
fn strangers(addr: &str, n: usize, hello: &[u8]) -> Vec<std::net::TcpStream> {
    use std::io::Write;
    (0..n)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(hello).unwrap();
            s
        })
        .collect()
}

/// Waits (at most 30 s) until the agent has closed every one of `held`;
/// how many it left open.
fn left_open(held: &[std::net::TcpStream]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let open = held.iter().filter(|s| !closed_by_peer(s)).count();
        if open == 0 || Instant::now() > deadline {
            return open;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// 250 strangers holding connections open (a bare HTTP/2 preface, or a
/// TLS agent's TCP without a ClientHello) against an agent with 128 file
/// descriptors: a master still gets in and runs, the agent does not spin,
/// and every stranger is closed within the handshake timeout.
#[test]
fn strangers_holding_connections_open_cannot_lock_an_agent() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let tf = secret_file(dir.path(), "token", &format!("{TOKEN}\n"));
    let nofile = |cmd: &mut std::process::Command| with_rlimit(cmd, libc::RLIMIT_NOFILE, 128);
    let agent = AgentProc::start_with(&tf, &[], nofile);
    let held = strangers(&agent.addr, 250, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    // Idle strangers cost nothing: well under a core over 2 s (a loop on
    // EMFILE took all of one).
    let pid = agent.pid();
    let (cpu0, t0) = (cpu_s(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let busy = (cpu_s(pid) - cpu0) / t0.elapsed().as_secs_f64();
    assert!(busy < 0.5, "the agent used {:.0} % of a core", busy * 100.0);
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let (out, j) = agents_run(&m.addr(), &tf, &[&agent.addr], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert!(served > 0);
    assert_eq!(f(&j, "total.count") as u64, served);
    assert_eq!(left_open(&held), 0, "strangers still connected");

    let (cert, key) = self_signed(dir.path());
    let tls = AgentProc::start_with(&tf, &["--tls-cert", &cert, "--tls-key", &key], nofile);
    let held = strangers(&tls.addr, 250, b"");
    assert_eq!(left_open(&held), 0, "TLS strangers still connected");
}
