//! Turning a workload `Request` into wire bytes: the one place where the
//! engine hands a request to the codec.

use crate::workload::{Cursor, OpKind, Request, Workload, MAX_KEY_LEN};
use mcbench_proto::ascii::{self, Retrieve, Store};
use rand::Rng;

/// Appends `req` to `out`; returns how many keys it asks for.
#[inline]
pub fn encode<R: Rng + ?Sized>(
    out: &mut Vec<u8>,
    req: Request,
    workload: &Workload,
    rng: &mut R,
    server: usize,
    cursor: &mut Cursor,
) -> u32 {
    let mut buf = [0u8; MAX_KEY_LEN];
    let key = workload.keys.key(req.key, &mut buf);
    match req.op {
        OpKind::Get => {
            ascii::get(out, Retrieve::Get, key);
            1
        }
        OpKind::Set | OpKind::Fill => {
            let value = workload.value(rng);
            ascii::store(out, Store::Set, key, 0, 0, value, false);
            1
        }
        OpKind::Mget => {
            ascii::retrieval_begin(out, Retrieve::Get);
            ascii::retrieval_key(out, key);
            for _ in 1..workload.mget_keys() {
                let id = workload.retrieval_key(rng, server, cursor);
                ascii::retrieval_key(out, workload.keys.key(id, &mut buf));
            }
            ascii::retrieval_end(out);
            workload.mget_keys()
        }
    }
}
