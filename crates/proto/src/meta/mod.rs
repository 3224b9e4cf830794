//! memcached 1.6's meta protocol (`mg`, `ms`, `md`, `ma`, `mn`), as the
//! "Meta Commands" section of `doc/protocol.txt` defines it.
//!
//! Every request maps to meta commands whose replies the parser folds into
//! exactly one [`Response`]:
//!
//! - a retrieval of one key is one `mg <key> v f`, answered `VA` or `EN`;
//! - a retrieval of several keys (a multiget) is one quiet `mg` per key and
//!   an `mn` fence: the hits' `VA` blocks come back, the misses are
//!   silenced by `q`, and `MN` ends the response;
//! - a `noreply` request is sent with `q` and fenced by `mn` the same way:
//!   whatever reply comes before `MN` is its outcome, silence is the outcome
//!   `q` suppresses.
//!
//! Like the text codec, nothing here allocates beyond growing the caller's
//! buffer, and no input makes the parser panic.

use crate::asked::next_match;
use crate::line::{error_reply, next_line, parse_u64};
use crate::{Cmd, Expect, ParseError, Progress, Request, Response, ResponseClass};

#[cfg(test)]
mod tests;

/// The largest value block accepted: memcached's item size ceiling (`-I`)
/// cannot exceed 1 GiB.
const MAX_VALUE: usize = 1 << 30;

/// Encoder settings beyond the request itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Send each key base64-encoded with the `b` flag, so that keys may hold
    /// any bytes but a space, which separates a multiget's keys. The encoded
    /// key must still fit memcached's 250-byte key limit, so raw keys may be
    /// at most 186 bytes.
    pub base64_keys: bool,
    /// Retrievals also ask for the key (`k`), the remaining TTL (`t`) and
    /// the item size (`s`): what a client that uses them makes the server
    /// format and send.
    pub return_key: bool,
    pub return_ttl: bool,
    pub return_size: bool,
    /// Retrievals vivify a missing item as a stub with this TTL (`N`),
    /// seconds. A reply flagged `W` (this client won the recache) or `Z`
    /// (another did) without data is that stub: it counts as a miss.
    pub vivify: Option<u32>,
}

impl std::str::FromStr for Options {
    type Err = String;

    /// The meta flags as their letters, comma-separated: `k`, `t`, `s`,
    /// `b` (base64 keys), `N<ttl>`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut opts = Options::default();
        for flag in text.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match flag {
                "k" => opts.return_key = true,
                "t" => opts.return_ttl = true,
                "s" => opts.return_size = true,
                "b" => opts.base64_keys = true,
                _ => match flag.strip_prefix('N').map(str::parse::<u32>) {
                    Some(Ok(ttl)) => opts.vivify = Some(ttl),
                    _ => {
                        return Err(format!(
                            "unknown meta flag '{flag}' (flags: k, t, s, b, N<ttl seconds>)"
                        ))
                    }
                },
            }
        }
        Ok(opts)
    }
}

/// Appends `req` as meta commands with default [`Options`].
pub fn encode(out: &mut Vec<u8>, req: &Request) {
    encode_with(out, req, Options::default());
}

/// Appends `req` as meta commands: one command, or for a multiget one `mg`
/// per key, followed by an `mn` fence when the request is quiet.
pub fn encode_with(out: &mut Vec<u8>, req: &Request, opts: Options) {
    if req.cmd.is_retrieval() {
        retrieval(out, req, opts);
        return;
    }
    let quiet = req.noreply && supports_noreply(req.cmd);
    match req.cmd {
        Cmd::Touch => {
            head(out, b"mg", req.keys, None, opts);
            number_flag(out, b'T', u64::from(req.exptime));
        }
        Cmd::Incr | Cmd::Decr => {
            head(out, b"ma", req.keys, None, opts);
            number_flag(out, b'D', req.delta);
            out.extend_from_slice(if req.cmd == Cmd::Incr { b" MI" } else { b" MD" });
        }
        Cmd::Delete => head(out, b"md", req.keys, None, opts),
        Cmd::Noop => {
            out.extend_from_slice(b"mn\r\n");
            return;
        }
        _ => storage_flags(out, req, opts),
    }
    tail(out, quiet, req.opaque);
    if req.cmd.is_storage() {
        out.extend_from_slice(req.value);
        out.extend_from_slice(b"\r\n");
    }
    if quiet {
        out.extend_from_slice(b"mn\r\n");
    }
}

/// Every command has a meta form (the noop is `mn`).
pub fn supports(_cmd: Cmd) -> bool {
    true
}

/// Every command but the noop, which is the fence itself. A quiet retrieval
/// is fenced like a multiget: its miss is silenced, its hit still answers.
pub fn supports_noreply(cmd: Cmd) -> bool {
    cmd != Cmd::Noop
}

/// `mg <key> v f [q] [c] [T<exptime>] [O<opaque>]` per key. One key asked
/// loud is answered `VA` or `EN`; anything else (several keys, none, or
/// quiet) is sent with `q` and fenced, so misses cost no bytes. `k` is
/// asked for only with [`Options::return_key`]: replies come in request
/// order, and a hit that names its key is checked against the keys asked.
fn retrieval(out: &mut Vec<u8>, req: &Request, opts: Options) {
    let mut keys = req.key_list();
    let fenced = match (keys.next(), keys.next()) {
        (Some(_), None) => req.noreply,
        _ => true,
    };
    for key in req.key_list() {
        head(out, b"mg", key, None, opts);
        out.extend_from_slice(b" v f");
        if fenced {
            out.extend_from_slice(b" q");
        }
        if req.cmd.wants_cas() {
            out.extend_from_slice(b" c");
        }
        if matches!(req.cmd, Cmd::Gat | Cmd::Gats) {
            number_flag(out, b'T', u64::from(req.exptime));
        }
        retrieval_flags(out, opts);
        tail(out, false, req.opaque);
    }
    if fenced {
        out.extend_from_slice(b"mn\r\n");
    }
}

/// The optional return flags and vivify of [`Options`].
fn retrieval_flags(out: &mut Vec<u8>, opts: Options) {
    for (on, flag) in [
        (opts.return_key, b" k"),
        (opts.return_ttl, b" t"),
        (opts.return_size, b" s"),
    ] {
        if on {
            out.extend_from_slice(flag);
        }
    }
    if let Some(ttl) = opts.vivify {
        number_flag(out, b'N', u64::from(ttl));
    }
}

/// `ms <key> <datalen> T<exptime> F<flags> M<mode> [C<cas>]`: the mode
/// picks set/add/replace/append/prepend, and a cas is a set with `C`.
fn storage_flags(out: &mut Vec<u8>, req: &Request, opts: Options) {
    head(out, b"ms", req.keys, Some(req.value.len()), opts);
    number_flag(out, b'T', u64::from(req.exptime));
    number_flag(out, b'F', u64::from(req.flags));
    out.extend_from_slice(match req.cmd {
        Cmd::Add => b" ME",
        Cmd::Replace => b" MR",
        Cmd::Append => b" MA",
        Cmd::Prepend => b" MP",
        _ => b" MS",
    });
    if req.cmd == Cmd::Cas {
        number_flag(out, b'C', req.cas);
    }
}

/// `<verb> <key> [<datalen>] [b]`: the data length must be the token right
/// after the key, so `b` comes after it.
fn head(out: &mut Vec<u8>, verb: &[u8], key: &[u8], datalen: Option<usize>, opts: Options) {
    out.extend_from_slice(verb);
    out.push(b' ');
    if opts.base64_keys {
        base64(out, key);
    } else {
        out.extend_from_slice(key);
    }
    if let Some(len) = datalen {
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
    }
    if opts.base64_keys {
        out.extend_from_slice(b" b");
    }
}

/// ` <flag><n>`.
fn number_flag(out: &mut Vec<u8>, flag: u8, n: u64) {
    out.push(b' ');
    out.push(flag);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// `[q] [O<opaque>]\r\n`. An opaque of 0 means none and is not sent.
fn tail(out: &mut Vec<u8>, quiet: bool, opaque: u32) {
    if quiet {
        out.extend_from_slice(b" q");
    }
    if opaque != 0 {
        number_flag(out, b'O', u64::from(opaque));
    }
    out.extend_from_slice(b"\r\n");
}

/// Standard padded base64, which is what memcached's decoder accepts.
fn base64(out: &mut Vec<u8>, data: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in data.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = byte(0) << 16 | byte(1) << 8 | byte(2);
        let chars = [18, 12, 6, 0].map(|shift| ALPHABET[(n >> shift) as usize & 63]);
        out.extend_from_slice(&chars[..chunk.len() + 1]);
        out.extend_from_slice(&b"=="[..3 - chunk.len()]);
    }
}

/// Parses the reply to the request `expect` describes from the front of
/// `buf`. A fenced request (see [`encode_with`]) is read up to its `MN`,
/// resuming after the replies `progress` says were complete; `progress` is
/// saved on `Ok(None)` and reset otherwise. A hit that names its key (`k`,
/// not base64) must name the next of the keys `asked` (unchecked if empty).
pub fn parse(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let mut digits = itoa::Buffer::new();
    let opaque = match expect.opaque {
        0 => None,
        n => Some(digits.format(n).as_bytes()),
    };
    let result = if is_fenced(expect) {
        parse_fenced(buf, progress, expect, opaque, asked)
    } else {
        parse_single(buf, expect, opaque, asked)
    };
    if !matches!(result, Ok(None)) {
        *progress = Progress::default();
    }
    result
}

/// Whether the encoder followed the request with an `mn` fence.
fn is_fenced(expect: Expect) -> bool {
    (expect.cmd.is_retrieval() && expect.keys != 1)
        || (expect.noreply && supports_noreply(expect.cmd))
}

/// One reply, not fenced: a single element, its data block included.
fn parse_single(
    buf: &[u8],
    expect: Expect,
    opaque: Option<&[u8]>,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let cmd = expect.cmd;
    let Some((reply, used)) = next_reply(buf, opaque, expect)? else {
        return Ok(None);
    };
    let response = match reply {
        Reply::Error(class) => Response::of(class),
        Reply::Meta { code, cas, key } => match outcome(cmd, code)? {
            ResponseClass::Value => {
                if let Some(key) = key {
                    next_match(asked, 0, key)?;
                }
                Response::hits(1, cas)
            }
            class => Response::of(class),
        },
    };
    Ok(Some((response, used)))
}

/// The replies up to and including `MN`. Errors do not end the response:
/// each `mg` of a multiget is its own command, and the server goes on to
/// the rest and the fence after one of them fails. Except `CLIENT_ERROR
/// unauthenticated`: memcached sends one per read and drops the rest of
/// what it read, fence included, so no `MN` will follow.
fn parse_fenced(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    opaque: Option<&[u8]>,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    let cmd = expect.cmd;
    let mut pos = progress.offset.min(buf.len());
    let Progress {
        mut values,
        mut cas,
        mut seen,
        mut key_pos,
        ..
    } = *progress;
    loop {
        let Some((reply, used)) = next_reply(&buf[pos..], opaque, expect)? else {
            *progress = Progress {
                offset: pos,
                values,
                cas,
                seen,
                key_pos,
            };
            return Ok(None);
        };
        pos += used;
        let class = match reply {
            Reply::Meta { code: Code::Mn, .. } => {
                return Ok(Some((fenced_response(cmd, values, cas, seen), pos)))
            }
            Reply::Error(ResponseClass::AuthError) => {
                return Ok(Some((Response::of(ResponseClass::AuthError), pos)))
            }
            Reply::Error(class) => class,
            Reply::Meta {
                code,
                cas: unique,
                key,
            } => match outcome(cmd, code)? {
                ResponseClass::Value => {
                    if let Some(key) = key {
                        key_pos = next_match(asked, key_pos, key)?;
                    }
                    values = values.saturating_add(1);
                    if cmd.is_retrieval() && values > expect.keys {
                        return Err(ParseError::TooManyValues);
                    }
                    cas = unique;
                    continue;
                }
                // A miss that `q` should have hidden.
                ResponseClass::End => continue,
                class => class,
            },
        };
        seen.get_or_insert(class);
    }
}

/// The response of a fenced request once its `MN` arrived: the first reply
/// that was not a hit or a miss (for a retrieval, only an error), else the
/// hits, else what the silence means.
fn fenced_response(cmd: Cmd, values: u32, cas: u64, seen: Option<ResponseClass>) -> Response {
    match seen {
        Some(class) => Response::of(class),
        None if cmd.is_retrieval() => Response::hits(values, cas),
        None => Response::of(quiet_outcome(cmd)),
    }
}

/// What a quiet request's silence means. `q` hides `HD` for `ms`, `md` and
/// `ma`, but for `mg` it hides the miss (`EN`) and still sends the hit's
/// `HD` — so a quiet touch that says nothing did not find its key.
fn quiet_outcome(cmd: Cmd) -> ResponseClass {
    match cmd {
        Cmd::Touch => ResponseClass::NotFound,
        cmd => cmd.quiet_outcome(),
    }
}

/// The two-letter meta reply codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    Va,
    Hd,
    En,
    Ns,
    Ex,
    Nf,
    Mn,
}

/// One reply element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply<'a> {
    /// A meta status line (and for `VA`, its data block), with the `c`
    /// return flag (0 if absent) and the `k` one (a key not in base64).
    Meta {
        code: Code,
        cas: u64,
        key: Option<&'a [u8]>,
    },
    /// `ERROR`, `CLIENT_ERROR ...` or `SERVER_ERROR ...`.
    Error(ResponseClass),
}

/// What `code` means in reply to `cmd`; `Value` and `End` are a
/// retrieval's hit and miss.
fn outcome(cmd: Cmd, code: Code) -> Result<ResponseClass, ParseError> {
    use ResponseClass as R;
    let mutation = cmd.is_storage() || matches!(cmd, Cmd::Incr | Cmd::Decr | Cmd::Delete);
    Ok(match (cmd, code) {
        (Cmd::Noop, Code::Mn) => R::End,
        // `HD` is a hit without a value; the encoder always asks for one.
        (c, Code::Va | Code::Hd) if c.is_retrieval() => R::Value,
        (c, Code::En) if c.is_retrieval() => R::End,
        (Cmd::Touch, Code::Hd | Code::Va) => R::Touched,
        (Cmd::Touch, Code::En) => R::NotFound,
        (Cmd::Incr | Cmd::Decr, Code::Hd | Code::Va) => R::Num,
        (Cmd::Delete, Code::Hd) => R::Deleted,
        (c, Code::Hd) if c.is_storage() => R::Stored,
        (c, Code::Ns) if mutation && c != Cmd::Delete => R::NotStored,
        (_, Code::Ex) if mutation => R::Exists,
        (_, Code::Nf) if mutation => R::NotFound,
        _ => return Err(ParseError::UnexpectedReply),
    })
}

/// The reply at the front of `buf` and the bytes it takes, `Ok(None)` if
/// it is not all there yet. `opaque` is the `O` token the request sent;
/// `retrieval` says whether a stub reply means a miss.
fn next_reply<'a>(
    buf: &'a [u8],
    opaque: Option<&[u8]>,
    expect: Expect,
) -> Result<Option<(Reply<'a>, usize)>, ParseError> {
    let retrieval = expect.cmd.is_retrieval();
    let Some(line) = next_line(buf)? else {
        return Ok(None);
    };
    let after_line = line.len() + 2;
    let Some(code) = meta_code(line) else {
        let class = error_reply(line).unwrap_or(Err(ParseError::UnknownReply))?;
        return Ok(Some((Reply::Error(class), after_line)));
    };
    let mut tokens = line[2..].split(|&b| b == b' ').filter(|t| !t.is_empty());
    let data = match code {
        Code::Va => match data_len(tokens.next())? {
            len if expect.too_long(len as u64) => return Err(ParseError::ValueTooLong),
            len => len + 2,
        },
        _ => 0,
    };
    let ReturnFlags { cas, stub, key } = return_flags(tokens, opaque)?;
    // A retrieval's vivified stub (`W`/`Z` and no data) is what a miss
    // left behind. With data, `W`/`Z` are about recaching a real item: a
    // hit.
    let code = match code {
        Code::Va if retrieval && stub && data == 2 => Code::En,
        Code::Hd if retrieval && stub => Code::En,
        code => code,
    };
    let end = after_line + data;
    if data > 0 {
        match buf.get(end - 2..end) {
            None => return Ok(None),
            Some(b"\r\n") => {}
            Some(_) => return Err(ParseError::BadValueTerminator),
        }
    }
    Ok(Some((Reply::Meta { code, cas, key }, end)))
}

/// The meta code a line starts with, if it is a meta status line: two
/// letters, alone or followed by a space.
fn meta_code(line: &[u8]) -> Option<Code> {
    if !matches!(line.get(2), None | Some(b' ')) {
        return None;
    }
    Some(match line.get(..2)? {
        b"VA" => Code::Va,
        b"HD" => Code::Hd,
        b"EN" => Code::En,
        b"NS" => Code::Ns,
        b"EX" => Code::Ex,
        b"NF" => Code::Nf,
        b"MN" => Code::Mn,
        _ => return None,
    })
}

/// The `<size>` of a `VA` line.
fn data_len(token: Option<&[u8]>) -> Result<usize, ParseError> {
    match token.and_then(parse_u64) {
        Some(len) if len <= MAX_VALUE as u64 => Ok(len as usize),
        _ => Err(ParseError::BadValueHeader),
    }
}

/// The return flags of a status line that the parser uses.
struct ReturnFlags<'a> {
    /// The `c` flag's cas unique (0 if absent).
    cas: u64,
    /// `W` or `Z`: a stub, if no data came.
    stub: bool,
    /// The `k` flag's key, unless it is base64 (`b`).
    key: Option<&'a [u8]>,
}

/// Checks the return flags of a status line: each token is a flag letter
/// and an optional argument. Fails if an `O` flag does not echo `opaque`.
/// Other flags (`t`, `s`, `X`...) are accepted and ignored.
fn return_flags<'a>(
    tokens: impl Iterator<Item = &'a [u8]>,
    opaque: Option<&[u8]>,
) -> Result<ReturnFlags<'a>, ParseError> {
    let mut cas = 0;
    let mut stub = false;
    let mut key = None;
    let mut base64 = false;
    for token in tokens {
        if let Some(&bad) = token.iter().find(|&&b| b <= b' ' || b == 0x7f) {
            return Err(match bad {
                b'\r' => ParseError::BadLineEnding,
                _ => ParseError::UnknownReply,
            });
        }
        match token.split_first() {
            Some((b'c', n)) => cas = parse_u64(n).ok_or(ParseError::BadNumber)?,
            Some((b'W' | b'Z', [])) => stub = true,
            Some((b'k', k)) if !k.is_empty() => key = Some(k),
            Some((b'b', [])) => base64 = true,
            Some((b'O', echo)) if opaque.is_some_and(|o| o != echo) => {
                return Err(ParseError::OpaqueMismatch)
            }
            _ => {}
        }
    }
    Ok(ReturnFlags {
        cas,
        stub,
        key: key.filter(|_| !base64),
    })
}
