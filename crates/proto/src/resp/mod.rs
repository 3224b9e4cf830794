//! Redis's RESP2, for benchmarking a Redis (or a Redis-speaking cache) with
//! the same workloads as memcached.
//!
//! Requests are RESP arrays of bulk strings, so keys and values go on the
//! wire as they are. Replies are parsed generically — every RESP2 type,
//! nested arrays included — and only then mapped onto a [`ResponseClass`]
//! for the command in front: a reply that is well formed but cannot answer
//! that command means the stream is out of step, [`ParseError::UnexpectedReply`].
//!
//! A multiget's array may be far larger than one read; [`Progress`] keeps
//! the complete elements at its front so that each call parses only the
//! bytes that arrived since the last one.

use crate::{Cmd, Expect, ParseError, Progress, Request, Response, ResponseClass};

/// The longest reply line accepted, in bytes, CRLF included. Headers are a
/// type byte and a number; the rest is room for error messages (a Lua
/// script's error can be long).
pub const MAX_LINE: usize = 64 * 1024;

/// The largest bulk string accepted: Redis's own `proto-max-bulk-len`
/// default.
const MAX_BULK: i64 = 512 << 20;

/// The most elements an array may declare. MGET answers one per key, and
/// nobody multigets a million keys; a larger count is garbage.
const MAX_ELEMENTS: i64 = 1 << 20;

/// How deep arrays may nest, the reply itself counting as one level. No
/// supported command nests at all; the limit keeps a hostile stream from
/// making the walk below unbounded.
const MAX_DEPTH: usize = 8;

/// Appends `req` as a RESP command. Only the commands of [`supports`] are
/// encoded; others write nothing. A multiget (`keys` holding several keys)
/// becomes `MGET`.
pub fn encode(out: &mut Vec<u8>, req: &Request) {
    let key = req.keys;
    if in_hash(req) {
        let (hash, field) = key.split_at(key.len() - usize::from(req.hash_field));
        match req.cmd {
            Cmd::Get => command(out, &[b"HGET", hash, field]),
            _ => command(out, &[b"HSET", hash, field, req.value]),
        }
        return;
    }
    match req.cmd {
        Cmd::Get => get(out, req),
        Cmd::Set => set(out, key, req.value, req.exptime, None),
        Cmd::Add => set(out, key, req.value, req.exptime, Some(b"NX")),
        Cmd::Replace => set(out, key, req.value, req.exptime, Some(b"XX")),
        Cmd::Append => command(out, &[b"APPEND", key, req.value]),
        Cmd::Incr => arith(out, b"INCRBY", key, req.delta),
        Cmd::Decr => arith(out, b"DECRBY", key, req.delta),
        Cmd::Delete => command(out, &[b"DEL", key]),
        _ => {}
    }
}

/// Whether `req` goes to a hash field (`HGET`/`HSET`): a single-key get or
/// a set, with `hash_field` set and a key longer than it (shorter keys
/// are plain keys, as the mutilate fork does).
pub fn in_hash(req: &Request) -> bool {
    req.hash_field > 0
        && matches!(req.cmd, Cmd::Get | Cmd::Set)
        && req.keys.len() > usize::from(req.hash_field)
        && !req.keys.contains(&b' ')
}

/// The commands RESP can carry with memcached's meaning.
pub fn supports(cmd: Cmd) -> bool {
    use Cmd::*;
    matches!(
        cmd,
        Get | Set | Add | Replace | Append | Incr | Decr | Delete
    )
}

/// None: RESP2 cannot silence one reply (`CLIENT REPLY SKIP` has no reply
/// to fence it with), so every request is answered.
pub fn supports_noreply(_cmd: Cmd) -> bool {
    false
}

/// The AUTH command: `AUTH <user> <password>` (Redis 6 ACLs) when `user` is
/// non-empty, else `AUTH <password>`. Its reply is `+OK`, which [`parse`]
/// classes as `Stored` for an `Expect` of `Cmd::Set`; a refusal is
/// `AuthError`.
pub fn auth(out: &mut Vec<u8>, user: &[u8], password: &[u8]) {
    if user.is_empty() {
        command(out, &[b"AUTH", password]);
    } else {
        command(out, &[b"AUTH", user, password]);
    }
}

/// `GET <key>`, or `MGET <key>...` for any other number of keys: MGET's
/// array answers even zero keys (with an error) in one reply.
fn get(out: &mut Vec<u8>, req: &Request) {
    let count = req.key_count();
    if count == 1 {
        let key = req.key_list().next().unwrap_or_default();
        command(out, &[b"GET", key]);
        return;
    }
    array_header(out, u64::from(count) + 1);
    bulk(out, b"MGET");
    for key in req.key_list() {
        bulk(out, key);
    }
}

/// `SET <key> <value> [EX <exptime>] [NX|XX]`. Redis reads EX as seconds
/// from now whatever its size, unlike memcached's absolute times.
fn set(out: &mut Vec<u8>, key: &[u8], value: &[u8], exptime: u32, cond: Option<&[u8]>) {
    let mut num = itoa::Buffer::new();
    let mut args: [&[u8]; 6] = [b"SET", key, value, b"", b"", b""];
    let mut len = 3;
    if exptime > 0 {
        args[3] = b"EX";
        args[4] = num.format(exptime).as_bytes();
        len = 5;
    }
    if let Some(cond) = cond {
        args[len] = cond;
        len += 1;
    }
    command(out, &args[..len]);
}

/// `INCRBY|DECRBY <key> <delta>`. A delta above `i64::MAX` is sent as is;
/// Redis answers it with an error.
fn arith(out: &mut Vec<u8>, verb: &[u8], key: &[u8], delta: u64) {
    command(
        out,
        &[verb, key, itoa::Buffer::new().format(delta).as_bytes()],
    );
}

/// A command: an array of bulk strings.
fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    array_header(out, args.len() as u64);
    for arg in args {
        bulk(out, arg);
    }
}

fn array_header(out: &mut Vec<u8>, count: u64) {
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(count).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, data: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(data.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Parses the reply to the request `expect` describes from the front of
/// `buf`: the response and the bytes it took, or `Ok(None)` when more bytes
/// are needed. Then `progress` remembers the complete elements of a
/// top-level array (its `cas` counts them: RESP has no cas uniques), and
/// the next call must pass the same reply from its start; otherwise
/// `progress` is reset.
pub fn parse(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
) -> Result<Option<(Response, usize)>, ParseError> {
    let result = parse_at(buf, progress, expect);
    if !matches!(result, Ok(None)) {
        *progress = Progress::default();
    }
    result
}

/// The header of one RESP value: its first line, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item<'a> {
    /// `+<text>`.
    Simple(&'a [u8]),
    /// `-<message>`.
    Error(&'a [u8]),
    /// `:<n>`.
    Integer(i64),
    /// `$<len>`: a bulk string's length, -1 for nil. Its data follows.
    Bulk(i64),
    /// `*<count>`: an array's element count, -1 for nil. Its elements follow.
    Array(i64),
}

fn parse_at(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
) -> Result<Option<(Response, usize)>, ParseError> {
    let Some((item, head)) = header(buf)? else {
        return Ok(None);
    };
    let end = match item {
        Item::Array(count) if count > 0 => return array(buf, head, count, progress, expect),
        Item::Bulk(len) => match bulk_end(buf, head, len, expect)? {
            Some(end) => end,
            None => return Ok(None),
        },
        _ => head,
    };
    Ok(Some((classify(item, expect)?, end)))
}

/// A multiget's reply: `keys` bulk strings, nil for each miss.
fn is_multiget(expect: Expect) -> bool {
    expect.cmd == Cmd::Get && expect.keys != 1
}

/// Walks a top-level array of `count > 0` elements whose header ends at
/// `head`, resuming after the elements `progress` says were complete.
fn array(
    buf: &[u8],
    head: usize,
    count: i64,
    progress: &mut Progress,
    expect: Expect,
) -> Result<Option<(Response, usize)>, ParseError> {
    let multiget = is_multiget(expect);
    if multiget && count != i64::from(expect.keys) {
        return Err(ParseError::UnexpectedReply);
    }
    let mut pos = head;
    let mut done = 0;
    let mut values = 0u32;
    // Trust a saved position only if it can belong to this array.
    let saved = i64::try_from(progress.cas).unwrap_or(i64::MAX);
    if progress.offset >= head && progress.offset <= buf.len() && saved < count {
        (pos, done, values) = (progress.offset, saved, progress.values);
    }
    while done < count {
        let Some((item, end)) = value_end(buf, pos, MAX_DEPTH - 1, expect)? else {
            *progress = Progress {
                offset: pos,
                values,
                cas: done as u64,
                ..Progress::default()
            };
            return Ok(None);
        };
        if multiget {
            values += match item {
                Item::Bulk(-1) => 0,
                Item::Bulk(_) => 1,
                _ => return Err(ParseError::UnexpectedReply),
            };
        }
        pos = end;
        done += 1;
    }
    if !multiget {
        return Err(ParseError::UnexpectedReply);
    }
    Ok(Some((Response::hits(values, 0), pos)))
}

/// What a complete reply other than a non-empty array means for the
/// command in front.
fn classify(item: Item, expect: Expect) -> Result<Response, ParseError> {
    use ResponseClass::*;
    let multiget = is_multiget(expect);
    let class = match (expect.cmd, item) {
        (_, Item::Error(message)) => error_class(message),
        (Cmd::Get, Item::Bulk(len)) if !multiget => {
            return Ok(Response::hits(u32::from(len >= 0), 0))
        }
        (Cmd::Get, Item::Array(count)) if multiget && count == i64::from(expect.keys) => End,
        (Cmd::Set | Cmd::Add | Cmd::Replace, Item::Simple(b"OK")) => Stored,
        // HSET answers how many fields it added (0 when it overwrote).
        (Cmd::Set, Item::Integer(n)) if expect.hash && n >= 0 => Stored,
        // SET's NX or XX condition failed.
        (Cmd::Add | Cmd::Replace, Item::Bulk(-1)) => NotStored,
        (Cmd::Delete, Item::Integer(n)) if n > 0 => Deleted,
        (Cmd::Delete, Item::Integer(_)) => NotFound,
        (Cmd::Incr | Cmd::Decr, Item::Integer(_)) => Num,
        // APPEND answers the new length.
        (Cmd::Append, Item::Integer(_)) => Stored,
        _ => return Err(ParseError::UnexpectedReply),
    };
    Ok(Response::of(class))
}

/// Refusals for want of authentication (`NOAUTH`; `WRONGPASS` from Redis 6,
/// `ERR invalid password` before it) are told apart from other errors.
fn error_class(message: &[u8]) -> ResponseClass {
    let word = message.split(|&b| b == b' ').next().unwrap_or_default();
    match word {
        b"NOAUTH" | b"WRONGPASS" => ResponseClass::AuthError,
        _ if message == b"ERR invalid password" => ResponseClass::AuthError,
        _ => ResponseClass::RespError,
    }
}

/// The header of the value at the front of `buf` and the bytes it took
/// (its CRLF included).
fn header(buf: &[u8]) -> Result<Option<(Item<'_>, usize)>, ParseError> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    if !matches!(kind, b'+' | b'-' | b':' | b'$' | b'*') {
        return Err(ParseError::UnknownReply);
    }
    let Some(line) = next_line(buf)? else {
        return Ok(None);
    };
    let text = line.get(1..).unwrap_or_default();
    let item = match kind {
        b'+' | b'-' if text.contains(&b'\r') => return Err(ParseError::BadLineEnding),
        b'+' => Item::Simple(text),
        b'-' => Item::Error(text),
        b':' => Item::Integer(number(text)?),
        b'$' => match number(text)? {
            len @ -1..=MAX_BULK => Item::Bulk(len),
            _ => return Err(ParseError::BadNumber),
        },
        _ => match number(text)? {
            count @ -1..=MAX_ELEMENTS => Item::Array(count),
            count if count > MAX_ELEMENTS => return Err(ParseError::BadFrame),
            _ => return Err(ParseError::BadNumber),
        },
    };
    Ok(Some((item, line.len() + 2)))
}

/// The CRLF-terminated line at the front of `buf`, without its CRLF.
fn next_line(buf: &[u8]) -> Result<Option<&[u8]>, ParseError> {
    let window = &buf[..buf.len().min(MAX_LINE)];
    match memchr::memchr(b'\n', window) {
        Some(nl) => match nl.checked_sub(1) {
            Some(cr) if window.get(cr) == Some(&b'\r') => Ok(window.get(..cr)),
            _ => Err(ParseError::BadLineEnding),
        },
        None if window.len() == MAX_LINE => Err(ParseError::LineTooLong),
        None => Ok(None),
    }
}

/// A RESP integer: an optional `-`, digits, in range.
fn number(text: &[u8]) -> Result<i64, ParseError> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    // `str::parse` alone would also take a `+`.
    let valid = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
    let parsed = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok());
    parsed.filter(|_| valid).ok_or(ParseError::BadNumber)
}

/// The end of a bulk string of `len` bytes (nil if -1) whose data starts
/// at `start`, once its data and CRLF are all in `buf`.
fn bulk_end(
    buf: &[u8],
    start: usize,
    len: i64,
    expect: Expect,
) -> Result<Option<usize>, ParseError> {
    let Ok(len) = usize::try_from(len) else {
        return Ok(Some(start));
    };
    if expect.too_long(len as u64) {
        return Err(ParseError::ValueTooLong);
    }
    let end = start.saturating_add(len);
    match buf.get(end..end.saturating_add(2)) {
        Some(b"\r\n") => Ok(Some(end + 2)),
        Some(_) => Err(ParseError::BadValueTerminator),
        None => Ok(None),
    }
}

/// The complete value starting at `buf[start..]`: its header and where it
/// ends. Walks nested arrays with a fixed stack of element counts rather
/// than recursion; `levels` arrays may open, one more is `BadFrame`.
fn value_end(
    buf: &[u8],
    start: usize,
    levels: usize,
    expect: Expect,
) -> Result<Option<(Item<'_>, usize)>, ParseError> {
    // Elements still owed by each open array, innermost last.
    let mut owed = [0i64; MAX_DEPTH];
    let mut depth = 0;
    let mut pos = start;
    let mut first = None;
    loop {
        let Some((item, len)) = header(buf.get(pos..).unwrap_or_default())? else {
            return Ok(None);
        };
        first.get_or_insert(item);
        pos += len;
        match item {
            Item::Bulk(len) => match bulk_end(buf, pos, len, expect)? {
                Some(end) => pos = end,
                None => return Ok(None),
            },
            Item::Array(_) if depth >= levels.min(MAX_DEPTH) => return Err(ParseError::BadFrame),
            Item::Array(count) if count > 0 => {
                owed[depth] = count;
                depth += 1;
                continue;
            }
            _ => {}
        }
        // One value is complete: so may be the arrays it closes.
        loop {
            let Some(last) = depth.checked_sub(1) else {
                return Ok(first.map(|item| (item, pos)));
            };
            owed[last] -= 1;
            if owed[last] > 0 {
                break;
            }
            depth = last;
        }
    }
}

#[cfg(test)]
mod tests;
