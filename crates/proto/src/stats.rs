//! memcached's `stats` command in the text protocol: `stats[ GROUP]\r\n`
//! (`settings`, `slabs`, `items`, `conns`, `sizes`, ...) answered by
//! `STAT <name> <value>\r\n` lines and `END\r\n`, or by an error line when
//! the server has no such group. A connection that has not spoken binary
//! may ask it whatever protocol the load uses.

use crate::line::{error_reply, next_line};
use crate::{ParseError, ResponseClass};

/// `stats` groups that change the server rather than report on it:
/// `reset` zeroes its counters, `detail on|off` switches its per-prefix
/// accounting.
pub const CHANGES_SERVER: [&str; 2] = ["reset", "detail"];

/// Appends `stats` or `stats GROUP`.
pub fn encode(out: &mut Vec<u8>, group: Option<&str>) {
    out.extend_from_slice(b"stats");
    if let Some(g) = group {
        out.push(b' ');
        out.extend_from_slice(g.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// A complete reply at the front of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `STAT` lines then `END`: the reply's length in bytes (its pairs are
    /// read with [`pairs`]).
    Stats(usize),
    /// An error line (`ERROR`: no such group): its class and length.
    Refused(ResponseClass, usize),
}

/// Parses the reply at the front of `buf`; `Ok(None)` until it is whole.
pub fn parse(buf: &[u8]) -> Result<Option<Reply>, ParseError> {
    parse_from(buf, &mut 0)
}

/// `parse` for a reply that arrives in parts: `*checked` is how many bytes
/// at the front are whole `STAT` lines an earlier call checked (0 at
/// first), and it moves past each line checked, so that a long reply
/// (`stats conns` of a busy server) is read in linear time.
pub fn parse_from(buf: &[u8], checked: &mut usize) -> Result<Option<Reply>, ParseError> {
    loop {
        let at = *checked;
        let Some(line) = next_line(&buf[at..])? else {
            return Ok(None);
        };
        let end = at + line.len() + 2;
        if line == b"END" {
            return Ok(Some(Reply::Stats(end)));
        }
        if at == 0 {
            if let Some(class) = error_reply(line) {
                return Ok(Some(Reply::Refused(class?, end)));
            }
        }
        if split(line).is_none() {
            return Err(ParseError::UnknownReply);
        }
        *checked = end;
    }
}

/// The `(name, value)` pairs of a reply `parse` measured as `Stats`. A
/// value is the rest of its line (`version 1.6.18`, `libevent
/// 2.1.12-stable`, `5:addr tcp:127.0.0.1:40000`).
pub fn pairs(reply: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    reply
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter_map(split)
}

/// `STAT name value` → (name, value).
fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = line.strip_prefix(b"STAT ")?;
    let space = rest.iter().position(|&b| b == b' ')?;
    let (name, value) = (&rest[..space], &rest[space + 1..]);
    (!name.is_empty()).then_some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_parses_whole_or_waits() {
        let reply =
            b"STAT pid 42\r\nSTAT version 1.6.18\r\nSTAT 5:addr tcp:127.0.0.1:1\r\nEND\r\nSTAT";
        let whole = reply.len() - 4;
        assert_eq!(parse(reply), Ok(Some(Reply::Stats(whole))));
        for cut in 0..whole {
            assert_eq!(parse(&reply[..cut]), Ok(None), "cut at {cut}");
        }
        // In parts: each call starts where the last one's whole lines end.
        let mut checked = 0;
        for cut in [5, 13, 30, whole - 1] {
            assert_eq!(parse_from(&reply[..cut], &mut checked), Ok(None));
            assert!(checked <= cut);
        }
        assert_eq!(
            parse_from(reply, &mut checked),
            Ok(Some(Reply::Stats(whole)))
        );
        let got: Vec<(&[u8], &[u8])> = pairs(&reply[..whole]).collect();
        assert_eq!(
            got,
            [
                (&b"pid"[..], &b"42"[..]),
                (b"version", b"1.6.18"),
                (b"5:addr", b"tcp:127.0.0.1:1"),
            ]
        );
    }

    #[test]
    fn refusals_and_garbage_are_told_apart() {
        assert_eq!(
            parse(b"ERROR\r\n"),
            Ok(Some(Reply::Refused(ResponseClass::Error, 7)))
        );
        assert_eq!(parse(b"VALUE x 0 1\r\n"), Err(ParseError::UnknownReply));
        assert_eq!(
            parse(b"STAT novalue\r\nEND\r\n"),
            Err(ParseError::UnknownReply)
        );
        assert!(parse(b"STAT a 1\nEND\r\n").is_err());
        let mut out = Vec::new();
        encode(&mut out, Some("slabs"));
        encode(&mut out, None);
        assert_eq!(out, b"stats slabs\r\nstats\r\n");
    }
}
