//! Request encoders. Each appends exactly one request to `out` and never
//! allocates beyond growing `out`.
//!
//! Keys are not checked here: the key space guarantees they are 1..=250
//! bytes without spaces or control characters.

/// The retrieval commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrieve {
    Get,
    /// `gets`: also returns each item's cas unique.
    Gets,
}

/// The storage commands that share `set`'s shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
}

/// `incr` or `decr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Incr,
    Decr,
}

impl Retrieve {
    fn verb(self) -> &'static [u8] {
        match self {
            Retrieve::Get => b"get",
            Retrieve::Gets => b"gets",
        }
    }
}

impl Store {
    fn verb(self) -> &'static [u8] {
        match self {
            Store::Set => b"set",
            Store::Add => b"add",
            Store::Replace => b"replace",
            Store::Append => b"append",
            Store::Prepend => b"prepend",
        }
    }
}

use crate::{Cmd, Request};

/// Appends `req` in the text protocol. A `noreply` request is followed by
/// `version\r\n`, its fence (see [`super::parse`]). Only the commands of
/// [`supports`] are encoded; others write nothing.
pub fn encode(out: &mut Vec<u8>, req: &Request) {
    let key = req.keys;
    let nr = req.noreply;
    match req.cmd {
        Cmd::Get => retrieval_line(out, b"get", key),
        Cmd::Gets => retrieval_line(out, b"gets", key),
        Cmd::Gat | Cmd::Gats => gat(out, req.cmd == Cmd::Gats, req.exptime, key),
        Cmd::Touch => touch(out, key, req.exptime, nr),
        Cmd::Set => store(out, Store::Set, key, req.flags, req.exptime, req.value, nr),
        Cmd::Add => store(out, Store::Add, key, req.flags, req.exptime, req.value, nr),
        Cmd::Replace => store(
            out,
            Store::Replace,
            key,
            req.flags,
            req.exptime,
            req.value,
            nr,
        ),
        Cmd::Append => store(
            out,
            Store::Append,
            key,
            req.flags,
            req.exptime,
            req.value,
            nr,
        ),
        Cmd::Prepend => store(
            out,
            Store::Prepend,
            key,
            req.flags,
            req.exptime,
            req.value,
            nr,
        ),
        Cmd::Cas => cas(out, key, req.flags, req.exptime, req.value, req.cas, nr),
        Cmd::Incr => arith(out, Arith::Incr, key, req.delta, nr),
        Cmd::Decr => arith(out, Arith::Decr, key, req.delta, nr),
        Cmd::Delete => delete(out, key, nr),
        Cmd::Noop => {}
    }
    if nr && supports_noreply(req.cmd) {
        out.extend_from_slice(b"version\r\n");
    }
}

/// memcached's text-protocol authentication (a server started with `-Y`):
/// a `set` whose data is `<user> <password>`; the key is ignored. The
/// reply is `STORED`, or `CLIENT_ERROR authentication failure`.
pub fn auth(out: &mut Vec<u8>, user: &[u8], password: &[u8]) {
    let mut num = itoa::Buffer::new();
    out.extend_from_slice(b"set auth 0 0 ");
    out.extend_from_slice(num.format(user.len() + 1 + password.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(user);
    out.push(b' ');
    out.extend_from_slice(password);
    out.extend_from_slice(b"\r\n");
}

/// The commands the text protocol has (every one but a noop).
pub fn supports(cmd: Cmd) -> bool {
    cmd != Cmd::Noop
}

/// The commands that take `noreply` (retrievals always answer).
pub fn supports_noreply(cmd: Cmd) -> bool {
    !cmd.is_retrieval() && cmd != Cmd::Noop
}

fn retrieval_line(out: &mut Vec<u8>, verb: &[u8], keys: &[u8]) {
    out.extend_from_slice(verb);
    out.push(b' ');
    out.extend_from_slice(keys);
    out.extend_from_slice(b"\r\n");
}

/// `gat|gats <exptime> <key>*\r\n`.
pub fn gat(out: &mut Vec<u8>, with_cas: bool, exptime: u32, keys: &[u8]) {
    out.extend_from_slice(if with_cas { b"gats " } else { b"gat " });
    out.extend_from_slice(itoa::Buffer::new().format(exptime).as_bytes());
    out.push(b' ');
    out.extend_from_slice(keys);
    out.extend_from_slice(b"\r\n");
}

/// `get <key>\r\n` (or `gets`).
pub fn get(out: &mut Vec<u8>, cmd: Retrieve, key: &[u8]) {
    out.extend_from_slice(cmd.verb());
    out.push(b' ');
    out.extend_from_slice(key);
    out.extend_from_slice(b"\r\n");
}

/// `get <key>*\r\n`: one request for several keys.
pub fn multi_get<'k>(out: &mut Vec<u8>, cmd: Retrieve, keys: impl IntoIterator<Item = &'k [u8]>) {
    retrieval_begin(out, cmd);
    for key in keys {
        retrieval_key(out, key);
    }
    retrieval_end(out);
}

/// A multiget written piece by piece, for callers that produce keys one at
/// a time into a scratch buffer: `retrieval_begin`, then `retrieval_key`
/// per key, then `retrieval_end`.
pub fn retrieval_begin(out: &mut Vec<u8>, cmd: Retrieve) {
    out.extend_from_slice(cmd.verb());
}

pub fn retrieval_key(out: &mut Vec<u8>, key: &[u8]) {
    out.push(b' ');
    out.extend_from_slice(key);
}

pub fn retrieval_end(out: &mut Vec<u8>) {
    out.extend_from_slice(b"\r\n");
}

/// `<verb> <key> <flags> <exptime> <bytes> [noreply]\r\n<data>\r\n`.
pub fn store(
    out: &mut Vec<u8>,
    cmd: Store,
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    noreply: bool,
) {
    out.extend_from_slice(cmd.verb());
    storage_tail(out, key, flags, exptime, value, None, noreply);
}

/// `cas <key> <flags> <exptime> <bytes> <cas unique> [noreply]\r\n<data>\r\n`.
pub fn cas(
    out: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    unique: u64,
    noreply: bool,
) {
    out.extend_from_slice(b"cas");
    storage_tail(out, key, flags, exptime, value, Some(unique), noreply);
}

fn storage_tail(
    out: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    unique: Option<u64>,
    noreply: bool,
) {
    let mut num = itoa::Buffer::new();
    out.push(b' ');
    out.extend_from_slice(key);
    out.push(b' ');
    out.extend_from_slice(num.format(flags).as_bytes());
    out.push(b' ');
    out.extend_from_slice(num.format(exptime).as_bytes());
    out.push(b' ');
    out.extend_from_slice(num.format(value.len()).as_bytes());
    if let Some(unique) = unique {
        out.push(b' ');
        out.extend_from_slice(num.format(unique).as_bytes());
    }
    noreply_tail(out, noreply);
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// `delete <key> [noreply]\r\n`.
pub fn delete(out: &mut Vec<u8>, key: &[u8], noreply: bool) {
    out.extend_from_slice(b"delete ");
    out.extend_from_slice(key);
    noreply_tail(out, noreply);
}

/// `incr|decr <key> <delta> [noreply]\r\n`.
pub fn arith(out: &mut Vec<u8>, cmd: Arith, key: &[u8], delta: u64, noreply: bool) {
    out.extend_from_slice(match cmd {
        Arith::Incr => b"incr ",
        Arith::Decr => b"decr ",
    });
    out.extend_from_slice(key);
    out.push(b' ');
    out.extend_from_slice(itoa::Buffer::new().format(delta).as_bytes());
    noreply_tail(out, noreply);
}

/// `touch <key> <exptime> [noreply]\r\n`.
pub fn touch(out: &mut Vec<u8>, key: &[u8], exptime: u32, noreply: bool) {
    out.extend_from_slice(b"touch ");
    out.extend_from_slice(key);
    out.push(b' ');
    out.extend_from_slice(itoa::Buffer::new().format(exptime).as_bytes());
    noreply_tail(out, noreply);
}

fn noreply_tail(out: &mut Vec<u8>, noreply: bool) {
    if noreply {
        out.extend_from_slice(b" noreply");
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out);
        out
    }

    #[test]
    fn requests() {
        let enc = |req: Request| bytes(|o| encode(o, &req));
        let mut req = Request::new(Cmd::Get, b"a bb");
        assert_eq!(enc(req), b"get a bb\r\n");
        req.cmd = Cmd::Gats;
        req.exptime = 60;
        assert_eq!(enc(req), b"gats 60 a bb\r\n");
        req.cmd = Cmd::Gat;
        assert_eq!(enc(req), b"gat 60 a bb\r\n");
        let mut req = Request::new(Cmd::Cas, b"k");
        req.value = b"vv";
        req.cas = 77;
        req.flags = 3;
        assert_eq!(enc(req), b"cas k 3 0 2 77\r\nvv\r\n");
        req.cmd = Cmd::Append;
        req.noreply = true;
        assert_eq!(enc(req), b"append k 3 0 2 noreply\r\nvv\r\nversion\r\n");
        let mut req = Request::new(Cmd::Decr, b"n");
        req.delta = 5;
        assert_eq!(enc(req), b"decr n 5\r\n");
        req.cmd = Cmd::Touch;
        req.exptime = 9;
        assert_eq!(enc(req), b"touch n 9\r\n");
        req.cmd = Cmd::Delete;
        req.noreply = true;
        assert_eq!(enc(req), b"delete n noreply\r\nversion\r\n");
    }

    #[test]
    fn authentication() {
        assert_eq!(
            bytes(|o| auth(o, b"ann", b"s3cret")),
            b"set auth 0 0 10\r\nann s3cret\r\n"
        );
    }

    #[test]
    fn retrievals() {
        assert_eq!(bytes(|o| get(o, Retrieve::Get, b"k1")), b"get k1\r\n");
        assert_eq!(bytes(|o| get(o, Retrieve::Gets, b"k1")), b"gets k1\r\n");
        let keys: [&[u8]; 3] = [b"a", b"bb", b"ccc"];
        assert_eq!(
            bytes(|o| multi_get(o, Retrieve::Get, keys)),
            b"get a bb ccc\r\n"
        );
    }

    #[test]
    fn storage() {
        assert_eq!(
            bytes(|o| store(o, Store::Set, b"key", 0, 0, b"hello", false)),
            b"set key 0 0 5\r\nhello\r\n"
        );
        assert_eq!(
            bytes(|o| store(o, Store::Add, b"k", 7, 300, b"", true)),
            b"add k 7 300 0 noreply\r\n\r\n"
        );
        assert_eq!(
            bytes(|o| store(o, Store::Replace, b"k", 0, 0, b"v", false)),
            b"replace k 0 0 1\r\nv\r\n"
        );
        assert_eq!(
            bytes(|o| store(o, Store::Append, b"k", 0, 0, b"v", false)),
            b"append k 0 0 1\r\nv\r\n"
        );
        assert_eq!(
            bytes(|o| store(o, Store::Prepend, b"k", 0, 0, b"v", false)),
            b"prepend k 0 0 1\r\nv\r\n"
        );
        assert_eq!(
            bytes(|o| cas(o, b"k", 1, 2, b"xyz", 12345678901, false)),
            b"cas k 1 2 3 12345678901\r\nxyz\r\n"
        );
    }

    #[test]
    fn others() {
        assert_eq!(bytes(|o| delete(o, b"k", false)), b"delete k\r\n");
        assert_eq!(bytes(|o| delete(o, b"k", true)), b"delete k noreply\r\n");
        assert_eq!(
            bytes(|o| arith(o, Arith::Incr, b"n", 5, false)),
            b"incr n 5\r\n"
        );
        assert_eq!(
            bytes(|o| arith(o, Arith::Decr, b"n", 18446744073709551615, true)),
            b"decr n 18446744073709551615 noreply\r\n"
        );
        assert_eq!(bytes(|o| touch(o, b"k", 60, false)), b"touch k 60\r\n");
    }
}
