//! `Workload`: everything that decides what a request is — op, keys, value
//! size — bundled from the spec, shared read-only by the workers.

use super::{Cursor, KeySpace, Mix, MultiGet, OpKind, ValueTable};
use rand::Rng;

/// One request as the workload decided it: its op and its first key (a
/// multiget draws its other keys when it is encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub op: OpKind,
    pub key: u64,
}

#[derive(Debug)]
pub struct Workload {
    pub keys: KeySpace,
    pub values: ValueTable,
    pub mix: Mix,
    pub multiget: MultiGet,
    pub miss_ratio: f64,
    pub getset: bool,
    value_size: super::Distribution,
    max_value: usize,
}

impl Workload {
    pub fn new(spec: &crate::spec::RunSpec, keys: KeySpace) -> Self {
        Workload {
            values: ValueTable::new(spec.max_value_len(), spec.seed),
            keys,
            mix: spec.mix.clone(),
            multiget: spec.multiget,
            miss_ratio: spec.miss_ratio,
            getset: spec.getset,
            value_size: spec.value_size.clone(),
            max_value: spec.max_value_size,
        }
    }

    /// The next request of the mix for server `server`.
    #[inline]
    pub fn next<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        server: usize,
        cursor: &mut Cursor,
    ) -> Request {
        let mut op = self.mix.pick(rng);
        if op == OpKind::Get && self.multiget.share > 0.0 && rng.gen::<f64>() < self.multiget.share
        {
            op = OpKind::Mget;
        }
        let key = if op.is_retrieval() {
            self.retrieval_key(rng, server, cursor)
        } else {
            self.keys.pick_on(rng, server, cursor)
        };
        Request { op, key }
    }

    /// A key to read: from the loaded set, or a planned miss.
    #[inline]
    pub fn retrieval_key<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        server: usize,
        cursor: &mut Cursor,
    ) -> u64 {
        if self.miss_ratio > 0.0 && rng.gen::<f64>() < self.miss_ratio {
            self.keys.miss_on(rng, server)
        } else {
            self.keys.pick_on(rng, server, cursor)
        }
    }

    /// Keys per multiget.
    pub fn mget_keys(&self) -> u32 {
        self.multiget.keys
    }

    /// A value for a set: a slice of the random table, 1..=max bytes.
    #[inline]
    pub fn value<R: Rng + ?Sized>(&self, rng: &mut R) -> &[u8] {
        let v = match self.value_size.as_fixed() {
            Some(v) => v,
            None => self.value_size.sample(rng),
        };
        let len = (v.round().max(1.0) as usize).min(self.max_value);
        self.values.value(rng, len)
    }
}
