//! What is refused before any traffic, and what is not: bad flags and
//! values, layers of configuration, limits checked up front. Each refusal
//! exits 2 with a message naming what to change. And the flags as reports
//! write them back (`report::settings`): the same spec when parsed again.

use crate::support;

use mcbench::cli::try_run_spec;
use mcbench::report::settings::{all, command_line, know_defaults, know_flags};
use support::*;

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let fifo = fifo.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "-s", ""], "empty server address"),
        (&["run", "-s", " "], "empty server address"),
        (&["run", "-s", "localhost:99999"], "no server address"),
        (
            &["run", "--timeout", "0"],
            "--request-timeout (or --timeout) must be at least 1 ms",
        ),
        (
            &["run", "--threads", "100000"],
            "--threads must be at most 256",
        ),
        (
            &["run", "--max-value-size", "2G"],
            "--max-value-size must be between",
        ),
        (&["run", "--config", "/dev/zero"], "not a regular file"),
        (&["run", "--config", fifo], "not a regular file"),
        (&["run", "-F", "/dev/zero"], "not a regular file"),
        (
            &["run", "-q", "1000", "--arrival", "normal:1,100"],
            "negative gaps",
        ),
        (
            &["run", "-q", "1000", "--arrival", "uniform:-9,11"],
            "negative gaps",
        ),
        (&["run", "--load", "--no-load"], "cannot be used with"),
        (&["run", "--label", " "], "--label takes 1 to 64 characters"),
        (&["run", "--label", "a\nb"], "--label is one printable line"),
        (
            &["run", "-r", "18446744073709551615"],
            "--keys must be at most 2^62",
        ),
    ];
    for (args, needle) in cases {
        assert_usage_error(&mcbench(args), needle);
    }
    let out = mcbench_env(&["run", "-t", "1s"], &[("MEMCACHED_SERVERS", "")]);
    assert_usage_error(&out, "empty server address");
    // A bad value in a run file names the file and the key.
    let file = dir.path().join("run.toml");
    std::fs::write(&file, "threads = \"lots\"\n").unwrap();
    let out = mcbench(&["run", "--config", file.to_str().unwrap()]);
    assert_usage_error(&out, &format!("{}: key 'threads'", file.display()));
}

#[test]
fn an_unknown_host_is_a_failed_run_not_bad_usage() {
    let out = mcbench(&["run", "-s", "no-such-host.invalid:11211", "-t", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot resolve server 'no-such-host.invalid'"));
}

#[test]
fn later_layers_override_earlier_ones_and_typed_conflicts_are_refused() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.toml");
    std::fs::write(
        &file,
        "duration = \"30s\"\nprotocol = \"meta\"\nno-load = true\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    // The typed -x replaces the file's duration, -B its protocol, --load
    // its no-load.
    let (_, j) = run_ok(&m.addr(), &["--config", file, "-x", "300", "-B", "--load"]);
    assert_eq!(j["spec"]["stop"]["ops"], 300);
    assert_eq!(j["spec"]["protocol"], "binary");
    assert_eq!(j["spec"]["load"], "load");
    // Without typed flags the file's values hold.
    let (_, j) = run_ok(&m.addr(), &["--config", file, "-t", "1s"]);
    assert_eq!(j["spec"]["protocol"], "meta");
    assert_eq!(j["spec"]["load"], "no_load");
    // Typed together, they conflict.
    assert_usage_error(
        &mcbench(&["run", "-t", "1s", "-x", "5"]),
        "cannot be used with",
    );
    assert_usage_error(
        &mcbench(&["run", "--protocol", "meta", "-B"]),
        "cannot be used with",
    );
}

#[test]
fn a_rate_is_taken_with_a_suffix() {
    let _machine = shared_machine();
    let m = Memcached::start(&[]);
    let (_, j) = run_ok(&m.addr(), &["-q", "4k", "-t", "1s"]);
    assert_eq!(f(&j, "spec.rate"), 4000.0);
}

#[test]
fn the_embedded_server_needs_descriptors_checked_up_front() {
    let script = format!("ulimit -n 256 && ulimit -Hn 256 && exec {BIN} run -t 1s");
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_usage_error(&out, "file descriptors");
}

#[test]
fn a_flag_that_only_qualifies_another_is_refused_without_it() {
    let _machine = shared_machine();
    for (args, needed) in [
        (&["--udp"][..], "--server <ADDR>"),
        (
            &["--trace-clients"][..],
            "<--trace <FILE>|--read-file <FILE>>",
        ),
        (&["--save-rate", "0.5"][..], "--save <FILE>"),
    ] {
        let mut all = vec!["run"];
        all.extend(args);
        let out = mcbench(&all);
        assert_usage_error(&out, &format!("not provided:\n  {needed}"));
    }
}

/// Errors that teach: each refusal names a flag the user typed and says
/// what to do (give, drop, use, raise ... something, or the bound a value
/// must keep). The cases span every family of `RunSpec::validate`.
#[test]
fn each_refusal_names_the_flag_and_what_to_do() {
    let cases: &[&[&str]] = &[
        &["--skip"],
        &["--moderate"],
        &["--coalesce", "100us"],
        &["-q", "100", "--coalesce", "2ms"],
        &["-q", "100", "--num-conns", "5"],
        &["-q", "0"],
        &["-T", "0"],
        &["-c", "0"],
        &["-d", "0"],
        &["-d", "2", "--refill-batch", "3"],
        &["-q", "100", "-d", "4", "--refill-batch", "2"],
        &["-t", "0s"],
        &["-x", "0"],
        &["--time-limit", "0s"],
        &["--interval", "10ms"],
        &["-V", "2000000"],
        &["--miss-ratio", "1.5"],
        &["--window", "0"],
        &["--overwrite", "0.5"],
        &["--load-only", "--window", "10"],
        &["--noreply", "--protocol", "resp"],
        &["--num-conns", "0"],
        &["--num-conns", "5", "-d", "2"],
        &["--num-conns", "5", "-x", "10"],
        &["--measure-connections", "1", "-x", "100"],
        &["--assoc", "10"],
        &["--delete90"],
        &["--read-answers", "late"],
        &["--kernel-stamps", "on", "--num-conns", "5"],
        &["--timeout", "0s"],
        &["--drain-timeout", "0s"],
        &["-q", "10", "--arrival", "normal:1,2"],
        &["--trace-commands", "--protocol", "binary"],
        &["--exp-verify", "2"],
        &["--verify", "1.5"],
        &["--save-rate", "0.5"],
        &["--precision", "p99:5%", "-x", "1000"],
        &["--precision", "p99"],
        &["--precision", "p99:0%"],
    ];
    const HINTS: &[&str] = &[
        "give", "use", "add", "drop", "raise", "must", "at most", "at least", "between", "needs",
        "try", "without", "only",
    ];
    for args in cases {
        let all = [&["run", "-s", "127.0.0.1:1"][..], args].concat();
        let out = mcbench(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let said = stderr(&out);
        let typed: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| a.starts_with('-'))
            .collect();
        fn long(short: &str) -> &str {
            match short {
                "-q" => "--rate",
                "-T" => "--threads",
                "-c" => "--connections",
                "-d" => "--depth",
                "-t" => "--duration",
                "-x" => "--ops",
                "-V" => "--value-size",
                other => other,
            }
        }
        assert!(
            typed
                .iter()
                .any(|f| said.contains(f) || said.contains(long(f))),
            "{args:?}: no flag named in: {said}"
        );
        let lower = said.to_lowercase();
        assert!(
            HINTS.iter().any(|h| lower.contains(h)),
            "{args:?}: no hint in: {said}"
        );
    }
}

/// Splits a command line as a POSIX shell would (words, single quotes).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            '\\' if !quoted => word.extend(chars.next()),
            ' ' if !quoted => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

/// The changed settings' words, given back to `mcbench run`, make the
/// same spec: they are the command line, not a paraphrase of it.
fn round_trip(args: &[&str]) -> String {
    know_flags(mcbench::cli::run_flags());
    know_defaults(&try_run_spec(&[]).unwrap());
    let spec = try_run_spec(args).unwrap();
    let line = command_line(&spec).join(" ");
    let words = shell_words(&line);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let again = try_run_spec(&refs).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(
        serde_json::to_value(&spec).unwrap(),
        serde_json::to_value(&again).unwrap(),
        "{args:?} was written {line}"
    );
    line
}

#[test]
fn the_defaults_change_nothing() {
    know_flags(mcbench::cli::run_flags());
    know_defaults(&try_run_spec(&[]).unwrap());
    assert_eq!(
        command_line(&try_run_spec(&[]).unwrap()),
        Vec::<String>::new()
    );
}

#[test]
fn changed_settings_read_as_the_flags_that_made_them() {
    let line = round_trip(&[
        "-s",
        "127.0.0.1:11211",
        "-q",
        "20000",
        "--mix",
        "get=0.7,set=0.3",
        "-t",
        "30s",
        "-c",
        "8",
    ]);
    assert_eq!(
        line,
        "-s 127.0.0.1:11211 -c 8 -q 20000 -t 30s --mix get=7,set=3"
    );
}

#[test]
fn every_kind_of_setting_round_trips() {
    let cases: &[&[&str]] = &[
        &[
            "-s",
            "127.0.0.1:11211:3,127.0.0.2:11211",
            "--distribution",
            "ketama",
        ],
        &[
            "-s",
            "127.0.0.1:1",
            "-q",
            "500",
            "--coalesce",
            "100us",
            "--skip",
        ],
        &[
            "-s",
            "127.0.0.1:1",
            "--timeout",
            "2s",
            "--connect-timeout",
            "1s",
        ],
        &["-s", "127.0.0.1:1", "--timeout", "2s"],
        &["-s", "127.0.0.1:1", "--kernel-stamps", "off"],
        &["-s", "127.0.0.1:1", "--kernel-stamps", "on"],
        &["-s", "127.0.0.1:1", "--request-timeout", "250ms"],
        &[
            "--key-popularity",
            "zipf:0.9",
            "--client",
            "1/2",
            "-K",
            "20",
            "-V",
            "100",
            "--key-prefix",
            "it's",
            "-r",
            "5000",
            "--seed",
            "7",
            "-w",
            "2s",
            "-i",
            "500ms",
            "--no-load",
        ],
        &[
            "-s",
            "127.0.0.1:1",
            "--num-conns",
            "100",
            "--conn-rate",
            "50",
            "--num-calls",
            "5",
        ],
        &["--getq-freq", "25", "--getq-size", "10"],
        &["--getq-freq", "0", "--getq-size", "10"],
        &["--getq-freq", "7", "--getq-size", "3"],
        &["--precision", "p99:7%", "-t", "60s"],
        &["--key-prefix=-x:"],
        &["-s", "127.0.0.1:1", "--read-delay", "250ns"],
        // Keys written by the flag the CLI defines for them, not spelled
        // out as `key=value`.
        &[
            "-d",
            "4",
            "--refill-batch",
            "2",
            "--first-key",
            "3",
            "--key-digits",
            "hex",
            "--expiry",
            "30",
            "--affinity",
            "0,1",
            "-T",
            "2",
            "--busy-poll",
            "--miss-ratio",
            "0.25",
            "--noreply",
            "--getset",
        ],
        &["--save", "/nonexistent/s.tsv", "--save-rate", "0.1"],
        &["--multiget", "4"],
        &["--mix", "get=7,mget=2,set=1", "--multiget", "8"],
        &["-s", "127.0.0.1:1,127.0.0.1:2", "--rep-write", "1"],
        &[
            "-s",
            "127.0.0.1:1",
            "--measure-connections",
            "1",
            "--measure-rate",
            "100",
        ],
        &["--precision", "p99:5%", "-t", "60s"],
        &[
            "-s",
            "127.0.0.1:1",
            "--linger",
            "0",
            "--send-buffer",
            "16k",
            "--no-nodelay",
        ],
        &[
            "-s",
            "127.0.0.1:1",
            "--tls",
            "--tls-insecure",
            "--tls-resume",
            "off",
        ],
        &["--label", "my run", "-x", "1000", "--protocol", "meta"],
        &[
            "--verify",
            "0.1",
            "--exp-verify",
            "0.05",
            "--exp-verify-ttl",
            "2",
        ],
        &[
            "-B",
            "-T",
            "2",
            "-d",
            "4",
            "--affinity",
            "0,1",
            "--window",
            "100",
            "-o",
            "0.5",
        ],
    ];
    for args in cases {
        round_trip(args);
    }
}

#[test]
fn no_setting_is_written_as_json() {
    let spec = try_run_spec(&["-s", "127.0.0.1:1", "--num-conns", "10", "--linger", "1"]).unwrap();
    for s in all(&spec) {
        let w = s.words.unwrap_or_default();
        assert!(!w.contains('{') && !w.contains("null"), "{}: {w}", s.key);
    }
}
