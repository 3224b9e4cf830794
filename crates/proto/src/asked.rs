//! The keys a request asked for, against the keys its reply names.
//!
//! memcached answers a multiget's hits in the order of its keys, each once
//! per time it was asked (`get a b a` may answer `a`, `b`, `a`); misses are
//! left out. So each key a reply names must be found in what is left of
//! the request's keys after the one the last value matched: a key not
//! asked for, asked for fewer times, or out of order is another request's
//! answer, and the stream is out of step.

use crate::ParseError;

/// Finds `key` among `asked` (the request's keys as it sent them, separated
/// by single spaces: [`crate::Request::keys`]) at or after byte `from`.
/// Returns the byte after the match, where the next key's search starts.
/// An empty `asked` means the caller did not say: every key passes.
pub(crate) fn next_match(asked: &[u8], from: usize, key: &[u8]) -> Result<usize, ParseError> {
    if asked.is_empty() {
        return Ok(from);
    }
    let mut start = from.min(asked.len());
    while start < asked.len() {
        let end = memchr::memchr(b' ', &asked[start..]).map_or(asked.len(), |i| start + i);
        if &asked[start..end] == key {
            return Ok(end + 1);
        }
        start = end + 1;
    }
    Err(ParseError::KeyMismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_in_order_each_once_per_time_asked() {
        let asked = b"a bb a c";
        let mut at = 0;
        for key in [&b"a"[..], b"a", b"c"] {
            at = next_match(asked, at, key).unwrap();
        }
        assert_eq!(at, asked.len() + 1);
        // Out of order, a third `a`, a key never asked, a prefix of one.
        let after_bb = next_match(asked, 0, b"bb").unwrap();
        assert_eq!(
            next_match(asked, after_bb, b"bb"),
            Err(ParseError::KeyMismatch)
        );
        assert_eq!(next_match(asked, after_bb, b"c").map(|_| ()), Ok(()));
        let after_c = next_match(asked, 0, b"c").unwrap();
        assert_eq!(
            next_match(asked, after_c, b"a"),
            Err(ParseError::KeyMismatch)
        );
        assert_eq!(next_match(asked, 0, b"z"), Err(ParseError::KeyMismatch));
        assert_eq!(next_match(asked, 0, b"b"), Err(ParseError::KeyMismatch));
        // Unchecked when the request's keys are not given.
        assert_eq!(next_match(b"", 0, b"anything"), Ok(0));
    }
}
