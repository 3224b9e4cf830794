//! The data of the first value in a complete retrieval reply, for callers
//! that check what a server returned (memaslap's `--verify`).
//!
//! Takes a reply `Protocol::parse` has already accepted whole, so it only
//! locates the value: a reply it cannot locate one in is `None`, never a
//! panic.

use crate::Protocol;

impl Protocol {
    /// The first value's data in `reply`, a complete retrieval reply as
    /// `parse` measured it; `None` for a miss or a reply without a value.
    pub fn first_value(self, reply: &[u8]) -> Option<&[u8]> {
        match self {
            // VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n
            Protocol::Ascii => after_header(reply, b"VALUE ", 2),
            // VA <size> <flags>*\r\n<data>\r\n
            Protocol::Meta => after_header(reply, b"VA ", 0),
            // $<size>\r\n<data>\r\n
            Protocol::Resp => after_header(reply, b"$", 0),
            Protocol::Binary => binary_value(reply),
        }
    }
}

/// The data after a text header line that starts with `tag` and gives the
/// data's length as its field `field` (0-based, after the tag).
fn after_header<'a>(reply: &'a [u8], tag: &[u8], field: usize) -> Option<&'a [u8]> {
    let rest = reply.strip_prefix(tag)?;
    let eol = rest.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&rest[..eol]).ok()?;
    let len: usize = line.split(' ').nth(field)?.parse().ok()?;
    let start = tag.len() + eol + 2;
    reply.get(start..start.checked_add(len)?)
}

/// A binary response frame: 24-byte header, then extras, key and value.
fn binary_value(reply: &[u8]) -> Option<&[u8]> {
    let header = reply.get(..24)?;
    let status = u16::from_be_bytes([header[6], header[7]]);
    if status != 0 {
        return None;
    }
    let key_len = usize::from(u16::from_be_bytes([header[2], header[3]]));
    let extras = usize::from(header[4]);
    let body = u32::from_be_bytes([header[8], header[9], header[10], header[11]]) as usize;
    let start = 24 + extras + key_len;
    reply.get(start..24usize.checked_add(body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_values_are_found_in_every_protocol() {
        let ascii = b"VALUE k 0 5 99\r\nhello\r\nEND\r\n";
        assert_eq!(Protocol::Ascii.first_value(ascii), Some(&b"hello"[..]));
        assert_eq!(Protocol::Ascii.first_value(b"END\r\n"), None);
        assert_eq!(
            Protocol::Meta.first_value(b"VA 3 c1\r\nabc\r\n"),
            Some(&b"abc"[..])
        );
        assert_eq!(Protocol::Meta.first_value(b"EN\r\n"), None);
        assert_eq!(
            Protocol::Resp.first_value(b"$2\r\nhi\r\n"),
            Some(&b"hi"[..])
        );
        assert_eq!(Protocol::Resp.first_value(b"$-1\r\n"), None);
        let mut frame = vec![0x81, 0x00, 0, 0, 4, 0, 0, 0, 0, 0, 0, 7];
        frame.extend_from_slice(&[0; 12]);
        frame.extend_from_slice(&[0, 0, 0, 0]); // flags
        frame.extend_from_slice(b"abc");
        assert_eq!(Protocol::Binary.first_value(&frame), Some(&b"abc"[..]));
        frame[7] = 1; // not found
        assert_eq!(Protocol::Binary.first_value(&frame), None);
        // A header claiming more than the reply holds: no value, no panic.
        assert_eq!(Protocol::Ascii.first_value(b"VALUE k 0 50\r\nab\r\n"), None);
    }
}
