//! The drain on the manual clock: sending stops at `-t`, what is in
//! flight is waited for, and no longer than `--drain-timeout`.

use super::{run, Scripted, MS};
use crate::stats::ErrorClass;
use crate::workload::OpKind;

#[test]
fn answers_in_flight_when_sending_stops_are_waited_for() {
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "8",
            "--rate",
            "1000",
            "-t",
            "1s",
        ],
        Scripted::after(30 * MS),
    );
    // Every request the server saw was answered and counted.
    assert_eq!(ran.total.count(OpKind::Get) as usize, ran.gets_seen());
    assert_eq!(ran.errors(ErrorClass::Timeout), 0);
    // The last was sent before 1 s and answered 30 ms later: the drain
    // took at most 30 ms, and some.
    assert!(
        ran.drain_ns > 0 && ran.drain_ns <= 30 * MS,
        "drain {} ns",
        ran.drain_ns
    );
}

#[test]
fn the_drain_ends_at_its_timeout_and_what_is_left_times_out() {
    // Requests seen after 900 ms are answered only after 10 s.
    let script = Scripted::new(|_, s| {
        Some(if s.at >= super::T0 + 900 * MS {
            10_000 * MS
        } else {
            MS
        })
    });
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "-d",
            "16",
            "--rate",
            "1000",
            "-t",
            "1s",
            "--drain-timeout",
            "200ms",
        ],
        script,
    );
    // Sending stopped at 1 s; the drain waited 200 ms for answers that
    // never came (that wait is not measured time: no answer came in it).
    assert_eq!(ran.ended_at, super::T0 + 1_200 * MS);
    assert_eq!(ran.drain_ns, 0);
    let late = ran
        .seen
        .iter()
        .filter(|s| s.at >= super::T0 + 900 * MS)
        .count() as u64;
    assert!(late > 0);
    let unanswered = ran.errors(ErrorClass::Timeout);
    // Those the connection still held at the end, and no other.
    assert_eq!(
        unanswered + ran.total.count(OpKind::Get),
        ran.gets_seen() as u64
    );
    assert!(
        unanswered >= 16.min(late),
        "{unanswered} timed out of {late} late"
    );
}
