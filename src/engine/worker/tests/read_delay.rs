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
