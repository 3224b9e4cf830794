//! Test support: a real memcached on a free loopback port, fake servers that
//! misbehave, and running the mcbench binary as a user would.

#![allow(dead_code)]

pub mod prometheus;
pub mod tools;

use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcbench");

/// Tests that judge timing (rates, send lag) take this lock exclusively so
/// that the other tests' load on the 2-core machine does not disturb them;
/// every other test holds it shared.
static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

pub fn quiet_machine() -> std::sync::RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(|e| e.into_inner())
}

pub fn shared_machine() -> std::sync::RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(|e| e.into_inner())
}

/// A memcached started for one test, stopped by its PID on drop.
pub struct Memcached {
    child: Child,
    /// Its plain port (`stats` is read there).
    pub port: u16,
    /// `start_tls`: the port that speaks TLS (0: none).
    pub tls_port: u16,
}

impl Memcached {
    pub fn start(extra: &[&str]) -> Memcached {
        Memcached::start_env(extra, &[])
    }

    /// A memcached with `env` added to its environment.
    pub fn start_env(extra: &[&str], env: &[(&str, &Path)]) -> Memcached {
        Memcached::on_free_port(
            |port| format!("-l 127.0.0.1 -U 0 -p {port}"),
            extra,
            env,
            None,
        )
    }

    /// A memcached that logs every command it reads, and its answer, to
    /// `log` (`-vv`): the server's own record of what reached it. One
    /// worker thread, as threads' log lines would interleave mid-line.
    pub fn start_logged(extra: &[&str], log: &Path) -> Memcached {
        let mut args = vec!["-vv", "-t", "1"];
        args.extend(extra);
        Memcached::on_free_port(
            |port| format!("-l 127.0.0.1 -U 0 -p {port}"),
            &args,
            &[],
            Some(log),
        )
    }

    /// A memcached speaking TLS (`-Z`) on `tls_port` with `cert` and
    /// `key`, and `ssl_opts` added to its `-o` (`ssl_verify_mode=2,...`);
    /// its plain port answers `stats`.
    pub fn start_tls(cert: &str, key: &str, ssl_opts: &str) -> Memcached {
        Memcached::start_tls_with(cert, key, ssl_opts, &[], &[])
    }

    /// `start_tls` with `extra` arguments and `env` (`-S` and its SASL
    /// configuration).
    pub fn start_tls_with(
        cert: &str,
        key: &str,
        ssl_opts: &str,
        extra: &[&str],
        env: &[(&str, &Path)],
    ) -> Memcached {
        let tls_port = free_port();
        let mut opts = format!("ssl_chain_cert={cert},ssl_key={key}");
        if !ssl_opts.is_empty() {
            opts = format!("{opts},{ssl_opts}");
        }
        let mut args = vec!["-Z", "-o", &opts];
        args.extend(extra);
        let mut m = Memcached::on_free_port(
            |port| format!("-l 127.0.0.1:{tls_port},notls:127.0.0.1:{port} -U 0 -p {port}"),
            &args,
            env,
            None,
        );
        m.tls_port = tls_port;
        m
    }

    /// The TLS port as `localhost:PORT`: the name the test certificates
    /// carry.
    pub fn tls_addr(&self) -> String {
        format!("localhost:{}", self.tls_port)
    }

    /// A memcached that also listens for UDP on its TCP port number.
    pub fn start_udp() -> Memcached {
        Memcached::on_free_port(
            |port| format!("-l 127.0.0.1 -U {port} -p {port}"),
            &[],
            &[],
            None,
        )
    }

    /// A memcached on a port that was free a moment ago. Another test's
    /// server may take the port first: then the one answering there is not
    /// ours (its `stats` pid differs), and a new port is tried. A server
    /// that asks for authentication (`-Y`, `-S`) answers no plain `stats`:
    /// it is taken as it is.
    fn on_free_port(
        listen: impl Fn(u16) -> String,
        extra: &[&str],
        env: &[(&str, &Path)],
        log: Option<&Path>,
    ) -> Memcached {
        for _ in 0..5 {
            let port = free_port();
            let args: Vec<String> = listen(port).split(' ').map(String::from).collect();
            let mut m = Memcached::launch(port, &args, extra, env, log);
            let authenticating = extra.iter().any(|a| *a == "-Y" || *a == "-S");
            if authenticating {
                // Its `stats` needs credentials: ours if it still runs a
                // moment later (one that lost the port exits at once, and
                // the listener found was another test's).
                thread::sleep(Duration::from_millis(100));
                if m.child.try_wait().ok().flatten().is_none() {
                    return m;
                }
                continue;
            }
            if m.try_stat("pid") == Some(u64::from(m.child.id())) {
                return m;
            }
        }
        panic!("no free port for memcached after 5 tries");
    }

    /// A memcached listening only on the unix socket `path` (`-s`).
    pub fn start_unix(path: &Path) -> Memcached {
        let listen = ["-s".to_string(), path.display().to_string()];
        let m = Memcached::launch(0, &listen, &[], &[], None);
        wait_until_listening("memcached", || UnixStream::connect(path).is_ok());
        m
    }

    /// Starts memcached (as root when root must say so); waits for its TCP
    /// port unless it has none (`port` 0).
    fn launch(
        port: u16,
        listen: &[String],
        extra: &[&str],
        env: &[(&str, &Path)],
        log: Option<&Path>,
    ) -> Memcached {
        let mut cmd = Command::new("memcached");
        cmd.envs(env.iter().copied());
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-u", "root"]);
        }
        let child = cmd
            .args(listen)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(match log {
                Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
                None => Stdio::null(),
            })
            .spawn()
            .expect("memcached must be installed (see .ci/run)");
        let m = Memcached {
            child,
            port,
            tls_port: 0,
        };
        // Waited for with `stats` where it answers one: a connection that
        // is only opened may be counted (`total_connections`) after a
        // later one that was answered (each worker thread counts its own),
        // and a test that counts the run's connections would count it too.
        let authenticating = extra.iter().any(|a| *a == "-Y" || *a == "-S");
        match port {
            0 => {}
            _ if authenticating => {
                wait_until_listening("memcached", || TcpStream::connect(m.addr()).is_ok())
            }
            _ => wait_until_listening("memcached", || m.try_stat("pid").is_some()),
        }
        m
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Kills this memcached (SIGKILL, as a crash); `restart` starts a
    /// new, empty one on the same port.
    /// Stops this memcached (SIGSTOP, by its PID) for `d`, then lets it
    /// go on: a stall of exactly that length, whatever the machine.
    pub fn pause_for(&mut self, d: Duration) {
        let pid = self.pid();
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        thread::sleep(d);
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }

    pub fn crash(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a new memcached on the port of one that crashed.
    pub fn restart(&mut self) {
        let listen: Vec<String> = format!("-l 127.0.0.1 -U 0 -p {}", self.port)
            .split(' ')
            .map(String::from)
            .collect();
        let fresh = Memcached::launch(self.port, &listen, &[], &[], None);
        *self = fresh;
    }

    /// One value of `stats`.
    pub fn stat(&self, name: &str) -> u64 {
        self.try_stat(name)
            .unwrap_or_else(|| panic!("no stat {name} from {}", self.addr()))
    }

    /// One value of `stats`, if whatever listens at the port gives it.
    pub fn try_stat(&self, name: &str) -> Option<u64> {
        stat_at(&self.addr(), name)
    }
}

/// One value of `stats` from whatever listens at `addr`, if it gives it.
pub fn stat_at(addr: &str, name: &str) -> Option<u64> {
    let text = stats_text(addr, "stats")?;
    let prefix = format!("STAT {name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))?
        .trim()
        .parse()
        .ok()
}

/// The reply to a `stats` command (`stats`, `stats items`) from `addr`.
fn stats_text(addr: &str, command: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("{command}\r\n").as_bytes()).ok()?;
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    while !text.ends_with("END\r\n") {
        match s.read(&mut buf) {
            Ok(n) if n > 0 => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            _ => return None,
        }
    }
    Some(text)
}

impl Memcached {
    /// A `stats items` counter summed over the slab classes
    /// (`items:N:outofmemory`, …).
    pub fn items_sum(&self, field: &str) -> u64 {
        let text = stats_text(&self.addr(), "stats items").expect("stats items");
        let suffix = format!(":{field}");
        text.lines()
            .filter_map(|l| l.strip_prefix("STAT items:")?.split_once(' '))
            .filter(|(name, _)| name.ends_with(&suffix))
            .map(|(_, v)| v.trim().parse::<u64>().expect("a count"))
            .sum()
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (up to 5 s) until `listening` says a server accepts connections.
pub fn wait_until_listening(what: &str, listening: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !listening() {
        assert!(Instant::now() < deadline, "{what} did not start");
        thread::sleep(Duration::from_millis(20));
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `mcbench` with `args`; returns its output. Never waits past 60 s.
pub fn mcbench(args: &[&str]) -> Output {
    mcbench_env(args, &[])
}

pub fn mcbench_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    wait_bounded(spawn_mcbench(args, env), Duration::from_secs(60))
}

/// Starts `mcbench args` with its output piped, for a test that acts on
/// it while it runs (signals, stopping the server); `wait_bounded` ends it.
pub fn spawn_mcbench(args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("MEMCACHED_SERVERS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child`, reading its pipes meanwhile (a result larger than a
/// pipe's buffer would otherwise block it); kills it after `limit`.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<Vec<u8>> {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcbench did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A usage error, refused before any traffic: exit 2 with `needle` in the
/// message.
pub fn assert_usage_error(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(
        stderr(out).contains(needle),
        "wanted '{needle}' in: {}",
        stderr(out)
    );
}

/// Runs with `--json -` and parses the JSON on stdout.
pub fn run_json(args: &[&str]) -> (Output, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--json", "-"]);
    let out = mcbench(&all);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}); status {:?}; stderr:\n{}",
            out.status,
            stderr(&out)
        )
    });
    (out, json)
}

/// What a fake server does with each connection.
#[derive(Clone, Copy)]
pub enum Misbehaviour {
    /// Answers `count` requests correctly, then closes.
    CloseAfter(usize),
    /// Answers `count` requests correctly, then half of a reply, and closes.
    CutAfter(usize),
    /// Answers every request with bytes that are no memcached reply.
    Garbage,
    /// Reads requests and never answers.
    Stall,
    /// Answers the first request with the header of a ~900 MB value and
    /// streams bytes of it until the client hangs up.
    Flood,
    /// Answers the first request with half a reply, then one byte of it
    /// every 100 ms, never finishing.
    Dribble,
    /// Answers `count` requests correctly, then reads and never answers.
    StallAfter(usize),
    /// Stores nothing and forgets nothing: every set is STORED, every get
    /// finds a one-byte value, whatever its expiry said.
    NeverForgets,
    /// The first connection accepted closes after `count` answers, as
    /// `CloseAfter`; the later ones answer for ever.
    FirstClosesAfter(usize),
    /// Answers every get (a miss) and set correctly, each this long after
    /// it read the request: a server whose latency is known.
    AnswersAfter(Duration),
    /// As `AnswersAfter`, each request's wait drawn anew, uniform between
    /// the two: a tail made of independent samples, not of this host's
    /// hiccups (seeded per connection).
    AnswersAfterUniform(Duration, Duration),
}

/// A listener that never accepts: connections complete in the kernel's
/// backlog and are never read. Keep the listener alive while it is used.
pub fn silent_listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

/// A server on a free port that hands each connection to `serve` on a
/// thread of its own; its threads end when the test process does.
pub fn serve_each(serve: fn(std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// A fake server on a free port; its threads end when the test process does.
pub fn fake_server(how: Misbehaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for (i, stream) in listener.incoming().flatten().enumerate() {
            let how = match how {
                Misbehaviour::FirstClosesAfter(k) if i == 0 => Misbehaviour::CloseAfter(k),
                Misbehaviour::FirstClosesAfter(_) => Misbehaviour::CloseAfter(usize::MAX),
                other => other,
            };
            thread::spawn(move || serve_badly(stream, how, i as u64));
        }
    });
    addr
}

fn serve_badly(mut s: TcpStream, how: Misbehaviour, seed: u64) {
    use rand::{Rng, SeedableRng};
    // As memcached: no answer waits for the client's delayed ACK.
    let _ = s.set_nodelay(true);
    let mut buf = [0u8; 65536];
    let mut answered = 0;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if let Misbehaviour::Dribble = how {
            let _ = s.write_all(b"VALUE k 0 100\r\nxx");
            while s.write_all(b"x").is_ok() {
                thread::sleep(Duration::from_millis(100));
            }
            return;
        }
        if let Misbehaviour::Flood = how {
            let _ = s.write_all(b"VALUE k 0 900000000\r\n");
            let chunk = [b'x'; 65536];
            while s.write_all(&chunk).is_ok() {}
            return;
        }
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        for line in text.split("\r\n") {
            let request = line.starts_with("get ") || line.starts_with("set ");
            let value;
            let reply: &[u8] = match how {
                Misbehaviour::NeverForgets => match line.strip_prefix("get ") {
                    Some(key) => {
                        value = format!("VALUE {key} 0 1\r\nx\r\nEND\r\n");
                        value.as_bytes()
                    }
                    None if line.starts_with("set ") => b"STORED\r\n",
                    None => continue,
                },
                Misbehaviour::Stall | Misbehaviour::Flood | Misbehaviour::Dribble => continue,
                Misbehaviour::Garbage => b"HELLO THERE\r\n",
                Misbehaviour::CloseAfter(k) if answered >= k => return,
                Misbehaviour::StallAfter(k) if answered >= k => continue,
                // Half a reply, but only to a request: unasked bytes would
                // be the server's error, not the client's.
                Misbehaviour::CutAfter(k) if answered >= k && request => {
                    let _ = s.write_all(b"VALUE k 0 5\r\nhe");
                    return;
                }
                Misbehaviour::CloseAfter(_)
                | Misbehaviour::CutAfter(_)
                | Misbehaviour::StallAfter(_)
                | Misbehaviour::FirstClosesAfter(_)
                | Misbehaviour::AnswersAfter(_)
                | Misbehaviour::AnswersAfterUniform(..) => match line {
                    l if l.starts_with("get ") => b"END\r\n",
                    l if l.starts_with("set ") => b"STORED\r\n",
                    _ => continue,
                },
            };
            answered += 1;
            match how {
                Misbehaviour::AnswersAfter(delay) => thread::sleep(delay),
                Misbehaviour::AnswersAfterUniform(lo, hi) => thread::sleep(rng.gen_range(lo..=hi)),
                _ => {}
            }
            if s.write_all(reply).is_err() {
                return;
            }
        }
    }
}

/// A server that answers every get (a miss) and set at once, but for
/// the pauses it was given: (start, length) after the first request it
/// reads, during which it answers nothing (a stall of the whole server,
/// every connection at once). It counts, per pause, the requests it held.
pub struct PausingServer {
    pub addr: String,
    held: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
}

impl PausingServer {
    pub fn start(pauses: &[(Duration, Duration)]) -> PausingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let held = std::sync::Arc::new(std::sync::Mutex::new(vec![0u64; pauses.len()]));
        let first = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
        let pauses = pauses.to_vec();
        let counts = held.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (first, pauses, counts) = (first.clone(), pauses.clone(), counts.clone());
                thread::spawn(move || serve_pausing(stream, &first, &pauses, &counts));
            }
        });
        PausingServer { addr, held }
    }

    /// Requests each pause held, in the order the pauses were given.
    pub fn held(&self) -> Vec<u64> {
        self.held.lock().unwrap().clone()
    }
}

fn serve_pausing(
    mut s: TcpStream,
    first: &std::sync::OnceLock<Instant>,
    pauses: &[(Duration, Duration)],
    held: &std::sync::Mutex<Vec<u64>>,
) {
    let _ = s.set_nodelay(true);
    let mut buf = [0u8; 65536];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let start = *first.get_or_init(Instant::now);
        let mut reply = Vec::new();
        for line in String::from_utf8_lossy(&buf[..n]).split("\r\n") {
            if line.starts_with("get ") {
                reply.extend_from_slice(b"END\r\n");
            } else if line.starts_with("set ") {
                reply.extend_from_slice(b"STORED\r\n");
            }
        }
        let now = start.elapsed();
        if let Some(i) = pauses
            .iter()
            .position(|(at, len)| now >= *at && now < *at + *len)
        {
            held.lock().unwrap()[i] += 1;
            thread::sleep(pauses[i].0 + pauses[i].1 - now);
        }
        if s.write_all(&reply).is_err() {
            return;
        }
    }
}

/// A scripted server that serves exactly `ops_per_s` gets and sets a
/// second, whatever the machine's speed: one queue across its
/// connections, each request done a fixed service time after the later of
/// its arrival and the previous request's end (a D-server queue). Below
/// its capacity an answer takes about the service time; above it the
/// queue, and every latency, grows for as long as the load lasts: a knee
/// at `ops_per_s` exactly. (The answer is written when its time comes: a
/// late wake-up adds to that answer's latency, never to the capacity.)
pub fn capped_server(ops_per_s: f64) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let service = Duration::from_secs_f64(1.0 / ops_per_s);
    let busy_until = std::sync::Arc::new(std::sync::Mutex::new(Instant::now()));
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let busy_until = busy_until.clone();
            thread::spawn(move || serve_capped(stream, service, &busy_until));
        }
    });
    addr
}

fn serve_capped(s: TcpStream, service: Duration, busy_until: &std::sync::Mutex<Instant>) {
    serve_gets_and_sets(s, || {
        let done = {
            let mut until = busy_until.lock().unwrap();
            *until = (*until).max(Instant::now()) + service;
            *until
        };
        thread::sleep(done.saturating_duration_since(Instant::now()));
    });
}

/// Answers each get (a miss) and set on `s`, calling `before_reply` first
/// (where a scripted server takes its time), until the client hangs up.
fn serve_gets_and_sets(mut s: TcpStream, mut before_reply: impl FnMut()) {
    let _ = s.set_nodelay(true);
    let mut pending = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        // Whole lines only; a set's data line is skipped as any other.
        while let Some(end) = pending.windows(2).position(|w| w == b"\r\n") {
            let line: Vec<u8> = pending.drain(..end + 2).collect();
            let reply: &[u8] = match &line[..4.min(line.len())] {
                b"get " => b"END\r\n",
                b"set " => b"STORED\r\n",
                _ => continue,
            };
            before_reply();
            if s.write_all(reply).is_err() {
                return;
            }
        }
    }
}

/// A scripted server that keeps a state from its load: it answers gets
/// and sets at once until it has served `fast` requests in all, then each
/// `slow` later. Counted, not timed: the same on any machine.
pub fn slows_after(fast: usize, slow: Duration) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let served = served.clone();
            thread::spawn(move || {
                serve_gets_and_sets(stream, || {
                    if served.fetch_add(1, Ordering::Relaxed) >= fast {
                        thread::sleep(slow);
                    }
                })
            });
        }
    });
    addr
}

/// Sets `resource` (`libc::RLIMIT_*`) to `limit` in the process `cmd`
/// starts, before it runs.
pub fn with_rlimit(cmd: &mut Command, resource: libc::__rlimit_resource_t, limit: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs here.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A result saved at `dir`/`name` by a run of 300 requests against a
/// scripted server that answers at once, with `extra` flags: a saved
/// result to read back, in a fraction of a second.
pub fn quick_result(dir: &Path, name: &str, extra: &[&str]) -> String {
    let server = fake_server(Misbehaviour::AnswersAfter(Duration::ZERO));
    let path = path_in(dir, name);
    let mut args = vec![
        "run",
        "-s",
        &server,
        "-x",
        "300",
        "--no-load",
        "--json",
        &path,
    ];
    args.extend(extra);
    let out = mcbench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    path
}

/// A count at a dotted `path` of a JSON result.
pub fn count(v: &serde_json::Value, path: &str) -> u64 {
    f(v, path) as u64
}

/// The number at a dotted `path` of a JSON result (`total.latency_us.p99`).
pub fn f(v: &serde_json::Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// A histogram as the JSON holds it, decoded by the hdrhistogram crate.
pub fn hdr(v: &Value) -> Histogram<u64> {
    let text = v.as_str().unwrap_or_else(|| panic!("no histogram in {v}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("a V2 compressed histogram")
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn path_in(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Runs `mcbench run -s addr args... --json DIR/name.json` and returns the
/// output and the parsed JSON.
pub fn run_to(dir: &Path, name: &str, addr: &str, args: &[&str]) -> (std::process::Output, Value) {
    let json = path_in(dir, &format!("{name}.json"));
    let mut all = vec!["run", "-s", addr, "--json", &json];
    all.extend(args);
    let out = mcbench(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = read_json(Path::new(&json));
    (out, j)
}

/// The latencies of a `--save` file, each row checked for form.
pub fn sample_latencies(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "intended_ns\top\tlatency_ns\tservice_ns\treply\t\
             client_queue_ns\tsend_path_ns\tnetwork_server_ns\tclient_receive_ns"
        )
    );
    lines
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 9, "{l}");
            let latency: u64 = cols[2].parse().unwrap();
            let service: u64 = cols[3].parse().unwrap();
            assert!(latency >= service, "{l}");
            assert!(["get", "set"].contains(&cols[1]), "{l}");
            latency
        })
        .collect()
}

/// memcached's reply to `get key`, read to its END.
pub fn raw_get(m: &Memcached, key: &str) -> String {
    let mut s = std::net::TcpStream::connect(m.addr()).unwrap();
    s.write_all(format!("get {key}\r\n").as_bytes()).unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 65536];
    while !reply.ends_with(b"END\r\n") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        reply.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&reply).into_owned()
}

/// Runs `cmd` with `keys` on its standard input, one per line (written
/// from a thread, so a large input cannot block on a full pipe).
pub fn feed_keys(cmd: &mut Command, keys: &[Vec<u8>]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut input = child.stdin.take().unwrap();
    let body: Vec<u8> = keys
        .iter()
        .flat_map(|k| k.iter().copied().chain([b'\n']))
        .collect();
    let writer = thread::spawn(move || input.write_all(&body));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// The server index of each of `keys` under `mcbench route ARGS`.
pub fn route_keys(args: &[&str], keys: &[Vec<u8>]) -> Vec<usize> {
    let out = feed_keys(Command::new(BIN).arg("route").args(args), keys);
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            // KEY \t INDEX \t ADDRESS; the key may hold any byte but \n.
            let cols: Vec<&[u8]> = l.rsplitn(3, |&b| b == b'\t').collect();
            std::str::from_utf8(cols[1]).unwrap().parse().unwrap()
        })
        .collect()
}

/// `mcbench run -s ADDR ARGS... --json -`, which must exit 0; its output
/// and JSON.
pub fn run_ok(addr: &str, args: &[&str]) -> (Output, Value) {
    let mut all = vec!["run", "-s", addr];
    all.extend(args);
    let (out, json) = run_json(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (out, json)
}

/// A redis-server started for one test on a free loopback port, stopped by
/// its PID on drop; `None` when redis-server is not installed.
pub struct Redis {
    child: Child,
    pub port: u16,
    /// Its working directory: a replica writes the primary's copy there.
    _dir: tempfile::TempDir,
}

impl Redis {
    pub fn start() -> Option<Redis> {
        Redis::start_with(&[])
    }

    /// With `extra` arguments (`--replicaof HOST PORT`, ...).
    pub fn start_with(extra: &[&str]) -> Option<Redis> {
        let port = free_port();
        let port_text = port.to_string();
        let dir = tempfile::tempdir().ok()?;
        let dir_text = dir.path().to_str()?.to_string();
        let mut args = vec![
            "--dir",
            &dir_text,
            "--logfile",
            "redis.log",
            "--port",
            &port_text,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ];
        args.extend_from_slice(extra);
        let child = Command::new("redis-server")
            .args(&args)
            .stdout(Stdio::null())
            .spawn()
            .ok()?;
        let redis = Redis {
            child,
            port,
            _dir: dir,
        };
        wait_until_listening("redis-server", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(redis)
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// What it logged, for a failing test's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("redis.log")).unwrap_or_default()
    }

    /// One field of `INFO section`, as text.
    pub fn info_text(&self, section: &str, field: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        s.write_all(format!("INFO {section}\r\n").as_bytes()).ok()?;
        // A bulk string: $<len>\r\n<text>\r\n.
        let mut raw = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            let n = s.read(&mut buf).ok()?;
            if n == 0 {
                return None;
            }
            raw.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&raw);
            let (head, body) = text.split_once("\r\n")?;
            let len: usize = head.strip_prefix('$')?.parse().ok()?;
            if body.len() >= len {
                let prefix = format!("{field}:");
                return body[..len]
                    .lines()
                    .find_map(|l| l.strip_prefix(&prefix))
                    .map(|v| v.trim().to_string());
            }
        }
    }

    /// One numeric field of `INFO stats`.
    pub fn info(&self, field: &str) -> u64 {
        self.info_text("stats", field)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in INFO stats"))
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Chromium, or a failure saying how to get it: the HTML test must not
/// pass without it.
pub fn chromium() -> PathBuf {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            let ok = Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| PathBuf::from(b))
        })
        .expect("the HTML test needs Chromium: apt-get install chromium (see .ci/run)")
}

/// Headless Chromium with `args`, killed if it takes over a minute.
pub fn in_chromium(args: &[String]) -> std::process::Output {
    let child = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child, std::time::Duration::from_secs(60))
}

/// Renders `page` in headless Chromium with a probe script added, and
/// returns, per chart, its data lines (the 3 px wide polylines that laid
/// out with a width) and their colours.
pub fn drawn_charts(page: &Path) -> Vec<(usize, Vec<String>)> {
    let probe = probe_page(page, 1280);
    probe["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let lines = c["lines"].as_array().unwrap();
            let mut colours: Vec<String> = lines
                .iter()
                .map(|l| l["stroke"].as_str().unwrap().to_string())
                .collect();
            colours.dedup();
            (lines.len(), colours)
        })
        .collect()
}

pub fn screenshot(page: &Path, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(name);
    let _ = std::fs::remove_file(&png);
    let out = in_chromium(&[
        "--hide-scrollbars".into(),
        "--window-size=1600,3000".into(),
        format!("--screenshot={}", png.display()),
        format!("file://{}", page.display()),
    ]);
    let size = std::fs::metadata(&png).map_or(0, |m| m.len());
    assert!(
        size > 20_000,
        "screenshot {size} bytes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    png
}

/// What Chromium laid out of an HTML report at `width` CSS pixels: the
/// sections in order; per chart its title, data lines (stroke, dash, and
/// how many of their points fall inside the legend's box), legend
/// entries and width; the headline's figures and where they end; each
/// latency-parts bar's width, its parts' widths and the figures beside it; every
/// settings cell; and the page's own width against the window's.
pub fn probe_page(page: &Path, width: u32) -> Value {
    let probe = r#"<script>
try {
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const inside = (p, b) => p.x >= b[0] && p.x <= b[2] && p.y >= b[1] && p.y <= b[3];
const charts = [...document.querySelectorAll('figure.chart')].map(f => {
  const svg = f.querySelector('svg.plot');
  const m = svg.getScreenCTM();
  const legend = box(f.querySelector('ul.legend'));
  const lines = [...svg.querySelectorAll('polyline')]
    .filter(l => l.getAttribute('stroke-width') === '3' && l.getBBox().width > 0)
    .map(l => {
      const pts = [...Array(l.points.numberOfItems).keys()]
        .map(i => l.points.getItem(i).matrixTransform(m));
      return { stroke: l.getAttribute('stroke'), dash: l.getAttribute('stroke-dasharray') || 'solid',
               points: pts.length, in_legend: pts.filter(p => inside(p, legend)).length };
    });
  const swatches = [...f.querySelectorAll('ul.legend li')].map(li => {
    const l = li.querySelector('line');
    return { text: li.textContent, stroke: l && l.getAttribute('stroke'),
             dash: l ? (l.getAttribute('stroke-dasharray') || 'solid') : null };
  });
  return { title: f.querySelector('figcaption').textContent, lines, legend: swatches,
           width: svg.getBoundingClientRect().width };
});
const figures = {};
document.querySelectorAll('#answer [data-key]').forEach(e => {
  figures[e.dataset.key] = [...e.querySelectorAll('.value')].map(v => v.textContent);
});
const out = {
  sections: [...document.querySelectorAll('body > section')].map(s => s.id),
  charts, figures,
  verdict: [...document.querySelectorAll('#answer .verdict, #answer td')].map(e => e.textContent),
  headers: [...document.querySelectorAll('#answer th')].map(e => e.textContent),
  summary: [...document.querySelectorAll('table.summary tr')].slice(1)
    .map(tr => [...tr.querySelectorAll('td')].map(td => td.firstChild ? td.firstChild.textContent : '')),
  settings: [...document.querySelectorAll('table.settings td')].map(e => e.textContent),
  changed: [...document.querySelectorAll('table.settings.changed td.words')].map(e => e.textContent),
  stacks: [...document.querySelectorAll('table.parts tr')].filter(tr => tr.querySelector('div.stack')).map(tr => {
    const d = tr.querySelector('div.stack');
    return { width: d.getBoundingClientRect().width,
             parts: [...d.children].map(s => s.getBoundingClientRect().width),
             values: [...tr.querySelectorAll('td')].slice(3, 7).map(t => Number(t.textContent)) };
  }),
  headline_bottom: (h => h ? box(h)[3] : null)(document.querySelector('#answer .figures, #answer table.headline')),
  scroll_width: document.documentElement.scrollWidth,
  client_width: document.documentElement.clientWidth,
};
document.body.setAttribute('data-probe', JSON.stringify(out));
} catch (e) { document.body.setAttribute('data-probe', JSON.stringify({error: String(e)})); }
</script></body>"#;
    let html = std::fs::read_to_string(page).unwrap();
    let probed = page.with_extension(format!("probe{width}.html"));
    std::fs::write(&probed, html.replace("</body>", probe)).unwrap();
    let out = in_chromium(&[
        format!("--window-size={width},3000"),
        "--hide-scrollbars".into(),
        "--dump-dom".into(),
        format!("file://{}", probed.display()),
    ]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom.find("data-probe=\"").expect("Chromium ran the probe") + 12;
    let json = dom[at..]
        .split('"')
        .next()
        .unwrap()
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let probe: Value = serde_json::from_str(&json).unwrap();
    assert!(probe.get("error").is_none(), "the probe failed: {probe}");
    probe
}

/// A memcached with one worker thread, every thread of it pinned to CPU 0
/// (the tests' load generator pins itself to CPU 1): a server the test
/// can saturate.
pub fn capped_memcached() -> Memcached {
    let m = Memcached::start(&["-t", "1"]);
    let pinned = Command::new("taskset")
        .args(["-a", "-p", "-c", "0", &m.pid().to_string()])
        .output()
        .expect("taskset (util-linux) runs");
    assert!(pinned.status.success(), "taskset: {pinned:?}");
    m
}

/// Python 3 running `script` with `args`: its stdout (it must succeed).
pub fn python(script: &str, args: &[&str]) -> Vec<u8> {
    python_at("python3", script, args)
}

/// `python` with the interpreter at `path` (Debian's `/usr/bin/python3`,
/// where apt installs scipy).
pub fn python_at(path: &str, script: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(path)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{path} runs: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Writes a secret (a token) to `dir`/`name` readable by its owner alone,
/// as mcbench requires of one; returns its path.
pub fn secret_file(dir: &Path, name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_str().unwrap().to_string()
}

/// An agent process on a free loopback port, killed (by its PID) when
/// dropped.
pub struct AgentProc {
    child: Child,
    pub addr: String,
}

impl AgentProc {
    pub fn start(token_file: &str, extra: &[&str]) -> AgentProc {
        Self::start_with(token_file, extra, |_| ())
    }

    /// Started as `start` does, after `setup` has had the command (to set
    /// a limit, say).
    pub fn start_with(
        token_file: &str,
        extra: &[&str],
        setup: impl FnOnce(&mut Command),
    ) -> AgentProc {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(BIN);
        cmd.args(["agent", "--listen", &addr, "--token-file"])
            .arg(token_file)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        setup(&mut cmd);
        let child = cmd.spawn().unwrap();
        wait_until_listening(&addr, || std::net::TcpStream::connect(&addr).is_ok());
        AgentProc { child, addr }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the agent said on stderr (after it was killed).
    pub fn stderr(&mut self) -> String {
        use std::io::Read;
        self.kill();
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

/// A self-signed certificate for localhost and 127.0.0.1, made by
/// `openssl` in `dir`: (cert, key) paths.
pub fn self_signed(dir: &Path) -> (String, String) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=localhost", "-addext"])
        .args(["subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext"])
        .args(["basicConstraints=critical,CA:FALSE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl (see .ci/run)");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let path = |p: PathBuf| p.to_str().unwrap().to_string();
    (path(cert), path(key))
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A SASL configuration in `dir` (for memcached `-S`, with
/// `SASL_CONF_PATH=dir`): PLAIN, one user `bench` with password
/// `s3cret`. `None` when this machine lacks saslpasswd2 (sasl2-bin).
pub fn sasl_conf(dir: &Path) -> Option<()> {
    let db = dir.join("sasldb2");
    std::fs::write(
        dir.join("memcached.conf"),
        format!("mech_list: plain\nsasldb_path: {}\n", db.display()),
    )
    .unwrap();
    let tool = ["/usr/sbin/saslpasswd2", "saslpasswd2"]
        .into_iter()
        .find(|t| Command::new(t).arg("-v").output().is_ok())?;
    let mut child = Command::new(tool)
        .args(["-p", "-a", "memcached", "-c", "-f"])
        .arg(&db)
        .arg("bench")
        .stdin(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take().unwrap().write_all(b"s3cret").unwrap();
    assert!(child.wait().unwrap().success(), "saslpasswd2 failed");
    Some(())
}
