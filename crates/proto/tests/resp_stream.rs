//! Properties of the RESP parser over whole reply streams.

use mcbench_proto::resp::parse;
use mcbench_proto::{Cmd, Expect, ParseError, Progress, Response, ResponseClass};
use proptest::prelude::*;

type Parsed = Result<Option<(Response, usize)>, ParseError>;

fn expect(cmd: Cmd, keys: u32) -> Expect {
    Expect {
        cmd,
        keys,
        noreply: false,
        unfenced: false,
        opaque: 0,
        max_value: u32::MAX,
        hash: false,
    }
}

fn fresh(buf: &[u8], exp: Expect) -> Parsed {
    parse(buf, &mut Progress::default(), exp)
}

fn bulk(data: &[u8]) -> Vec<u8> {
    let mut wire = format!("${}\r\n", data.len()).into_bytes();
    wire.extend_from_slice(data);
    wire.extend_from_slice(b"\r\n");
    wire
}

/// One reply: its bytes, the request it answers, what it must parse to.
type Reply = (Vec<u8>, Expect, Response);

/// Bytes of a bulk string, with the bytes RESP framing uses over-weighted.
fn data(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![any::<u8>(), prop::sample::select(b"\r\n$*:+-".to_vec())];
    prop::collection::vec(byte, 0..max)
}

/// Free text without CR or LF, as in a simple string or error.
fn text() -> impl Strategy<Value = String> {
    "[ -~]{0,40}"
}

fn reply() -> impl Strategy<Value = Reply> {
    use ResponseClass::*;
    let of = Response::of;
    let stored = prop::sample::select(vec![Cmd::Set, Cmd::Add, Cmd::Replace]);
    let any_cmd = prop::sample::select(vec![Cmd::Get, Cmd::Set, Cmd::Delete, Cmd::Incr]);
    prop_oneof![
        data(300).prop_map(|v| (bulk(&v), expect(Cmd::Get, 1), Response::hits(1, 0))),
        Just((
            b"$-1\r\n".to_vec(),
            expect(Cmd::Get, 1),
            Response::hits(0, 0)
        )),
        // MGET: one key is a GET instead.
        prop::collection::vec(prop::option::of(data(80)), 2..40).prop_map(|values| {
            let mut wire = format!("*{}\r\n", values.len()).into_bytes();
            for v in &values {
                wire.extend(v.as_deref().map_or(b"$-1\r\n".to_vec(), bulk));
            }
            let hits = values.iter().flatten().count() as u32;
            let exp = expect(Cmd::Get, values.len() as u32);
            (wire, exp, Response::hits(hits, 0))
        }),
        Just((
            b"*0\r\n".to_vec(),
            expect(Cmd::Get, 0),
            Response::hits(0, 0)
        )),
        stored.prop_map(move |c| (b"+OK\r\n".to_vec(), expect(c, 1), of(Stored))),
        prop::bool::ANY.prop_map(move |nx| {
            let cmd = if nx { Cmd::Add } else { Cmd::Replace };
            (b"$-1\r\n".to_vec(), expect(cmd, 1), of(NotStored))
        }),
        (0i64..3).prop_map(move |n| {
            let class = if n > 0 { Deleted } else { NotFound };
            (
                format!(":{n}\r\n").into_bytes(),
                expect(Cmd::Delete, 1),
                of(class),
            )
        }),
        (any::<i64>(), any::<bool>()).prop_map(move |(n, up)| {
            let cmd = if up { Cmd::Incr } else { Cmd::Decr };
            (format!(":{n}\r\n").into_bytes(), expect(cmd, 1), of(Num))
        }),
        (0i64..1 << 40).prop_map(move |n| {
            (
                format!(":{n}\r\n").into_bytes(),
                expect(Cmd::Append, 1),
                of(Stored),
            )
        }),
        (any_cmd, text(), any::<bool>()).prop_map(move |(cmd, msg, auth)| {
            let (word, class) = if auth {
                ("NOAUTH", AuthError)
            } else {
                ("ERR", RespError)
            };
            let wire = format!("-{word} {msg}\r\n").into_bytes();
            (wire, expect(cmd, 1), of(class))
        }),
    ]
}

fn stream() -> impl Strategy<Value = (Vec<u8>, Vec<Expect>, Vec<Response>)> {
    prop::collection::vec(reply(), 1..20).prop_map(|replies| {
        let mut wire = Vec::new();
        let (mut exps, mut resps) = (Vec::new(), Vec::new());
        for (w, e, r) in replies {
            wire.extend_from_slice(&w);
            exps.push(e);
            resps.push(r);
        }
        (wire, exps, resps)
    })
}

/// Feeds `wire` in chunks cut at `cuts`, the way reads would deliver it,
/// parsing with a buffer that keeps only the unparsed tail, and checks at
/// every step that a resumed parse agrees with one from the start.
fn parse_chunked(wire: &[u8], exps: &[Expect], cuts: &[usize]) -> Vec<Response> {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    bounds.push(wire.len());
    bounds.sort_unstable();
    let (mut pending, mut out) = (Vec::new(), Vec::new());
    let mut start = 0;
    let mut progress = Progress::default();
    for end in bounds {
        pending.extend_from_slice(&wire[start..end]);
        start = end;
        let mut used = 0;
        while let Some(&exp) = exps.get(out.len()) {
            let resumed = parse(&pending[used..], &mut progress, exp);
            assert_eq!(fresh(&pending[used..], exp), resumed);
            let Some((resp, n)) = resumed.expect("valid stream") else {
                break;
            };
            out.push(resp);
            used += n;
        }
        pending.drain(..used);
    }
    assert!(pending.is_empty(), "bytes left over");
    out
}

/// Any well-formed RESP2 value, nested at most `depth` arrays deep.
fn value(depth: u32) -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        text().prop_map(|t| format!("+{t}\r\n").into_bytes()),
        text().prop_map(|t| format!("-{t}\r\n").into_bytes()),
        any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
        data(100).prop_map(|v| bulk(&v)),
        Just(b"$-1\r\n".to_vec()),
        Just(b"*-1\r\n".to_vec()),
    ];
    leaf.prop_recursive(depth, 64, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|items| {
            let mut wire = format!("*{}\r\n", items.len()).into_bytes();
            wire.extend(items.concat());
            wire
        })
    })
}

/// Every command the parser may be asked about, a multiget among them.
fn any_expect() -> impl Strategy<Value = Expect> {
    (prop::sample::select(Cmd::ALL.to_vec()), 0u32..4).prop_map(|(c, k)| expect(c, k))
}

/// Parses replies off the front of `buf` until one is incomplete or bad;
/// each success must consume bytes, so this cannot spin.
fn drain(buf: &[u8], exps: impl Iterator<Item = Expect>) -> Result<usize, ParseError> {
    let mut pos = 0;
    for exp in exps {
        match fresh(&buf[pos..], exp)? {
            Some((_, used)) => {
                assert!(used > 0 && pos + used <= buf.len());
                pos += used;
            }
            None => break,
        }
    }
    Ok(pos)
}

proptest! {
    #[test]
    fn any_split_parses_the_same(
        (wire, exps, resps) in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        prop_assert_eq!(parse_chunked(&wire, &exps, &cuts), resps);
    }

    /// A well-formed value of any shape is incomplete up to its last byte
    /// and whole at it, read in any pieces; one that cannot answer a SET is
    /// `UnexpectedReply`, never a framing error.
    #[test]
    fn generic_values_parse_whole(wire in value(7), cuts in prop::collection::vec(any::<usize>(), 0..10)) {
        let exp = expect(Cmd::Set, 1);
        let whole = fresh(&wire, exp);
        match &whole {
            Ok(Some((_, used))) => prop_assert_eq!(*used, wire.len()),
            other => prop_assert_eq!(other, &Err(ParseError::UnexpectedReply)),
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % wire.len()).collect();
        cuts.sort_unstable();
        let mut progress = Progress::default();
        for cut in cuts {
            prop_assert_eq!(parse(&wire[..cut], &mut progress, exp), Ok(None));
        }
        prop_assert_eq!(parse(&wire, &mut progress, exp), whole);
        prop_assert_eq!(progress, Progress::default());
    }

    /// Nesting deeper than 8 arrays is refused wherever it is.
    #[test]
    fn deep_nesting_is_refused(depth in 1usize..20, cmd in prop::sample::select(Cmd::ALL.to_vec())) {
        let mut wire = b"*1\r\n".repeat(depth);
        wire.extend_from_slice(b"$-1\r\n");
        let exp = expect(cmd, 1);
        let got = fresh(&wire, exp);
        if depth > 8 {
            prop_assert_eq!(got, Err(ParseError::BadFrame));
        } else {
            prop_assert!(matches!(got, Err(ParseError::UnexpectedReply) | Ok(Some(_))));
        }
    }

    /// Lengths and counts of any size are judged, never trusted.
    #[test]
    fn numbers_of_any_size(kind in prop::sample::select(b"$*:".to_vec()), n in any::<i128>(), exp in any_expect()) {
        let wire = format!("{}{n}\r\n", kind as char).into_bytes();
        let got = fresh(&wire, exp);
        let fits = i64::try_from(n).is_ok();
        match kind {
            b'$' if !(-1..=512 << 20).contains(&n) => prop_assert_eq!(got, Err(ParseError::BadNumber)),
            b'*' if n < -1 || !fits => prop_assert_eq!(got, Err(ParseError::BadNumber)),
            b'*' if n > 1 << 20 => prop_assert_eq!(got, Err(ParseError::BadFrame)),
            b':' if !fits => prop_assert_eq!(got, Err(ParseError::BadNumber)),
            _ => prop_assert!(!matches!(got, Err(ParseError::BadNumber | ParseError::BadFrame))),
        }
    }

    /// Arbitrary bytes never panic, whatever the request in front.
    #[test]
    fn arbitrary_bytes_are_safe(bytes in prop::collection::vec(any::<u8>(), 0..4096), exps in prop::collection::vec(any_expect(), 1..8)) {
        let _ = drain(&bytes, exps.into_iter());
    }

    /// Near-valid input: a valid stream with bytes changed, cut short, or
    /// fed piecewise with a saved `Progress`.
    #[test]
    fn mutated_streams_are_safe(
        (wire, exps, _) in stream(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
        step in 1usize..300,
    ) {
        let mut wire = wire;
        for (at, b) in flips {
            let i = at % wire.len();
            wire[i] = b;
        }
        wire.truncate(cut % (wire.len() + 1));
        let _ = drain(&wire, exps.iter().copied());
        let mut progress = Progress::default();
        let mut start = 0;
        for end in (0..=wire.len()).step_by(step).chain([wire.len()]) {
            match exps.first().map(|&e| parse(&wire[start..end], &mut progress, e)) {
                Some(Ok(Some((_, used)))) => start += used,
                Some(Ok(None)) => {}
                _ => break,
            }
        }
    }

    /// Long lines: refused once 64 KiB pass without a CRLF, not before.
    #[test]
    fn long_lines(len in 65_000usize..66_000, kind in prop::sample::select(b"+-:$*".to_vec()), exp in any_expect()) {
        let mut wire = vec![b'7'; len];
        wire[0] = kind;
        let got = fresh(&wire, exp);
        if len >= 64 * 1024 {
            prop_assert_eq!(got, Err(ParseError::LineTooLong));
        } else {
            prop_assert_eq!(got, Ok(None));
        }
    }
}
