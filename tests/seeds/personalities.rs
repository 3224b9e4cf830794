//! The seed tools' own command lines (memaslap, twemperf's mcperf,
//! memcache-perf, mutilate), run verbatim but for the server address, with
//! `--mcbench-duration 2s`: their output checked field by field against
//! the seeds' layouts, and their numbers against memcached's own `stats`.

use crate::support;

use support::tools::*;
use support::*;

/// memaslap's sample configuration file (memaslap(1), "Configuration
/// file"), verbatim as the man page prints it: two of its comments wrap
/// onto lines without a `#`, which memaslap skips.
const MEMASLAP_CONFIG: &str = r#"#comments should start with '#'
#key
#start_len end_len proportion
#
#key length range from start_len to end_len
#start_len must be equal to or greater than 16
#end_len must be equal to or less than 250
#start_len must be equal to or greater than end_len
#memaslap will generate keys according to the key range
#proportion: indicates keys generated from one range accounts for the total
generated keys
#
#example1: key range 16~100 accounts for 80%
#          key range 101~200 accounts for 10%
#          key range 201~250 accounts for 10%
#          total should be 1 (0.8+0.1+0.1 = 1)
#
#          16 100 0.8
#          101 200 0.1
#          201 249 0.1
#
#example2: all keys length are 128 bytes
#
#          128 128 1
key
128 128 1
#value
#start_len end_len proportion
#
#value length range from start_len to end_len
#start_len must be equal to or greater than 1
#end_len must be equal to or less than 1M
#start_len must be equal to or greater than end_len
#memaslap will generate values according to the value range
#proportion: indicates values generated from one range accounts for the
total generated values
#
#example1: value range 1~1000 accounts for 80%
#          value range 1001~10000 accounts for 10%
#          value range 10001~100000 accounts for 10%
#          total should be 1 (0.8+0.1+0.1 = 1)
#
#          1 1000 0.8
#          1001 10000 0.1
#          10001 100000 0.1
#
#example2: all value length are 128 bytes
#
#          128 128 1
value
2048 2048 1
#cmd
#cmd_type cmd_proportion
#
#currently memaslap only testss get and set command.
#
#cmd_type
#set     0
#get     1
#
#example: set command accounts for 50%
#         get command accounts for 50%
#         total should be 1 (0.5+0.5 = 1)
#
#         cmd
#         0    0.5
#         1    0.5
cmd
0    0.1
1.0 0.9
"#;

/// memaslap's facebook test multi-gets 50 keys in one UDP datagram: "the
/// key size must be less that 25 bytes" (memaslap(1)).
const MEMASLAP_SMALL_KEYS: &str = "key\n16 24 1\nvalue\n100 1000 1\ncmd\n0 0.1\n1 0.9\n";

const MEMASLAP_EXAMPLES: [&str; 7] = [
    "-s 127.0.0.1:11211 -S 5s",
    "-s 127.0.0.1:11211 -t 2m -v 0.2 -e 0.05 -b",
    "-s 127.0.0.1:11211 -F config -t 2m -w 40k -S 20s -o 0.2",
    "-s 127.0.0.1:11211 -F config -t 2m -T 4 -c 128 -d 20 -P 40k",
    "-s 127.0.0.1:11211 -F config -t 2m -d 50 -a -n 40",
    "-s 127.0.0.1:11211,127.0.0.1:11212 -F config -t 2m",
    "-s 127.0.0.1:11211,127.0.0.1:11212 -F config -t 2m -p 2",
];

#[test]
fn memaslap_examples_run_verbatim_in_its_layout() {
    let _m = shared_machine();
    let a = Memcached::start_udp();
    let b = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for example in MEMASLAP_EXAMPLES {
        let facebook = example.contains(" -a");
        let config = if facebook {
            MEMASLAP_SMALL_KEYS
        } else {
            MEMASLAP_CONFIG
        };
        std::fs::write(dir.path().join("config"), config).unwrap();
        let args = line(
            example,
            &[
                ("127.0.0.1:11211", &a.addr()),
                ("127.0.0.1:11212", &b.addr()),
            ],
        );
        let (gets0, sets0) = (
            a.stat("cmd_get") + b.stat("cmd_get"),
            a.stat("cmd_set") + b.stat("cmd_set"),
        );
        let out = run_tool(dir.path(), "memaslap", &args);
        assert_eq!(out.status.code(), Some(0), "{example}: {}", stderr(&out));
        // The man page's `1.0 0.9` is a get share of 0 to memaslap (the
        // real one sent get 0 / set 156,413): mcbench does the same, and
        // says how to write 0.9.
        let manual = example.contains("-F config") && !facebook;
        if manual {
            let err = stderr(&out);
            assert!(
                err.contains("config:11: 'generated keys': skipped"),
                "{err}"
            );
            assert!(
                err.contains("'1.0 0.9': memaslap reads this row's proportion as 0"),
                "{err}"
            );
        }
        let get_prop = match manual {
            true => "get proportion: get_prop=0.00",
            false => "get proportion: get_prop=0.90",
        };
        let text = stdout(&out);
        assert_in_order(
            &text,
            &[
                "servers : ",
                "threads count: ",
                "concurrency: ",
                "run time: ",
                "windows size: ",
                "set proportion: set_prop=0.10",
                get_prop,
            ],
        );
        let mut finals = vec!["cmd_get: ", "cmd_set: ", "get_misses: "];
        if example.contains("-v ") {
            finals.extend(["verify_misses: ", "verify_failed: "]);
        }
        if example.contains("-e ") {
            finals.extend(["expired_get: ", "unexpired_unget: "]);
        }
        finals.extend(["written_bytes: ", "read_bytes: ", "object_bytes: "]);
        if facebook {
            finals.extend(["packet_disorder: ", "packet_drop: ", "udp_timeout: "]);
        }
        finals.push("Run time: ");
        assert_in_order(&text, &finals);
        if example.contains("-S ") {
            // The final per-command statistics come with -S, before cmd_get
            // (as memaslap's, none for a kind without events).
            assert_in_order(
                &text,
                &[
                    if manual {
                        "Set Statistics ("
                    } else {
                        "Get Statistics ("
                    },
                    "   Min: ",
                    "   Max: ",
                    "   Avg: ",
                    "   Geo: ",
                    "   Std: ",
                    "   Log2 Dist:",
                    "Total Statistics (",
                    "cmd_get: ",
                ],
            );
        } else {
            assert!(!text.contains("Statistics"), "{example}: {text}");
        }
        // The server's own counters: every get key and every set.
        let gets = a.stat("cmd_get") + b.stat("cmd_get") - gets0;
        let sets = a.stat("cmd_set") + b.stat("cmd_set") - sets0;
        if manual {
            assert_eq!(gets, 0, "{example}");
        }
        assert_eq!(
            field(&text, "cmd_get: "),
            gets,
            "{example}: {text} {}",
            stderr(&out)
        );
        assert_eq!(field(&text, "cmd_set: "), sets, "{example}");
        // object_bytes is sets × the configured mean key + value size: the
        // -F file's 128 + 2048 B, the small keys' 20 + 550, or memaslap's
        // default 64 + 1024.
        let object = if facebook {
            570
        } else if example.contains("-F config") {
            128 + 2048
        } else {
            64 + 1024
        };
        assert_eq!(
            field(&text, "object_bytes: "),
            field(&text, "cmd_set: ") * object,
            "{example}"
        );
        let run = text.lines().find(|l| l.starts_with("Run time: ")).unwrap();
        let words: Vec<&str> = run.split_whitespace().collect();
        assert_eq!(words[3], "Ops:", "{run}");
        assert_eq!(words[4].parse::<u64>().unwrap(), gets + sets, "{run}");
        assert!(
            words[2].ends_with('s') && words[8].ends_with("M/s"),
            "{run}"
        );
    }
}

#[test]
fn memaslap_dumps_period_and_global_every_stat_freq() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(
        "-s 127.0.0.1:11211 -S 1s",
        &[("127.0.0.1:11211", &m.addr())],
    );
    let out = run_tool(dir.path(), "memaslap", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let header = "Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  Max(us)    Avg(us)    Std_dev    Geo_dist";
    assert!(text.contains(header), "{text}");
    let periods: Vec<&str> = text.lines().filter(|l| l.starts_with("Period ")).collect();
    let globals: Vec<&str> = text.lines().filter(|l| l.starts_with("Global ")).collect();
    // Two 1 s dumps of three tables each.
    assert_eq!(periods.len(), 6, "{text}");
    assert_eq!(globals.len(), 6, "{text}");
    // The second Total's Global ops are both Periods' together.
    let ops = |l: &str| l.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap();
    assert_eq!(ops(globals[5]), ops(periods[2]) + ops(periods[5]), "{text}");
    // The final Total's events are every dumped op and no more.
    let events = text
        .lines()
        .find_map(|l| l.strip_prefix("Total Statistics ("))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap();
    assert!(events >= ops(globals[5]), "{text}");
}

#[test]
fn memslap_of_the_repcached_guide_runs_its_execute_number() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::write(&config, MEMASLAP_CONFIG).unwrap();
    let example = "--servers=127.0.0.1:21211  -T 8 -c 128   --cfg_cmd=/usr/local/bin/config --execute_number=100000";
    let args = line(
        example,
        &[
            ("127.0.0.1:21211", &m.addr()),
            ("/usr/local/bin/config", config.to_str().unwrap()),
        ],
    );
    let sets0 = m.stat("cmd_set") + m.stat("cmd_get");
    // The execute number ends it; CI once took over 2 s for it.
    let out = run_tool_capped(dir.path(), "memslap", &args, 120);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_in_order(
        &text,
        &[
            "threads count: 8",
            "concurrency: 128",
            "execute number: 100000",
        ],
    );
    let ops = m.stat("cmd_set") + m.stat("cmd_get") - sets0;
    assert_eq!(
        field(&text, "cmd_get: ") + field(&text, "cmd_set: "),
        ops,
        "{text}"
    );
    // --execute_number: exactly that many, whatever the threads.
    assert_eq!(ops, 100_000, "{text}");
}

/// twemperf's README examples, and the repcached guide's.
const MCPERF_EXAMPLES: [&str; 3] = [
    "--linger=0 --timeout=5 --conn-rate=1000 --call-rate=1000 --num-calls=10 --num-conns=1000 --sizes=u1,16",
    "--linger=0 --call-rate=0 --num-calls=100 --conn-rate=0 --num-conns=100 --sizes=d1",
    "-s 127.0.0.1 -p 11211 --linger=0 --timeout=5 --conn-rate=1000 --call-rate=1000 --num-calls=10000 --num-conns=100 --sizes=u1024,10240",
];

#[test]
fn mcperf_examples_run_verbatim_in_twemperfs_layout() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for example in MCPERF_EXAMPLES {
        // The README's lines reach localhost:11211 by default.
        let mut args = line(example, &[("-p 11211", &format!("-p {}", m.port))]);
        if !example.contains("-p ") {
            args.extend([
                "-s".into(),
                "127.0.0.1".into(),
                "-p".into(),
                m.port.to_string(),
            ]);
        }
        let sets0 = m.stat("cmd_set");
        // The README's lines end with their schedule (checked below), the
        // guide's is cut by the cap.
        let cap = if example.contains("-p ") { 2 } else { 60 };
        let out = run_tool_capped(dir.path(), "mcperf", &args, cap);
        assert_eq!(out.status.code(), Some(0), "{example}: {}", stderr(&out));
        // twemperf prints its statistics on stderr.
        let text = stderr(&out);
        assert_in_order(
            &text,
            &[
                "Total: connections ",
                "Connection rate: ",
                "Connection time [ms]: avg ",
                "Connect time [ms]: avg ",
                "Request rate: ",
                "Request size [B]: avg ",
                "Response rate: ",
                "Response size [B]: avg ",
                "Response time [ms]: avg ",
                "Response time [ms]: p25 ",
                "Response time [ms]: p95 ",
                "Response type: stored ",
                "Response type: num ",
                "Response type: error ",
                "Errors: total ",
                "Errors: fd-unavail ",
                "CPU time [s]: user ",
                "Net I/O: bytes ",
            ],
        );
        let sets = m.stat("cmd_set") - sets0;
        let total = text.lines().find(|l| l.starts_with("Total: ")).unwrap();
        let w: Vec<&str> = total.split_whitespace().collect();
        assert_eq!(
            &w[..8],
            [
                "Total:",
                "connections",
                w[2],
                "requests",
                w[4],
                "responses",
                w[6],
                "test-duration"
            ]
        );
        assert_eq!(w[6].parse::<u64>().unwrap(), sets, "{total}");
        assert_eq!(field(&text, "Response type: stored "), sets, "{text}");
        // The README's lines finish: every connection and every call of
        // the schedule.
        if !example.contains("-p ") {
            let conns: u64 = w[2].parse().unwrap();
            let calls = if example.contains("--num-calls=10 ") {
                10
            } else {
                100
            };
            let wanted = if calls == 10 { 1000 } else { 100 };
            assert_eq!(conns, wanted, "{total}");
            assert_eq!(w[4].parse::<u64>().unwrap(), conns * calls, "{total}");
        }
        assert_eq!(field(&text, "Errors: total "), 0, "{text}");
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}

/// twemperf gives every call the next key id of one counter for the run:
/// its README's first line (1,000 connections of 10 sets) leaves 10,000
/// items, as memcached counts them, not each connection's same 10 keys;
/// and the repcached guide's line (100 connections of 10,000 sets of 1-10
/// KB) fills a 64 MB memcached and evicts, as the guide's
/// `memcached-tool` table shows.
#[test]
fn mcperf_calls_walk_one_key_sequence_for_the_run() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let m = Memcached::start(&[]);
    let mut args = line(MCPERF_EXAMPLES[0], &[]);
    args.extend(["-s", "127.0.0.1", "-p", &m.port.to_string()].map(String::from));
    // The README's line ends with its schedule (1 s), not run_tool's cap.
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // One key per call: as many items as sets (10,000 but for a connect
    // that failed on a loaded machine).
    let sets = m.stat("cmd_set");
    assert!(sets >= 9_900, "{sets} sets");
    assert_eq!(m.stat("curr_items"), sets, "one key per call");
    let small = Memcached::start(&["-m", "64"]);
    let guide = line(
        MCPERF_EXAMPLES[2],
        &[("-p 11211", &format!("-p {}", small.port))],
    );
    // The guide's line runs 10 s; cut at 5, it has filled 64 MB (some
    // 12,000 of its 1-10 KB values) on any machine.
    let out = run_tool_capped(dir.path(), "mcperf", &guide, 5);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sets = small.stat("cmd_set");
    assert!(small.stat("evictions") > 0, "{sets} sets evicted nothing");
}

#[test]
fn mcperf_histogram_counts_every_response() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(
        "-s 127.0.0.1 -p PORT -H --num-conns=10 --num-calls=100",
        &[("PORT", &m.port.to_string())],
    );
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    let hist: u64 = text
        .lines()
        .skip_while(|l| !l.starts_with("Response time histogram [ms]:"))
        .skip(1)
        .take_while(|l| !l.starts_with("Response time [ms]"))
        .filter(|l| l.trim() != ":")
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(hist, 1000, "{text}");
}

#[test]
fn mutilate_and_memcache_perf_examples_print_their_tables() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("mutilate", "-s localhost", false),
        ("mutilate", "-s zephyr2-10g -T 24 -c 8", false),
        ("memcache-perf", "-s localhost", true),
        ("memcache-perf", "-s zephyr2-10g -T 24 -c 8", true),
    ];
    for (tool, example, mperf) in cases {
        let args = line(
            example,
            &[("localhost", &m.addr()), ("zephyr2-10g", &m.addr())],
        );
        let gets0 = m.stat("cmd_get");
        let out = run_tool(dir.path(), tool, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{tool} {example}: {}",
            stderr(&out)
        );
        let text = stdout(&out);
        let header = if mperf {
            "#type       avg     std     min      p5     p10     p50     p67     p75     p80     p85     p90     p95     p99    p999   p9999"
        } else {
            "#type       avg     min     1st     5th    10th    90th    95th    99th"
        };
        assert_eq!(text.lines().next(), Some(header), "{text}");
        let columns = header.split_whitespace().count();
        for (i, tag) in ["read", "update", "op_q"].iter().enumerate() {
            let row: Vec<&str> = text
                .lines()
                .nth(i + 1)
                .unwrap()
                .split_whitespace()
                .collect();
            assert_eq!(row[0], *tag, "{text}");
            assert_eq!(row.len(), columns, "{text}");
        }
        let mut order = vec!["Total QPS = ", "Misses = "];
        if mperf {
            order.push("Skipped TXs = ");
        }
        order.extend(["RX ", "TX "]);
        if mperf {
            order.push("CPU Usage Stats (avg/min/max): ");
        }
        assert_in_order(&text, &order);
        // "Total QPS = X (N / T s)": N is the server's gets (no sets).
        let (qps, n, _) = total_qps(&text);
        assert_eq!(n, m.stat("cmd_get") - gets0, "{qps}");
        assert!(qps.ends_with("s)"), "{qps}");
        let rx = text.lines().find(|l| l.starts_with("RX ")).unwrap();
        assert!(rx.ends_with(" MB/s") && rx.contains(" bytes : "), "{rx}");
    }
}

#[test]
fn agent_lines_need_a_token_and_loadonly_loads() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for tool in ["mutilate", "memcache-perf"] {
        // The seed's agent lines run on hosts of their own in
        // tests/fleet/agents_netns.rs; here, without a token, they stop first.
        let out = run_tool(dir.path(), tool, &line("-T 16 -A", &[]));
        assert_usage_error(&out, "agent mode needs a token");
        let master =
            "-s memcached_server --noload -B -T 16 -Q 1000 -D 4 -C 4 -a agent1 -c 4 -q 200000";
        let out = run_tool(
            dir.path(),
            tool,
            &line(master, &[("memcached_server", &m.addr())]),
        );
        assert_usage_error(&out, "agent mode needs a token");
        // -Q takes its share of -q first: none is left here.
        std::fs::create_dir_all(dir.path().join(".config/mcbench")).unwrap();
        std::fs::write(
            dir.path().join(".config/mcbench/agent-token"),
            "0123456789abcdef0\n",
        )
        .unwrap();
        let out = run_tool(
            dir.path(),
            tool,
            &line("-s h -Q 1000 -q 500 -a agent1", &[]),
        );
        assert_usage_error(&out, "-Q 1000 leaves nothing of -q 500");
        // mcbench's endpoint flags reach the agent, which refuses a hold.
        let agent = "-A --mcbench-metrics-listen 127.0.0.1:0 --mcbench-metrics-hold 1s";
        let out = run_tool(dir.path(), tool, &line(agent, &[]));
        assert_usage_error(&out, "--metrics-hold is a run's");
        // run_tool's cap is the master's to give: the agent says it ignores it.
        assert!(
            stderr(&out).contains("--mcbench-duration has no effect on an agent"),
            "{}",
            stderr(&out)
        );
        std::fs::remove_dir_all(dir.path().join(".config")).unwrap();
        let items0 = m.stat("cmd_set");
        // The load ends it (the cap ends measured phases, not a load);
        // 60 s gives it room on a loaded machine.
        let out = run_tool_capped(
            dir.path(),
            tool,
            &line(
                "-s memcached_server --loadonly",
                &[("memcached_server", &m.addr())],
            ),
            60,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        // Both print nothing after a load; the server holds the records.
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        assert_eq!(m.stat("cmd_set") - items0, 10_000);
        assert_eq!(m.stat("curr_items"), 10_000);
    }
}

#[test]
fn links_named_for_the_tools_select_them() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for name in ["memaslap", "memslap", "mcperf", "mutilate", "memcache-perf"] {
        std::os::unix::fs::symlink(BIN, dir.path().join(name)).unwrap();
    }
    let run = |name: &str, args: &[&str]| {
        let mut cmd = std::process::Command::new(dir.path().join(name));
        cmd.args(args)
            .env_remove("MEMCACHED_SERVERS")
            .env("HOME", dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        wait_bounded(cmd.spawn().unwrap(), std::time::Duration::from_secs(60))
    };
    let addr = m.addr();
    let out = run("memslap", &["-s", &addr, "-x", "2000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("servers : "), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(field(&text, "cmd_get: ") + field(&text, "cmd_set: "), 2000);
    let port = m.port.to_string();
    let out = run("mcperf", &["-s", "127.0.0.1", "-p", &port, "-N", "10"]);
    assert!(
        stderr(&out).contains("Total: connections 1 requests 10"),
        "{}",
        stderr(&out)
    );
    let out = run("mutilate", &["-s", &addr, "-t", "1"]);
    assert!(
        stdout(&out).starts_with("#type       avg     min"),
        "{}",
        stderr(&out)
    );
    let out = run("memcache-perf", &["-s", &addr, "-t", "1"]);
    assert!(
        stdout(&out).starts_with("#type       avg     std"),
        "{}",
        stderr(&out)
    );
    // A flag of another tool is a usage error, not another measurement.
    let out = run("mutilate", &["-s", &addr, "--win_size", "10k"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// The seed flags that mean something else in `mcbench run` mean what
/// their tool says under its personality (read back from mcbench's JSON).
#[test]
fn seed_short_flags_keep_their_tools_meaning() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let j = json.to_str().unwrap();
    let spec = |tool: &str, args: &str| {
        let mut a = line(args, &[("ADDR", &m.addr()), ("PORT", &m.port.to_string())]);
        a.extend(["--mcbench-json".into(), j.into()]);
        let out = run_tool(dir.path(), tool, &a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{tool} {args}: {}",
            stderr(&out)
        );
        read_json(&json)["spec"].clone()
    };
    // memaslap: -d division, -w window, -c concurrency; -P does nothing,
    // as memaslap's does nothing (a closed loop, no rate).
    let s = spec("memaslap", "-s ADDR -t 1s -d 4 -w 20k -P 5k -c 8");
    assert_eq!(s["multiget"]["keys"], 4);
    assert_eq!(s["window"], 20 * 1024);
    assert!(s["rate"].is_null(), "{s}");
    assert_eq!(s["connections"], 8);
    // mutilate: -c per server per thread, -B blocking (not binary), -d depth.
    let s = spec("mutilate", "-s ADDR -t 1 -T 2 -c 3 -B -d 2");
    assert_eq!(s["connections"], 6);
    assert_eq!(s["protocol"], "ascii");
    assert_eq!(s["busy_poll"], false);
    assert_eq!(s["depth"], 2);
    // twemperf: -q noreply, -c I/N client, -r/-R rates of connections.
    let s = spec(
        "mcperf",
        "-s 127.0.0.1 -p PORT -q -c 1/4 -n 4 -N 5 -r 100 -R 0",
    );
    assert_eq!(s["noreply"], true);
    assert_eq!(s["churn"]["conns"], 4);
    assert_eq!(s["churn"]["calls"], 5);
}

#[test]
fn help_and_refusals_name_the_flag() {
    let _m = shared_machine();
    for (tool, flag) in [
        ("memaslap", "--win_size"),
        ("mcperf", "--num-conns"),
        ("memcache-perf", "--getq_freq"),
        ("mutilate", "--twitter_trace"),
    ] {
        let out = mcbench(&[tool, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains(flag), "{tool}: {}", stdout(&out));
        assert!(stdout(&out).contains("--mcbench-json"), "{tool}");
    }
    let out = mcbench(&["memaslap", "-s", "127.0.0.1:1", "-n", "4"]);
    assert_usage_error(
        &out,
        "-n/--conn_sock without -a/--facebook is not supported",
    );
    let out = mcbench(&["memcache-perf", "-s", "127.0.0.1:1", "--keyorder", "zipf"]);
    assert_usage_error(&out, "--keyorder zipf is not supported");
    let out = mcbench(&["memcache-perf", "-s", "127.0.0.1:1", "-M", "2"]);
    assert_usage_error(&out, "-M/--poll_max is not supported");
    let out = mcbench(&["memaslap"]);
    assert_usage_error(&out, "No servers provided");
    let out = mcbench(&["mcperf", "-m", "frobnicate"]);
    assert_usage_error(&out, "-m/--method 'frobnicate'");
}

/// memcache-perf's binary is also `mcperf`: its seed lines given to
/// twemperf's personality are refused with the name of the one they are
/// for, before any traffic.
#[test]
fn memcache_perfs_lines_given_to_mcperf_name_memcache_perf() {
    let _m = shared_machine();
    for args in [
        &["-s", "127.0.0.1:1", "-T", "24", "-c", "8"][..],
        &["-s", "127.0.0.1:1"],
        &["-s", "127.0.0.1", "--loadonly"],
    ] {
        let mut all = vec!["mcperf"];
        all.extend(args);
        let out = mcbench(&all);
        assert_usage_error(&out, "mcbench memcache-perf");
    }
    // twemperf's own line, and an IPv6 host, are twemperf's.
    let out = mcbench(&["mcperf", "-s", "::1", "-p", "1", "-n", "1"]);
    assert!(!stderr(&out).contains("memcache-perf"), "{}", stderr(&out));
}

/// The table's numbers are the result's: `read` in µs as the JSON's get
/// latency, `op_q` the requests in flight at each send (1 at depth 1, up
/// to the depth when pipelined).
#[test]
fn mutilate_rows_are_the_results_latency_and_depth() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let j = json.to_str().unwrap().to_string();
    for depth in ["1", "4"] {
        let args = line(
            &format!("-s {} -t 1 -d {depth} --mcbench-json {j}", m.addr()),
            &[],
        );
        let out = run_tool(dir.path(), "mutilate", &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        let row = |tag: &str| -> Vec<f64> {
            let l = text.lines().find(|l| l.starts_with(tag)).unwrap();
            l.split_whitespace()
                .skip(1)
                .map(|v| v.parse().unwrap())
                .collect()
        };
        let v = read_json(&json);
        let mean = f(&v, "ops.get.latency_us.mean");
        assert!((row("read")[0] - mean).abs() <= 0.051, "{text} vs {mean}");
        let op_q = row("op_q");
        if depth == "1" {
            assert!(op_q.iter().all(|x| *x == 1.0), "{text}");
        } else {
            // avg above 1, 99th at most the depth.
            assert!(op_q[0] > 1.0 && op_q[7] <= 4.0, "{text}");
        }
    }
}

#[test]
fn mutilate_spreads_connections_over_servers_as_mutilate_does() {
    let _m = shared_machine();
    let a = Memcached::start(&[]);
    let b = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let j = json.to_str().unwrap().to_string();
    let (a0, b0) = (a.stat("cmd_get"), b.stat("cmd_get"));
    let servers = format!("-s {} -s {}", a.addr(), b.addr());
    let args = line(&format!("{servers} -T 2 -c 2 -t 1 --mcbench-json {j}"), &[]);
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // -c is per server per thread: 4 connections to each server.
    let v = read_json(&json);
    assert_eq!(v["spec"]["connections"], 4);
    // Each connection is its own client of one server (mutilate places
    // no keys), not a client with a socket to both.
    assert_eq!(v["spec"]["distribution"], "none");
    assert_eq!(v["connections"]["opened"], 8);
    let (da, db) = (a.stat("cmd_get") - a0, b.stat("cmd_get") - b0);
    assert!(da > 0 && db > 0, "{da} {db}");
    let text = stdout(&out);
    let n: u64 = text
        .split('(')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(n, da + db);
    // -R: each thread has one server; two threads on two servers.
    let args = line(
        &format!("{servers} -T 2 -c 3 -R -t 1 --mcbench-json {j}"),
        &[],
    );
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read_json(&json)["spec"]["connections"], 3);
}

/// `-r` over several servers: mutilate and memcache-perf divide the
/// records by the servers, so each server holds its share (the same key
/// names on each), and the run's gets find them all.
#[test]
fn records_are_divided_among_the_servers() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    for tool in ["mutilate", "memcache-perf"] {
        let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
        let servers = format!("-s {} -s {}", a.addr(), b.addr());
        let load = line(&format!("{servers} -r 1001 --loadonly"), &[]);
        let out = run_tool(dir.path(), tool, &load);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        for m in [&a, &b] {
            assert_eq!(m.stat("curr_items"), 500, "{tool}");
            assert_eq!(m.stat("cmd_set"), 500, "{tool}");
        }
        let run = line(&format!("{servers} -r 1001 --noload -t 1"), &[]);
        let out = run_tool(dir.path(), tool, &run);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        for m in [&a, &b] {
            assert!(m.stat("get_hits") > 100, "{tool}");
            assert_eq!(m.stat("get_misses"), 0, "{tool}");
        }
    }
    let out = mcbench(&[
        "mutilate",
        "-s",
        "127.0.0.1:1",
        "-s",
        "127.0.0.1:2",
        "-r",
        "1",
    ]);
    assert_usage_error(&out, "leaves none on each");
}

/// A password given to a personality is passed on, never shown: the
/// `runs as:` line masks it, in every spelling.
#[test]
fn a_personalitys_password_is_never_printed() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1: the run fails after printing its line.
    for creds in [
        ["-U", "bench", "-P", "s3cr3t-pw"],
        ["--username=bench", "--password=s3cr3t-pw", "-u", "0.1"],
    ] {
        let mut args: Vec<String> = ["-s", "127.0.0.1:1", "-t", "1"].map(String::from).to_vec();
        args.extend(creds.map(String::from));
        let out = run_tool(dir.path(), "mutilate", &args);
        let (text, err) = (stdout(&out), stderr(&out));
        assert!(err.contains("runs as: "), "{err}");
        assert!(err.contains("--password"), "the flag is still shown: {err}");
        assert!(
            !err.contains("s3cr3t") && !text.contains("s3cr3t"),
            "{text}{err}"
        );
    }
}

/// Error replies are never throughput. memcached refuses every set over
/// its item limit (2 KB, 4,000-byte values): mutilate's and
/// memcache-perf's `Total QPS` count only the gets, as memcached's own
/// `cmd_get` does, an `Errors` line counts the refused sets, and the
/// warning is on stderr; memaslap's `Ops` and `TPS` leave them out too,
/// and its `errors:` line counts them.
#[test]
fn error_replies_are_no_throughput_in_any_layout() {
    let _m = shared_machine();
    let m = Memcached::start(&["-I", "2048", "-o", "slab_chunk_max=1024"]);
    let dir = tempfile::tempdir().unwrap();
    for tool in ["mutilate", "memcache-perf"] {
        let gets0 = m.stat("cmd_get");
        let args = line(
            &format!("-s {} --noload -u 0.3 -V 4000 -t 1", m.addr()),
            &[],
        );
        let out = run_tool(dir.path(), tool, &args);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        let text = stdout(&out);
        let (qps, answered, _) = total_qps(&text);
        assert_eq!(answered, m.stat("cmd_get") - gets0, "{tool}: {qps}");
        let errors = field(&text, "Errors = ");
        assert!(
            errors > answered / 10,
            "{tool}: {errors} errors, {answered} gets"
        );
        // mutilate's own figure counts them, named, beside mcbench's.
        let with = text
            .lines()
            .find(|l| l.starts_with("Total QPS with error replies, as mutilate counts them = "))
            .unwrap_or_else(|| panic!("{tool}: {text}"));
        let n: u64 = with
            .split('(')
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(n, answered + errors, "{tool}: {with}");
        assert!(
            stderr(&out).contains("server_error"),
            "{tool}: {}",
            stderr(&out)
        );
    }
    std::fs::write(
        dir.path().join("big"),
        "key\n16 16 1\nvalue\n4000 4000 1\ncmd\n0 0.3\n1 0.7\n",
    )
    .unwrap();
    let gets0 = m.stat("cmd_get");
    let args = line(&format!("-s {} -F big -t 1s", m.addr()), &[]);
    let out = run_tool(dir.path(), "memaslap", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let errors = field(&text, "errors: ");
    assert!(errors > 0, "{text}");
    let run = text.lines().find(|l| l.starts_with("Run time: ")).unwrap();
    let ops: u64 = run.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert_eq!(ops, m.stat("cmd_get") - gets0, "{run}");
}

#[test]
fn mutilate_reads_keys_and_twitter_traces_from_its_read_file() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    let lines: String = (0..300).map(|i| format!("key{i}\n")).collect();
    std::fs::write(&keys, lines).unwrap();
    let gets0 = m.stat("cmd_get");
    let args = line(
        &format!("-s {} --noload --read_file {}", m.addr(), keys.display()),
        &[],
    );
    // The file's end ends both lines (within mutilate's 5 s), not a cap.
    let out = run_tool_capped(dir.path(), "mutilate", &args, 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // -u 0: every line a get.
    assert_eq!(m.stat("cmd_get") - gets0, 300, "{}", stdout(&out));
    let trace = dir.path().join("trace.csv");
    let mut csv = String::new();
    for i in 0..100 {
        csv += &format!("{i},tk{i},3,100,1,set,0\n{i},tk{i},3,100,1,get,0\n");
    }
    std::fs::write(&trace, csv).unwrap();
    let (gets0, sets0) = (m.stat("cmd_get"), m.stat("cmd_set"));
    let args = line(
        &format!(
            "-s {} --read_file {} --twitter_trace 1",
            m.addr(),
            trace.display()
        ),
        &[],
    );
    let out = run_tool_capped(dir.path(), "mutilate", &args, 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_set") - sets0, 100, "{}", stderr(&out));
    assert_eq!(m.stat("cmd_get") - gets0, 100, "{}", stderr(&out));
}

#[test]
fn memcache_perf_profiles_send_no_sets_unless_asked() {
    let _m = shared_machine();
    let m = Memcached::start(&["-c", "4096"]);
    let dir = tempfile::tempdir().unwrap();
    let sets0 = m.stat("cmd_set");
    let args = line(&format!("-s {} --profile 4 -t 1", m.addr()), &[]);
    let out = run_tool(dir.path(), "memcache-perf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The preload's sets (memcache-perf's profiles hold 1,000,000
    // records, as the real one left them) and no more: -u is 0 by default.
    assert_eq!(m.stat("cmd_set") - sets0, 1_000_000, "{}", stdout(&out));
    // Its 100 connections at least (profile 4's), and the stats one.
    assert!(m.stat("total_connections") > 100, "{}", stderr(&out));
    let update = stdout(&out).lines().nth(2).unwrap().to_string();
    assert!(update.starts_with("update      0.0"), "{update}");
}

#[test]
fn mutilate_scan_prints_a_read_row_per_rate() {
    // Alone on the machine: beside the other seed tests (mutilate's and
    // twemperf's spinning loops among them) a step was seen starved for
    // its whole 2 s, with no row to print.
    let _m = quiet_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // -w 1: each step warms up first, as mutilate's does with -w (without
    // it a step starts cold after its preload, and on a loaded host its
    // achieved rate is the host's, not the step's). -B: the loop blocks in
    // epoll; mutilate's default spins, and a spinning loop beside another
    // test's on two cores got a step a third of its rate, or none of it.
    let args = line(
        &format!("-s {} --scan 2000:6000:2000 -t 1 -w 1 -B", m.addr()),
        &[],
    );
    let out = run_tool(dir.path(), "mutilate", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("#type       avg     min     1st     5th    10th    90th    95th    99th      QPS   target"),
        "{text}"
    );
    let mut measured = 0.0;
    for target in [2000.0, 4000.0, 6000.0] {
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(row[0], "read", "{text}");
        assert_eq!(row.len(), 11, "{text}");
        assert_eq!(row[10].parse::<f64>().unwrap(), target, "{text}");
        // The achieved rate is the step's own: some, and no more than its
        // schedule offers (how near it comes is the host's speed).
        let qps: f64 = row[9].parse().unwrap();
        assert!(qps > 0.0 && qps < 1.5 * target, "{text}{}", stderr(&out));
        measured += qps;
    }
    // Each step measured at least 1 s, so its QPS is at most its answers:
    // the server took every get the rows count, and its warm-ups'.
    let gets = m.stat("cmd_get") as f64;
    assert!(measured <= gets, "{measured} counted, the server {gets}");
}

/// A server that answers every get (a miss) 2 ms after it read it, one at
/// a time per connection, and counts the gets it read: 500 a second on
/// one connection at most.
fn slow_counting_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let read = std::sync::Arc::new(AtomicU64::new(0));
    let counter = read.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let counter = counter.clone();
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut buf = [0u8; 65536];
                let mut pending = Vec::new();
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(at) = pending.windows(2).position(|w| w == b"\r\n") {
                        let line: Vec<u8> = pending.drain(..at + 2).collect();
                        if line.starts_with(b"get ") {
                            counter.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            if s.write_all(b"END\r\n").is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    (addr, read)
}

/// `-t` bounds the run, also when the client cannot offer its rate: at
/// 1,000/s on one connection to a server that takes 2 ms a request,
/// arrivals pile up in the client; when `-t 1` ends, those never sent stay
/// unsent (skipped, not errors), and `Total QPS` divides what the server
/// read, by its own count, by about 1 s (it once sent them all and divided
/// by 2 s). A closed loop 64 deep ends with 64 requests in flight that
/// take the server 0.13 s to answer: the run says the drain was long.
#[test]
fn sending_stops_at_t_and_the_counts_are_the_servers() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (addr, read) = slow_counting_server();
    let args = line(&format!("-s {addr} --noload -q 1000 -t 1"), &[]);
    let out = run_tool(dir.path(), "memcache-perf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (qps, answered, secs) = total_qps(&text);
    assert!(secs < 1.25, "{qps}");
    let served = read.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(answered, served, "{qps}");
    assert!(field(&text, "Skipped TXs = ") > 100, "{text}");
    assert!(!text.contains("Errors = "), "{text}");
    // Closed loop, 64 in flight when sending stops.
    let (addr, read) = slow_counting_server();
    let json = path_in(dir.path(), "deep.json");
    let out = mcbench(&[
        "run",
        "-s",
        &addr,
        "--no-load",
        "--mix",
        "get=1",
        "-c",
        "1",
        "-d",
        "64",
        "-t",
        "1s",
        "--json",
        &json,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = read_json(std::path::Path::new(&json));
    assert_eq!(
        count(&j, "total.count"),
        read.load(std::sync::atomic::Ordering::Relaxed)
    );
    let drain = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "long_drain")
        .unwrap_or_else(|| panic!("{}", j["warnings"]));
    assert!(f(drain, "drain_s") >= 0.12, "{drain}");
}

/// twemperf's sizes and amounts as twemperf sends them: `-z u1,16` stores
/// values of 1 to 16 bytes (twemperf rounds a uniform draw; mcbench once
/// gave 1 to 14), read back from memcached; `-m incr -z d7` adds 7, the
/// size, to a counter; and a drawn size is no single amount: refused.
#[test]
fn mcperf_sizes_and_amounts_are_twemperfs() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let port = m.port.to_string();
    let base = ["-s", "127.0.0.1", "-p", port.as_str()].map(String::from);
    let mut args = base.to_vec();
    args.extend(["--num-calls=3000", "--sizes=u1,16"].map(String::from));
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut lengths = std::collections::BTreeMap::new();
    for batch in (1..=3000u32).collect::<Vec<_>>().chunks(100) {
        // twemperf's names: 8 hex digits of a number from 1.
        let keys: Vec<String> = batch.iter().map(|id| format!("mcp:{id:08x}")).collect();
        let reply = raw_get(&m, &keys.join(" "));
        for l in reply.lines().filter(|l| l.starts_with("VALUE ")) {
            let len: usize = l.split_whitespace().nth(3).unwrap().parse().unwrap();
            *lengths.entry(len).or_insert(0u32) += 1;
        }
    }
    assert_eq!(lengths.values().sum::<u32>(), 3000, "{lengths:?}");
    assert_eq!(
        lengths.keys().copied().collect::<Vec<_>>(),
        (1..=16).collect::<Vec<_>>()
    );
    // The ends are half as likely: 1/30 each, against 2/30 for the others.
    assert!(
        lengths[&1] < lengths[&8] && lengths[&16] < lengths[&8],
        "{lengths:?}"
    );
    // incr by the size.
    let mut s = std::net::TcpStream::connect(m.addr()).unwrap();
    std::io::Write::write_all(&mut s, b"set mcp:00000001 0 0 3\r\n100\r\n").unwrap();
    let mut ok = [0u8; 8];
    std::io::Read::read_exact(&mut s, &mut ok).unwrap();
    assert_eq!(&ok, b"STORED\r\n");
    let mut args = base.to_vec();
    args.extend(["-m", "incr", "--sizes=d7"].map(String::from));
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reply = raw_get(&m, "mcp:00000001");
    assert_eq!(reply.lines().nth(1).map(str::trim), Some("107"), "{reply}");
    let mut args = base.to_vec();
    args.extend(["-m", "incr", "--sizes=u1,16"].map(String::from));
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_usage_error(&out, "give -z dN");
}

/// twemperf's `-m cas` sends `cas KEY 0 0 N 1` alone: memcached counts
/// cas commands (each a miss or a bad unique) and no get at all, where
/// mcbench once sent a gets before each.
#[test]
fn mcperf_cas_goes_alone() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let args = line(
        &format!("-s 127.0.0.1 -p {} -m cas --num-calls=200", m.port),
        &[],
    );
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(m.stat("cmd_get"), 0, "no gets");
    assert_eq!(m.stat("cas_misses") + m.stat("cas_badval"), 200);
    // A unique with no cas to carry it is refused, not ignored.
    let out = mcbench(&["run", "-s", &m.addr(), "--cas-unique", "1", "-x", "10"]);
    assert_usage_error(&out, "give cas in --mix");
}

/// mcperf's `-q`: the server sends no reply (its log says NOREPLY for
/// each), so none is reported as one, `stored` least of all; one fence
/// follows each write of calls, not each call.
#[test]
fn mcperf_noreply_reports_no_replies_that_never_came() {
    let _m = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("memcached.log");
    let m = Memcached::start_logged(&[], &log);
    let args = line(
        &format!(
            "-s 127.0.0.1 -p {} --num-conns=10 --num-calls=100 -q",
            m.port
        ),
        &[],
    );
    let out = run_tool(dir.path(), "mcperf", &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    let served = std::fs::read_to_string(&log).unwrap();
    let quiet = served.matches("NOREPLY STORED").count() as u64;
    assert_eq!(quiet, 1000);
    assert_eq!(m.stat("cmd_set"), quiet);
    let total = text.lines().find(|l| l.starts_with("Total: ")).unwrap();
    assert!(total.contains("requests 1000 responses 0 "), "{total}");
    assert!(!text.contains("stored"), "{text}");
    assert!(!text.contains("Response rate"), "{text}");
    assert_eq!(field(&text, "Noreply: "), quiet, "{text}");
    // As mcperf's, a call follows the last once written: the calls of one
    // write share one fence, each connection's 100 in two writes of at
    // most 64 (one fence each had cut 47.7k calls/s to 5.4k).
    let fences = served.matches(" VERSION ").count();
    assert!((10..=20).contains(&fences), "{fences} fences");
}

/// `--mcbench-metrics-listen` under each personality: its endpoint serves
/// the requests memcached counted, in the run its servers name; the hold
/// keeps it up until a scrape has read the final counts. (The preload
/// is not the measured run: the endpoint counts what the report does.)
#[test]
fn personalities_serve_prometheus_the_servers_count() {
    let _m = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let port = m.port.to_string();
    for (tool, args) in [
        ("memaslap", "-s ADDR -t 1s -c 2"),
        ("mcperf", "-s 127.0.0.1 -p PORT -n 2 -N 200"),
        ("memcache-perf", "-s ADDR -t 1 -c 2 --noload"),
        ("mutilate", "-s ADDR -t 1 -c 2 -q 1000 --noload"),
    ] {
        let target = format!("127.0.0.1:{}", free_port());
        let mut a = vec![tool.to_string()];
        a.extend(line(args, &[("ADDR", &m.addr()), ("PORT", &port)]));
        a.extend(line(
            &format!("--mcbench-metrics-listen {target} --mcbench-metrics-hold 60s"),
            &[],
        ));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let before = m.stat("cmd_get") + m.stat("cmd_set");
        let child = spawn_mcbench(&a, &[("HOME", home)]);
        let text = support::prometheus::text_when_done(&target, &m.addr());
        let out = wait_bounded(child, std::time::Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        assert!(stderr(&out).contains("--metrics-listen"), "{tool}");
        let served = m.stat("cmd_get") + m.stat("cmd_set") - before;
        let requests: f64 = support::prometheus::samples(&text, "mcbench_requests_total", &[], &[])
            .iter()
            .sum();
        assert!(served > 0, "{tool}");
        assert_eq!(requests as u64, served, "{tool}: {text}");
    }
}
