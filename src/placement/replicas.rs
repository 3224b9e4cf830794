//! memaslap's replication test (`--rep-write N`): the first `writers`
//! servers take the writes, each key on the writer its distribution
//! places it on (its *home*), and reads go to a server the key was not
//! written to, so that a miss there is a replication miss.
//!
//! With `any_reader` (memaslap's own `-p`), a read goes to any server,
//! its home included, as memaslap draws one.
//!
//! A server that is down is passed over (memaslap's promise): writes go
//! to the next writer up, then to any server; reads to the next other
//! server up, then to the home itself.

/// The servers of a replication run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replicas {
    /// Servers `0..writers` take writes (1 ≤ writers ≤ servers).
    pub writers: usize,
    /// Every server, writers first (at least 2).
    pub servers: usize,
    /// Reads go to any server (`--rep-read any`), not only the others.
    pub any_reader: bool,
}

impl Replicas {
    /// The server a request for a key placed on writer `home` goes to:
    /// `writes` for anything but a retrieval (deletes, counters and
    /// touches change the key too).
    /// `turn` picks which of the other servers a read tries first (any
    /// number: callers rotate or draw it); `up(s)` says whether server `s`
    /// can take a request now. `None` when no server is up.
    pub fn target(
        &self,
        writes: bool,
        home: usize,
        turn: usize,
        up: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let n = self.servers;
        if writes {
            let w = self.writers;
            return (0..w).map(|i| (home + i) % w).chain(w..n).find(|&s| up(s));
        }
        if self.any_reader {
            return (0..n).map(|i| (turn + i) % n).find(|&s| up(s));
        }
        let others = n - 1;
        (0..others)
            .map(|i| (home + 1 + (turn + i) % others) % n)
            .chain(std::iter::once(home))
            .find(|&s| up(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_avoid_the_home_while_another_server_is_up() {
        let r = Replicas {
            writers: 2,
            servers: 3,
            any_reader: false,
        };
        let all = |_: usize| true;
        for turn in 0..6 {
            let s = r.target(false, 1, turn, all).unwrap();
            assert_ne!(s, 1);
        }
        // Both other servers are read in turn.
        assert_eq!(r.target(false, 1, 0, all), Some(2));
        assert_eq!(r.target(false, 1, 1, all), Some(0));
        // Only the home is up: it serves the read.
        assert_eq!(r.target(false, 1, 0, |s| s == 1), Some(1));
        assert_eq!(r.target(false, 1, 0, |_| false), None);
    }

    /// memaslap's reads: every server in turn, the home among them.
    #[test]
    fn any_reader_reads_every_server_in_turn() {
        let r = Replicas {
            writers: 2,
            servers: 2,
            any_reader: true,
        };
        let reads: Vec<_> = (0..4).map(|t| r.target(false, 1, t, |_| true)).collect();
        assert_eq!(reads, [Some(0), Some(1), Some(0), Some(1)]);
        assert_eq!(r.target(false, 1, 0, |s| s == 1), Some(1));
    }

    #[test]
    fn writes_go_to_the_home_then_other_writers_then_anyone() {
        let r = Replicas {
            writers: 2,
            servers: 3,
            any_reader: false,
        };
        assert_eq!(r.target(true, 1, 0, |_| true), Some(1));
        assert_eq!(r.target(true, 1, 0, |s| s != 1), Some(0));
        assert_eq!(r.target(true, 1, 0, |s| s == 2), Some(2));
        let one = Replicas {
            writers: 1,
            servers: 2,
            any_reader: false,
        };
        assert_eq!(one.target(true, 0, 7, |_| true), Some(0));
        assert_eq!(one.target(false, 0, 7, |_| true), Some(1));
    }
}
