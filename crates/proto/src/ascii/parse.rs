//! Response parser for the text protocol.
//!
//! The caller passes whatever bytes it has, from the start of the oldest
//! unanswered response, and gets back either a complete response with the
//! number of bytes it used, `Ok(None)` when more bytes are needed, or an
//! error. Value blocks are skipped by length. A response split across reads
//! can be parsed again from the start (`parse_response`), or resumed where
//! the last attempt stopped (`parse_response_from` with a `Progress`), which
//! keeps a multiget of thousands of values spread over many reads linear.

use crate::asked::next_match;
use crate::line::{error_reply, next_line, parse_u64};
use crate::{Expect, ParseError, Progress, Response, ResponseClass};

/// The largest value block accepted: memcached's own item size ceiling
/// (`-I`) cannot exceed 1 GiB.
const MAX_VALUE: u64 = 1 << 30;

/// Parses the reply to the request `expect` describes; each `VALUE` must
/// name the next of the keys `asked` it answers (unchecked if empty). A
/// `noreply` request was sent with a `version` fence (the one command every
/// memcached answers, old ones included): its reply is whatever came before
/// `VERSION`, or the command's quiet outcome.
pub fn parse(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    if expect.unfenced {
        return parse_unfenced(buf, expect);
    }
    if !expect.noreply {
        return finish(
            parse_at(buf, progress, expect, asked, Some(expect.cmd)),
            progress,
        );
    }
    let mut pos = progress.offset.min(buf.len());
    loop {
        let Some(line) = next_line(&buf[pos..])? else {
            progress.offset = pos;
            return Ok(None);
        };
        pos += line.len() + 2;
        if line.starts_with(b"VERSION ") {
            let class = progress.seen.unwrap_or(expect.cmd.quiet_outcome());
            *progress = Progress::default();
            return Ok(Some((Response::of(class), pos)));
        }
        let class = classify(line)?;
        progress.seen.get_or_insert(class);
    }
}

/// A quiet request sent without a fence of its own: an error or outcome
/// line before the next reply answers it; the next reply (`VALUE`, `END`,
/// or the fence's `VERSION`) tells it was done quietly, and is left, no
/// byte taken, for the request it answers.
fn parse_unfenced(buf: &[u8], expect: Expect) -> Result<Option<(Response, usize)>, ParseError> {
    let Some(line) = next_line(buf)? else {
        return Ok(None);
    };
    if line.starts_with(b"VERSION ") || line.starts_with(b"VALUE ") || line == b"END" {
        return Ok(Some((Response::of(expect.cmd.quiet_outcome()), 0)));
    }
    Ok(Some((Response::of(classify(line)?), line.len() + 2)))
}

/// Parses one response from the front of `buf`.
pub fn parse_response(buf: &[u8]) -> Result<Option<(Response, usize)>, ParseError> {
    parse_response_from(buf, &mut Progress::default())
}

/// Parses one response from the front of `buf`, resuming after the value
/// blocks `progress` says were complete; updates `progress` when more bytes
/// are needed and resets it otherwise. `buf` must start with the same
/// response as when `progress` was saved.
pub fn parse_response_from(
    buf: &[u8],
    progress: &mut Progress,
) -> Result<Option<(Response, usize)>, ParseError> {
    let any = Expect {
        cmd: crate::Cmd::Get,
        keys: u32::MAX,
        noreply: false,
        unfenced: false,
        opaque: 0,
        max_value: u32::MAX,
        hash: false,
    };
    finish(parse_at(buf, progress, any, &[], None), progress)
}

/// Resets `progress` once a response is complete or broken.
fn finish(
    result: Result<Option<(Response, usize)>, ParseError>,
    progress: &mut Progress,
) -> Result<Option<(Response, usize)>, ParseError> {
    if !matches!(result, Ok(None)) {
        *progress = Progress::default();
    }
    result
}

/// The response at `progress`; with `answering`, one that cannot answer
/// that command is `UnexpectedReply` (the stream is out of step).
fn parse_at(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    asked: &[u8],
    answering: Option<crate::Cmd>,
) -> Result<Option<(Response, usize)>, ParseError> {
    let result = parse_any(buf, progress, expect, asked)?;
    match (result, answering) {
        (Some((r, _)), Some(cmd)) if !cmd.accepts(r.class) => Err(ParseError::UnexpectedReply),
        (result, _) => Ok(result),
    }
}

fn parse_any(
    buf: &[u8],
    progress: &mut Progress,
    expect: Expect,
    asked: &[u8],
) -> Result<Option<(Response, usize)>, ParseError> {
    // The commonest whole replies, without a line scan.
    if progress.offset == 0 {
        if buf.starts_with(b"END\r\n") {
            return Ok(Some((Response::of(ResponseClass::End), 5)));
        }
        if buf.starts_with(b"STORED\r\n") {
            return Ok(Some((Response::of(ResponseClass::Stored), 8)));
        }
    }
    let mut pos = progress.offset.min(buf.len());
    let mut values = progress.values;
    let mut cas = progress.cas;
    let mut key_pos = progress.key_pos;
    loop {
        let Some(line) = next_line(&buf[pos..])? else {
            *progress = Progress {
                offset: pos,
                values,
                cas,
                seen: None,
                key_pos,
            };
            return Ok(None);
        };
        let after_line = pos + line.len() + 2;
        if let Some(header) = line.strip_prefix(b"VALUE ") {
            let (key, len, unique) = value_header(header)?;
            if expect.too_long(len as u64) {
                return Err(ParseError::ValueTooLong);
            }
            let data_end = after_line + len;
            let Some(terminator) = buf.get(data_end..data_end + 2) else {
                *progress = Progress {
                    offset: pos,
                    values,
                    cas,
                    seen: None,
                    key_pos,
                };
                return Ok(None);
            };
            if terminator != b"\r\n" {
                return Err(ParseError::BadValueTerminator);
            }
            key_pos = next_match(asked, key_pos, key)?;
            values = values.saturating_add(1);
            cas = unique;
            pos = data_end + 2;
            if buf[pos..].starts_with(b"END\r\n") {
                return Ok(Some((Response::hits(values, cas), pos + 5)));
            }
            continue;
        }
        let class = classify(line)?;
        return match class {
            ResponseClass::End if values > 0 => Ok(Some((Response::hits(values, cas), after_line))),
            // Once values have started, only END or an error may follow.
            c if values > 0 && !c.is_error() => Err(ParseError::UnknownReply),
            c => Ok(Some((Response::of(c), after_line))),
        };
    }
}

/// The single-line replies.
fn classify(line: &[u8]) -> Result<ResponseClass, ParseError> {
    let class = match line {
        b"STORED" => ResponseClass::Stored,
        b"NOT_STORED" => ResponseClass::NotStored,
        b"EXISTS" => ResponseClass::Exists,
        b"NOT_FOUND" => ResponseClass::NotFound,
        b"DELETED" => ResponseClass::Deleted,
        b"TOUCHED" => ResponseClass::Touched,
        b"END" => ResponseClass::End,
        _ if is_number(line) => ResponseClass::Num,
        _ => return error_reply(line).unwrap_or(Err(ParseError::UnknownReply)),
    };
    Ok(class)
}

/// An incr/decr result: digits, which old servers pad with trailing spaces.
fn is_number(line: &[u8]) -> bool {
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && digits <= 20 && line[digits..].iter().all(|&b| b == b' ')
}

/// The key, data length and cas unique (0 if absent) of `VALUE <key>
/// <flags> <bytes> [<cas unique>]`, given the part after `VALUE `.
/// Hand-rolled: this runs once per hit.
fn value_header(header: &[u8]) -> Result<(&[u8], usize, u64), ParseError> {
    let bad = ParseError::BadValueHeader;
    let key_end = memchr::memchr(b' ', header).ok_or(bad.clone())?;
    if key_end == 0 {
        return Err(bad);
    }
    let mut rest = &header[key_end + 1..];
    let field = |rest: &mut &[u8]| -> Option<u64> {
        let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
        let value = parse_u64(&rest[..end]);
        *rest = rest.get(end + 1..).unwrap_or(&[]);
        value
    };
    let flags = field(&mut rest).ok_or(bad.clone())?;
    let len = field(&mut rest).ok_or(bad.clone())?;
    let cas = if rest.is_empty() {
        Some(0)
    } else {
        field(&mut rest).filter(|_| rest.is_empty())
    };
    match cas {
        Some(cas) if flags <= u64::from(u32::MAX) && len <= MAX_VALUE => {
            Ok((&header[..key_end], len as usize, cas))
        }
        _ => Err(bad),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ResponseClass::*;

    fn one(buf: &[u8]) -> (Response, usize) {
        parse_response(buf).unwrap().expect("complete")
    }

    #[test]
    fn single_line_replies() {
        let cases: &[(&[u8], ResponseClass)] = &[
            (b"STORED\r\n", Stored),
            (b"NOT_STORED\r\n", NotStored),
            (b"EXISTS\r\n", Exists),
            (b"NOT_FOUND\r\n", NotFound),
            (b"DELETED\r\n", Deleted),
            (b"TOUCHED\r\n", Touched),
            (b"END\r\n", End),
            (b"ERROR\r\n", Error),
            (b"ERROR unknown command\r\n", Error),
            (b"CLIENT_ERROR bad data chunk\r\n", ClientError),
            (
                b"SERVER_ERROR out of memory storing object\r\n",
                ServerError,
            ),
            (b"SERVER_ERROR\r\n", ServerError),
            (b"42\r\n", Num),
            (b"18446744073709551615\r\n", Num),
            (b"7   \r\n", Num),
        ];
        for (wire, class) in cases {
            assert_eq!(one(wire), (Response::of(*class), wire.len()), "{wire:?}");
        }
    }

    #[test]
    fn values() {
        let wire = b"VALUE k 0 5\r\nhello\r\nEND\r\n";
        assert_eq!(one(wire), (Response::hits(1, 0), wire.len()));
        // gets: with cas unique; binary data containing CRLF and "END".
        let wire = b"VALUE a 1 7 99\r\nEND\r\n\r\n\r\nVALUE bb 4294967295 0 1\r\n\r\nEND\r\n";
        assert_eq!(one(wire), (Response::hits(2, 1), wire.len()));
        let wire = b"VALUE a 1 1 4242\r\nx\r\nEND\r\n";
        assert_eq!(one(wire), (Response::hits(1, 4242), wire.len()));
    }

    #[test]
    fn values_must_name_the_keys_asked_in_order() {
        let asked = b"a bb a";
        let e = crate::Request::new(crate::Cmd::Get, asked).expect();
        let run = |wire: &[u8]| parse(wire, &mut Progress::default(), e, asked);
        let ok = b"VALUE a 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n";
        assert_eq!(run(ok), Ok(Some((Response::hits(2, 0), ok.len()))));
        // Another key; a key asked once sent twice; out of order.
        for wire in [
            &b"VALUE zz 0 1\r\nx\r\nEND\r\n"[..],
            b"VALUE bb 0 1\r\nx\r\nVALUE bb 0 1\r\nx\r\nEND\r\n",
            b"VALUE bb 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n",
        ] {
            assert_eq!(run(wire), Err(ParseError::KeyMismatch), "{wire:?}");
        }
        // Resumed across reads, the keys already matched stay matched.
        let wire = b"VALUE a 0 1\r\nx\r\nVALUE bb 0 1\r\nx\r\nVALUE bb 0 1\r\nx\r\nEND\r\n";
        let mut progress = Progress::default();
        assert_eq!(parse(&wire[..20], &mut progress, e, asked), Ok(None));
        assert_eq!(parse(&wire[..36], &mut progress, e, asked), Ok(None));
        assert_eq!(
            parse(wire, &mut progress, e, asked),
            Err(ParseError::KeyMismatch)
        );
    }

    #[test]
    fn stops_at_first_response() {
        let wire = b"STORED\r\nEND\r\n";
        assert_eq!(one(wire), (Response::of(Stored), 8));
        assert_eq!(one(&wire[8..]), (Response::of(End), 5));
    }

    #[test]
    fn incomplete() {
        let wire = b"VALUE k 0 5\r\nhello\r\nEND\r\n";
        for cut in 0..wire.len() {
            assert_eq!(parse_response(&wire[..cut]), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn error_inside_multiget() {
        let wire = b"VALUE k 0 1\r\nx\r\nSERVER_ERROR out of memory writing get response\r\n";
        assert_eq!(one(wire), (Response::of(ServerError), wire.len()));
    }

    #[test]
    fn malformed() {
        let cases: &[(&[u8], ParseError)] = &[
            (b"HELLO\r\n", ParseError::UnknownReply),
            (b"STORED\n", ParseError::BadLineEnding),
            (b"\n", ParseError::BadLineEnding),
            (b"ERROR x\ry\r\n", ParseError::BadLineEnding),
            (b"VALUE k 0\r\n", ParseError::BadValueHeader),
            (b"VALUE k x 1\r\n", ParseError::BadValueHeader),
            (b"VALUE  0 1\r\n", ParseError::BadValueHeader),
            (b"VALUE k 0 1 2 3\r\n", ParseError::BadValueHeader),
            (
                b"VALUE k 0 99999999999999999999999\r\n",
                ParseError::BadValueHeader,
            ),
            (b"VALUE k 4294967296 1\r\n", ParseError::BadValueHeader),
            (b"VALUE k 0 1\r\nxyEND\r\n", ParseError::BadValueTerminator),
            (b"VALUE k 0 1\r\nx\r\nSTORED\r\n", ParseError::UnknownReply),
            (b"123x\r\n", ParseError::UnknownReply),
            (b"CLIENT_ERRORS\r\n", ParseError::UnknownReply),
        ];
        for (wire, err) in cases {
            assert_eq!(parse_response(wire), Err(err.clone()), "{wire:?}");
        }
        let long = vec![b'A'; crate::line::MAX_LINE + 10];
        assert_eq!(parse_response(&long), Err(ParseError::LineTooLong));
    }

    /// Quiet sets sent without fences of their own, then one `version`:
    /// each is told done by the next reply, which it leaves in place; an
    /// error line before it is the first one's.
    #[test]
    fn unfenced_quiet_requests_end_at_the_next_reply() {
        let quiet = |unfenced| Expect {
            cmd: crate::Cmd::Set,
            keys: 1,
            noreply: true,
            unfenced,
            opaque: 0,
            max_value: u32::MAX,
            hash: false,
        };
        let mut p = Progress::default();
        let wire = b"SERVER_ERROR out of memory storing object\r\nVERSION 1.6.21\r\n";
        let (first, used) = parse(wire, &mut p, quiet(true), &[]).unwrap().unwrap();
        assert_eq!((first.class, used), (ResponseClass::ServerError, 43));
        let rest = &wire[used..];
        let (second, none) = parse(rest, &mut p, quiet(true), &[]).unwrap().unwrap();
        assert_eq!((second.class, none), (ResponseClass::Stored, 0));
        // The fenced last takes the fence.
        let (last, all) = parse(rest, &mut p, quiet(false), &[]).unwrap().unwrap();
        assert_eq!((last.class, all), (ResponseClass::Stored, rest.len()));
        // A get's reply after them tells them done too; a part line waits.
        let (r, n) = parse(b"END\r\n", &mut p, quiet(true), &[])
            .unwrap()
            .unwrap();
        assert_eq!((r.class, n), (ResponseClass::Stored, 0));
        assert_eq!(parse(b"VERS", &mut p, quiet(true), &[]), Ok(None));
    }
}
