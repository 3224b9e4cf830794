//! `mcbench stats`, `slabs` and `top` against real memcached. Debian's
//! memcached ships memcached-tool, the independent reader of the first
//! two; `top` is driven in a tmux pane whose screen the test reads.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use support::*;

const MEMCACHED_TOOL: &str = "/usr/share/memcached/scripts/memcached-tool";

/// Debian's memcached-tool, or `None` (an error under CI).
fn memcached_tool() -> Option<&'static str> {
    if Path::new(MEMCACHED_TOOL).exists() {
        return Some(MEMCACHED_TOOL);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{MEMCACHED_TOOL} is missing: Debian's memcached package ships it"
    );
    eprintln!("skipped: {MEMCACHED_TOOL} is missing");
    None
}

fn tool(args: &[&str]) -> String {
    let out = Command::new("perl")
        .arg(MEMCACHED_TOOL)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Fills a small memcached so that slab classes fill and evict.
fn filled() -> Memcached {
    let m = Memcached::start(&["-m", "8"]);
    run_ok(
        &m.addr(),
        &["-t", "1s", "-V", "uniform:100,4000", "-r", "5000"],
    );
    m
}

#[test]
fn slabs_are_memcached_tools_display() {
    let _m = shared_machine();
    let Some(_) = memcached_tool() else { return };
    let m = filled();
    let ours = mcbench(&["slabs", "-s", &m.addr()]);
    assert_eq!(ours.status.code(), Some(0), "{}", stderr(&ours));
    let theirs = tool(&[&m.addr(), "display"]);
    let ours = stdout(&ours);
    let ours: Vec<&str> = ours.lines().skip(1).collect(); // "# ADDR"
    let theirs: Vec<&str> = theirs.lines().collect();
    assert!(theirs.len() > 3, "{theirs:?}");
    assert_eq!(ours.len(), theirs.len(), "{ours:?}\n{theirs:?}");
    assert_eq!(ours[0], theirs[0]);
    // Every column but Max_age, which moves with the clock.
    let without_age = |l: &str| {
        let mut cols: Vec<String> = l.split_whitespace().map(String::from).collect();
        cols.remove(2);
        cols
    };
    for (a, b) in ours.iter().zip(&theirs).skip(1) {
        assert_eq!(without_age(a), without_age(b), "\n{a}\n{b}");
        assert_eq!(a.len(), b.len(), "\n{a}\n{b}");
    }
}

#[test]
fn stats_prints_every_group_as_memcached_tool_does() {
    let _m = shared_machine();
    let m = Memcached::start(&["-m", "16"]);
    let out = mcbench(&["stats", "-s", &m.addr()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.contains(&"curr_connections"));
    if memcached_tool().is_some() {
        let theirs = tool(&[&m.addr(), "stats"]);
        assert_eq!(text.lines().next(), theirs.lines().next());
        let their_names: Vec<&str> = theirs
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(names, their_names);
        // memcached-tool keeps each reply line's CR in its values (its
        // columns are one short): compared field by field.
        let fields = |t: &str| -> Vec<Vec<String>> {
            t.lines()
                .map(|l| l.split_whitespace().map(String::from).collect())
                .collect()
        };
        let settings = tool(&[&m.addr(), "settings"]);
        let ours = stdout(&mcbench(&["stats", "-s", &m.addr(), "settings"]));
        assert_eq!(fields(&ours), fields(&settings));
        assert!(ours.contains("maxbytes"));
    }
    // JSON, as the server said it.
    let out = mcbench(&["stats", "-s", &m.addr(), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j[m.addr()]["pid"], m.pid().to_string());
    assert_eq!(j[m.addr()]["limit_maxbytes"], (16u64 << 20).to_string());
    // A group the server does not know, a server that is not there, a
    // group that is not a word.
    let out = mcbench(&["stats", "-s", &m.addr(), "nosuchgroup"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));
    let out = mcbench(&["stats", "-s", &format!("127.0.0.1:{}", free_port())]);
    assert_eq!(out.status.code(), Some(1));
    assert_usage_error(
        &mcbench(&["stats", "-s", &m.addr(), "a\r\nflush_all"]),
        "one word",
    );
    assert_usage_error(&mcbench(&["top", "-s", &m.addr(), "-i", "1ms"]), "-i");
    assert_usage_error(
        &mcbench(&["stats", "-s", &m.addr(), "reset"]),
        "changes the server",
    );
}

/// Gets of `key` on `addr`, about a thousand a second, until `done`. Not
/// back to back: two such loops and their servers would take both CPUs
/// of the host from the `top` under test (its stats round trip took
/// 276 ms, and a start took over 30 s).
fn gets(addr: String, key: &'static str, done: Arc<AtomicBool>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut buf = [0u8; 256];
        while !done.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(1));
            s.write_all(format!("get {key}\r\n").as_bytes()).unwrap();
            let mut got = Vec::new();
            while !got.ends_with(b"END\r\n") {
                let n = s.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
        }
    })
}

/// A tmux server of this test's own, stopped on drop.
struct Tmux(String);

impl Tmux {
    /// A tmux server named `name` with a 160×30 session `top` that runs
    /// `script`.
    fn start(name: &str, script: &str) -> Tmux {
        let tmux = Tmux(format!("{name}-{}", std::process::id()));
        tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "top",
            "-x",
            "160",
            "-y",
            "30",
            script,
        ]);
        tmux
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux is installed (.ci/run)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "top"])
    }

    /// Waits (at most 30 s: tmux and a fresh process can be slow to start
    /// on a loaded machine) until the screen shows `what`.
    fn wait_for(&self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.contains(what) {
                return screen;
            }
            assert!(Instant::now() < deadline, "no '{what}' on:\n{screen}");
            thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}

#[test]
fn top_shows_the_intervals_rates_and_gives_the_terminal_back() {
    let _m = shared_machine();
    let hits = Memcached::start(&[]);
    let misses = Memcached::start(&[]);
    // A lifetime of misses on the first server, then only hits: the
    // interval's HIT % is 100, the lifetime's would not be.
    let mut s = TcpStream::connect(hits.addr()).unwrap();
    s.write_all(b"set hot 0 0 1\r\nx\r\n").unwrap();
    let mut buf = [0u8; 8];
    s.read_exact(&mut buf).unwrap();
    for _ in 0..2000 {
        s.write_all(b"get cold\r\n").unwrap();
        let mut b = [0u8; 5];
        s.read_exact(&mut b).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let (h, m) = (
        gets(hits.addr(), "hot", done.clone()),
        gets(misses.addr(), "cold", done.clone()),
    );
    let script = format!(
        "{BIN} top -s {} -s {} -i 300ms; echo EXIT=$?; stty -a | grep -o -- '-\\?icanon'; sleep 60",
        hits.addr(),
        misses.addr()
    );
    let tmux = Tmux::start("mcbench-top", &script);
    tmux.wait_for("INSTANCE");
    // The second frame has rates.
    thread::sleep(Duration::from_millis(1000));
    let screen = tmux.screen();
    let row = |addr: &str| -> Vec<String> {
        screen
            .lines()
            .find(|l| l.starts_with(addr))
            .unwrap_or_else(|| panic!("no row for {addr}:\n{screen}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let (a, b) = (row(&hits.addr()), row(&misses.addr()));
    assert_eq!(a[2], "100.0%", "{screen}");
    assert_eq!(b[2], "0.0%", "{screen}");
    let gets_per_s = |r: &[String]| -> f64 {
        let v = &r[6];
        match v.strip_suffix('K') {
            Some(k) => k.parse::<f64>().unwrap() * 1024.0,
            None => v
                .parse()
                .unwrap_or_else(|_| panic!("GETS/s '{v}':\n{screen}")),
        }
    };
    assert!(gets_per_s(&a) > 100.0 && gets_per_s(&b) > 100.0, "{screen}");
    assert!(screen.contains("AVERAGE:") && screen.contains("TOTAL:"));
    tmux.cmd(&["send-keys", "-t", "top", "q"]);
    let after = tmux.wait_for("EXIT=");
    assert!(after.contains("EXIT=0"), "{after}");
    // Cooked mode again, and the alternate screen left.
    tmux.wait_for("icanon");
    let after = tmux.screen();
    assert!(after.lines().any(|l| l.trim() == "icanon"), "{after}");
    assert!(!after.contains("INSTANCE"), "{after}");
    drop(tmux);
    // Ctrl-C quits as its signal would.
    let tmux = Tmux::start("mcbench-top-c", &script);
    tmux.wait_for("INSTANCE");
    tmux.cmd(&["send-keys", "-t", "top", "C-c"]);
    let after = tmux.wait_for("EXIT=");
    assert!(after.contains("EXIT=130"), "{after}");
    drop(tmux);
    done.store(true, Ordering::Relaxed);
    h.join().unwrap();
    m.join().unwrap();
}

#[test]
fn top_without_a_terminal_prints_frames() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let gone = format!("127.0.0.1:{}", free_port());
    let out = mcbench(&[
        "top",
        "-s",
        &m.addr(),
        "-s",
        &gone,
        "-i",
        "200ms",
        "-n",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("INSTANCE").count(), 3, "{text}");
    // A server that is not there has its row, with why.
    assert!(text.contains(&gone) && text.contains("refused"), "{text}");
}

/// A server that answers every read with `stats` whose names and values
/// hold escape sequences (one would clear the screen).
fn escaping_stats_server() -> String {
    serve_each(|mut s| {
        use std::io::{Read, Write};
        let reply = b"STAT \x1b[2Jcleared 1\r\nSTAT pid \x1b]0;title\x07\r\nEND\r\n";
        let mut buf = [0u8; 1024];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 || s.write_all(reply).is_err() {
                return;
            }
        }
    })
}

/// A server's stat names and values reach the terminal escaped: an
/// escape sequence in one would clear the screen.
#[test]
fn a_stat_with_an_escape_sequence_is_shown_escaped() {
    let addr = escaping_stats_server();
    let out = mcbench(&["stats", "-s", &addr]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("\\u{1b}[2Jcleared"), "{text}");
}
