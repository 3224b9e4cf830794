//! What memcached's two line protocols (text and meta) share: CRLF lines,
//! decimal numbers and the error lines.

use crate::{ParseError, ResponseClass};

/// The longest reply line accepted, in bytes, terminator included. A `VALUE`
/// header is at most ~300 bytes (250-byte key and three numbers); the rest
/// is room for server error messages.
pub const MAX_LINE: usize = 2048;

/// The next CRLF-terminated line of `buf`, without its terminator;
/// `Ok(None)` until the terminator arrives.
pub(crate) fn next_line(buf: &[u8]) -> Result<Option<&[u8]>, ParseError> {
    let window = &buf[..buf.len().min(MAX_LINE)];
    match memchr::memchr(b'\n', window) {
        Some(0) => Err(ParseError::BadLineEnding),
        Some(nl) if window[nl - 1] != b'\r' => Err(ParseError::BadLineEnding),
        Some(nl) => Ok(Some(&buf[..nl - 1])),
        None if window.len() == MAX_LINE => Err(ParseError::LineTooLong),
        None => Ok(None),
    }
}

/// A decimal u64: 1 to 20 digits, no sign, no overflow.
pub(crate) fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    field.iter().try_fold(0u64, |acc, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// The class of an error line (`ERROR`, `CLIENT_ERROR ...`, `SERVER_ERROR
/// ...`; `CLIENT_ERROR unauthenticated` from a `-Y` server), or `None` if
/// `line` is none of them.
pub(crate) fn error_reply(line: &[u8]) -> Option<Result<ResponseClass, ParseError>> {
    let has_word =
        |word: &[u8]| line.starts_with(word) && matches!(line.get(word.len()), None | Some(b' '));
    let class = if line == b"CLIENT_ERROR unauthenticated" {
        ResponseClass::AuthError
    } else if has_word(b"ERROR") {
        ResponseClass::Error
    } else if has_word(b"CLIENT_ERROR") {
        ResponseClass::ClientError
    } else if has_word(b"SERVER_ERROR") {
        ResponseClass::ServerError
    } else {
        return None;
    };
    // The free-text message is the one place a stray CR could hide.
    Some(if line.contains(&b'\r') {
        Err(ParseError::BadLineEnding)
    } else {
        Ok(class)
    })
}
