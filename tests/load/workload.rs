//! Workload shaping end to end: misses, multigets, getset, popularity,
//! profiles, run files and memaslap config files, against a real memcached.

use crate::support;

use support::*;

#[test]
fn a_miss_target_gives_that_share_of_misses() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-x",
            "20000",
            "-u",
            "0",
            "--miss-ratio",
            "0.5",
            "-r",
            "2000",
        ],
    );
    let share = f(&j, "gets.misses") / (f(&j, "gets.hits") + f(&j, "gets.misses"));
    assert!((share - 0.5).abs() < 0.02, "miss share {share}");
    assert_eq!(m.stat("get_misses") as f64, f(&j, "gets.misses"));
}

#[test]
fn a_multiget_of_ten_counts_ten_keys() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &["-x", "1000", "-u", "0", "--multiget", "10", "--no-load"],
    );
    assert_eq!(f(&j, "ops.mget.count"), 1000.0);
    assert_eq!(f(&j, "gets.hits") + f(&j, "gets.misses"), 10_000.0);
    assert_eq!(m.stat("cmd_get"), 10_000);
    // A share of gets as multigets (memcache-perf -g/-G).
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-x",
            "4000",
            "-u",
            "0",
            "--getq-freq",
            "25",
            "--getq-size",
            "4",
        ],
    );
    let mgets = f(&j, "ops.mget.count");
    assert!((mgets / 4000.0 - 0.25).abs() < 0.03, "{mgets}");
    assert_eq!(f(&j, "gets.hits"), f(&j, "ops.get.count") + 4.0 * mgets);
}

#[test]
fn getset_fills_the_key_space() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-x",
            "20000",
            "-u",
            "0",
            "--getset",
            "--no-load",
            "-r",
            "500",
        ],
    );
    assert_eq!(m.stat("curr_items"), 500);
    assert_eq!(f(&j, "ops.fill.count"), m.stat("cmd_set") as f64);
    assert_eq!(f(&j, "ops.fill.count"), f(&j, "gets.misses"));
}

#[test]
fn client_slices_load_disjoint_halves() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    for slice in ["0/2", "1/2"] {
        let out = mcbench(&[
            "run",
            "-s",
            &m.addr(),
            "--load-only",
            "-r",
            "1000",
            "--client",
            slice,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(m.stat("curr_items"), 1000);
    assert_eq!(m.stat("cmd_set"), 1000);
}

#[test]
fn zipf_popularity_concentrates_requests() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // With theta 0.99 over 10,000 keys, the hottest key gets ~10 % of gets;
    // memcached's per-item hit counts are not exposed, so compare the number
    // of distinct keys a uniform and a zipf run leave behind with getset.
    let distinct = |popularity: &str| {
        let m = Memcached::start(&[]);
        let out = mcbench(&[
            "run",
            "-s",
            &m.addr(),
            "-x",
            "5000",
            "-u",
            "0",
            "--getset",
            "--no-load",
            "--key-popularity",
            popularity,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        m.stat("curr_items")
    };
    drop(m);
    let (uniform, zipf) = (distinct("uniform"), distinct("zipf:0.99"));
    assert!(
        uniform > 3500 && zipf < 2500,
        "uniform {uniform}, zipf {zipf}"
    );
}

#[test]
fn profiles_are_listed_and_run() {
    let _machine = shared_machine();
    let out = mcbench(&["profiles"]);
    assert!(out.status.success());
    for name in ["etc", "mcperf-1", "mcperf-4", "ycsb-a", "ycsb-f", "ycsb-e"] {
        assert!(stdout(&out).contains(name), "{name}");
    }
    let m = Memcached::start(&["-c", "8192"]);
    let (_, j) = run_ok(&m.addr(), &["--profile", "etc", "-x", "3000", "-r", "1000"]);
    assert_eq!(j["spec"]["key_size"], "gev:30.7984,8.20449,0.078688");
    assert_eq!(j["spec"]["value_size"], "fb_value");
    let set_share = f(&j, "ops.set.count") / f(&j, "total.count");
    assert!((set_share - 1.0 / 31.0).abs() < 0.015, "{set_share}");
    let out = mcbench(&["run", "--profile", "ycsb-e"]);
    assert_usage_error(&out, "range scans");
}

#[test]
fn run_files_set_flags_and_flags_win() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    let body = format!("server = [\"{}\"]\nthreads = 2\nconnections = 3\nkey-popularity = \"zipf:0.9\"\nops = 999\n", m.addr());
    std::fs::write(&path, body).unwrap();
    let (out, j) = run_json(&["run", "--config", path.to_str().unwrap(), "--threads", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(j["spec"]["threads"], 3);
    assert_eq!(j["spec"]["connections"], 3);
    assert_eq!(j["spec"]["popularity"], "zipf:0.9");
    assert_eq!(f(&j, "total.count"), 999.0);
    std::fs::write(&path, "threads = [1\n").unwrap();
    let out = mcbench(&["run", "--config", path.to_str().unwrap()]);
    assert_usage_error(&out, "run.toml");
}

#[test]
fn memaslap_config_files_shape_sizes_and_mix() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memaslap.cnf");
    std::fs::write(&path, "# sizes\nkey\n20 30 0.5\n31 40 0.3\n41 60 0.2\nvalue\n10 100 0.6\n101 500 0.3\n501 2000 0.1\ncmd\n0 0.5\n1 0.5\n").unwrap();
    let (_, j) = run_ok(&m.addr(), &["-F", path.to_str().unwrap(), "-x", "2000"]);
    assert_eq!(
        j["spec"]["value_size"],
        "empirical:10-100:0.6,101-500:0.3,501-2000:0.1"
    );
    let set_share = f(&j, "ops.set.count") / f(&j, "total.count");
    assert!((set_share - 0.5).abs() < 0.05, "{set_share}");
    std::fs::write(&path, "key\n20 30 0.5\n").unwrap();
    let out = mcbench(&["run", "-s", &m.addr(), "-F", path.to_str().unwrap()]);
    assert_usage_error(&out, "sum to 0.5");
}

#[test]
fn malformed_workload_flags_name_the_text() {
    let _machine = shared_machine();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "-V", "gev:1,0"], "'gev:1,0'"),
        (&["run", "-K", "empirical:1-5:0.3"], "'empirical:1-5:0.3'"),
        (&["run", "--mix", "get=1,frob=2"], "'frob'"),
        (&["run", "--key-popularity", "zipf:x"], "'zipf:x'"),
        (&["run", "--client", "2/2"], "'2/2'"),
        (
            &["run", "--arrival", "pareto:0,1,1.5"],
            "no finite positive mean",
        ),
        (&["run", "--miss-ratio", "1.5"], "--miss-ratio"),
        (&["run", "--getq-freq", "150"], "--getq-freq"),
        (&["run", "-V", "2000000"], "--max-value-size"),
    ];
    for (args, needle) in cases {
        let out = mcbench(args);
        assert_usage_error(&out, needle);
    }
}

#[test]
fn task_windows_write_new_keys_and_read_them_back() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(
        &m.addr(),
        &["--window", "50", "-x", "4000", "-u", "0.5", "-c", "2"],
    );
    // Every get reads a key its connection wrote; every set is a new key.
    assert_eq!(f(&j, "gets.misses"), 0.0);
    assert!(f(&j, "gets.hits") > 1000.0);
    assert_eq!(m.stat("curr_items"), m.stat("cmd_set"));
    // Overwriting every time: each connection keeps rewriting its first key.
    let m = Memcached::start(&[]);
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--window",
        "50",
        "-o",
        "1",
        "-x",
        "2000",
        "-u",
        "0.5",
        "-c",
        "3",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(m.stat("curr_items"), 3);
    let out = mcbench(&["run", "-o", "0.5"]);
    assert_usage_error(&out, "--overwrite needs --window");
}

#[test]
fn client_slices_of_a_huge_key_space_do_not_overflow() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    // 2^62 keys: total × index overflowed u64 before.
    let (_, j) = run_ok(
        &m.addr(),
        &[
            "-r",
            "4611686018427387904",
            "--client",
            "1/2",
            "--no-load",
            "-x",
            "100",
            "-u",
            "0",
        ],
    );
    assert_eq!(f(&j, "total.count"), 100.0);
}

#[test]
fn twemperf_uniform_sizes_exclude_their_upper_bound() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let out = mcbench(&[
        "run",
        "-s",
        &m.addr(),
        "--load-only",
        "-r",
        "300",
        "-V",
        "u10,12",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut seen = std::collections::BTreeSet::new();
    for id in 0..300 {
        let key = format!("mcb:{id:0>26}");
        let reply = raw_get(&m, &key);
        let header = reply.lines().next().unwrap();
        let len: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
        seen.insert(len);
    }
    // [10, 12): 10 and 11, each likely; never 12.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), [10, 11]);
}
