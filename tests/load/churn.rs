//! Connections that come and go (twemperf's generators), `--timeout` as
//! twemperf means it, and servers that stop or die mid-run. The server's
//! own `stats` and the kernel's socket table check what mcbench reports.

use crate::support;

use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

#[test]
fn a_schedule_of_connections_each_makes_its_calls() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let before = m.stat("total_connections");
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-c",
            "1",
            "--no-load",
            "-u",
            "1",
            "--num-conns",
            "1000",
            "--conn-rate",
            "500",
            "--num-calls",
            "10",
            "--linger",
            "0",
            "--timeout",
            "5",
        ],
    );
    let c = &j["connections"];
    assert_eq!(f(c, "connects"), 1000.0, "{c}");
    assert_eq!(f(c, "closed"), 1000.0, "{c}");
    assert_eq!(f(&j, "total.count"), 10000.0);
    // The server saw them: 1000 connections and this stats connection
    // (none held: with nothing to preload, none is opened).
    assert_eq!(m.stat("total_connections") - before, 1000 + 1);
    assert_eq!(m.stat("cmd_set"), 10000);
    // 1000 at 500/s: the schedule takes 2 s, and so does the run.
    let rate = f(c, "rate");
    assert!((450.0..=520.0).contains(&rate), "conn rate {rate}");
    let secs = f(&j, "duration_s");
    assert!((1.9..2.6).contains(&secs), "duration {secs}");
    // The connect-time histogram holds every connect, and its summary is
    // read from it.
    let connect = hdr(&c["connect_time_hdr"]);
    assert_eq!(connect.len(), 1000);
    let p50_us = connect.value_at_quantile(0.5) as f64 / 1e3;
    assert_eq!(f(c, "connect_time_us.p50"), p50_us);
    assert!(p50_us > 0.0 && p50_us < 50_000.0, "{p50_us}");
    assert_eq!(hdr(&c["lifetime_hdr"]).len(), 1000);
    // Every request of 30-byte keys and 200-byte values is the same size;
    // every answer is STORED.
    assert_eq!(f(c, "response_size.mean"), 8.0);
    assert_eq!(f(c, "request_size.stdev"), 0.0);
    assert_eq!(f(c, "errors.client_timo"), 0.0);
    // Each call's latency counts from when its connection was meant to
    // open: the first (here the only) call waits for its connect, and that
    // wait is in the latency, not in the service time.
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-c",
            "1",
            "--no-load",
            "-u",
            "1",
            "--num-conns",
            "300",
            "--conn-rate",
            "1000",
            "--num-calls",
            "1",
        ],
    );
    let waited = f(&j, "total.latency_us.mean") - f(&j, "total.service_time_us.mean");
    let connect = f(&j, "connections.connect_time_us.mean");
    assert!(
        waited >= 0.8 * connect,
        "latency - service {waited} µs, connect {connect} µs"
    );
    // The text report, twemperf's figures in its order.
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "-c",
        "1",
        "--no-load",
        "--num-conns",
        "20",
        "--num-calls",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(
        report.contains("connections: 20 connected, 20 closed"),
        "{report}"
    );
    assert!(report.contains("connect time [µs]: min"), "{report}");
    assert!(
        report.contains("connection errors: total 0 client-timo 0"),
        "{report}"
    );
}

#[test]
fn one_after_another_holds_one_connection_at_a_time() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-c",
            "1",
            "--no-load",
            "--linger=0",
            "--call-rate=0",
            "--num-calls=20",
            "--conn-rate=0",
            "--num-conns=50",
            "-u",
            "1",
        ],
    );
    assert_eq!(f(&j, "connections.max_open"), 1.0);
    assert_eq!(f(&j, "connections.closed"), 50.0);
    assert_eq!(m.stat("cmd_set"), 1000);
}

#[test]
fn paced_calls_keep_their_schedule() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // 4 connections at once, each 50 calls at 100/s: 0.5 s.
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-c",
            "1",
            "--no-load",
            "--conn-rate",
            "1000",
            "--num-conns",
            "4",
            "--num-calls",
            "50",
            "--call-rate",
            "100",
        ],
    );
    assert_eq!(f(&j, "total.count"), 200.0);
    assert_eq!(j["client"]["open_loop"], true);
    // Never early: 49 gaps of 10 ms between a connection's calls. Late
    // only if the run says its client was.
    let late_said = j["client"]["client_bound"] == true;
    let secs = f(&j, "duration_s");
    assert!(secs >= 0.45 && (secs < 0.8 || late_said), "duration {secs}");
    let life = f(&j, "connections.lifetime_us.p50");
    assert!(
        life >= 480_000.0 && (life < 700_000.0 || late_said),
        "lifetime {life} µs"
    );
}

#[test]
fn a_stopped_server_times_requests_out_and_the_run_goes_on() {
    let _machine = quiet_machine();
    let m = Memcached::start(&[]);
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-t",
            "3s",
            "--timeout",
            "0.5s",
            "-c",
            "2",
            "--no-load",
            "--json",
            "-",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(800));
    unsafe { libc::kill(m.pid(), libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(1200));
    unsafe { libc::kill(m.pid(), libc::SIGCONT) };
    let out = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Each connection's request timed out (twemperf's client-timo), the
    // connection was closed and opened again, at least once each.
    let timo = f(&j, "connections.errors.client_timo");
    assert!(timo >= 2.0, "{}", j["connections"]);
    assert!(f(&j, "errors.timeout") >= timo);
    assert!(f(&j, "connections.reopened") >= timo);
    // No latency above the timeout was recorded as one.
    assert!(f(&j, "total.latency_us.max") < 600_000.0, "{}", j["total"]);
    // And the run went on after the server did: the last interval answered.
    let last = j["intervals"].as_array().unwrap().last().unwrap().clone();
    assert!(
        f(&last, "ops.total.count") > 0.0,
        "last interval answered nothing"
    );
}

#[test]
fn a_crashed_and_restarted_server_is_reconnected() {
    let _machine = quiet_machine();
    let mut m = Memcached::start(&[]);
    let child = spawn_mcbench(
        &[
            "run",
            "-s",
            &m.addr(),
            "-t",
            "3s",
            "-c",
            "3",
            "--reconnect",
            "--no-load",
            "--json",
            "-",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(800));
    m.crash();
    std::thread::sleep(Duration::from_millis(400));
    m.restart();
    let out = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["completed"], true);
    assert_eq!(f(&j, "connections.lost"), 3.0, "{}", j["connections"]);
    assert_eq!(f(&j, "connections.reopened"), 3.0, "{}", j["connections"]);
    // The first tries, 0.1 s after the loss, found the server still down
    // (it is restarted 0.4 s after the crash).
    assert!(
        f(&j, "connections.reopen_failed") >= 3.0,
        "{}",
        j["connections"]
    );
    assert!(f(&j, "connections.connect_time_us.max") > 0.0);
    // The new server was worked by the reopened connections.
    assert!(m.stat("cmd_get") + m.stat("cmd_set") > 100);
}

#[test]
fn churn_flags_that_cannot_work_are_refused() {
    for (args, needle) in [
        (&["--num-conns", "10", "-q", "1000"][..], "--call-rate"),
        (&["--num-conns", "10", "-d", "4"][..], "--depth"),
        (&["--num-conns", "10", "-x", "100"][..], "--ops"),
        (
            &["--num-conns", "10", "--conn-rate", "x5"][..],
            "invalid rate 'x5'",
        ),
        (
            &["--num-conns", "10", "--call-rate", "u3,1"][..],
            "invalid rate",
        ),
        (&["--call-rate", "10"][..], "--num-conns"),
        (&["--num-conns", "0"][..], "at least 1"),
        (
            &["--source-addrs", "127.0.0.2,nope"][..],
            "invalid source address 'nope'",
        ),
        (&["--send-buffer", "0"][..], "invalid buffer size"),
        (
            &["--num-conns", "10", "--user", "u", "--password", "p"][..],
            "--user",
        ),
        (&["--num-conns", "10", "--reconnect"][..], "--reconnect"),
        (&["--num-conns", "10", "--load-only"][..], "--load-only"),
        (
            &["--num-conns", "10", "--conn-rate", "2e9"][..],
            "at most 10^9",
        ),
        (
            &["--source-addrs", "192.0.2.77"][..],
            "not an address of this host",
        ),
        (
            &["-s", "unix:/tmp/x.sock", "--linger", "0"][..],
            "is not a TCP server",
        ),
        (
            &["--facebook", "--recv-buffer", "64k"][..],
            "also reads over a UDP socket",
        ),
    ] {
        let mut all = vec!["run", "-t", "1s"];
        if !args.contains(&"-s") {
            all.extend(["-s", "127.0.0.1:1"]);
        }
        all.extend(args);
        assert_usage_error(&mcbench(&all), needle);
    }
}

/// Runs `script` (within 120 s) in a network namespace of its own (lo up), where the
/// port range and TIME_WAIT reuse are ours to set, with a memcached on
/// 127.0.0.1:11211 there; `$MCBENCH` is mcbench.
fn in_netns(script: &str) -> std::process::Output {
    let user = if unsafe { libc::geteuid() } == 0 {
        "-u root"
    } else {
        ""
    };
    // A PID namespace too: if the script is killed at the bound, its
    // memcached goes with it.
    let child = Command::new("unshare")
        .args(["-n", "--fork", "--pid", "--kill-child", "bash", "-euc"])
        .arg(format!(
            r#"ip link set lo up
memcached {user} -l 127.0.0.1 -p 11211 -U 0 & MC=$!
for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/11211) 2>/dev/null && break; sleep 0.1; done
{script}
kill $MC"#
        ))
        .env("MCBENCH", BIN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux) must be installed (see .ci/run)");
    let out = wait_bounded(child, Duration::from_secs(120));
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn a_connect_that_takes_longer_than_the_timeout_is_socket_timo() {
    let _machine = shared_machine();
    // A listener whose accept queue holds one connection and is never
    // read: the test's own connection takes the place, and the schedule's
    // SYNs are dropped.
    let listener =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    listener
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    listener.listen(0).unwrap();
    let addr = listener
        .local_addr()
        .unwrap()
        .as_socket()
        .unwrap()
        .to_string();
    let _queued = std::net::TcpStream::connect(&addr).unwrap();
    let (out, j) = run_json(&[
        "run",
        "-s",
        &addr,
        "-c",
        "1",
        "--no-load",
        "--num-conns",
        "3",
        "--timeout",
        "0.3s",
    ]);
    // Nothing was ever answered: the run failed, judged by the timeout.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("no answer from {addr} for 0.3 s")),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("1 connects under way"),
        "{}",
        stderr(&out)
    );
    assert!(
        f(&j, "connections.errors.socket_timo") >= 1.0,
        "{}",
        j["connections"]
    );
    assert_eq!(f(&j, "connections.connects"), 0.0);
    // The calls those connections never made are on the books.
    assert!(f(&j, "errors.no_connection") >= 1.0, "{}", j["errors"]);
    drop(listener);
}

#[test]
fn socket_buffers_are_set_on_every_connection() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // The kernel doubles what SO_SNDBUF/SO_RCVBUF ask (socket(7)); ss
    // shows the result as skmem's tb (send) and rb (receive).
    in_netns(&format!(
        r#""$MCBENCH" run -s 127.0.0.1:11211 -c 3 --no-load -t 1.5s -q 100 --send-buffer 40000 --recv-buffer 50000 > {d}/run.txt 2>&1 &
# Until all 3 are up (a slow start must not look like a missing socket).
for i in $(seq 50); do
  ss -tmnH state established dst 127.0.0.1:11211 > {d}/ss.txt
  [ "$(grep -c skmem {d}/ss.txt)" -ge 3 ] && break
  sleep 0.02
done
wait $!"#
    ));
    let ss = std::fs::read_to_string(dir.path().join("ss.txt")).unwrap();
    let sockets: Vec<&str> = ss.lines().filter(|l| l.contains("skmem")).collect();
    assert_eq!(sockets.len(), 3, "{ss}");
    for s in sockets {
        assert!(s.contains("tb80000"), "{s}");
        assert!(s.contains("rb100000"), "{s}");
    }
}

#[test]
fn port_exhaustion_is_named_and_source_addresses_or_linger_go_past_it() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // 50 ports, no reuse of TIME_WAIT: the 51st connection finds no port.
    in_netns(&format!(
        r#"echo "40000 40049" > /proc/sys/net/ipv4/ip_local_port_range
echo 0 > /proc/sys/net/ipv4/tcp_tw_reuse
"$MCBENCH" run -s 127.0.0.1:11211 -c 1 --no-load -u 1 --num-conns 120 --num-calls 2 --json {d}/plain.json > {d}/plain.txt 2>&1 || true
ss -tanH state time-wait | wc -l > {d}/tw_plain
"$MCBENCH" run -s 127.0.0.1:11211 -c 1 --no-load -u 1 --num-conns 120 --num-calls 2 --source-addrs 127.0.0.2,127.0.0.3,127.0.0.4 --json {d}/spread.json > {d}/spread.txt 2>&1
"$MCBENCH" run -s 127.0.0.1:11211 -c 1 --no-load -u 1 --num-conns 120 --num-calls 2 --source-addrs 127.0.0.5 --linger 0 --json {d}/linger.json > {d}/linger.txt 2>&1
ss -tanH state time-wait src 127.0.0.5 | wc -l > {d}/tw_linger"#
    ));
    let plain = read_json(&dir.path().join("plain.json"));
    let text = std::fs::read_to_string(dir.path().join("plain.txt")).unwrap();
    let no_port = f(&plain, "connections.errors.addrunavail");
    // 50 ports, one held by the preload connection until it closed.
    assert!(no_port >= 60.0, "{}", plain["connections"]);
    assert_eq!(f(&plain, "connections.connects") + no_port, 120.0);
    assert!(text.contains("PORTS EXHAUSTED"), "{text}");
    assert!(text.contains("50 ephemeral ports"), "{text}");
    // The kernel holds a TIME_WAIT socket for every connection made.
    let tw: f64 = std::fs::read_to_string(dir.path().join("tw_plain"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(tw >= 50.0, "TIME_WAIT sockets: {tw}");
    for name in ["spread", "linger"] {
        let j = read_json(&dir.path().join(format!("{name}.json")));
        assert_eq!(
            f(&j, "connections.connects"),
            120.0,
            "{name}: {}",
            j["connections"]
        );
        assert_eq!(f(&j, "connections.errors.addrunavail"), 0.0, "{name}");
        assert_eq!(f(&j, "total.count"), 240.0, "{name}");
    }
    // SO_LINGER 0 closes with a reset: no TIME_WAIT at all.
    let tw: f64 = std::fs::read_to_string(dir.path().join("tw_linger"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(tw, 0.0);
}

#[test]
fn a_stuck_request_times_out_its_connection_and_the_schedule_goes_on() {
    let _machine = shared_machine();
    // Each connection gets two answers, then none.
    let addr = fake_server(Misbehaviour::StallAfter(2));
    let (_, j) = run_ok(
        &addr,
        &[
            "-c",
            "1",
            "--no-load",
            "-u",
            "1",
            "--num-conns",
            "5",
            "--num-calls",
            "3",
            "--timeout",
            "0.2s",
        ],
    );
    assert_eq!(f(&j, "total.count"), 10.0);
    assert_eq!(f(&j, "errors.timeout"), 5.0, "{}", j["errors"]);
    assert_eq!(
        f(&j, "connections.errors.client_timo"),
        5.0,
        "{}",
        j["connections"]
    );
    assert_eq!(f(&j, "connections.closed"), 5.0);
    // A timed-out request is not a latency: the histogram holds the 10
    // answers alone.
    assert_eq!(hdr(&j["total"]["latency_hdr"]).len(), 10);
}
