//! Properties of memcached UDP framing and reply reassembly.

use mcbench_proto::udp::{
    parse_header, write_header, Fed, Header, Reassembly, HEADER_LEN, MAX_DATAGRAMS,
};
use mcbench_proto::ParseError;
use proptest::prelude::*;

fn datagram(request_id: u16, seq: u16, total: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    for field in [request_id, seq, total, 0] {
        out.extend_from_slice(&field.to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

/// A reply's payload cut into datagrams of at most `size` bytes (one empty
/// datagram for an empty payload), in sequence order.
fn frames(request_id: u16, payload: &[u8], size: usize) -> Vec<Vec<u8>> {
    let chunks: Vec<&[u8]> = if payload.is_empty() {
        vec![&[]]
    } else {
        payload.chunks(size).collect()
    };
    let total = chunks.len() as u16;
    let seqs = 0..total;
    seqs.zip(chunks)
        .map(|(seq, c)| datagram(request_id, seq, total, c))
        .collect()
}

/// A reply (request id, payload, datagram size, at most 1024 datagrams)
/// and an order for its datagrams to arrive in: a permutation of their
/// indices.
fn delivery() -> impl Strategy<Value = (u16, Vec<u8>, usize, Vec<usize>)> {
    (
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..20_000),
        20usize..1400,
    )
        .prop_flat_map(|(id, payload, size)| {
            let count = payload.len().div_ceil(size).max(1);
            let order = Just((0..count).collect::<Vec<_>>()).prop_shuffle();
            (Just(id), Just(payload), Just(size), order)
        })
}

proptest! {
    /// Any arrival order, with duplicates and strays mixed in, reassembles
    /// to the original payload; `Complete` comes exactly with the last new
    /// datagram, and `disordered` says whether the order was shuffled.
    #[test]
    fn any_order_reassembles(
        (id, payload, size, order) in delivery(),
        repeats in prop::collection::vec((any::<usize>(), any::<usize>()), 0..6),
        strays in prop::collection::vec((any::<usize>(), any::<u16>()), 0..4),
    ) {
        let parts = frames(id, &payload, size);
        // (index into parts, or None for a stray with that id)
        let mut arrivals: Vec<(Option<usize>, u16)> = order.iter().map(|&i| (Some(i), id)).collect();
        for (which, at) in repeats {
            let copy = arrivals[which % arrivals.len()];
            arrivals.insert(at % (arrivals.len() + 1), copy);
        }
        for (at, other) in strays {
            let other = if other == id { other.wrapping_add(1) } else { other };
            arrivals.insert(at % (arrivals.len() + 1), (None, other));
        }
        let mut r = Reassembly::new();
        r.start(id);
        let mut seen = vec![false; parts.len()];
        let mut first_order = Vec::new();
        for (part, other) in arrivals {
            let Some(i) = part else {
                let stray = datagram(other, 0, 1, b"END\r\n");
                prop_assert_eq!(r.push(&stray), Ok(Fed::Stray(other)));
                continue;
            };
            let fed = r.push(&parts[i]).unwrap();
            if seen[i] {
                prop_assert_eq!(fed, Fed::Duplicate);
                continue;
            }
            seen[i] = true;
            first_order.push(i);
            let done = seen.iter().all(|&s| s);
            prop_assert_eq!(fed, if done { Fed::Complete } else { Fed::Partial });
            prop_assert_eq!(r.is_complete(), done);
            if !done {
                prop_assert_eq!(r.payload(), b"");
            }
        }
        prop_assert_eq!(r.payload(), &payload[..]);
        let sorted = first_order.windows(2).all(|w| w[0] < w[1]);
        prop_assert_eq!(r.disordered(), !sorted);
    }

    /// A reply missing any one datagram is never complete.
    #[test]
    fn a_lost_datagram_leaves_it_incomplete((id, payload, size, order) in delivery(), lost in any::<usize>()) {
        let parts = frames(id, &payload, size);
        let lost = order[lost % order.len()];
        let mut r = Reassembly::new();
        r.start(id);
        for &i in order.iter().filter(|&&i| i != lost) {
            prop_assert_eq!(r.push(&parts[i]), Ok(Fed::Partial));
        }
        prop_assert!(!r.is_complete());
        prop_assert_eq!(r.payload(), b"");
    }

    /// Header round trip, and the rule that makes a header valid.
    #[test]
    fn headers(id in any::<u16>(), seq in any::<u16>(), total in any::<u16>(), reserved in any::<u16>(), tail in prop::collection::vec(any::<u8>(), 0..20)) {
        let mut out = Vec::new();
        write_header(&mut out, id);
        prop_assert_eq!(out.len(), HEADER_LEN);
        prop_assert_eq!(parse_header(&out), Ok((Header { request_id: id, seq: 0, total: 1 }, &[][..])));
        let mut wire = datagram(id, seq, total, &tail);
        wire[6..8].copy_from_slice(&reserved.to_be_bytes());
        let got = parse_header(&wire);
        let empty_piece = total == 0 && seq == 0 && tail.is_empty();
        if (!empty_piece && seq >= total) || total > MAX_DATAGRAMS {
            prop_assert_eq!(got, Err(ParseError::BadFrame));
        } else {
            prop_assert_eq!(got, Ok((Header { request_id: id, seq, total }, &tail[..])));
        }
    }

    /// Arbitrary datagrams, and headers with arbitrary fields, never panic;
    /// a reply reported complete has a payload no larger than what came.
    #[test]
    fn arbitrary_datagrams_are_safe(
        id in 0u16..4,
        datagrams in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64),
                (0u16..4, 0u16..6, 0u16..6, prop::collection::vec(any::<u8>(), 0..64))
                    .prop_map(|(i, s, t, p)| datagram(i, s, t, &p)),
                (0u16..4, any::<u16>(), any::<u16>()).prop_map(|(i, s, t)| datagram(i, s, t, b"x")),
            ],
            0..40,
        ),
    ) {
        let mut r = Reassembly::new();
        r.start(id);
        let mut bytes = 0;
        for d in &datagrams {
            match r.push(d) {
                Ok(Fed::Complete) => prop_assert!(r.is_complete()),
                Ok(Fed::Stray(other)) => prop_assert_ne!(other, id),
                Ok(_) => {}
                Err(e) => prop_assert_eq!(e, ParseError::BadFrame),
            }
            bytes += d.len().saturating_sub(HEADER_LEN);
            prop_assert!(r.payload().len() <= bytes);
        }
    }
}
