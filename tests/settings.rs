//! A run's settings in the words of the command line, given back to
//! `mcbench run`'s parser: the same spec (`report::settings`).

use mcbench::cli::try_run_spec;
use mcbench::report::settings::{all, command_line, know_defaults};

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
