//! The latency taken apart by the kernel's stamps: the four parts add up
//! to each request's latency, a server's own delay lands in the network
//! and server part, the send lag is the transmit stamp's, and where the
//! kernel stamps nothing the parts are left out with the reason.

use crate::support;

use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use support::*;

/// One `--save` row's latency and its four parts (`None`: empty cells).
struct Row {
    latency: u64,
    parts: Option<[u64; 4]>,
    line: String,
}

fn rows(path: &Path) -> Vec<Row> {
    sample_latencies(path); // checks the header and each row's form
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let parts: Vec<Option<u64>> = cols[5..9].iter().map(|c| c.parse().ok()).collect();
            let parts = match parts[..] {
                [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
                [None, None, None, None] => None,
                _ => panic!("some parts of {l}"),
            };
            Row {
                latency: cols[2].parse().unwrap(),
                parts,
                line: l.to_string(),
            }
        })
        .collect()
}

fn parts_at(v: &Value, percentile: f64) -> &Value {
    let at = v["total"]["latency_parts"]["at"].as_array().unwrap();
    at.iter()
        .find(|a| f(a, "percentile") == percentile)
        .unwrap_or_else(|| panic!("no p{percentile} in {at:?}"))
}

/// A server that answers 20 ms after each request: every request's
/// network and server part holds those 20 ms (the transmit stamp comes
/// before the server reads, the receive stamp after it answers), and the
/// four parts add up to each latency, in a closed loop (answers read at
/// once) and an open one (read late, timed by their receive stamp, so
/// nothing after it).
#[test]
fn a_server_delay_is_the_network_and_server_part() {
    let delay = Duration::from_millis(20);
    let server = fake_server(Misbehaviour::AnswersAfter(delay));
    let dir = tempfile::tempdir().unwrap();
    let closed = ["-c", "2", "--kernel-stamps", "on"];
    for (name, load) in [("closed", &closed[..]), ("open", &["-c", "4", "-q", "60"])] {
        let save = path_in(dir.path(), &format!("{name}.tsv"));
        // --details: the verdict's lines, the client's share among them.
        let mut args = vec!["-t", "1s", "--no-load", "--details", "--save", &save];
        args.extend(load);
        let (out, v) = run_to(dir.path(), name, &server, &args);
        let rows = rows(Path::new(&save));
        assert!(rows.len() > 10, "{name}: {}", stderr(&out));
        assert_eq!(rows.len() as u64, count(&v, "total.count"), "{name}");
        for r in &rows {
            let p = (r.parts).unwrap_or_else(|| panic!("{name}: a row without parts: {}", r.line));
            assert_eq!(p.iter().sum::<u64>(), r.latency, "{name}: {p:?}");
            assert!(p[2] >= delay.as_nanos() as u64, "{name}: {p:?}");
            if name == "open" {
                assert_eq!(p[3], 0, "answers timed by their stamp: {p:?}");
            }
        }
        let parts = &v["total"]["latency_parts"];
        assert_eq!(count(parts, "requests"), rows.len() as u64, "{name}");
        let names: Vec<&str> = (parts["parts"].as_array().unwrap().iter())
            .map(|p| p["part"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "client_queue",
                "send_path",
                "network_server",
                "client_receive"
            ]
        );
        let p50 = parts_at(&v, 50.0);
        let mean = &p50["mean_us"];
        let sum: f64 = [
            "client_queue",
            "send_path",
            "network_server",
            "client_receive",
        ]
        .iter()
        .map(|k| f(mean, k))
        .sum();
        // The band's mean latency is within its eighth of an octave.
        let latency = f(p50, "latency_us");
        assert!((sum - latency).abs() <= latency / 8.0, "{p50}");
        assert!(f(mean, "network_server") >= 20_000.0, "{p50}");
        let text = stdout(&out) + &stderr(&out);
        assert!(text.contains("Latency taken apart"), "{text}");
        // The verdict gives mcbench's own share at each percentile: its
        // queue less the wait for a free connection, and its receive.
        let share = |at: &Value| {
            let m = &at["mean_us"];
            (f(m, "client_queue") - f(at, "waited_us")).max(0.0) + f(m, "client_receive")
        };
        let check = v["verdict"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["percentile"] == 50.0)
            .unwrap();
        let given = f(check, "client_share_us");
        assert!((given - share(p50)).abs() < 1e-6, "{check} {p50}");
        assert!(
            text.contains("mcbench's own share (its queue and receive, kernel stamps), µs: p50 "),
            "{text}"
        );
    }
    // Unasked, a closed loop at depth 1 takes none (each request would
    // cost a read of the error queue), and says so; at depth 2 it does.
    let (out, v) = run_to(
        dir.path(),
        "d1",
        &server,
        &["-t", "1s", "--no-load", "-c", "2", "--details"],
    );
    assert!(v["total"].get("latency_parts").is_none());
    assert!(stdout(&out).contains("not measured (a closed loop at depth 1"));
    assert!(stdout(&out).contains("mcbench's own share of each latency: not measured"));
    let d2 = ["-t", "1s", "--no-load", "-c", "2", "-d", "2"];
    let (_, v) = run_to(dir.path(), "d2", &server, &d2);
    assert_eq!(
        count(&v, "total.latency_parts.requests"),
        count(&v, "total.count")
    );
}

/// Against memcached, the judge of the count: every request it saw was
/// stamped and taken apart; the open loop's send lag is each request's
/// transmit stamp less its intended time (the samples' client queue plus
/// send path: the same count, median and maximum); and the CSV's rows
/// carry each part. Off, or over a unix socket, the parts are left out
/// and the report says why.
#[test]
fn memcached_counts_every_request_taken_apart() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let save = path_in(dir.path(), "s.tsv");
    let csv = path_in(dir.path(), "r.csv");
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    // 256 slots: no arrival waits for a free connection (a wait is out of
    // the send lag, not out of the client queue) unless this host stalls
    // the client or memcached for 128 ms.
    let args = ["-t", "1s", "-q", "2000", "-c", "32", "-d", "8", "--no-load"];
    let (_, v) = run_to(
        dir.path(),
        "on",
        &m.addr(),
        &[&args[..], &["--save", &save, "--csv", &csv]].concat(),
    );
    let seen = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert_eq!(count(&v, "total.count"), seen);
    assert_eq!(count(&v, "total.latency_parts.requests"), seen);
    let mut lags: Vec<u64> = rows(Path::new(&save))
        .iter()
        .map(|r| {
            let p = r.parts.expect("a stamped row");
            p[0] + p[1]
        })
        .collect();
    lags.sort();
    assert_eq!(count(&v, "client.waits"), 0);
    let sent = hdr(&v["client"]["send_lag_hdr"]);
    assert_eq!(sent.len(), lags.len() as u64);
    let same = |a: u64, b: u64| sent.equivalent(a, b) || a.abs_diff(b) <= 2;
    let median = lags[(lags.len() - 1) / 2];
    assert!(same(sent.value_at_quantile(0.5), median), "{median}");
    assert!(same(sent.max(), lags[lags.len() - 1]), "{}", sent.max());

    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (queue, receive) = (
        column("client_queue_p99_us"),
        column("client_receive_mean_us"),
    );
    let mut stamped = 0;
    for row in reader.records() {
        let row = row.unwrap();
        assert!(row[queue].parse::<f64>().unwrap() >= 0.0, "{row:?}");
        // Read late, answers are timed by their stamp.
        assert!(row[receive].parse::<f64>().unwrap() < 0.01, "{row:?}");
        stamped += 1;
    }
    assert!(stamped >= 2, "a row per op and total");

    let (out, off) = run_to(
        dir.path(),
        "off",
        &m.addr(),
        &[&args[..], &["--kernel-stamps", "off", "--details"]].concat(),
    );
    assert!(off["total"].get("latency_parts").is_none());
    assert!(stdout(&out).contains("Latency parts: not measured (--kernel-stamps off)."));

    let sock = dir.path().join("mc.sock");
    let u = Memcached::start_unix(&sock);
    let unix_addr = format!("unix:{}", sock.display());
    let (out, unix) = run_to(
        dir.path(),
        "unix",
        &unix_addr,
        &[&args[..], &["--details"]].concat(),
    );
    drop(u);
    assert!(count(&unix, "total.count") > 0);
    assert!(unix["total"].get("latency_parts").is_none());
    assert!(
        stdout(&out).contains("not measured (the kernel stamps TCP only"),
        "{}",
        stdout(&out)
    );
}

/// `--kernel-stamps 1/8`: the kernel stamps a random eighth of the
/// writes, and only their requests are taken apart: about an eighth of
/// what memcached counted (within 5 σ of a binomial, σ doubled for the
/// writes that carry several requests), each stamped row's parts adding
/// up to its latency, the send lag of those rows alone, and the report
/// says so. `all` stamps every request memcached saw.
#[test]
fn a_sample_of_writes_is_stamped_and_their_requests_alone_taken_apart() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let save = path_in(dir.path(), "s.tsv");
    let html = path_in(dir.path(), "s.html");
    let args = ["-t", "1s", "-q", "4000", "-c", "32", "-d", "8", "--no-load"];
    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let (out, v) = run_to(
        dir.path(),
        "sample",
        &m.addr(),
        &[
            &args[..],
            &["--kernel-stamps", "1/8", "--save", &save, "--html", &html],
        ]
        .concat(),
    );
    let seen = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert_eq!(count(&v, "total.count"), seen);
    let rows = rows(Path::new(&save));
    assert_eq!(rows.len() as u64, seen);
    let stamped: Vec<&Row> = rows.iter().filter(|r| r.parts.is_some()).collect();
    let (n, k) = (seen as f64, stamped.len() as f64);
    let sigma = 2.0 * (n * (1.0 / 8.0) * (7.0 / 8.0)).sqrt();
    assert!((k - n / 8.0).abs() <= 5.0 * sigma, "{k} of {n} stamped");
    assert_eq!(
        count(&v, "total.latency_parts.requests"),
        stamped.len() as u64
    );
    for r in &stamped {
        assert_eq!(
            r.parts.unwrap().iter().sum::<u64>(),
            r.latency,
            "{}",
            r.line
        );
    }
    // The send lag is the stamped requests': their client queue and send
    // path (no arrival waited for a slot), no more requests and the same
    // median.
    assert_eq!(count(&v, "client.waits"), 0);
    let mut lags: Vec<u64> = stamped
        .iter()
        .map(|r| r.parts.unwrap()[0] + r.parts.unwrap()[1])
        .collect();
    lags.sort();
    let sent = hdr(&v["client"]["send_lag_hdr"]);
    // A stamped write whose stamp the kernel never gave lags from its send
    // call, without parts: rare (CI once saw 1 of 7,985).
    let extra = sent.len() - lags.len() as u64;
    assert!(
        sent.len() >= lags.len() as u64 && extra <= seen / 1000,
        "{extra}"
    );
    let median = lags[(lags.len() - 1) / 2];
    let same = |a: u64, b: u64| sent.equivalent(a, b) || a.abs_diff(b) <= 2;
    assert!(same(sent.value_at_quantile(0.5), median), "{median}");
    // The gaps are still timed, at the send calls.
    assert!(v["client"]["send_gap_cv"].is_number(), "{}", v["client"]);
    assert_eq!(v["spec"]["stamp_sample"], 8);
    let text = stdout(&out);
    assert!(
        text.contains("stamped (1 in 8 writes, at random)"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("requests stamped, those of 1 in 8 writes, at random."));

    let before = m.stat("cmd_get") + m.stat("cmd_set");
    let (_, all) = run_to(
        dir.path(),
        "all",
        &m.addr(),
        &[&args[..], &["--kernel-stamps", "all"]].concat(),
    );
    let seen = m.stat("cmd_get") + m.stat("cmd_set") - before;
    assert_eq!(count(&all, "total.count"), seen);
    // The kernel may leave one unstamped on a loaded machine.
    let stamped = count(&all, "total.latency_parts.requests");
    assert!(
        stamped <= seen && seen - stamped <= seen / 1000,
        "{stamped} of {seen}"
    );
}

/// A deep closed loop pauses before its reads by default (64 in flight:
/// 50 µs), and the kernel's receive stamps keep the pause out of every
/// latency: each saved answer is timed by its stamp (nothing after it,
/// the client receive part 0) and its four parts still add up. With
/// `--read-delay 0` it reads at once, and each answer is timed when
/// parsed, after its stamp. memcached counts every request either way.
#[test]
fn a_deep_closed_loop_pauses_by_default_timed_by_the_kernel() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-x",
        "4000",
        "-c",
        "8",
        "-d",
        "8",
        "--no-load",
        "--mix",
        "get=1",
    ];
    let policies: [(&str, &[&str], bool); 2] = [
        ("default", &[], true),
        ("at-once", &["--read-delay", "0"], false),
    ];
    for (name, extra, pauses) in policies {
        let save = path_in(dir.path(), &format!("{name}.tsv"));
        let before = m.stat("cmd_get");
        let all = [&args[..], extra, &["--save", &save]].concat();
        let (out, v) = run_to(dir.path(), name, &m.addr(), &all);
        assert_eq!(count(&v, "total.count"), m.stat("cmd_get") - before);
        let text = stdout(&out);
        let said = text.contains("reads delayed 50 µs by default at this depth");
        assert_eq!(said, pauses, "{name}: {text}");
        assert_eq!(v["spec"].get("read_delay").is_some(), !extra.is_empty());
        let rows = rows(Path::new(&save));
        assert_eq!(rows.len() as u64, count(&v, "total.count"), "{name}");
        for r in &rows {
            let p = (r.parts).unwrap_or_else(|| panic!("{name}: no parts: {}", r.line));
            assert_eq!(p.iter().sum::<u64>(), r.latency, "{name}: {}", r.line);
            assert_eq!(p[3] == 0, pauses, "{name}: {}", r.line);
        }
    }
}
