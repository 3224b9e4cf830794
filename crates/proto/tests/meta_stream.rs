//! Properties of the meta parser over whole response streams.

use mcbench_proto::meta::parse;
use mcbench_proto::{Cmd, Expect, ParseError, Progress, Response, ResponseClass};
use proptest::prelude::*;

/// One reply on the wire, the request it answers, and what it parses to.
type Part = (Vec<u8>, Expect, Response);

fn expect(cmd: Cmd, keys: u32, noreply: bool, opaque: u32) -> Expect {
    Expect {
        cmd,
        keys,
        noreply,
        unfenced: false,
        opaque,
        max_value: u32::MAX,
        hash: false,
    }
}

/// ` O<opaque>` when the request carried one.
fn opaque_flag(opaque: u32) -> String {
    if opaque == 0 {
        String::new()
    } else {
        format!(" O{opaque}")
    }
}

/// A `VA` block with return flags around an optional cas.
fn value_block(data: &[u8], cas: Option<u64>, opaque: u32) -> Vec<u8> {
    let mut wire = format!("VA {} f0", data.len());
    if let Some(cas) = cas {
        wire += &format!(" c{cas}");
    }
    wire += &opaque_flag(opaque);
    wire += " t-1\r\n";
    let mut wire = wire.into_bytes();
    wire.extend_from_slice(data);
    wire.extend_from_slice(b"\r\n");
    wire
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..300)
}

fn opaque() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), any::<u32>()]
}

/// A single retrieval: a hit (`gets` returns its cas) or a miss.
fn single_get() -> impl Strategy<Value = Part> {
    (data(), any::<u64>(), opaque(), any::<bool>(), any::<bool>()).prop_map(
        |(data, cas, opaque, with_cas, hit)| {
            let cmd = if with_cas { Cmd::Gets } else { Cmd::Get };
            let e = expect(cmd, 1, false, opaque);
            if !hit {
                let wire = format!("EN{}\r\n", opaque_flag(opaque)).into_bytes();
                return (wire, e, Response::hits(0, 0));
            }
            let cas = with_cas.then_some(cas);
            let resp = Response::hits(1, cas.unwrap_or(0));
            (value_block(&data, cas, opaque), e, resp)
        },
    )
}

/// A multiget (or quiet single get): hits, stray misses and maybe an error,
/// then `MN`.
fn multiget() -> impl Strategy<Value = Part> {
    let item = prop_oneof![
        3 => (data(), any::<u64>()).prop_map(|(d, c)| (Some(d), c, false)),
        1 => Just((None, 0, false)),
        1 => Just((None, 0, true)),
    ];
    // Each item answers one key: a multiget asked at least as many.
    (prop::collection::vec(item, 0..6), opaque(), 0u32..3).prop_map(|(items, opaque, more)| {
        let keys = items.len() as u32 + more;
        let e = expect(Cmd::Gats, keys, keys == 1, opaque);
        let mut wire = Vec::new();
        let (mut hits, mut last, mut error) = (0, 0, None);
        for (value, cas, is_error) in items {
            match value {
                Some(d) => {
                    wire.extend_from_slice(&value_block(&d, Some(cas), opaque));
                    hits += 1;
                    last = cas;
                }
                None if is_error => {
                    wire.extend_from_slice(b"CLIENT_ERROR bad command line format\r\n");
                    error.get_or_insert(ResponseClass::ClientError);
                }
                None => wire.extend_from_slice(format!("EN{}\r\n", opaque_flag(opaque)).as_bytes()),
            }
        }
        wire.extend_from_slice(b"MN\r\n");
        let resp = error.map_or(Response::hits(hits, last), Response::of);
        (wire, e, resp)
    })
}

/// A one-line reply to a non-retrieval, loud or quiet.
fn status() -> impl Strategy<Value = Part> {
    use ResponseClass::*;
    let cases: Vec<(Cmd, &str, ResponseClass, ResponseClass)> = vec![
        // (command, code, its class loud, the class when quiet)
        (Cmd::Set, "HD", Stored, Stored),
        (Cmd::Add, "NS", NotStored, NotStored),
        (Cmd::Cas, "EX", Exists, Exists),
        (Cmd::Cas, "NF", NotFound, NotFound),
        (Cmd::Touch, "HD", Touched, Touched),
        (Cmd::Touch, "EN", NotFound, NotFound),
        (Cmd::Incr, "HD", Num, Num),
        (Cmd::Decr, "NF", NotFound, NotFound),
        (Cmd::Delete, "HD", Deleted, Deleted),
        (Cmd::Delete, "NF", NotFound, NotFound),
        (Cmd::Noop, "MN", End, End),
    ];
    (prop::sample::select(cases), opaque(), any::<bool>()).prop_map(
        |((cmd, code, loud, silent), opaque, noreply)| {
            let fenced = noreply && cmd != Cmd::Noop;
            let e = expect(cmd, 1, noreply, opaque);
            // Quiet: q hides mg's miss and the others' success.
            let hidden = code == if cmd == Cmd::Touch { "EN" } else { "HD" };
            let mut wire = Vec::new();
            if !(fenced && hidden) {
                wire.extend_from_slice(format!("{code}{}\r\n", opaque_flag(opaque)).as_bytes());
            }
            if fenced {
                wire.extend_from_slice(b"MN\r\n");
            }
            let class = if fenced { silent } else { loud };
            (wire, e, Response::of(class))
        },
    )
}

/// `ma ... v`: the new number as a value block.
fn arith_value() -> impl Strategy<Value = Part> {
    any::<u64>().prop_map(|n| {
        let digits = n.to_string();
        let wire = format!("VA {}\r\n{digits}\r\n", digits.len()).into_bytes();
        (
            wire,
            expect(Cmd::Incr, 1, false, 0),
            Response::of(ResponseClass::Num),
        )
    })
}

/// An error line answering any command.
fn error() -> impl Strategy<Value = Part> {
    let lines = prop::sample::select(vec![
        ("ERROR", ResponseClass::Error),
        ("CLIENT_ERROR unauthenticated", ResponseClass::AuthError),
        ("SERVER_ERROR out of memory", ResponseClass::ServerError),
    ]);
    (lines, prop::sample::select(Cmd::ALL.to_vec())).prop_map(|((line, class), cmd)| {
        let wire = format!("{line}\r\n").into_bytes();
        (wire, expect(cmd, 1, false, 0), Response::of(class))
    })
}

/// A response stream, the requests it answers, and what parsing must yield.
fn stream() -> impl Strategy<Value = (Vec<u8>, Vec<Expect>, Vec<Response>)> {
    let part = prop_oneof![single_get(), multiget(), status(), arith_value(), error()];
    prop::collection::vec(part, 1..20).prop_map(|parts| {
        let mut wire = Vec::new();
        let (mut expects, mut resps) = (Vec::new(), Vec::new());
        for (w, e, r) in parts {
            wire.extend_from_slice(&w);
            expects.push(e);
            resps.push(r);
        }
        (wire, expects, resps)
    })
}

/// Any request the parser may be asked about.
fn any_expect() -> impl Strategy<Value = Expect> {
    (
        prop::sample::select(Cmd::ALL.to_vec()),
        0u32..4,
        any::<bool>(),
        opaque(),
    )
        .prop_map(|(cmd, keys, noreply, opaque)| expect(cmd, keys, noreply, opaque))
}

/// Feeds `wire` in chunks cut at `cuts`, as reads would deliver it, keeping
/// only the unparsed tail and resuming with a `Progress`. Every resumed
/// result must equal a parse from scratch. Returns the responses and the
/// first error, if any.
fn parse_chunked(
    wire: &[u8],
    expects: &[Expect],
    cuts: &[usize],
) -> (Vec<Response>, Option<ParseError>) {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    bounds.push(wire.len());
    bounds.sort_unstable();
    let (mut pending, mut out) = (Vec::new(), Vec::new());
    let (mut start, mut progress) = (0, Progress::default());
    for end in bounds {
        pending.extend_from_slice(&wire[start..end]);
        start = end;
        let mut used = 0;
        while let Some(&e) = expects.get(out.len()) {
            let fresh = parse(&pending[used..], &mut Progress::default(), e, &[]);
            let resumed = parse(&pending[used..], &mut progress, e, &[]);
            assert_eq!(fresh, resumed);
            match resumed {
                Ok(Some((resp, n))) => {
                    assert!(n > 0 && n <= pending.len() - used);
                    out.push(resp);
                    used += n;
                }
                Ok(None) => break,
                Err(err) => return (out, Some(err)),
            }
        }
        pending.drain(..used);
    }
    (out, None)
}

/// Parses responses off the front of `wire` until one is incomplete or
/// bad, checking that each success consumes bytes that are there.
fn parse_sequentially(wire: &[u8], expects: &[Expect]) -> Result<(), TestCaseError> {
    let mut pos = 0;
    for e in expects.iter().cycle().take(wire.len() + 1) {
        let mut progress = Progress::default();
        match parse(&wire[pos..], &mut progress, *e, &[]) {
            Ok(Some((_, used))) => {
                prop_assert!(used > 0 && used <= wire.len() - pos);
                pos += used;
            }
            Ok(None) => {
                // Resuming on the same bytes must wait again, not fail.
                let again = parse(&wire[pos..], &mut progress, *e, &[]);
                prop_assert_eq!(again, Ok(None));
                break;
            }
            Err(_) => {
                prop_assert_eq!(progress, Progress::default());
                break;
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn any_split_parses_the_same(
        (wire, expects, resps) in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let (got, err) = parse_chunked(&wire, &expects, &cuts);
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, resps);
    }

    /// Arbitrary bytes, for any request, never panic; a success takes
    /// bytes that are there, chunked or not.
    #[test]
    fn arbitrary_bytes_are_safe(
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
        expects in prop::collection::vec(any_expect(), 1..4),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        parse_sequentially(&bytes, &expects)?;
        parse_chunked(&bytes, &expects, &cuts);
    }

    /// Near-valid input: bytes that look like replies, in any order.
    #[test]
    fn reply_shaped_bytes_are_safe(
        pieces in prop::collection::vec(prop::sample::select(vec![
            "VA ", "HD", "EN", "NS", "EX", "NF", "MN", " c", " O1", " f0", "1", "12",
            " ", "\r\n", "\r", "\n", "x", "ERROR", "CLIENT_ERROR ",
        ]), 0..60),
        expects in prop::collection::vec(any_expect(), 1..4),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes = pieces.concat().into_bytes();
        parse_sequentially(&bytes, &expects)?;
        parse_chunked(&bytes, &expects, &cuts);
    }

    /// A valid stream with bytes flipped, then cut short.
    #[test]
    fn mutated_streams_are_safe(
        (wire, expects, _) in stream(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        keep in any::<usize>(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut wire = wire;
        for (at, b) in flips {
            let i = at % wire.len();
            wire[i] = b;
        }
        wire.truncate(keep % (wire.len() + 1));
        parse_sequentially(&wire, &expects)?;
        parse_chunked(&wire, &expects, &cuts);
    }

    /// Truncated streams only ever wait for more: never an error, never a
    /// response the full stream does not have.
    #[test]
    fn truncated_streams_wait(
        (wire, expects, resps) in stream(),
        keep in any::<usize>(),
    ) {
        let cut = &wire[..keep % (wire.len() + 1)];
        let (got, err) = parse_chunked(cut, &expects, &[]);
        prop_assert_eq!(err, None);
        prop_assert!(got.len() <= resps.len());
        prop_assert_eq!(&got[..], &resps[..got.len()]);
    }

    /// Oversized frames: huge or overflowing data lengths, lines past the
    /// limit. They fail or wait; they never panic or allocate by length.
    #[test]
    fn oversized_frames_are_safe(
        len in prop_oneof![
            Just(u64::MAX), Just(1u64 << 30), Just((1u64 << 30) + 1), any::<u64>()
        ],
        pad in 2000usize..2100,
        e in any_expect(),
    ) {
        let header = format!("VA {len} f0\r\nabc\r\n").into_bytes();
        let mut progress = Progress::default();
        match parse(&header, &mut progress, e, &[]) {
            Ok(Some((_, used))) => prop_assert!(used <= header.len()),
            // Waiting for the data block (a fenced reply also for MN).
            Ok(None) => prop_assert!(len >= 3),
            Err(err) => prop_assert!(
                len > (1 << 30) || matches!(err, ParseError::UnexpectedReply
                    | ParseError::BadValueTerminator)
            ),
        }
        let mut line = b"HD ".to_vec();
        line.resize(pad, b'k');
        line.extend_from_slice(b"\r\n");
        let result = parse(&line, &mut Progress::default(), e, &[]);
        if line.len() > mcbench_proto::ascii::MAX_LINE {
            prop_assert_eq!(result, Err(ParseError::LineTooLong));
        }
    }
}
