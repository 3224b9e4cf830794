//! Request encoder for the text protocol. Appends exactly one request to
//! `out` and never allocates beyond growing `out`.
//!
//! Keys are not checked here: the key space guarantees they are 1..=250
//! bytes without spaces or control characters.

use crate::{Cmd, Request};

/// Appends `req` in the text protocol. A `noreply` request is followed by
/// `version\r\n`, its fence (see [`super::parse`]), unless sent
/// [`Request::unfenced`]. Only the commands of
/// [`supports`] are encoded; others write nothing. The verbs are the
/// commands' own names ([`Cmd::name`]).
pub fn encode(out: &mut Vec<u8>, req: &Request) {
    let noreply = req.noreply && supports_noreply(req.cmd);
    match req.cmd {
        Cmd::Get | Cmd::Gets => words(out, req.cmd, &[], req.keys),
        // `gat|gats <exptime> <key>*`: the expiry comes before the keys.
        Cmd::Gat | Cmd::Gats => words(out, req.cmd, &[u64::from(req.exptime)], req.keys),
        Cmd::Touch => keyed(out, req, Some(u64::from(req.exptime)), noreply),
        Cmd::Incr | Cmd::Decr => keyed(out, req, Some(req.delta), noreply),
        Cmd::Delete => keyed(out, req, None, noreply),
        Cmd::Set | Cmd::Add | Cmd::Replace | Cmd::Append | Cmd::Prepend | Cmd::Cas => {
            storage(out, req, noreply)
        }
        Cmd::Noop => return,
    }
    if noreply && !req.unfenced {
        fence(out);
    }
}

/// `version\r\n`: the fence of the quiet requests before it (the one
/// command every memcached answers, old ones included).
pub fn fence(out: &mut Vec<u8>) {
    out.extend_from_slice(b"version\r\n");
}

/// The commands the text protocol has (every one but a noop).
pub fn supports(cmd: Cmd) -> bool {
    cmd != Cmd::Noop
}

/// The commands that take `noreply` (retrievals always answer).
pub fn supports_noreply(cmd: Cmd) -> bool {
    !cmd.is_retrieval() && cmd != Cmd::Noop
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

/// `<verb> <numbers>* <tail>\r\n`.
fn words(out: &mut Vec<u8>, cmd: Cmd, numbers: &[u64], tail: &[u8]) {
    out.extend_from_slice(cmd.name().as_bytes());
    for n in numbers {
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes());
    }
    out.push(b' ');
    out.extend_from_slice(tail);
    out.extend_from_slice(b"\r\n");
}

/// `<verb> <key> [<number>] [noreply]\r\n`: touch, incr, decr, delete.
fn keyed(out: &mut Vec<u8>, req: &Request, number: Option<u64>, noreply: bool) {
    out.extend_from_slice(req.cmd.name().as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.keys);
    if let Some(n) = number {
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
    line_end(out, noreply);
}

/// `<verb> <key> <flags> <exptime> <bytes> [<cas unique>] [noreply]\r\n
/// <data>\r\n`; the cas unique only for `cas`.
fn storage(out: &mut Vec<u8>, req: &Request, noreply: bool) {
    let mut num = itoa::Buffer::new();
    out.extend_from_slice(req.cmd.name().as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.keys);
    for n in [
        u64::from(req.flags),
        u64::from(req.exptime),
        req.value.len() as u64,
    ] {
        out.push(b' ');
        out.extend_from_slice(num.format(n).as_bytes());
    }
    if req.cmd == Cmd::Cas {
        out.push(b' ');
        out.extend_from_slice(num.format(req.cas).as_bytes());
    }
    line_end(out, noreply);
    out.extend_from_slice(req.value);
    out.extend_from_slice(b"\r\n");
}

fn line_end(out: &mut Vec<u8>, noreply: bool) {
    if noreply {
        out.extend_from_slice(b" noreply");
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(req: Request) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, &req);
        out
    }

    fn store(cmd: Cmd, value: &'static [u8]) -> Request<'static> {
        Request {
            value,
            ..Request::new(cmd, b"k")
        }
    }

    #[test]
    fn retrievals() {
        assert_eq!(enc(Request::new(Cmd::Get, b"k1")), b"get k1\r\n");
        assert_eq!(enc(Request::new(Cmd::Gets, b"k1")), b"gets k1\r\n");
        assert_eq!(
            enc(Request::new(Cmd::Get, b"a bb ccc")),
            b"get a bb ccc\r\n"
        );
        let gat = |cmd| Request {
            exptime: 60,
            ..Request::new(cmd, b"a bb")
        };
        assert_eq!(enc(gat(Cmd::Gat)), b"gat 60 a bb\r\n");
        assert_eq!(enc(gat(Cmd::Gats)), b"gats 60 a bb\r\n");
        // Retrievals always answer: noreply is not sent.
        let quiet = Request {
            noreply: true,
            ..Request::new(Cmd::Get, b"k")
        };
        assert_eq!(enc(quiet), b"get k\r\n");
    }

    #[test]
    fn storage_commands() {
        assert_eq!(enc(store(Cmd::Set, b"hello")), b"set k 0 0 5\r\nhello\r\n");
        let add = Request {
            flags: 7,
            exptime: 300,
            noreply: true,
            ..store(Cmd::Add, b"")
        };
        assert_eq!(enc(add), b"add k 7 300 0 noreply\r\n\r\nversion\r\n");
        assert_eq!(enc(store(Cmd::Replace, b"v")), b"replace k 0 0 1\r\nv\r\n");
        assert_eq!(enc(store(Cmd::Append, b"v")), b"append k 0 0 1\r\nv\r\n");
        assert_eq!(enc(store(Cmd::Prepend, b"v")), b"prepend k 0 0 1\r\nv\r\n");
        let cas = Request {
            flags: 1,
            exptime: 2,
            cas: 12345678901,
            ..store(Cmd::Cas, b"xyz")
        };
        assert_eq!(enc(cas), b"cas k 1 2 3 12345678901\r\nxyz\r\n");
    }

    #[test]
    fn keyed_commands() {
        let req = |cmd| Request::new(cmd, b"n");
        assert_eq!(enc(req(Cmd::Delete)), b"delete n\r\n");
        let quiet_delete = Request {
            noreply: true,
            ..req(Cmd::Delete)
        };
        assert_eq!(enc(quiet_delete), b"delete n noreply\r\nversion\r\n");
        let incr = Request {
            delta: 5,
            ..req(Cmd::Incr)
        };
        assert_eq!(enc(incr), b"incr n 5\r\n");
        let decr = Request {
            delta: u64::MAX,
            noreply: true,
            ..req(Cmd::Decr)
        };
        assert_eq!(
            enc(decr),
            b"decr n 18446744073709551615 noreply\r\nversion\r\n"
        );
        let touch = Request {
            exptime: 60,
            ..req(Cmd::Touch)
        };
        assert_eq!(enc(touch), b"touch n 60\r\n");
        assert_eq!(enc(req(Cmd::Noop)), b"");
    }

    #[test]
    fn authentication() {
        let mut out = Vec::new();
        auth(&mut out, b"ann", b"s3cret");
        assert_eq!(out, b"set auth 0 0 10\r\nann s3cret\r\n");
    }
}
