//! Properties of the ASCII parser over whole response streams.

use mcbench_proto::ascii::{parse_response, parse_response_from};
use mcbench_proto::Progress;
use mcbench_proto::{Response, ResponseClass};
use proptest::prelude::*;

/// A response stream and what parsing it must yield.
fn stream() -> impl Strategy<Value = (Vec<u8>, Vec<Response>)> {
    let one = prop_oneof![
        Just((b"STORED\r\n".to_vec(), Response::of(ResponseClass::Stored))),
        Just((b"END\r\n".to_vec(), Response::of(ResponseClass::End))),
        Just((
            b"NOT_FOUND\r\n".to_vec(),
            Response::of(ResponseClass::NotFound)
        )),
        Just((
            b"SERVER_ERROR busy\r\n".to_vec(),
            Response::of(ResponseClass::ServerError)
        )),
        (0u64..1_000_000).prop_map(|n| (
            format!("{n}\r\n").into_bytes(),
            Response::of(ResponseClass::Num)
        )),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..5).prop_map(
            |values| {
                let mut wire = Vec::new();
                for (i, v) in values.iter().enumerate() {
                    wire.extend_from_slice(format!("VALUE key{i} 0 {}\r\n", v.len()).as_bytes());
                    wire.extend_from_slice(v);
                    wire.extend_from_slice(b"\r\n");
                }
                wire.extend_from_slice(b"END\r\n");
                let n = values.len() as u32;
                (wire, Response::hits(n, 0))
            }
        ),
    ];
    prop::collection::vec(one, 1..20).prop_map(|parts| {
        let mut wire = Vec::new();
        let mut expect = Vec::new();
        for (w, r) in parts {
            wire.extend_from_slice(&w);
            expect.push(r);
        }
        (wire, expect)
    })
}

/// Feeds `wire` in chunks cut at `cuts`, the way reads would deliver it, and
/// parses with a buffer that keeps only the unparsed tail.
fn parse_chunked(wire: &[u8], cuts: &[usize]) -> Vec<Response> {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    bounds.push(wire.len());
    bounds.sort_unstable();
    let mut pending = Vec::new();
    let mut out = Vec::new();
    let mut start = 0;
    let mut progress = Progress::default();
    for end in bounds {
        pending.extend_from_slice(&wire[start..end]);
        start = end;
        let mut used = 0;
        loop {
            // Resumed parsing must agree with parsing from the start.
            let fresh = parse_response(&pending[used..]).expect("valid stream");
            let resumed =
                parse_response_from(&pending[used..], &mut progress).expect("valid stream");
            assert_eq!(fresh, resumed);
            let Some((resp, n)) = resumed else { break };
            out.push(resp);
            used += n;
        }
        pending.drain(..used);
    }
    assert!(pending.is_empty(), "bytes left over");
    out
}

proptest! {
    #[test]
    fn any_split_parses_the_same((wire, expect) in stream(), cuts in prop::collection::vec(any::<usize>(), 0..30)) {
        prop_assert_eq!(parse_chunked(&wire, &cuts), expect);
    }

    /// Arbitrary bytes never panic, and a success never claims more bytes
    /// than the buffer holds.
    #[test]
    fn arbitrary_bytes_are_safe(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        if let Ok(Some((_, used))) = parse_response(&bytes) {
            prop_assert!(used > 0 && used <= bytes.len());
        }
    }

    /// Near-valid input: a valid stream with bytes flipped or cut.
    #[test]
    fn mutated_streams_are_safe((wire, _) in stream(), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut wire = wire;
        for (at, b) in flips {
            let i = at % wire.len();
            wire[i] = b;
        }
        let mut pos = 0;
        while let Ok(Some((_, used))) = parse_response(&wire[pos..]) {
            prop_assert!(used > 0);
            pos += used;
        }
        prop_assert!(pos <= wire.len());
    }
}

#[test]
fn a_reply_that_cannot_answer_its_request_is_refused() {
    use mcbench_proto::{Cmd, ParseError, Progress, Protocol, Request};
    let parse = |cmd: Cmd, wire: &[u8]| {
        let expect = Request::new(cmd, b"k").expect();
        Protocol::Ascii.parse(wire, &mut Progress::default(), expect, &[])
    };
    assert_eq!(
        parse(Cmd::Get, b"STORED\r\n"),
        Err(ParseError::UnexpectedReply)
    );
    assert_eq!(
        parse(Cmd::Set, b"END\r\n"),
        Err(ParseError::UnexpectedReply)
    );
    assert_eq!(
        parse(Cmd::Incr, b"DELETED\r\n"),
        Err(ParseError::UnexpectedReply)
    );
    // Errors answer anything; the right replies parse.
    assert!(parse(Cmd::Get, b"SERVER_ERROR busy\r\n").unwrap().is_some());
    assert!(parse(Cmd::Set, b"NOT_STORED\r\n").unwrap().is_some());
    assert!(parse(Cmd::Incr, b"42\r\n").unwrap().is_some());
}
