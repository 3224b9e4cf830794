//! Open loop: requests that are due but wait in the client for a free
//! slot, one queue per server, oldest first. Their wait counts as latency
//! (each keeps its intended send time); the queue is bounded so that an
//! overloaded client drops arrivals (`client_overload`) rather than
//! queueing without end.
//!
//! Pure: every method takes the time it needs; tested below without a
//! clock or a socket.

use super::Due;
use std::collections::VecDeque;

/// Requests that may wait for a free slot, per server; beyond it arrivals
/// are dropped and counted.
const MAX_BACKLOG: usize = 1 << 20;

/// `--skip`: how late an arrival must be to be skipped, and how close to
/// now the schedule is brought back (mutilate's 5 ms and 4 ms), ns.
const SKIP_BEHIND_NS: u64 = 5_000_000;
const SKIP_CATCH_UP_NS: u64 = 4_000_000;

pub(super) struct Backlog {
    queues: Vec<VecDeque<Due>>,
    /// Most requests one server's queue holds.
    bound: usize,
}

impl Backlog {
    pub(super) fn new(servers: usize) -> Backlog {
        Backlog::bounded(servers, MAX_BACKLOG)
    }

    fn bounded(servers: usize, bound: usize) -> Backlog {
        Backlog {
            queues: vec![VecDeque::new(); servers],
            bound,
        }
    }

    /// A new phase: what waited for the last one is dropped (it was
    /// counted as a timeout).
    pub(super) fn clear(&mut self) {
        self.queues.iter_mut().for_each(VecDeque::clear);
    }

    pub(super) fn servers(&self) -> usize {
        self.queues.len()
    }

    /// Whether `server`'s queue is full.
    pub(super) fn full(&self, server: usize) -> bool {
        self.queues[server].len() >= self.bound
    }

    /// Whether an arrival for `server` (`None`: any, where its key decides)
    /// could not wait if it found no slot.
    pub(super) fn cannot_wait(&self, server: Option<usize>) -> bool {
        match server {
            Some(s) => self.full(s),
            None => (0..self.queues.len()).all(|s| self.full(s)),
        }
    }

    /// `due` waits for a slot on `server` (the caller has checked `full`).
    pub(super) fn push(&mut self, server: usize, due: Due) {
        debug_assert!(!self.full(server));
        self.queues[server].push_back(due);
    }

    /// The oldest request waiting for `server`.
    pub(super) fn pop(&mut self, server: usize) -> Option<Due> {
        self.queues[server].pop_front()
    }

    pub(super) fn waits_for(&self, server: usize) -> bool {
        !self.queues[server].is_empty()
    }

    /// Whether any request waits.
    pub(super) fn any(&self) -> bool {
        self.queues.iter().any(|q| !q.is_empty())
    }

    /// Requests waiting, all servers.
    pub(super) fn len(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    /// Servers with requests waiting.
    pub(super) fn waiting_servers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.queues.len()).filter(|&s| self.waits_for(s))
    }

    /// Every request waiting, all servers.
    pub(super) fn dues(&self) -> impl Iterator<Item = &Due> + '_ {
        self.queues.iter().flatten()
    }

    /// Per server, the measured requests waiting, added to `into`.
    pub(super) fn add_measured(&self, into: &mut [u64]) {
        for (server, q) in self.queues.iter().enumerate() {
            into[server] += measured(q.iter().copied());
        }
    }

    /// Empties `server`'s queue (it has no connection up, or sending is
    /// over): how many measured requests were in it.
    pub(super) fn take(&mut self, server: usize) -> u64 {
        measured(self.queues[server].drain(..))
    }

    /// Empties every queue: how many measured requests were in them.
    pub(super) fn take_all(&mut self) -> u64 {
        (0..self.queues.len()).map(|s| self.take(s)).sum()
    }

    /// Drops the requests intended at or before `cutoff` (`--timeout`):
    /// per server, how many measured ones, through `timed_out`.
    pub(super) fn expire(&mut self, cutoff: u64, mut timed_out: impl FnMut(usize)) {
        for (server, q) in self.queues.iter_mut().enumerate() {
            while q.front().is_some_and(|d| d.intended_ns <= cutoff) {
                if q.pop_front().is_some_and(|d| d.measured) {
                    timed_out(server);
                }
            }
        }
    }

    /// `--skip` (mutilate's): when the oldest request waiting for `server`
    /// is over `SKIP_BEHIND_NS` late at `now`, it and every other waiting
    /// one more than `SKIP_CATCH_UP_NS` late are dropped unsent. How many
    /// measured ones were skipped.
    pub(super) fn skip_late(&mut self, server: usize, now: u64) -> u64 {
        let q = &mut self.queues[server];
        let late = |d: &Due, by: u64| now.saturating_sub(d.intended_ns) > by;
        if !q.front().is_some_and(|d| late(d, SKIP_BEHIND_NS)) {
            return 0;
        }
        let mut skipped = 0;
        while let Some(d) = q.front().filter(|d| late(d, SKIP_CATCH_UP_NS)) {
            skipped += u64::from(d.measured);
            q.pop_front();
        }
        skipped
    }
}

fn measured<'a>(dues: impl Iterator<Item = Due> + 'a) -> u64 {
    dues.filter(|d| d.measured).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn due(intended_ns: u64, measured: bool) -> Due {
        Due::new(None, intended_ns, measured)
    }

    fn intended(b: &mut Backlog, server: usize) -> Vec<u64> {
        std::iter::from_fn(|| b.pop(server))
            .map(|d| d.intended_ns)
            .collect()
    }

    #[test]
    fn waits_oldest_first_per_server() {
        let mut b = Backlog::new(2);
        b.push(1, due(30, true));
        b.push(0, due(10, true));
        b.push(1, due(40, true));
        assert_eq!(b.len(), 3);
        assert_eq!(b.waiting_servers().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(intended(&mut b, 1), [30, 40]);
        assert!(b.any() && b.waits_for(0) && !b.waits_for(1));
    }

    #[test]
    fn a_full_queue_refuses_arrivals_and_any_server_needs_all_full() {
        let mut b = Backlog::bounded(2, 2);
        b.push(0, due(1, true));
        assert!(!b.cannot_wait(Some(0)));
        b.push(0, due(2, true));
        assert!(b.cannot_wait(Some(0)));
        assert!(!b.cannot_wait(None), "server 1 has room");
        b.push(1, due(3, true));
        b.push(1, due(4, true));
        assert!(b.cannot_wait(None));
    }

    #[test]
    fn skip_waits_for_five_ms_late_then_catches_up_to_four() {
        let mut b = Backlog::new(1);
        for at in [0, MS, 2 * MS, 3 * MS] {
            b.push(0, due(at, at != MS));
        }
        // The oldest is exactly 5 ms late: not over it, nothing skipped.
        assert_eq!(b.skip_late(0, 5 * MS), 0);
        assert_eq!(b.len(), 4);
        // 6 ms: those more than 4 ms late (at 0 and 1 ms) go; one of
        // them was measured.
        assert_eq!(b.skip_late(0, 6 * MS), 1);
        assert_eq!(intended(&mut b, 0), [2 * MS, 3 * MS]);
    }

    #[test]
    fn expiry_drops_what_was_due_by_the_cutoff_and_counts_the_measured() {
        let mut b = Backlog::new(2);
        b.push(0, due(10, true));
        b.push(0, due(20, false));
        b.push(0, due(30, true));
        b.push(1, due(15, true));
        let mut timed_out = vec![0; 2];
        b.expire(20, |s| timed_out[s] += 1);
        assert_eq!(timed_out, [1, 1]);
        assert_eq!(intended(&mut b, 0), [30]);
    }

    #[test]
    fn taking_a_queue_counts_its_measured_requests() {
        let mut b = Backlog::new(2);
        b.push(0, due(1, true));
        b.push(0, due(2, false));
        b.push(1, due(3, true));
        let mut waiting = vec![0; 2];
        b.add_measured(&mut waiting);
        assert_eq!(waiting, [1, 1]);
        assert_eq!(b.take(0), 1);
        assert_eq!(b.take_all(), 1);
        assert!(!b.any());
    }
}
