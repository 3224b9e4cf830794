//! `--num-conns` on the manual clock: each scheduled connection opens,
//! sends its calls and closes, and the server sees exactly that.

use super::{run, Scripted};
use std::collections::BTreeMap;

#[test]
fn each_scheduled_connection_sends_its_calls_and_closes() {
    let ran = run(
        &[
            "--no-load",
            "-u",
            "0",
            "-c",
            "1",
            "--num-conns",
            "20",
            "--conn-rate",
            "100",
            "--num-calls",
            "3",
        ],
        Scripted::after(200_000),
    );
    // The held connection (closed before measuring) and the twenty.
    assert_eq!(ran.connections, 21);
    let mut per_pipe: BTreeMap<usize, usize> = BTreeMap::new();
    for s in ran.seen.iter().filter(|s| s.command == "get") {
        *per_pipe.entry(s.pipe).or_default() += 1;
    }
    assert_eq!(per_pipe.len(), 20);
    assert!(per_pipe.values().all(|&n| n == 3), "{per_pipe:?}");
    assert_eq!(ran.total.count(crate::workload::OpKind::Get), 60);
    assert_eq!(ran.total.conns.closed, 20);
}
