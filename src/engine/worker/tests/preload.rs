//! The preload runs closed whatever the measured schedule: every key set
//! once, as fast as answered, before the first measured request.

use super::{run, Scripted};
use std::collections::BTreeSet;

#[test]
fn an_open_loop_run_preloads_every_key_once_before_measuring() {
    let ran = run(
        &[
            "-r", "500", "-u", "0", "-c", "2", "-d", "8", "--rate", "1000", "-t", "200ms",
        ],
        Scripted::after(50_000),
    );
    let sets: Vec<&super::Seen> = ran.seen.iter().filter(|s| s.command == "set").collect();
    let keys: BTreeSet<&str> = sets.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(sets.len(), 500, "each key set once");
    assert_eq!(keys.len(), 500);
    let last_set = sets.iter().map(|s| s.at).max().unwrap();
    let first_get = ran
        .seen
        .iter()
        .filter(|s| s.command == "get")
        .map(|s| s.at)
        .min()
        .unwrap();
    assert!(first_get >= last_set, "measured after the preload");
    // Closed: the preload kept its connections' depth full, so it took
    // about 500 / 16 round trips of 50 µs, not 500 arrivals at 1,000/s.
    assert!(
        last_set - ran.seen[0].at < 5_000_000,
        "{} ns",
        last_set - ran.seen[0].at
    );
    // And the gets found what it set.
    assert_eq!(ran.total.misses, 0);
    assert!(ran.total.hits > 100);
}
