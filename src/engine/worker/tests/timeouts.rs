//! `--timeout` on the manual clock: an unanswered request fails when its
//! time is up, exactly, and its connection is opened again.

use super::{run, Scripted, MS, T0};
use crate::engine::PhaseEnd;
use crate::stats::ErrorClass;
use crate::workload::OpKind;

#[test]
fn an_unanswered_request_times_out_and_its_connection_is_opened_again() {
    // The 10th request is never answered.
    let script = Scripted::new(|n, _| (n != 10).then_some(MS));
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "1",
            "-t",
            "2s",
            "--timeout",
            "300ms",
        ],
        script,
    );
    assert!(matches!(ran.end, PhaseEnd::Completed));
    assert_eq!(ran.errors(ErrorClass::Timeout), 1);
    assert_eq!(ran.total.connections_reopened, 1);
    assert_eq!(ran.connections, 2, "the server saw a second connection");
    // The next request went out on the new connection, no sooner than
    // the timeout after the lost one was sent.
    let lost = &ran.seen[10];
    let next = &ran.seen[11];
    assert_ne!(next.pipe, lost.pipe);
    assert!(
        next.at >= lost.at + 300 * MS,
        "reopened {} ns after",
        next.at - lost.at
    );
    // Answered requests: every one the server answered, and no other.
    let answered = ran.total.count(OpKind::Get) as usize;
    assert_eq!(answered, ran.gets_seen() - 1);
}

#[test]
fn a_server_that_never_answers_stalls_a_phase_without_an_end_in_time() {
    // `-x`: the phase ends by its count, so silence is a stall.
    let script = Scripted::new(|_, _| None);
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "-x",
            "100",
            "--timeout",
            "1s",
        ],
        script,
    );
    let PhaseEnd::Failed(why) = &ran.end else {
        panic!("not a stall: {:?}", ran.end);
    };
    assert!(
        why.contains("no answer from 127.0.0.1:11211 for 1.0 s"),
        "{why}"
    );
    assert_eq!(ran.gets_seen(), 1, "depth 1: one request, never answered");
    // It gave up when the timeout was up, not later.
    assert_eq!(ran.ended_at, T0 + 1_000 * MS);
}

#[test]
fn a_connection_the_server_closes_loses_what_it_held_and_is_opened_again() {
    let script = Scripted::after(MS).closing_at(40);
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "4",
            "-t",
            "1s",
            "--reconnect",
        ],
        script,
    );
    assert_eq!(ran.total.connections_lost, 1);
    let lost = ran.errors(ErrorClass::ConnectionLost);
    assert!((1..=4).contains(&lost), "{lost} lost with it");
    assert_eq!(ran.total.connections_reopened, 1);
    assert_eq!(ran.connections, 2);
    // The server answered all it saw but those on the first connection
    // from the one it closed on; each of those was lost with it (and
    // so were any it had not read).
    let closed_on = ran.seen[40].pipe;
    let unanswered = ran.seen[40..]
        .iter()
        .filter(|s| s.pipe == closed_on)
        .count() as u64;
    assert!(
        unanswered >= 1 && lost >= unanswered,
        "{unanswered} unanswered, {lost} lost"
    );
    let answered = ran.total.count(OpKind::Get);
    assert_eq!(answered, ran.gets_seen() as u64 - unanswered);
}
