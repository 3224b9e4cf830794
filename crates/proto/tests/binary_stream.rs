//! Properties of the binary parser over whole reply streams, and, when a
//! server is named in the environment, a check of every request against a
//! real memcached:
//!
//! - `MCBENCH_TEST_MEMCACHED=127.0.0.1:11211` — a memcached without SASL;
//! - `MCBENCH_TEST_MEMCACHED_SASL="127.0.0.1:11212 user password"` — one
//!   started with `-S` that knows `user`.
//!
//! Without them the live tests pass without doing anything.

use mcbench_proto::binary;
use mcbench_proto::{Cmd, Expect, ParseError, Progress, Request, Response, ResponseClass};
use proptest::prelude::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A reply frame, built field by field.
fn frame(
    op: u8,
    status: u16,
    opaque: u32,
    cas: u64,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
) -> Vec<u8> {
    let body = extras.len() + key.len() + value.len();
    let mut out = vec![0x81, op];
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(&[extras.len() as u8, 0]);
    out.extend_from_slice(&status.to_be_bytes());
    out.extend_from_slice(&(body as u32).to_be_bytes());
    out.extend_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&cas.to_be_bytes());
    for part in [extras, key, value] {
        out.extend_from_slice(part);
    }
    out
}

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

const NOOP: u8 = 0x0a;

/// One reply: what it answers, its bytes, and what parsing must yield.
type Reply = (Expect, Vec<u8>, Response);

fn reply() -> impl Strategy<Value = Reply> {
    let value = || prop::collection::vec(any::<u8>(), 0..300);
    let storage = prop_oneof![
        Just((Cmd::Set, 0x01, 0, ResponseClass::Stored)),
        Just((Cmd::Cas, 0x01, 2, ResponseClass::Exists)),
        Just((Cmd::Add, 0x02, 2, ResponseClass::NotStored)),
        Just((Cmd::Append, 0x0e, 5, ResponseClass::NotStored)),
        Just((Cmd::Delete, 0x04, 1, ResponseClass::NotFound)),
        Just((Cmd::Touch, 0x1c, 0, ResponseClass::Touched)),
        Just((Cmd::Incr, 0x05, 6, ResponseClass::ClientError)),
        Just((Cmd::Set, 0x01, 0x82, ResponseClass::ServerError)),
    ];
    prop_oneof![
        (storage, any::<u32>(), value()).prop_map(|((cmd, op, status, class), opaque, message)| {
            let wire = frame(op, status, opaque, 0, &[], &[], &message);
            (expect(cmd, 1, false, opaque), wire, Response::of(class))
        }),
        (any::<u32>(), any::<u64>()).prop_map(|(opaque, n)| {
            let wire = frame(0x06, 0, opaque, 1, &[], &[], &n.to_be_bytes());
            (
                expect(Cmd::Decr, 1, false, opaque),
                wire,
                Response::of(ResponseClass::Num),
            )
        }),
        (any::<u32>(), any::<u64>(), value(), any::<bool>()).prop_map(|(opaque, cas, v, hit)| {
            let (wire, response) = if hit {
                (
                    frame(0x00, 0, opaque, cas, &[0; 4], &[], &v),
                    Response::hits(1, cas),
                )
            } else {
                (
                    frame(0x00, 1, opaque, 0, &[], &[], b"Not found"),
                    Response::hits(0, 0),
                )
            };
            (expect(Cmd::Gets, 1, false, opaque), wire, response)
        }),
        // A multiget: hits among misses the server leaves out, then the fence.
        (
            any::<u32>(),
            prop::collection::vec((any::<u64>(), value()), 0..6),
            0u32..4
        )
            .prop_map(|(opaque, hits, misses)| {
                let mut wire = Vec::new();
                for (cas, v) in &hits {
                    wire.extend(frame(0x0d, 0, opaque, *cas, &[0; 4], b"key", v));
                }
                wire.extend(frame(NOOP, 0, opaque, 0, &[], &[], &[]));
                let last = hits.last().map_or(0, |h| h.0);
                // One key would be a plain GET.
                let keys = match hits.len() as u32 + misses {
                    1 => 2,
                    n => n,
                };
                (
                    expect(Cmd::Get, keys, false, opaque),
                    wire,
                    Response::hits(hits.len() as u32, last),
                )
            }),
        // A quiet set: nothing but the fence, or an error first.
        (any::<u32>(), any::<bool>()).prop_map(|(opaque, fails)| {
            let mut wire = Vec::new();
            let mut class = ResponseClass::Stored;
            if fails {
                wire.extend(frame(0x11, 0x03, opaque, 0, &[], &[], b"Too large."));
                class = ResponseClass::ServerError;
            }
            wire.extend(frame(NOOP, 0, opaque, 0, &[], &[], &[]));
            (expect(Cmd::Set, 1, true, opaque), wire, Response::of(class))
        }),
    ]
}

fn stream() -> impl Strategy<Value = Vec<Reply>> {
    prop::collection::vec(reply(), 1..20)
}

fn concat(replies: &[Reply]) -> Vec<u8> {
    replies.iter().flat_map(|r| r.1.iter().copied()).collect()
}

/// Feeds the replies' bytes in chunks cut at `cuts`, the way reads would
/// deliver them, to a buffer that keeps only the unparsed tail, and parses
/// each reply both afresh and resumed.
fn parse_chunked(replies: &[Reply], cuts: &[usize]) -> Vec<Response> {
    let wire = concat(replies);
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    bounds.push(wire.len());
    bounds.sort_unstable();
    let (mut pending, mut out, mut start) = (Vec::new(), Vec::new(), 0);
    let mut progress = Progress::default();
    for end in bounds {
        pending.extend_from_slice(&wire[start..end]);
        start = end;
        let mut used = 0;
        while let Some(&(expect, _, _)) = replies.get(out.len()) {
            let fresh = binary::parse(&pending[used..], &mut Progress::default(), expect, &[]);
            let resumed = binary::parse(&pending[used..], &mut progress, expect, &[]);
            assert_eq!(fresh, resumed);
            let Some((response, n)) = resumed.expect("valid stream") else {
                break;
            };
            out.push(response);
            used += n;
        }
        pending.drain(..used);
    }
    assert!(pending.is_empty(), "bytes left over");
    out
}

/// Parses `wire` reply by reply as answers to `expect` until it fails or
/// runs out; every success must take bytes, so this always ends.
fn parse_until_stuck(wire: &[u8], expect: Expect) -> usize {
    let mut pos = 0;
    let mut progress = Progress::default();
    while let Ok(Some((_, used))) = binary::parse(&wire[pos..], &mut progress, expect, &[]) {
        assert!(used >= 24 && used <= wire.len() - pos);
        pos += used;
    }
    pos
}

fn any_expect() -> impl Strategy<Value = Expect> {
    (
        0..Cmd::ALL.len(),
        0u32..4,
        any::<bool>(),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(|(i, keys, noreply, opaque)| expect(Cmd::ALL[i], keys, noreply, opaque))
}

proptest! {
    #[test]
    fn any_split_parses_the_same(
        replies in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let expected: Vec<Response> = replies.iter().map(|r| r.2).collect();
        prop_assert_eq!(parse_chunked(&replies, &cuts), expected);
    }

    /// A stream cut short parses up to the cut, then waits.
    #[test]
    fn truncated_streams_wait(replies in stream(), cut in any::<usize>()) {
        let wire = concat(&replies);
        let cut = cut % wire.len();
        let mut pos = 0;
        for (expect, bytes, response) in &replies {
            let got = binary::parse(&wire[pos..cut], &mut Progress::default(), *expect, &[]);
            if pos + bytes.len() > cut {
                prop_assert_eq!(got, Ok(None));
                break;
            }
            prop_assert_eq!(got, Ok(Some((*response, bytes.len()))));
            pos += bytes.len();
        }
    }

    /// Arbitrary bytes never panic, whatever the request, fresh or resumed;
    /// half of them get past the magic byte and the data type.
    #[test]
    fn arbitrary_bytes_are_safe(
        mut bytes in prop::collection::vec(any::<u8>(), 0..4096),
        e in any_expect(),
        cut in any::<usize>(),
        plausible in any::<bool>(),
    ) {
        if plausible && bytes.len() >= 24 {
            bytes[0] = 0x81;
            bytes[5] = 0;
        }
        parse_until_stuck(&bytes, e);
        let mut progress = Progress::default();
        let cut = cut % (bytes.len() + 1);
        if let Ok(None) = binary::parse(&bytes[..cut], &mut progress, e, &[]) {
            if let Ok(Some((_, used))) = binary::parse(&bytes, &mut progress, e, &[]) {
                prop_assert!(used <= bytes.len());
            }
        }
        let _ = binary::parse_auth(&bytes);
    }

    /// Frames that start right but go wrong: valid streams with bytes
    /// flipped, parsed as replies to their own requests or any other.
    #[test]
    fn mutated_streams_are_safe(
        replies in stream(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        e in any_expect(),
    ) {
        let mut wire = concat(&replies);
        for (at, b) in flips {
            let i = at % wire.len();
            wire[i] = b;
        }
        parse_until_stuck(&wire, replies[0].0);
        parse_until_stuck(&wire, e);
    }

    /// A header may claim any lengths: past the ceiling or inconsistent is
    /// an error at once, otherwise the parser waits for the body.
    #[test]
    fn claimed_lengths_are_checked(
        key_len in any::<u16>(),
        extras_len in any::<u8>(),
        body in any::<u32>(),
        status in any::<u16>(),
        e in any_expect(),
    ) {
        let mut wire = frame(0x00, status, e.opaque, 0, &[], &[], &[]);
        wire[2..4].copy_from_slice(&key_len.to_be_bytes());
        wire[4] = extras_len;
        wire[8..12].copy_from_slice(&body.to_be_bytes());
        let consistent = u32::from(key_len) + u32::from(extras_len) <= body;
        let got = binary::parse(&wire, &mut Progress::default(), e, &[]);
        if !consistent || body > (1 << 30) + 255 + 65535 {
            prop_assert_eq!(got, Err(ParseError::BadFrame));
        } else if body > 0 {
            prop_assert_eq!(got, Ok(None));
        }
    }
}

/// A connection that checks each reply, parsed from what arrived in one
/// piece and resumed byte by byte, before returning it.
struct Live {
    socket: TcpStream,
    opaque: u32,
}

impl Live {
    fn connect(addr: &str) -> Live {
        let socket = TcpStream::connect(addr).expect("connect to the test server");
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Live {
            socket,
            opaque: 0x1000,
        }
    }

    fn call(&mut self, mut req: Request) -> Response {
        self.opaque = self.opaque.wrapping_add(0x01010101);
        req.opaque = self.opaque;
        let mut out = Vec::new();
        binary::encode(&mut out, &req);
        self.socket.write_all(&out).unwrap();
        let (mut reply, mut chunk) = (Vec::new(), [0u8; 4096]);
        loop {
            match binary::parse(&reply, &mut Progress::default(), req.expect(), &[]) {
                Ok(Some((response, used))) => {
                    assert_eq!(used, reply.len(), "{req:?}: more than one reply");
                    let mut progress = Progress::default();
                    for cut in 0..used {
                        let partial =
                            binary::parse(&reply[..cut], &mut progress, req.expect(), &[]);
                        assert_eq!(partial, Ok(None));
                    }
                    let resumed = binary::parse(&reply, &mut progress, req.expect(), &[]);
                    assert_eq!(resumed, Ok(Some((response, used))));
                    return response;
                }
                Ok(None) => {}
                Err(e) => panic!("{req:?}: {e} in {reply:02x?}"),
            }
            let n = self
                .socket
                .read(&mut chunk)
                .expect("a reply before the timeout");
            assert!(n > 0, "{req:?}: connection closed after {reply:02x?}");
            reply.extend_from_slice(&chunk[..n]);
        }
    }
}

fn class(response: Response) -> ResponseClass {
    response.class
}

fn r(cmd: Cmd, key: &[u8]) -> Request<'_> {
    Request::new(cmd, key)
}

fn store<'a>(cmd: Cmd, key: &'a [u8], value: &'a [u8]) -> Request<'a> {
    Request {
        value,
        exptime: 300,
        ..r(cmd, key)
    }
}

fn quiet(req: Request) -> Request {
    Request {
        noreply: true,
        ..req
    }
}

/// A memcached started for the test on a free loopback port, stopped on
/// drop (by its PID).
struct Server(std::process::Child, String);

impl Server {
    fn start() -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = std::process::Command::new("memcached");
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-u", "root"]);
        }
        let child = cmd
            .args(["-l", "127.0.0.1", "-U", "0", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("memcached must be installed (see .ci/run)");
        let addr = format!("127.0.0.1:{port}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "memcached did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Server(child, addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every command, single, multi-key and quiet, against a real memcached
/// (SASL is tested end to end in the main crate's tests/load/transports.rs).
#[test]
fn live_memcached() {
    use ResponseClass::*;
    let server = Server::start();
    let mut mc = Live::connect(&server.1);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let tag = format!(
        "mcbench-binary-{}-{}",
        std::process::id(),
        now.unwrap().as_nanos()
    );
    let key = |name: &str| format!("{tag}-{name}").into_bytes();
    let (k, k2, miss, text) = (key("k"), key("k2"), key("missing"), key("text"));

    assert_eq!(class(mc.call(r(Cmd::Delete, &k))), NotFound);
    assert_eq!(mc.call(r(Cmd::Get, &k)), Response::hits(0, 0));
    assert_eq!(class(mc.call(store(Cmd::Set, &k, b"10"))), Stored);
    let hit = mc.call(r(Cmd::Gets, &k));
    assert_eq!((hit.class, hit.values), (Value, 1));
    assert!(hit.cas > 0);
    assert_eq!(
        class(mc.call(Request {
            exptime: 600,
            ..r(Cmd::Gat, &k)
        })),
        Value
    );
    assert_eq!(class(mc.call(r(Cmd::Gats, &miss))), End);
    assert_eq!(
        class(mc.call(Request {
            exptime: 600,
            ..r(Cmd::Touch, &k)
        })),
        Touched
    );
    assert_eq!(class(mc.call(r(Cmd::Touch, &miss))), NotFound);
    assert_eq!(class(mc.call(store(Cmd::Add, &k, b"1"))), NotStored);
    assert_eq!(class(mc.call(store(Cmd::Add, &k2, b"1"))), Stored);
    assert_eq!(class(mc.call(store(Cmd::Replace, &miss, b"1"))), NotStored);
    assert_eq!(class(mc.call(store(Cmd::Replace, &k, b"10"))), Stored);
    assert_eq!(class(mc.call(store(Cmd::Append, &k, b"0"))), Stored);
    assert_eq!(class(mc.call(store(Cmd::Prepend, &k, b"2"))), Stored);
    assert_eq!(class(mc.call(store(Cmd::Append, &miss, b"0"))), NotStored);
    assert_eq!(
        class(mc.call(Request {
            delta: 5,
            ..r(Cmd::Incr, &k)
        })),
        Num
    );
    assert_eq!(
        class(mc.call(Request {
            delta: 1,
            ..r(Cmd::Decr, &k)
        })),
        Num
    );
    assert_eq!(class(mc.call(r(Cmd::Incr, &miss))), NotFound);
    assert_eq!(class(mc.call(store(Cmd::Set, &text, b"abc"))), Stored);
    assert_eq!(class(mc.call(r(Cmd::Decr, &text))), ClientError);
    let cas = mc.call(r(Cmd::Gets, &k)).cas;
    let swap = |unique| Request {
        cas: unique,
        ..store(Cmd::Cas, &k, b"7")
    };
    assert_eq!(class(mc.call(swap(cas + 1000))), Exists);
    assert_eq!(class(mc.call(swap(cas))), Stored);
    assert_eq!(
        class(mc.call(Request {
            cas: 1,
            ..store(Cmd::Cas, &miss, b"7")
        })),
        NotFound
    );

    let keys = [&k[..], &miss, &k2].join(&b' ');
    let multi = mc.call(r(Cmd::Gets, &keys));
    assert_eq!((multi.class, multi.values), (Value, 2));
    assert_eq!(
        mc.call(Request {
            exptime: 600,
            ..r(Cmd::Gat, &keys)
        })
        .values,
        2
    );
    assert_eq!(
        mc.call(r(Cmd::Get, &[&miss[..], &miss].join(&b' '))),
        Response::hits(0, 0)
    );

    assert_eq!(class(mc.call(quiet(store(Cmd::Set, &k, b"1")))), Stored);
    assert_eq!(class(mc.call(quiet(store(Cmd::Add, &k, b"1")))), NotStored);
    assert_eq!(class(mc.call(quiet(store(Cmd::Replace, &k, b"1")))), Stored);
    assert_eq!(
        class(mc.call(quiet(store(Cmd::Append, &miss, b"1")))),
        NotStored
    );
    assert_eq!(class(mc.call(quiet(store(Cmd::Prepend, &k, b"1")))), Stored);
    assert_eq!(
        class(mc.call(quiet(Request {
            cas: 1,
            ..store(Cmd::Cas, &k, b"1")
        }))),
        Exists
    );
    assert_eq!(
        class(mc.call(quiet(Request {
            delta: 2,
            ..r(Cmd::Incr, &k)
        }))),
        Num
    );
    assert_eq!(class(mc.call(quiet(r(Cmd::Decr, &text)))), ClientError);
    assert_eq!(class(mc.call(quiet(r(Cmd::Touch, &k)))), Touched);
    assert_eq!(mc.call(quiet(r(Cmd::Get, &k))).values, 1);
    assert_eq!(mc.call(quiet(r(Cmd::Gats, &miss))), Response::hits(0, 0));
    assert_eq!(class(mc.call(quiet(r(Cmd::Delete, &k)))), Deleted);
    assert_eq!(class(mc.call(quiet(r(Cmd::Delete, &k)))), NotFound);
    assert_eq!(class(mc.call(r(Cmd::Noop, b""))), End);
    let too_large = vec![b'x'; 2 << 20];
    assert_eq!(class(mc.call(store(Cmd::Set, &k, &too_large))), ServerError);
    assert_eq!(class(mc.call(r(Cmd::Noop, b""))), End);
}
