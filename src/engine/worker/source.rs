//! The request source of a worker's phase: the preload's keys, the mix,
//! a trace's records, or `--delete90`'s deletes, and the measured quota
//! (`--ops`) they count against. Which request is drawn for the mix is
//! the workload's; which record comes next is the replay's
//! (`replay.rs`): this part decides which of them a phase draws from.
//!
//! Pure: tested below without a clock or a socket.

use crate::workload::{OpKind, Request};
use std::ops::Range;

/// Ranges of key ids, each for one server (`Some`) or where its keys live
/// (`None`, when keys are placed).
pub(super) type KeyRanges = Vec<(Option<usize>, Range<u64>)>;

/// What a phase sends.
pub(super) enum Source {
    /// Sets every key of the ranges once.
    Load(KeyRanges),
    /// The configured mix, over random keys.
    Mix,
    /// A trace's records (`--trace`, `--read-file`).
    Trace,
    /// `--delete90`: deletes 90 % of the keys of the ranges (each key but
    /// every tenth), then back to the mix.
    Delete(KeyRanges),
}

pub(super) struct Requests {
    pub(super) source: Source,
    /// The keys this worker preloads.
    load: KeyRanges,
    /// `--delete90`: the keys to delete once half the quota is sent
    /// (taken when the deletes start).
    deletes: KeyRanges,
    /// This worker's share of `--ops`.
    quota: Option<u64>,
    /// Measured requests this phase may still send.
    quota_left: u64,
}

impl Requests {
    pub(super) fn new(load: KeyRanges, deletes: KeyRanges, quota: Option<u64>) -> Requests {
        Requests {
            source: Source::Mix,
            load,
            deletes,
            quota,
            quota_left: u64::MAX,
        }
    }

    /// A phase begins: the measured one sends the trace or the mix, under
    /// the quota; the preload sets its keys.
    pub(super) fn begin_phase(&mut self, measured: bool, replaying: bool) {
        self.quota_left = match measured {
            true => self.quota.unwrap_or(u64::MAX),
            false => u64::MAX,
        };
        self.source = match (measured, replaying) {
            (true, true) => Source::Trace,
            (true, false) => Source::Mix,
            (false, _) => Source::Load(self.load.clone()),
        };
    }

    /// Whether the quota is spent.
    pub(super) fn quota_spent(&self) -> bool {
        self.quota_left == 0
    }

    /// A measured request is sent (or counted unsendable).
    pub(super) fn spend(&mut self) {
        self.quota_left -= 1;
    }

    pub(super) fn preloading(&self) -> bool {
        matches!(self.source, Source::Load(_))
    }

    pub(super) fn mixing(&self) -> bool {
        matches!(self.source, Source::Mix)
    }

    pub(super) fn replaying(&self) -> bool {
        matches!(self.source, Source::Trace)
    }

    /// Whether a preload has set every key.
    pub(super) fn preloaded(&self) -> bool {
        match &self.source {
            Source::Load(ranges) => ranges.iter().all(|(_, r)| r.is_empty()),
            _ => false,
        }
    }

    /// The preload's next key of `server`'s ranges (`None`: of the ranges
    /// whose keys are placed).
    pub(super) fn next_preload(&mut self, server: Option<usize>) -> Option<Request> {
        let Source::Load(ranges) = &mut self.source else {
            return None;
        };
        let (_, range) = ranges
            .iter_mut()
            .find(|(s, r)| *s == server && !r.is_empty())?;
        Some(Request::new(OpKind::Set, range.next()?))
    }

    /// `server` is down: the keys left to preload on it are dropped. How
    /// many.
    pub(super) fn strand_preload(&mut self, server: usize) -> u64 {
        let Source::Load(ranges) = &mut self.source else {
            return 0;
        };
        let mut dropped = 0;
        for (_, range) in ranges.iter_mut().filter(|(s, _)| *s == Some(server)) {
            dropped += range.end - range.start;
            *range = range.end..range.end;
        }
        dropped
    }

    /// `--delete90`: the next key to delete for `server` (`None`: of the
    /// placed ranges), each but every tenth, once half the measured quota
    /// is sent (`measured`: the request would be). When none is left for
    /// `server`, `None`; the mix resumes once every range is done.
    pub(super) fn next_delete(&mut self, server: Option<usize>, measured: bool) -> Option<Request> {
        self.start_deletes(measured);
        let Source::Delete(ranges) = &mut self.source else {
            return None;
        };
        let next = ranges
            .iter_mut()
            .filter(|(s, _)| *s == server)
            .find_map(|(_, r)| r.find(|id| id % 10 != 9));
        if ranges.iter().all(|(_, r)| r.is_empty()) {
            self.source = Source::Mix;
        }
        Some(Request::new(OpKind::Delete, next?))
    }

    fn start_deletes(&mut self, measured: bool) {
        let Some(quota) = self.quota else {
            return;
        };
        let half_sent = self.quota_left <= quota - quota / 2;
        if measured && half_sent && !self.deletes.is_empty() && self.mixing() {
            self.source = Source::Delete(std::mem::take(&mut self.deletes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(r: &mut Requests, mut next: impl FnMut(&mut Requests) -> Option<Request>) -> Vec<u64> {
        std::iter::from_fn(|| next(r))
            .filter_map(|q| q.key_id())
            .collect()
    }

    #[test]
    fn the_preload_sets_each_key_of_each_server_once() {
        let mut r = Requests::new(vec![(Some(0), 0..3), (Some(1), 3..5)], vec![], None);
        r.begin_phase(false, false);
        assert!(r.preloading() && !r.preloaded());
        let req = r.next_preload(Some(1)).unwrap();
        assert_eq!((req.op, req.key_id()), (OpKind::Set, Some(3)));
        assert_eq!(keys(&mut r, |r| r.next_preload(Some(0))), [0, 1, 2]);
        assert_eq!(r.next_preload(None), None);
        assert!(!r.preloaded());
        assert_eq!(r.strand_preload(1), 1, "key 4 was left");
        assert!(r.preloaded());
        // The measured phase then draws from the mix, or the trace.
        r.begin_phase(true, false);
        assert!(r.mixing() && r.next_preload(Some(0)).is_none());
        r.begin_phase(true, true);
        assert!(r.replaying());
    }

    #[test]
    fn the_quota_counts_measured_requests_of_the_measured_phase_only() {
        let mut r = Requests::new(vec![], vec![], Some(2));
        r.begin_phase(false, false);
        r.spend();
        assert!(!r.quota_spent());
        r.begin_phase(true, false);
        r.spend();
        assert!(!r.quota_spent());
        r.spend();
        assert!(r.quota_spent());
    }

    #[test]
    fn delete90_deletes_all_but_every_tenth_key_after_half_the_quota() {
        let mut r = Requests::new(vec![], vec![(None, 0..21)], Some(10));
        r.begin_phase(true, false);
        for _ in 0..4 {
            assert_eq!(r.next_delete(None, true), None, "the mix's half");
            r.spend();
        }
        // Not measured (the warm-up): the mix goes on.
        r.spend();
        assert_eq!(r.next_delete(None, false), None);
        let deleted = keys(&mut r, |r| r.next_delete(None, true));
        let expected: Vec<u64> = (0..21).filter(|k| k % 10 != 9).collect();
        assert_eq!(deleted, expected);
        assert!(r.mixing(), "back to the mix once every key is done");
        assert_eq!(r.next_delete(None, true), None, "and only once");
    }

    #[test]
    fn delete90_keeps_to_each_servers_ranges() {
        let mut r = Requests::new(vec![], vec![(Some(0), 0..2), (Some(1), 10..12)], Some(2));
        r.begin_phase(true, false);
        r.spend();
        assert_eq!(keys(&mut r, |r| r.next_delete(Some(1), true)), [10, 11]);
        assert!(!r.mixing(), "server 0's keys are left");
        assert_eq!(keys(&mut r, |r| r.next_delete(Some(0), true)), [0, 1]);
        assert!(r.mixing());
    }
}
