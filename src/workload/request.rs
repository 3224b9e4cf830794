//! `Workload`: everything that decides what a request is — op, keys, value
//! size — bundled from the spec, shared read-only by the workers.

use super::{Cursor, KeySpace, Mix, MultiGet, OpKind, TaskWindow, ValueTable};
use rand::Rng;

/// What a request asks for: a key of the key space, by its id (any u64:
/// expiring and window keys live far past the key space), or a replayed
/// trace record, by the slot its worker holds it in
/// (`engine::worker::replay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Named {
    Key(u64),
    Record(u32),
}

impl Named {
    /// Key `id` of the key space.
    pub fn key(id: u64) -> Named {
        Named::Key(id)
    }

    /// The trace record in slot `slot`.
    pub fn record(slot: u32) -> Named {
        Named::Record(slot)
    }

    /// The key space's id, if a key of it is named.
    pub fn key_id(self) -> Option<u64> {
        match self {
            Named::Key(id) => Some(id),
            Named::Record(_) => None,
        }
    }

    /// The record's slot, if a trace record is named.
    pub fn record_slot(self) -> Option<u32> {
        match self {
            Named::Record(slot) => Some(slot),
            Named::Key(_) => None,
        }
    }

    /// The number that picks its value's bytes (`ValueTable::value_for`):
    /// a key's id, or a record's slot.
    pub fn seed(self) -> u64 {
        match self {
            Named::Key(id) => id,
            Named::Record(slot) => u64::from(slot),
        }
    }
}

/// One request as the workload or a trace decided it: its op and what it
/// names (a multiget draws its other keys when it is encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub op: OpKind,
    pub named: Named,
    /// The cas unique a `cas` must match; 0 for other ops.
    pub cas: u64,
    /// What its answer is checked for (`--verify`, `--exp-verify`).
    pub check: super::Check,
}

impl Request {
    /// A request for key `key` of the key space.
    pub fn new(op: OpKind, key: u64) -> Self {
        Request::naming(op, Named::key(key))
    }

    /// A request for what `named` names.
    pub fn naming(op: OpKind, named: Named) -> Self {
        Request {
            op,
            named,
            cas: 0,
            check: super::Check::Nothing,
        }
    }

    /// The key space's id it asks for; `None` for a trace record.
    pub fn key_id(&self) -> Option<u64> {
        self.named.key_id()
    }
}

/// Draws per further multiget key on several servers: with 16 equal
/// servers, a key is missed once in about 15 million.
const MGET_DRAWS: usize = 256;

#[derive(Debug)]
pub struct Workload {
    pub window: Option<TaskWindow>,
    pub keys: KeySpace,
    pub values: ValueTable,
    pub mix: Mix,
    pub multiget: MultiGet,
    pub miss_ratio: f64,
    pub getset: bool,
    /// `--cas-unique`: every cas sends this unique, with no gets before.
    pub cas_unique: Option<u64>,
    /// `--verify`, `--exp-verify`.
    pub checks: super::Checks,
    /// Value sizes, bytes, cut to `max_value`.
    pub value_size: super::Distribution,
    pub max_value: usize,
}

impl Workload {
    /// The next request of the mix, with what its answer is checked for;
    /// its key is drawn from the whole key space (its server follows from
    /// the key: `KeySpace::server_of`). `now_ns`: when it is intended, on
    /// the worker clock.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R, cursor: &mut Cursor, now_ns: u64) -> Request {
        let mut req = self.draw(rng, cursor, now_ns);
        if self.checks.active() && req.check == super::Check::Nothing {
            self.checks
                .decide_get(&mut req, rng, cursor, |key| self.must_hit(cursor, key));
        }
        req
    }

    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, cursor: &mut Cursor, now_ns: u64) -> Request {
        let mut op = self.mix.pick(rng);
        if op == OpKind::Get && self.multiget.share > 0.0 && rng.gen::<f64>() < self.multiget.share
        {
            op = OpKind::Mget;
        }
        // A cas needs the unique of an earlier gets on this connection;
        // without one, the gets goes first (unless the unique is given).
        if let (OpKind::Cas, Some(cas)) = (op, self.cas_unique) {
            return Request {
                cas,
                ..Request::new(op, self.keys.pick(rng, cursor))
            };
        }
        if op == OpKind::Cas {
            if let Some((key, cas)) = cursor.cas.take() {
                return Request {
                    cas,
                    ..Request::new(op, key)
                };
            }
            op = OpKind::Gets;
        }
        let mut set = Request::new(op, 0);
        if self
            .checks
            .expiring_set(&mut set, cursor, &self.keys, now_ns)
        {
            return set;
        }
        if let Some(window) = self.window {
            return self.next_in_window(rng, cursor, op, window);
        }
        let key = if op.is_retrieval() {
            self.retrieval_key(rng, cursor)
        } else {
            self.keys.pick(rng, cursor)
        };
        Request::new(op, key)
    }

    /// A key to read: from the loaded set, or a planned miss.
    #[inline]
    pub fn retrieval_key<R: Rng + ?Sized>(&self, rng: &mut R, cursor: &mut Cursor) -> u64 {
        if self.miss_ratio > 0.0 && rng.gen::<f64>() < self.miss_ratio {
            self.keys.miss(rng)
        } else if let Some(window) = self.window {
            self.window_pick(rng, cursor, window)
        } else {
            self.keys.pick(rng, cursor)
        }
    }

    /// A key to read that lives on `server`, for a multiget's further
    /// keys (one request goes to one server): drawn as `retrieval_key`
    /// until one lands there, at most `MGET_DRAWS` times. `None` if none
    /// did: the multiget has fewer keys.
    pub fn retrieval_key_on<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        server: usize,
        cursor: &mut Cursor,
    ) -> Option<u64> {
        if !self.keys.placed() {
            return Some(self.retrieval_key(rng, cursor));
        }
        (0..MGET_DRAWS)
            .map(|_| self.retrieval_key(rng, cursor))
            .find(|&id| self.keys.server_of(id) == server)
    }

    /// Keys per multiget.
    pub fn mget_keys(&self) -> u32 {
        self.multiget.keys
    }

    /// A value for a set of `key`: a slice of the random table, 1..=max
    /// bytes, chosen by key and length (`ValueTable::value_for`).
    #[inline]
    pub fn value<R: Rng + ?Sized>(&self, rng: &mut R, key: u64) -> &[u8] {
        let v = match self.value_size.as_fixed() {
            Some(v) => v,
            None => self.value_size.sample(rng),
        };
        // Whole bytes, truncated as mutilate and twemperf do: uniform:A,B
        // and twemperf's uA,B give A..B-1, each equally likely.
        let len = (v.floor().max(1.0) as usize).min(self.max_value);
        // `len` is at most `max_value`, which the table serves.
        self.values.value_for(key, len).unwrap_or_default()
    }

    /// A value of `len` bytes (at most `--max-value-size`) for a set of
    /// `key`: a trace states its values' sizes.
    pub fn value_of_len(&self, key: u64, len: usize) -> &[u8] {
        self.values
            .value_for(key, len.min(self.max_value))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Named;

    #[test]
    fn a_key_and_a_record_never_pass_for_each_other() {
        assert_eq!(Named::key(u64::MAX).key_id(), Some(u64::MAX));
        assert_eq!(Named::key(u64::MAX).record_slot(), None);
        assert_eq!(Named::record(u32::MAX).record_slot(), Some(u32::MAX));
        assert_eq!(Named::record(7).key_id(), None);
        assert_ne!(Named::record(7), Named::key(7));
    }
}
