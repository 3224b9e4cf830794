//! memcached's UDP framing: the 8-byte header in front of every datagram,
//! and the reassembly of a reply that spans several datagrams.
//!
//! The header is four big-endian `u16`s: a request id the client picks and
//! the server echoes, the datagram's sequence number, the number of
//! datagrams in the message, and a reserved 0. A request is one datagram;
//! a reply is as many as its size needs, any of which the network may
//! lose, duplicate or reorder. What is inside is the text protocol.

use crate::ParseError;

/// Bytes of the frame header.
pub const HEADER_LEN: usize = 8;

/// The most datagrams a reply may have. memcached fills each with ~1400
/// bytes, so this allows replies of ~1.4 MB; a header claiming more is
/// garbage, and refusing it bounds what [`Reassembly`] holds.
pub const MAX_DATAGRAMS: u16 = 1024;

/// A datagram's frame header (the reserved field is not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub request_id: u16,
    /// This datagram's place in its message, from 0.
    pub seq: u16,
    /// Datagrams in the message.
    pub total: u16,
}

/// Appends the header of a request: one datagram, sequence 0 of 1.
pub fn write_header(out: &mut Vec<u8>, request_id: u16) {
    out.extend_from_slice(&request_id.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
}

/// Splits a datagram into its header and payload. Shorter than a header, a
/// message of no datagrams or of more than [`MAX_DATAGRAMS`], or a
/// sequence number past the end is `BadFrame` (so no count of datagrams
/// lost can grow past what a real reply announces). The reserved field is not checked: memcached ignores it too.
///
/// One exception: memcached 1.6 sends the empty parts of a reply (each miss
/// of a multiget) as a bare header numbered 0 of 0. Such a datagram, with
/// no payload, is returned with `total` 0: a piece of nothing.
pub fn parse_header(datagram: &[u8]) -> Result<(Header, &[u8]), ParseError> {
    let Some((head, payload)) = datagram.split_first_chunk::<HEADER_LEN>() else {
        return Err(ParseError::BadFrame);
    };
    let [id0, id1, seq0, seq1, total0, total1, _, _] = *head;
    let header = Header {
        request_id: u16::from_be_bytes([id0, id1]),
        seq: u16::from_be_bytes([seq0, seq1]),
        total: u16::from_be_bytes([total0, total1]),
    };
    let empty_piece = header.total == 0 && header.seq == 0 && payload.is_empty();
    if (!empty_piece && header.seq >= header.total) || header.total > MAX_DATAGRAMS {
        return Err(ParseError::BadFrame);
    }
    Ok((header, payload))
}

/// What [`Reassembly::push`] made of a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// A new datagram of the reply; more are missing.
    Partial,
    /// The reply's last missing datagram: [`Reassembly::payload`] is ready.
    Complete,
    /// A datagram of the reply that had already arrived (the network
    /// duplicated it, or the server resent it). Ignored.
    Duplicate,
    /// A datagram of another request id — a late reply to a request given
    /// up on, or not meant for this socket. Ignored.
    Stray(u16),
}

/// Where one datagram's payload lies in the arrival buffer.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: usize,
    len: usize,
}

/// Collects the datagrams of one reply; reused across replies, it stops
/// allocating once its buffers have grown to the largest reply seen.
#[derive(Debug, Default)]
pub struct Reassembly {
    /// The reply being collected; `None` before the first [`start`](Self::start).
    request_id: Option<u16>,
    /// Datagrams in the reply, known from the first to arrive (0 before).
    total: u16,
    /// Distinct datagrams arrived.
    received: u16,
    /// Whether a datagram arrived before one of lower sequence number.
    disordered: bool,
    /// Payloads in arrival order.
    arrived: Vec<u8>,
    /// Each sequence number's payload in `arrived`, once it came.
    pieces: Vec<Option<Piece>>,
    /// The payload in sequence order, when arrival order was not.
    ordered: Vec<u8>,
}

impl Reassembly {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts collecting the reply to `request_id`, forgetting any other.
    pub fn start(&mut self, request_id: u16) {
        self.request_id = Some(request_id);
        self.total = 0;
        self.received = 0;
        self.disordered = false;
        self.arrived.clear();
        self.pieces.clear();
        self.ordered.clear();
    }

    /// Adds one datagram and says what it was. A malformed datagram, or one
    /// whose count of datagrams disagrees with the reply's first or exceeds
    /// [`MAX_DATAGRAMS`], is `BadFrame` and changes nothing, so a caller
    /// may drop it and go on.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Fed, ParseError> {
        let (header, payload) = parse_header(datagram)?;
        if self.request_id != Some(header.request_id) {
            return Ok(Fed::Stray(header.request_id));
        }
        if header.total > MAX_DATAGRAMS || (self.total != 0 && header.total != self.total) {
            return Err(ParseError::BadFrame);
        }
        if self.total == 0 {
            self.total = header.total;
            self.pieces.resize(usize::from(header.total), None);
        }
        let Some(slot) = self.pieces.get_mut(usize::from(header.seq)) else {
            return Err(ParseError::BadFrame);
        };
        if slot.is_some() {
            return Ok(Fed::Duplicate);
        }
        *slot = Some(Piece {
            start: self.arrived.len(),
            len: payload.len(),
        });
        self.arrived.extend_from_slice(payload);
        self.disordered |= header.seq != self.received;
        self.received += 1;
        if self.received < self.total {
            return Ok(Fed::Partial);
        }
        if self.disordered {
            self.put_in_order();
        }
        Ok(Fed::Complete)
    }

    /// Copies the payloads into `ordered` by sequence number.
    fn put_in_order(&mut self) {
        self.ordered.clear();
        for piece in self.pieces.iter().flatten() {
            let end = piece.start + piece.len;
            self.ordered
                .extend_from_slice(self.arrived.get(piece.start..end).unwrap_or_default());
        }
    }

    /// The reply's payload in sequence order once [`push`](Self::push)
    /// returned `Complete`; empty before.
    pub fn payload(&self) -> &[u8] {
        match (self.is_complete(), self.disordered) {
            (false, _) => &[],
            (true, false) => &self.arrived,
            (true, true) => &self.ordered,
        }
    }

    /// Whether every datagram of the current reply has arrived.
    pub fn is_complete(&self) -> bool {
        self.total != 0 && self.received == self.total
    }

    /// Whether any datagram of the current reply arrived out of order.
    pub fn disordered(&self) -> bool {
        self.disordered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(request_id: u16, seq: u16, total: u16, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for field in [request_id, seq, total, 0] {
            out.extend_from_slice(&field.to_be_bytes());
        }
        out.extend_from_slice(payload);
        out
    }

    /// `payload` cut into `total` datagrams of request 7.
    fn split(payload: &[u8], total: u16) -> Vec<Vec<u8>> {
        let size = payload.len().div_ceil(usize::from(total)).max(1);
        let mut chunks: Vec<&[u8]> = payload.chunks(size).collect();
        chunks.resize(usize::from(total), &[]);
        let seqs = 0..total;
        seqs.zip(chunks)
            .map(|(seq, c)| datagram(7, seq, total, c))
            .collect()
    }

    const REPLY: &[u8] = b"VALUE k 0 10\r\n0123456789\r\nEND\r\n";

    #[test]
    fn request_header() {
        let mut out = b"x".to_vec();
        write_header(&mut out, 0xbeef);
        assert_eq!(out, b"x\xbe\xef\x00\x00\x00\x01\x00\x00");
        write_header(&mut out, 1);
        assert_eq!(&out[9..], b"\x00\x01\x00\x00\x00\x01\x00\x00");
        let (header, payload) = parse_header(&out[9..]).unwrap();
        assert_eq!(
            header,
            Header {
                request_id: 1,
                seq: 0,
                total: 1
            }
        );
        assert_eq!(payload, b"");
    }

    #[test]
    fn parses_headers() {
        let wire = b"\x12\x34\x00\x02\x00\x03\xff\xffget k\r\n";
        let header = Header {
            request_id: 0x1234,
            seq: 2,
            total: 3,
        };
        assert_eq!(parse_header(wire), Ok((header, &b"get k\r\n"[..])));
        let bad: &[&[u8]] = &[
            b"",
            b"\x00\x01\x00\x00\x00\x01\x00",
            b"\x00\x01\x00\x00\x00\x00\x00\x00x",
            b"\x00\x01\x00\x01\x00\x00\x00\x00",
            b"\x00\x01\x00\x01\x00\x01\x00\x00",
            b"\x00\x01\xff\xff\x00\x03\x00\x00",
        ];
        for wire in bad {
            assert_eq!(parse_header(wire), Err(ParseError::BadFrame), "{wire:?}");
        }
        // What memcached 1.6.18 sent for the misses of `get a b c`.
        let empty = parse_header(&[9, 97, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(empty.0.total, 0);
        assert!(empty.1.is_empty());
    }

    #[test]
    fn in_order() {
        let mut r = Reassembly::new();
        r.start(7);
        let parts = split(REPLY, 3);
        assert_eq!(r.push(&parts[0]), Ok(Fed::Partial));
        assert_eq!(r.payload(), b"");
        assert!(!r.is_complete());
        assert_eq!(r.push(&parts[1]), Ok(Fed::Partial));
        assert_eq!(r.push(&parts[2]), Ok(Fed::Complete));
        assert_eq!(r.payload(), REPLY);
        assert!(!r.disordered());
        // One datagram is a whole reply.
        r.start(8);
        assert_eq!(r.push(&datagram(8, 0, 1, b"END\r\n")), Ok(Fed::Complete));
        assert_eq!(r.payload(), b"END\r\n");
    }

    #[test]
    fn reversed_with_duplicates_and_strays() {
        let mut r = Reassembly::new();
        r.start(7);
        let parts = split(REPLY, 4);
        assert_eq!(r.push(&parts[3]), Ok(Fed::Partial));
        // Known out of order as soon as a gap shows.
        assert!(r.disordered());
        assert_eq!(r.push(&parts[3]), Ok(Fed::Duplicate));
        assert_eq!(r.push(&datagram(6, 0, 1, b"END\r\n")), Ok(Fed::Stray(6)));
        assert_eq!(r.push(&parts[2]), Ok(Fed::Partial));
        assert_eq!(r.push(&parts[1]), Ok(Fed::Partial));
        assert_eq!(r.push(&parts[2]), Ok(Fed::Duplicate));
        assert_eq!(r.payload(), b"");
        assert_eq!(r.push(&parts[0]), Ok(Fed::Complete));
        assert_eq!(r.payload(), REPLY);
        assert!(r.disordered());
        assert_eq!(r.push(&parts[0]), Ok(Fed::Duplicate));
        assert_eq!(r.payload(), REPLY);
        // Reused: the next reply starts clean.
        r.start(7);
        assert_eq!(r.payload(), b"");
        assert!(!r.disordered());
        for part in &parts[..3] {
            assert_eq!(r.push(part), Ok(Fed::Partial));
        }
        assert_eq!(r.push(&parts[3]), Ok(Fed::Complete));
        assert_eq!(r.payload(), REPLY);
    }

    #[test]
    fn incomplete_and_inconsistent() {
        let mut r = Reassembly::new();
        // Nothing is collected before a start.
        assert_eq!(r.push(&datagram(0, 0, 1, b"x")), Ok(Fed::Stray(0)));
        r.start(7);
        let parts = split(REPLY, 3);
        assert_eq!(r.push(&parts[1]), Ok(Fed::Partial));
        assert_eq!(r.push(&datagram(7, 0, 2, b"x")), Err(ParseError::BadFrame));
        assert_eq!(r.push(&datagram(7, 0, 4, b"x")), Err(ParseError::BadFrame));
        assert_eq!(r.push(b"\x00\x07"), Err(ParseError::BadFrame));
        assert_eq!(r.push(&parts[2]), Ok(Fed::Partial));
        assert!(!r.is_complete());
        assert_eq!(r.payload(), b"");
        // Lost: the caller gives up and starts over.
        r.start(9);
        assert_eq!(r.push(&parts[0]), Ok(Fed::Stray(7)));
        let big = MAX_DATAGRAMS + 1;
        assert_eq!(r.push(&datagram(9, 0, big, b"")), Err(ParseError::BadFrame));
        // Refused as the header is read: no count of lost datagrams may
        // grow by what a hostile header announces.
        assert_eq!(
            parse_header(&datagram(9, 0, u16::MAX, b"x")),
            Err(ParseError::BadFrame)
        );
        assert_eq!(
            r.push(&datagram(9, 0, MAX_DATAGRAMS, b"")),
            Ok(Fed::Partial)
        );
    }

    #[test]
    fn no_allocation_after_warm_up() {
        let mut r = Reassembly::new();
        let parts = split(&[b'x'; 5000], 5);
        let mut capacity = None;
        for round in 0..3u16 {
            r.start(7);
            for part in parts.iter().rev() {
                r.push(part).unwrap();
            }
            assert_eq!(r.payload(), &[b'x'; 5000][..], "round {round}");
            let now = (
                r.arrived.capacity(),
                r.pieces.capacity(),
                r.ordered.capacity(),
            );
            assert_eq!(*capacity.get_or_insert(now), now);
        }
    }
}
