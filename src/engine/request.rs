//! Turning a workload `Request` into wire bytes: the one place where the
//! engine hands a request to the codec of the run's protocol.

use crate::workload::{Cursor, OpKind, Request, Workload, MAX_KEY_LEN};
use mcbench_proto::{Expect, Protocol};
use rand::Rng;

/// What every request of the run shares on the wire.
#[derive(Debug, Clone, Copy)]
pub struct WireOptions {
    pub protocol: Protocol,
    /// Expiry of storage commands, `gat` and `touch`, seconds.
    pub expiry: u32,
    /// Amount of `incr`/`decr`.
    pub delta: u64,
    /// Send the commands that allow it quiet, each fenced by a noop...
    pub noreply: bool,
    /// ...or, where the protocol allows it, all those of one write fenced
    /// once, after the last (`Conn::fence_quiet`).
    pub fence_later: bool,
    /// Meta protocol flags on retrievals.
    pub meta: mcbench_proto::meta::Options,
    /// The longest value a reply may carry (`RunSpec::largest_stored_value`).
    pub max_value: u32,
    /// RESP: `--assoc`'s field length (0: off).
    pub hash_field: u16,
}

/// A replayed request's own key and value (`--trace`): what the trace
/// gives in place of the key space's.
#[derive(Debug, Clone, Copy)]
pub struct TracedKey<'a> {
    pub key: &'a [u8],
    /// Value size, bytes (`None`: the run's `--value-size`).
    pub value_len: Option<u32>,
    /// Expiry, s (0: the run's `--expiry`).
    pub ttl: u32,
}

/// Encodes requests for one worker. Holds the buffer a multiget's keys are
/// gathered in, so that encoding never allocates once warm.
pub struct Encoder {
    wire: WireOptions,
    keys: Vec<u8>,
}

impl Encoder {
    pub fn new(wire: WireOptions) -> Self {
        Encoder {
            wire,
            keys: Vec::with_capacity(MAX_KEY_LEN + 1),
        }
    }

    /// The keys of the request last encoded, as sent (space-separated).
    pub fn keys(&self) -> &[u8] {
        &self.keys
    }

    /// Appends `req` to `out`; returns what its reply must look like.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn encode<R: Rng + ?Sized>(
        &mut self,
        out: &mut Vec<u8>,
        req: Request,
        opaque: u32,
        workload: &Workload,
        rng: &mut R,
        server: usize,
        cursor: &mut Cursor,
        traced: Option<TracedKey>,
    ) -> Expect {
        let mut buf = [0u8; MAX_KEY_LEN];
        self.keys.clear();
        match (traced, req.key_id()) {
            (Some(t), _) => self.keys.extend_from_slice(t.key),
            (None, Some(id)) => self.keys.extend_from_slice(workload.keys.key(id, &mut buf)),
            // A record's key comes with it, as `traced`.
            (None, None) => debug_assert!(false, "a trace record without its key"),
        }
        let mut nkeys = 1;
        if req.op == OpKind::Mget {
            // Its further keys live on the same server as its first.
            for _ in 1..workload.mget_keys() {
                if let Some(id) = workload.retrieval_key_on(rng, server, cursor) {
                    self.keys.push(b' ');
                    self.keys.extend_from_slice(workload.keys.key(id, &mut buf));
                    nkeys += 1;
                }
            }
        }
        let cmd = req.op.cmd();
        let mut wire = mcbench_proto::Request::new(cmd, &self.keys);
        wire.exptime = self.wire.expiry;
        wire.delta = self.wire.delta;
        wire.cas = req.cas;
        wire.opaque = opaque;
        wire.hash_field = self.wire.hash_field;
        wire.noreply = self.wire.noreply && self.wire.protocol.supports_noreply(cmd);
        wire.unfenced = wire.noreply && self.wire.fence_later;
        if cmd.is_storage() {
            wire.value = match traced.and_then(|t| t.value_len) {
                Some(len) => workload.value_of_len(req.named.seed(), len as usize),
                None => workload.value(rng, req.named.seed()),
            };
        }
        if let Some(t) = traced.filter(|t| t.ttl > 0) {
            // The clock only for a TTL memcached would read as a date.
            let now = if t.ttl > mcbench_proto::MAX_RELATIVE_EXPTIME {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            } else {
                0
            };
            wire.exptime = self.wire.protocol.exptime_for(t.ttl, now);
        }
        if let crate::workload::Check::ExpiringSet { .. } = req.check {
            wire.exptime = workload.checks.ttl_s;
        }
        self.wire.protocol.encode_with(out, &wire, self.wire.meta);
        Expect {
            cmd,
            keys: nkeys,
            noreply: wire.noreply,
            unfenced: wire.unfenced,
            opaque,
            max_value: self.wire.max_value,
            hash: mcbench_proto::resp::in_hash(&wire),
        }
    }
}
