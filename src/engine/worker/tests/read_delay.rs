//! `--read-delay` on the manual clock: measured reads pause before they
//! read, the preload's never do.

use super::{run, Scripted, MS};
use crate::workload::OpKind;

#[test]
fn the_preload_reads_at_once_and_measured_reads_after_the_pause() {
    let ran = run(
        &[
            "-r",
            "200",
            "-c",
            "1",
            "-d",
            "1",
            "-u",
            "0",
            "-x",
            "10",
            "--read-delay",
            "10ms",
        ],
        Scripted::after(100_000),
    );
    let sets: Vec<u64> = ran
        .seen
        .iter()
        .filter(|s| s.command == "set")
        .map(|s| s.at)
        .collect();
    assert_eq!(sets.len(), 200);
    // One at a time, each sent as the last was answered: 100 µs apart,
    // with no pause between.
    assert!(
        sets.windows(2).all(|w| w[1] - w[0] == 100_000),
        "the preload paused"
    );
    let gets: Vec<u64> = ran
        .seen
        .iter()
        .filter(|s| s.command == "get")
        .map(|s| s.at)
        .collect();
    assert_eq!(gets.len(), 10);
    // Each measured answer was read after the pause, and timed by its
    // receive stamp at the server's 100 µs, not at the read.
    assert!(
        gets.windows(2).all(|w| w[1] - w[0] >= 10 * MS),
        "a read did not pause"
    );
    let lat = &ran.total.op(OpKind::Get).expect("gets").latency;
    let server = lat.lowest_equivalent(100_000);
    assert_eq!(lat.lowest_equivalent(lat.min()), server);
    assert_eq!(lat.lowest_equivalent(lat.max()), server);
}

#[test]
fn a_large_answer_waits_one_pause_not_one_per_read() {
    // 1 MB answers, 4 in flight, each 1 ms after its request: each takes
    // some 16 reads of the 64 KB buffer. The pause comes before the read
    // that starts the answers, never before those that go on with them.
    let args = [
        "-r", "20", "-V", "1000000", "-u", "0", "-c", "1", "-d", "4", "-x", "40",
    ];
    let ran = run(
        &[&args[..], &["--read-delay", "5ms"]].concat(),
        Scripted::after(MS),
    );
    let (_, preloaded_at) = ran.preload.expect("a preload");
    assert_eq!(ran.total.hits, 40);
    // Ten rounds of four: each 1 ms for the answers and one 5 ms pause.
    // One pause per read would be 40 x 16 x 5 ms = 3.2 s.
    assert_eq!(ran.ended_at - preloaded_at, 10 * 6 * MS);
}
