//! memcached's binary protocol, as its `protocol_binary.h` and the
//! "BinaryProtocolRevamped" specification define it.
//!
//! Every message is a 24-byte header (magic, opcode, key length, extras
//! length, data type, vbucket or status, body length, opaque, cas; all
//! big-endian) followed by a body of extras, key and value, in that order.
//! Requests are written straight into the caller's buffer; responses are
//! parsed from a byte slice that may hold any prefix of the stream.
//!
//! # One request, one reply
//!
//! The engine expects exactly one reply per request, so a request that the
//! binary protocol answers with zero or many frames is *fenced*: followed by
//! a `NOOP` carrying the same opaque, which the server answers in order after
//! everything before it. Its reply is every frame up to and including that
//! noop's.
//!
//! - A retrieval of one key is a plain `GET` (`GAT` for `gat`/`gats`).
//! - A retrieval of several keys is one `GETKQ` (`GATKQ`) per key, then the
//!   noop: quiet retrievals send only their hits, so the reply counts the
//!   frames before the fence as hits. `gets` and `get` are the same on the
//!   wire, since every binary reply carries the item's cas.
//! - A `noreply` request uses the command's quiet opcode (`SETQ`, `GETQ`, …)
//!   and is fenced too. Quiet mode suppresses success, so the first frame
//!   before the fence is the outcome, and none means
//!   [`Cmd::quiet_outcome`]. A quiet retrieval counts its hits like a
//!   multiget.
//! - `touch` and `noop` have no quiet form: with `noreply` they are sent
//!   as usual and answered by their own frame.
//!
//! Every reply frame must carry the request's opaque
//! ([`ParseError::OpaqueMismatch`]) and opcode ([`ParseError::UnexpectedReply`]):
//! memcached echoes both, so anything else means the stream is out of step.
//! A hit that carries its key (`GETKQ`) must carry the next of the keys
//! asked ([`ParseError::KeyMismatch`]), and a multiget gets no more hits
//! than it asked keys ([`ParseError::TooManyValues`]).
//!
//! # Status to class
//!
//! | status | meaning | class |
//! | --- | --- | --- |
//! | 0x00 | success | `Value` (hits), `Stored`, `Deleted`, `Touched`, `Num`, `End` (noop) |
//! | 0x01 | key not found | a miss (`End`); `NotStored` for `replace`; else `NotFound` |
//! | 0x02 | key exists | `NotStored` for `add`; else `Exists` (a `cas` that lost) |
//! | 0x03 | value too large | `ServerError`, as text's `SERVER_ERROR object too large` |
//! | 0x04 | invalid arguments | `ClientError` |
//! | 0x05 | not stored | `NotStored` (`append`/`prepend` of a missing key) |
//! | 0x06 | incr/decr of a non-numeric value | `ClientError`, as the text protocol |
//! | 0x20 | authentication error | `AuthError` |
//! | 0x21 | authentication continue | `AuthError` (no command should get it) |
//! | 0x81 | unknown command | `Error`, as the text protocol's `ERROR` |
//! | 0x82 | out of memory | `ServerError` |
//! | other | | `ServerError` |
//!
//! memcached answers a failed `add` with "key exists" and a failed
//! `replace` with "not found" where the text and meta protocols say
//! `NOT_STORED`; both are mapped to `NotStored` so that reports compare
//! across protocols.
//!
//! `incr`/`decr` send an expiration of `0xffffffff`, which tells the server
//! not to create a missing key: it is `NotFound`, as in the text protocol.
//!
//! memcached closes the connection after an "invalid arguments" or an
//! "authentication error" reply, so a fenced request's noop then never
//! arrives: the parser keeps waiting (`Ok(None)`), and the end of the stream
//! is the caller's to report.

use crate::asked::next_match;
use crate::{Cmd, Expect, ParseError, Progress, Request, Response, ResponseClass};

#[cfg(test)]
mod tests;

/// The size of every request and response header.
const HEADER_LEN: usize = 24;

const REQUEST_MAGIC: u8 = 0x80;
const RESPONSE_MAGIC: u8 = 0x81;

/// The largest body accepted: memcached's item size ceiling (`-I`) cannot
/// exceed 1 GiB, plus the largest extras and key a header can describe.
/// Anything larger is garbage, and waiting for it would hold the connection
/// until its buffer grew without bound.
const MAX_BODY: u32 = (1 << 30) + u8::MAX as u32 + u16::MAX as u32;

/// The opcodes mcbench sends.
mod op {
    pub const GET: u8 = 0x00;
    pub const SET: u8 = 0x01;
    pub const ADD: u8 = 0x02;
    pub const REPLACE: u8 = 0x03;
    pub const DELETE: u8 = 0x04;
    pub const INCREMENT: u8 = 0x05;
    pub const DECREMENT: u8 = 0x06;
    pub const GETQ: u8 = 0x09;
    pub const NOOP: u8 = 0x0a;
    pub const GETKQ: u8 = 0x0d;
    pub const APPEND: u8 = 0x0e;
    pub const PREPEND: u8 = 0x0f;
    pub const SETQ: u8 = 0x11;
    pub const ADDQ: u8 = 0x12;
    pub const REPLACEQ: u8 = 0x13;
    pub const DELETEQ: u8 = 0x14;
    pub const INCREMENTQ: u8 = 0x15;
    pub const DECREMENTQ: u8 = 0x16;
    pub const APPENDQ: u8 = 0x19;
    pub const PREPENDQ: u8 = 0x1a;
    pub const TOUCH: u8 = 0x1c;
    pub const GAT: u8 = 0x1d;
    pub const GATQ: u8 = 0x1e;
    pub const SASL_AUTH: u8 = 0x21;
    pub const GATKQ: u8 = 0x24;
}

/// The response statuses the parser tells apart.
mod status {
    pub const SUCCESS: u16 = 0x00;
    pub const KEY_ENOENT: u16 = 0x01;
    pub const KEY_EEXISTS: u16 = 0x02;
    pub const EINVAL: u16 = 0x04;
    pub const NOT_STORED: u16 = 0x05;
    pub const DELTA_BADVAL: u16 = 0x06;
    pub const AUTH_ERROR: u16 = 0x20;
    pub const AUTH_CONTINUE: u16 = 0x21;
    pub const UNKNOWN_COMMAND: u16 = 0x81;
}

/// Every command has a binary opcode.
pub fn supports(_cmd: Cmd) -> bool {
    true
}

/// The commands that have a quiet opcode (all but `touch` and `noop`).
pub fn supports_noreply(cmd: Cmd) -> bool {
    opcode(cmd, true) != opcode(cmd, false)
}

/// The opcode of a one-frame request for `cmd`, quiet or not.
fn opcode(cmd: Cmd, quiet: bool) -> u8 {
    let (loud, quiet_op) = match cmd {
        Cmd::Get | Cmd::Gets => (op::GET, op::GETQ),
        Cmd::Gat | Cmd::Gats => (op::GAT, op::GATQ),
        Cmd::Touch => (op::TOUCH, op::TOUCH),
        Cmd::Set | Cmd::Cas => (op::SET, op::SETQ),
        Cmd::Add => (op::ADD, op::ADDQ),
        Cmd::Replace => (op::REPLACE, op::REPLACEQ),
        Cmd::Append => (op::APPEND, op::APPENDQ),
        Cmd::Prepend => (op::PREPEND, op::PREPENDQ),
        Cmd::Incr => (op::INCREMENT, op::INCREMENTQ),
        Cmd::Decr => (op::DECREMENT, op::DECREMENTQ),
        Cmd::Delete => (op::DELETE, op::DELETEQ),
        Cmd::Noop => (op::NOOP, op::NOOP),
    };
    if quiet {
        quiet_op
    } else {
        loud
    }
}

/// How a request is framed. The encoder and the parser both derive it from
/// the request, so they cannot disagree on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One frame with this opcode, answered by one frame.
    Single(u8),
    /// Frames with this opcode, then a noop: answered by any number of
    /// frames with this opcode, then the noop's.
    Fenced(u8),
}

/// `keys` matters to retrievals only.
fn shape(cmd: Cmd, keys: u32, noreply: bool) -> Shape {
    let quiet = noreply && supports_noreply(cmd);
    if cmd.is_retrieval() && keys != 1 {
        let with_key = if matches!(cmd, Cmd::Gat | Cmd::Gats) {
            op::GATKQ
        } else {
            op::GETKQ
        };
        Shape::Fenced(with_key)
    } else if quiet {
        Shape::Fenced(opcode(cmd, true))
    } else {
        Shape::Single(opcode(cmd, false))
    }
}

/// Appends `req` in the binary protocol: one frame, or for a multiget or a
/// `noreply` request several and a noop fence (see the module doc).
pub fn encode(out: &mut Vec<u8>, req: &Request) {
    let keys = if req.cmd.is_retrieval() {
        req.key_count()
    } else {
        1
    };
    let shape = shape(req.cmd, keys, req.noreply);
    let (Shape::Single(op) | Shape::Fenced(op)) = shape;
    let (key, value, opaque) = (req.keys, req.value, req.opaque);
    match req.cmd {
        // One frame per key: a single key's `GET`, or a multiget's `GETKQ`s.
        Cmd::Get | Cmd::Gets => {
            for key in req.key_list() {
                frame(out, op, &[], key, &[], 0, opaque);
            }
        }
        Cmd::Gat | Cmd::Gats => {
            let extras = req.exptime.to_be_bytes();
            for key in req.key_list() {
                frame(out, op, &extras, key, &[], 0, opaque);
            }
        }
        Cmd::Set | Cmd::Add | Cmd::Replace | Cmd::Cas => {
            let extras = store_extras(req.flags, req.exptime);
            // Only a `cas` asks the server to compare.
            let cas = if req.cmd == Cmd::Cas { req.cas } else { 0 };
            frame(out, op, &extras, key, value, cas, opaque);
        }
        Cmd::Append | Cmd::Prepend => frame(out, op, &[], key, value, 0, opaque),
        Cmd::Incr | Cmd::Decr => frame(out, op, &arith_extras(req.delta), key, &[], 0, opaque),
        Cmd::Touch => frame(out, op, &req.exptime.to_be_bytes(), key, &[], 0, opaque),
        Cmd::Delete => frame(out, op, &[], key, &[], 0, opaque),
        Cmd::Noop => noop(out, opaque),
    }
    if let Shape::Fenced(_) = shape {
        noop(out, opaque);
    }
}

/// `set`/`add`/`replace` extras: flags, expiration.
fn store_extras(flags: u32, exptime: u32) -> [u8; 8] {
    let mut extras = [0; 8];
    extras[..4].copy_from_slice(&flags.to_be_bytes());
    extras[4..].copy_from_slice(&exptime.to_be_bytes());
    extras
}

/// `incr`/`decr` extras: delta, initial value, expiration. The expiration
/// `0xffffffff` means "do not create", so the initial value is unused.
fn arith_extras(delta: u64) -> [u8; 20] {
    let mut extras = [0; 20];
    extras[..8].copy_from_slice(&delta.to_be_bytes());
    extras[16..].copy_from_slice(&u32::MAX.to_be_bytes());
    extras
}

fn noop(out: &mut Vec<u8>, opaque: u32) {
    frame(out, op::NOOP, &[], &[], &[], 0, opaque);
}

/// Appends one request frame. A key or value longer than the header can
/// describe is cut to fit, so the frame stays self-consistent and the
/// stream in step; the key space never produces one (keys are 1..=250
/// bytes) and the server refuses what was cut.
fn frame(
    out: &mut Vec<u8>,
    opcode: u8,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
    cas: u64,
    opaque: u32,
) {
    let key = cut(key, usize::from(u16::MAX));
    let value = cut(
        value,
        (u32::MAX as usize).saturating_sub(extras.len() + key.len()),
    );
    let body = extras.len() + key.len() + value.len();
    out.reserve(HEADER_LEN + body);
    header(out, opcode, extras.len(), key.len(), body, cas, opaque);
    out.extend_from_slice(extras);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// The first `max` bytes of `bytes`, or all of them.
fn cut(bytes: &[u8], max: usize) -> &[u8] {
    bytes.get(..max).unwrap_or(bytes)
}

/// Appends a request header; the caller guarantees the lengths fit their
/// fields (extras 8 bits, key 16, body 32).
fn header(
    out: &mut Vec<u8>,
    opcode: u8,
    extras: usize,
    key: usize,
    body: usize,
    cas: u64,
    opaque: u32,
) {
    let [k0, k1] = (key as u16).to_be_bytes();
    let [b0, b1, b2, b3] = (body as u32).to_be_bytes();
    // Data type 0 (raw bytes), vbucket 0.
    out.extend_from_slice(&[REQUEST_MAGIC, opcode, k0, k1, extras as u8, 0, 0, 0]);
    out.extend_from_slice(&[b0, b1, b2, b3]);
    out.extend_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&cas.to_be_bytes());
}

/// Appends a SASL `PLAIN` authentication request (opcode 0x21): mechanism
/// `PLAIN` as the key, `\0user\0password` as the value (an empty
/// authorization identity: act as `user`). Opaque 0. Credentials are cut to
/// 64 KiB each, far beyond any real one, so the lengths always fit.
pub fn sasl_auth_plain(out: &mut Vec<u8>, user: &[u8], password: &[u8]) {
    const MECHANISM: &[u8] = b"PLAIN";
    let user = cut(user, usize::from(u16::MAX));
    let password = cut(password, usize::from(u16::MAX));
    let body = MECHANISM.len() + 1 + user.len() + 1 + password.len();
    out.reserve(HEADER_LEN + body);
    header(out, op::SASL_AUTH, 0, MECHANISM.len(), body, 0, 0);
    out.extend_from_slice(MECHANISM);
    out.push(0);
    out.extend_from_slice(user);
    out.push(0);
    out.extend_from_slice(password);
}

pub use crate::auth::AuthOutcome;

/// Parses the reply to [`sasl_auth_plain`] from the front of `buf`: the
/// outcome and the bytes it took, `Ok(None)` if incomplete, an error if
/// the bytes are not a reply to a SASL authentication. Its opaque is not
/// checked: nothing else is in flight during authentication.
pub fn parse_auth(buf: &[u8]) -> Result<Option<(AuthOutcome, usize)>, ParseError> {
    let Some(frame) = next_frame(buf, None, u64::MAX)? else {
        return Ok(None);
    };
    if frame.opcode != op::SASL_AUTH {
        return Err(ParseError::UnexpectedReply);
    }
    let outcome = match frame.status {
        status::SUCCESS => AuthOutcome::Accepted,
        status::AUTH_ERROR => AuthOutcome::Refused,
        status::AUTH_CONTINUE => AuthOutcome::Continue,
        other => AuthOutcome::Other(other),
    };
    Ok(Some((outcome, frame.len)))
}

/// The header fields of one complete response frame that the parser uses.
#[derive(Debug, Clone, Copy)]
struct Frame {
    opcode: u8,
    status: u16,
    cas: u64,
    /// Where its key is in the frame, and its length (0: none).
    key_at: usize,
    key_len: usize,
    /// Header and body: the bytes the frame takes.
    len: usize,
}

impl Frame {
    /// Its key, if it carries one; `frame` is its bytes.
    fn key<'a>(&self, frame: &'a [u8]) -> Option<&'a [u8]> {
        (self.key_len > 0).then(|| &frame[self.key_at..self.key_at + self.key_len])
    }
}

/// The response frame at the front of `buf`, `Ok(None)` until all of it is
/// there; with `opaque`, the frame must carry it. A bad magic byte fails at
/// once, a bad header as soon as it is complete: garbage is reported
/// without waiting for a body it claims.
fn next_frame(
    buf: &[u8],
    opaque: Option<u32>,
    max_value: u64,
) -> Result<Option<Frame>, ParseError> {
    match buf.first() {
        None => return Ok(None),
        Some(&RESPONSE_MAGIC) => {}
        Some(_) => return Err(ParseError::BadFrame),
    }
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    // Every byte by name: no index to get wrong.
    #[rustfmt::skip]
    let [
        _magic, opcode, k0, k1, extras_len, data_type, s0, s1,
        b0, b1, b2, b3, o0, o1, o2, o3,
        c0, c1, c2, c3, c4, c5, c6, c7,
    ] = *header;
    let key_len = u32::from(u16::from_be_bytes([k0, k1]));
    let body = u32::from_be_bytes([b0, b1, b2, b3]);
    if data_type != 0 || u32::from(extras_len) + key_len > body || body > MAX_BODY {
        return Err(ParseError::BadFrame);
    }
    if opaque.is_some_and(|opaque| opaque.to_be_bytes() != [o0, o1, o2, o3]) {
        return Err(ParseError::OpaqueMismatch);
    }
    // Only a success carries a value; an error's body is its message.
    let status = u16::from_be_bytes([s0, s1]);
    if status == status::SUCCESS && u64::from(body - u32::from(extras_len) - key_len) > max_value {
        return Err(ParseError::ValueTooLong);
    }
    let len = HEADER_LEN + body as usize;
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some(Frame {
        opcode,
        status,
        cas: u64::from_be_bytes([c0, c1, c2, c3, c4, c5, c6, c7]),
        key_at: HEADER_LEN + usize::from(extras_len),
        key_len: key_len as usize,
        len,
    }))
}

/// Parses the reply to the request `expect` describes from the front of
/// `buf`. A fenced reply split across reads resumes after the frames
/// `progress` says were complete; `progress` is updated when more bytes are
/// needed and reset otherwise. `buf` must start with the same reply as when
/// `progress` was saved. A hit that carries its key must carry the next of
/// the keys `asked` (unchecked if empty).
pub fn parse(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let result = match shape(expect.cmd, expect.keys, expect.noreply) {
        Shape::Single(op) => single(buf, op, &expect, asked),
        Shape::Fenced(op) => fenced(buf, progress, op, &expect, asked),
    };
    if !matches!(result, Ok(None)) {
        *progress = Progress::default();
    }
    result
}

/// The reply to a one-frame request.
fn single(
    buf: &[u8],
    op: u8,
    expect: &Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let Some(frame) = next_frame(buf, Some(expect.opaque), u64::from(expect.max_value))? else {
        return Ok(None);
    };
    if frame.opcode != op {
        return Err(ParseError::UnexpectedReply);
    }
    let response = if expect.cmd.is_retrieval() {
        match frame.status {
            status::SUCCESS => {
                if let Some(key) = frame.key(buf) {
                    next_match(asked, 0, key)?;
                }
                Response::hits(1, frame.cas)
            }
            status::KEY_ENOENT => Response::hits(0, 0),
            other => Response::of(error_class(other)),
        }
    } else {
        Response::of(class(expect.cmd, frame.status))
    };
    Ok(Some((response, frame.len)))
}

/// The reply to a fenced request: the frames up to its noop's. Resumes at
/// `progress` and saves it when the noop is not there yet, so each byte is
/// looked at once however many reads the reply takes.
fn fenced(
    buf: &[u8],
    progress: &mut Progress,
    op: u8,
    expect: &Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let retrieval = expect.cmd.is_retrieval();
    let Progress {
        offset: mut pos,
        mut values,
        mut cas,
        mut seen,
        mut key_pos,
    } = *progress;
    pos = pos.min(buf.len());
    loop {
        let Some(frame) = next_frame(
            &buf[pos..],
            Some(expect.opaque),
            u64::from(expect.max_value),
        )?
        else {
            *progress = Progress {
                offset: pos,
                values,
                cas,
                seen,
                key_pos,
            };
            return Ok(None);
        };
        let at = pos;
        pos += frame.len;
        if frame.opcode == op::NOOP {
            // A noop that failed (e.g. unauthenticated) answers for the
            // request if nothing before it did.
            let fence = (frame.status != status::SUCCESS).then(|| error_class(frame.status));
            let response = match seen.or(fence) {
                Some(class) => Response::of(class),
                None if retrieval => Response::hits(values, cas),
                None => Response::of(expect.cmd.quiet_outcome()),
            };
            return Ok(Some((response, pos)));
        }
        if frame.opcode != op {
            return Err(ParseError::UnexpectedReply);
        }
        match frame.status {
            status::SUCCESS if retrieval => {
                if let Some(key) = frame.key(&buf[at..]) {
                    key_pos = next_match(asked, key_pos, key)?;
                }
                values = values.saturating_add(1);
                if values > expect.keys {
                    return Err(ParseError::TooManyValues);
                }
                cas = frame.cas;
            }
            // Quiet retrievals do not send misses; count one that is sent
            // as what it is.
            status::KEY_ENOENT if retrieval => {}
            other if retrieval => {
                seen.get_or_insert(error_class(other));
            }
            other => {
                seen.get_or_insert(class(expect.cmd, other));
            }
        }
    }
}

/// The class of a reply with `status` to a command other than a retrieval.
fn class(cmd: Cmd, status: u16) -> ResponseClass {
    match (cmd, status) {
        // Quiet mode suppresses exactly the success reply, so the quiet
        // outcome is the success class.
        (_, status::SUCCESS) => cmd.quiet_outcome(),
        (Cmd::Add, status::KEY_EEXISTS) | (Cmd::Replace, status::KEY_ENOENT) => {
            ResponseClass::NotStored
        }
        (_, status::KEY_ENOENT) => ResponseClass::NotFound,
        (_, status::KEY_EEXISTS) => ResponseClass::Exists,
        (_, status::NOT_STORED) => ResponseClass::NotStored,
        (_, other) => error_class(other),
    }
}

/// The class of a status that reports a failure of the request or server.
fn error_class(status: u16) -> ResponseClass {
    match status {
        status::EINVAL | status::DELTA_BADVAL => ResponseClass::ClientError,
        status::AUTH_ERROR | status::AUTH_CONTINUE => ResponseClass::AuthError,
        status::UNKNOWN_COMMAND => ResponseClass::Error,
        // Too large (0x03), out of memory (0x82), and whatever newer
        // servers add.
        _ => ResponseClass::ServerError,
    }
}
