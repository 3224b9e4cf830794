//! Servers that go silent, on the manual clock: a phase that cannot end
//! by itself in time fails exactly `--timeout` after its last progress,
//! with the servers named, whether or not lost connections are opened
//! again. (The end-to-end tests in `tests/load/hostile.rs` check the report
//! and the exit code; the time is checked here, exactly.)

use super::{run, Scripted, MS, T0};
use crate::engine::PhaseEnd;

/// The phases that have no end in time, with their flags.
const PHASES: [(&str, &[&str]); 3] = [
    ("preload", &["-x", "100"]),
    ("preload (--load-only)", &["--load-only"]),
    ("measured run", &["--no-load", "-x", "100"]),
];

fn assert_stall_ends_at_the_timeout(reconnect: bool) {
    for (phase, flags) in PHASES {
        let mut args = vec!["--timeout", "1s", "-r", "100", "-c", "2"];
        args.extend_from_slice(flags);
        if reconnect {
            args.push("-R");
        }
        let ran = run(&args, Scripted::new(|_, _| None));
        // A preload's end is judged at the barrier; the others' is the
        // run's.
        let (end, at) = match ran.preload {
            Some(preload) if phase == "preload" => preload,
            _ => (ran.end, ran.ended_at),
        };
        let PhaseEnd::Failed(why) = &end else {
            panic!("{phase}: not a stall: {end:?}");
        };
        let expected = format!("{phase}: no answer from 127.0.0.1:11211 for 1.0 s");
        assert!(why.starts_with(&expected), "{why}");
        assert_eq!(at - T0, 1_000 * MS, "{phase}");
        assert_eq!(ran.total.count(crate::workload::OpKind::Get), 0);
    }
}

#[test]
fn a_silent_server_fails_every_phase_without_an_end_at_its_timeout() {
    assert_stall_ends_at_the_timeout(false);
}

#[test]
fn reopening_connections_does_not_put_the_stall_off() {
    assert_stall_ends_at_the_timeout(true);
}
