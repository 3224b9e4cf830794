//! Byte-exact vectors. Requests are written out in hex, header field by
//! header field, so that the encoder is checked against the specification
//! rather than against a second copy of itself. Replies marked "captured"
//! were read from memcached 1.6.18.

use super::*;
use crate::ParseError::{BadFrame, OpaqueMismatch, UnexpectedReply};
use crate::ResponseClass::*;

/// Bytes from hex digits; spaces and `|` only make the fields readable.
fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    assert_eq!(digits.len() % 2, 0, "odd hex: {text}");
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

fn enc(req: Request) -> Vec<u8> {
    let mut out = b"prefix".to_vec();
    encode(&mut out, &req);
    assert_eq!(&out[..6], b"prefix", "encode must only append");
    out.split_off(6)
}

/// A request with opaque 0x2a.
fn req(cmd: Cmd, keys: &'static [u8]) -> Request<'static> {
    Request {
        opaque: 0x2a,
        ..Request::new(cmd, keys)
    }
}

fn quiet(cmd: Cmd, keys: &'static [u8]) -> Request<'static> {
    Request {
        noreply: true,
        ..req(cmd, keys)
    }
}

// magic op keylen extlen type vbucket bodylen opaque cas
const NOOP_2A: &str = "80 0a 0000 00 00 0000 00000000 0000002a 0000000000000000";

#[test]
fn retrieval_requests() {
    let get = "80 00 0001 00 00 0000 00000001 0000002a 0000000000000000 | 6b";
    assert_eq!(enc(req(Cmd::Get, b"k")), hex(get));
    assert_eq!(enc(req(Cmd::Gets, b"k")), hex(get));
    let mut gat = req(Cmd::Gat, b"k");
    gat.exptime = 0x01020304;
    let gat_wire = "80 1d 0001 04 00 0000 00000005 0000002a 0000000000000000 | 01020304 6b";
    assert_eq!(enc(gat), hex(gat_wire));
    gat.cmd = Cmd::Gats;
    assert_eq!(enc(gat), hex(gat_wire));
    // A key list with stray spaces is still one key.
    assert_eq!(enc(req(Cmd::Get, b" k ")), hex(get));
}

#[test]
fn multiget_requests() {
    let wire = format!(
        "80 0d 0001 00 00 0000 00000001 0000002a 0000000000000000 | 61
         80 0d 0002 00 00 0000 00000002 0000002a 0000000000000000 | 6262
         {NOOP_2A}"
    );
    assert_eq!(enc(req(Cmd::Get, b"a bb")), hex(&wire));
    assert_eq!(enc(req(Cmd::Gets, b"a bb")), hex(&wire));
    // Already quiet: noreply changes nothing.
    assert_eq!(enc(quiet(Cmd::Get, b"a bb")), hex(&wire));
    let mut gat = req(Cmd::Gats, b"a bb");
    gat.exptime = 60;
    let wire = format!(
        "80 24 0001 04 00 0000 00000005 0000002a 0000000000000000 | 0000003c 61
         80 24 0002 04 00 0000 00000006 0000002a 0000000000000000 | 0000003c 6262
         {NOOP_2A}"
    );
    assert_eq!(enc(gat), hex(&wire));
    // No key at all: just the fence, answered as a miss.
    assert_eq!(enc(req(Cmd::Get, b"")), hex(NOOP_2A));
}

#[test]
fn quiet_retrievals() {
    let wire = format!("80 09 0001 00 00 0000 00000001 0000002a 0000000000000000 | 6b {NOOP_2A}");
    assert_eq!(enc(quiet(Cmd::Get, b"k")), hex(&wire));
    assert_eq!(enc(quiet(Cmd::Gets, b"k")), hex(&wire));
    let wire =
        format!("80 1e 0001 04 00 0000 00000005 0000002a 0000000000000000 | 00000000 6b {NOOP_2A}");
    assert_eq!(enc(quiet(Cmd::Gat, b"k")), hex(&wire));
}

#[test]
fn storage_requests() {
    let store = |cmd, noreply| Request {
        value: b"vv",
        flags: 0xdeadbeef,
        exptime: 300,
        noreply,
        ..req(cmd, b"key")
    };
    // Extras flags, expiration; then key, then value.
    let body = "0000000d 0000002a 0000000000000000 | deadbeef 0000012c 6b6579 7676";
    for (cmd, loud, quiet_op) in [
        (Cmd::Set, "01", "11"),
        (Cmd::Add, "02", "12"),
        (Cmd::Replace, "03", "13"),
    ] {
        let wire = format!("80 {loud} 0003 08 00 0000 {body}");
        assert_eq!(enc(store(cmd, false)), hex(&wire), "{cmd:?}");
        let wire = format!("80 {quiet_op} 0003 08 00 0000 {body} {NOOP_2A}");
        assert_eq!(enc(store(cmd, true)), hex(&wire), "{cmd:?} quiet");
    }
    // No extras; flags and expiration are not sent.
    let body = "00000005 0000002a 0000000000000000 | 6b6579 7676";
    for (cmd, loud, quiet_op) in [(Cmd::Append, "0e", "19"), (Cmd::Prepend, "0f", "1a")] {
        let wire = format!("80 {loud} 0003 00 00 0000 {body}");
        assert_eq!(enc(store(cmd, false)), hex(&wire), "{cmd:?}");
        let wire = format!("80 {quiet_op} 0003 00 00 0000 {body} {NOOP_2A}");
        assert_eq!(enc(store(cmd, true)), hex(&wire), "{cmd:?} quiet");
    }
}

#[test]
fn cas_is_a_set_with_the_header_cas() {
    let mut cas = Request {
        value: b"v",
        cas: 0x0102030405060708,
        flags: 1,
        opaque: 0xfffffffe,
        ..Request::new(Cmd::Cas, b"k")
    };
    let wire = "80 01 0001 08 00 0000 0000000a fffffffe 0102030405060708 | 00000001 00000000 6b 76";
    assert_eq!(enc(cas), hex(wire));
    cas.noreply = true;
    let wire = "80 11 0001 08 00 0000 0000000a fffffffe 0102030405060708 | 00000001 00000000 6b 76
                80 0a 0000 00 00 0000 00000000 fffffffe 0000000000000000";
    assert_eq!(enc(cas), hex(wire));
    // A set never sends a cas, even if the request carries one.
    cas.cmd = Cmd::Set;
    cas.noreply = false;
    let wire = "80 01 0001 08 00 0000 0000000a fffffffe 0000000000000000 | 00000001 00000000 6b 76";
    assert_eq!(enc(cas), hex(wire));
}

#[test]
fn arithmetic_requests() {
    // Extras delta, initial 0, expiration 0xffffffff (do not create).
    let body = "00000015 0000002a 0000000000000000 | ffffffffffffffff 0000000000000000 ffffffff 6e";
    for (cmd, loud, quiet_op) in [(Cmd::Incr, "05", "15"), (Cmd::Decr, "06", "16")] {
        let mut r = Request {
            delta: u64::MAX,
            ..req(cmd, b"n")
        };
        assert_eq!(enc(r), hex(&format!("80 {loud} 0001 14 00 0000 {body}")));
        r.noreply = true;
        let wire = format!("80 {quiet_op} 0001 14 00 0000 {body} {NOOP_2A}");
        assert_eq!(enc(r), hex(&wire));
    }
}

#[test]
fn other_requests() {
    let wire = "80 04 0001 00 00 0000 00000001 0000002a 0000000000000000 | 6b";
    assert_eq!(enc(req(Cmd::Delete, b"k")), hex(wire));
    let wire = format!("80 14 0001 00 00 0000 00000001 0000002a 0000000000000000 | 6b {NOOP_2A}");
    assert_eq!(enc(quiet(Cmd::Delete, b"k")), hex(&wire));
    let touch = Request {
        exptime: 9,
        ..req(Cmd::Touch, b"k")
    };
    let wire = "80 1c 0001 04 00 0000 00000005 0000002a 0000000000000000 | 00000009 6b";
    assert_eq!(enc(touch), hex(wire));
    // No quiet touch or noop: sent as usual, one frame each.
    assert_eq!(
        enc(Request {
            noreply: true,
            ..touch
        }),
        hex(wire)
    );
    assert_eq!(enc(req(Cmd::Noop, b"")), hex(NOOP_2A));
    assert_eq!(enc(quiet(Cmd::Noop, b"")), hex(NOOP_2A));
}

#[test]
fn sasl_plain_request() {
    let mut out = Vec::new();
    sasl_auth_plain(&mut out, b"u", b"pw");
    let wire =
        "80 21 0005 00 00 0000 0000000a 00000000 0000000000000000 | 504c41494e 00 75 00 7077";
    assert_eq!(out, hex(wire));
}

#[test]
fn supported_commands() {
    for cmd in Cmd::ALL {
        assert!(supports(cmd));
        assert_eq!(
            supports_noreply(cmd),
            !matches!(cmd, Cmd::Touch | Cmd::Noop),
            "{cmd:?}"
        );
    }
}

/// A response frame, built field by field, with opaque 0x2a.
fn res(op: u8, status: u16, cas: u64, extras: &[u8], key: &[u8], value: &[u8]) -> Vec<u8> {
    let body = extras.len() + key.len() + value.len();
    let mut out = vec![0x81, op];
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(&[extras.len() as u8, 0]);
    out.extend_from_slice(&status.to_be_bytes());
    out.extend_from_slice(&(body as u32).to_be_bytes());
    out.extend_from_slice(&0x2a_u32.to_be_bytes());
    out.extend_from_slice(&cas.to_be_bytes());
    for part in [extras, key, value] {
        out.extend_from_slice(part);
    }
    out
}

/// A bare reply frame, with a message as memcached sends one on failure.
fn status_frame(op: u8, status: u16) -> Vec<u8> {
    let message: &[u8] = if status == 0 { b"" } else { b"Some error" };
    res(op, status, 0, &[], &[], message)
}

fn hit(op: u8, cas: u64) -> Vec<u8> {
    res(op, 0, cas, &[0; 4], b"key", b"value")
}

fn fence(status: u16) -> Vec<u8> {
    res(op::NOOP, status, 0, &[], &[], &[])
}

/// The reply to a request for `keys` keys with opaque 0x2a.
fn many(cmd: Cmd, keys: u32) -> Expect {
    Expect {
        cmd,
        keys,
        noreply: false,
        unfenced: false,
        opaque: 0x2a,
        max_value: u32::MAX,
        hash: false,
    }
}

fn one(cmd: Cmd) -> Expect {
    many(cmd, 1)
}

fn quiet_one(cmd: Cmd) -> Expect {
    Expect {
        noreply: true,
        unfenced: false,
        ..one(cmd)
    }
}

fn parse_all(buf: &[u8], expect: Expect) -> Result<Option<(Response, usize)>, ParseError> {
    parse(buf, &mut Progress::default(), expect, &[])
}

fn err(buf: &[u8], expect: Expect) -> ParseError {
    parse_all(buf, expect).unwrap_err()
}

/// Parses `wire` whole, after checking that every prefix of it is
/// incomplete, fresh or resumed.
fn complete(wire: &[u8], expect: Expect) -> Response {
    let mut progress = Progress::default();
    for cut in 0..wire.len() {
        assert_eq!(parse_all(&wire[..cut], expect), Ok(None), "cut at {cut}");
        let resumed = parse(&wire[..cut], &mut progress, expect, &[]);
        assert_eq!(resumed, Ok(None), "resumed at {cut}");
    }
    let (response, used) = parse(wire, &mut progress, expect, &[]).unwrap().unwrap();
    assert_eq!(used, wire.len());
    assert_eq!(progress, Progress::default(), "reset after a reply");
    response
}

#[test]
fn captured_replies() {
    let get_hit = hex("8100000004000000000000090000002a00000000000000010000000568656c6c6f");
    assert_eq!(complete(&get_hit, one(Cmd::Get)), Response::hits(1, 1));
    let get_miss = hex("8100000000000001000000090000002a00000000000000004e6f7420666f756e64");
    assert_eq!(complete(&get_miss, one(Cmd::Gets)), Response::of(End));
    let add_exists = hex("810200000000000200000014 0000002a 0000000000000000
         446174612065786973747320666f72206b65792e");
    assert_eq!(
        complete(&add_exists, one(Cmd::Add)),
        Response::of(NotStored)
    );
    let decr = hex("8106000000000000000000080000002a00000000000000040000000000000007");
    assert_eq!(complete(&decr, one(Cmd::Decr)), Response::of(Num));
    let multiget = hex(
        "810d0001040000000000000a0000002a0000000000000001000000056b68656c6c6f
         810d0001040000000000000a0000002a0000000000000002000000056b68656c6c6f
         810a000000000000000000000000002a0000000000000000",
    );
    assert_eq!(complete(&multiget, many(Cmd::Get, 3)), Response::hits(2, 2));
}

#[test]
fn status_classes() {
    let table: &[(Cmd, &[(u16, ResponseClass)])] = &[
        (
            Cmd::Set,
            &[(0, Stored), (1, NotFound), (2, Exists), (5, NotStored)],
        ),
        (Cmd::Cas, &[(0, Stored), (1, NotFound), (2, Exists)]),
        (Cmd::Add, &[(0, Stored), (2, NotStored)]),
        (Cmd::Replace, &[(0, Stored), (1, NotStored)]),
        (Cmd::Append, &[(0, Stored), (5, NotStored)]),
        (Cmd::Prepend, &[(0, Stored), (5, NotStored)]),
        (Cmd::Incr, &[(0, Num), (1, NotFound), (6, ClientError)]),
        (Cmd::Decr, &[(0, Num), (1, NotFound), (6, ClientError)]),
        (Cmd::Delete, &[(0, Deleted), (1, NotFound)]),
        (Cmd::Touch, &[(0, Touched), (1, NotFound)]),
        (Cmd::Noop, &[(0, End)]),
    ];
    let errors = [
        (3, ServerError),
        (4, ClientError),
        (7, ServerError),
        (0x20, AuthError),
        (0x21, AuthError),
        (0x81, Error),
        (0x82, ServerError),
        (0xffff, ServerError),
    ];
    for &(cmd, cases) in table {
        let op = opcode(cmd, false);
        for &(status, class) in cases.iter().chain(&errors) {
            let got = complete(&status_frame(op, status), one(cmd));
            assert_eq!(got, Response::of(class), "{cmd:?} {status:#x}");
        }
    }
}

#[test]
fn single_retrievals() {
    for (cmd, op) in [
        (Cmd::Get, op::GET),
        (Cmd::Gets, op::GET),
        (Cmd::Gat, op::GAT),
        (Cmd::Gats, op::GAT),
    ] {
        assert_eq!(complete(&hit(op, 77), one(cmd)), Response::hits(1, 77));
        assert_eq!(
            complete(&status_frame(op, 1), one(cmd)),
            Response::hits(0, 0)
        );
        for (status, class) in [(0x20, AuthError), (0x82, ServerError), (4, ClientError)] {
            let got = complete(&status_frame(op, status), one(cmd));
            assert_eq!(got, Response::of(class));
        }
    }
}

#[test]
fn multigets_count_hits_up_to_the_fence() {
    let e = many(Cmd::Gets, 4);
    let wire = [hit(op::GETKQ, 5), hit(op::GETKQ, 9), fence(0)].concat();
    assert_eq!(complete(&wire, e), Response::hits(2, 9));
    assert_eq!(complete(&fence(0), e), Response::of(End));
    // A miss that is sent anyway is a miss.
    let wire = [status_frame(op::GETKQ, 1), hit(op::GETKQ, 3), fence(0)].concat();
    assert_eq!(complete(&wire, e), Response::hits(1, 3));
    // The first error wins, and the reply still ends at the fence.
    let wire = [
        hit(op::GETKQ, 1),
        status_frame(op::GETKQ, 0x82),
        status_frame(op::GETKQ, 4),
        hit(op::GETKQ, 2),
        fence(0),
    ];
    assert_eq!(complete(&wire.concat(), e), Response::of(ServerError));
    // An unauthenticated noop fails itself.
    assert_eq!(complete(&fence(0x20), e), Response::of(AuthError));
    let gat = [hit(op::GATKQ, 4), fence(0)].concat();
    assert_eq!(complete(&gat, many(Cmd::Gat, 2)), Response::hits(1, 4));
    // Zero keys: just the fence.
    assert_eq!(complete(&fence(0), many(Cmd::Get, 0)), Response::of(End));
}

#[test]
fn quiet_retrievals_count_like_multigets() {
    let wire = [hit(op::GETQ, 8), fence(0)].concat();
    assert_eq!(complete(&wire, quiet_one(Cmd::Get)), Response::hits(1, 8));
    let wire = [hit(op::GATQ, 8), fence(0)].concat();
    assert_eq!(complete(&wire, quiet_one(Cmd::Gats)), Response::hits(1, 8));
    assert_eq!(complete(&fence(0), quiet_one(Cmd::Get)), Response::of(End));
}

#[test]
fn quiet_replies() {
    let quiet_cmds = Cmd::ALL.into_iter().filter(|&c| !c.is_retrieval());
    for cmd in quiet_cmds.filter(|&c| supports_noreply(c)) {
        let e = quiet_one(cmd);
        let op = opcode(cmd, true);
        assert_eq!(shape(cmd, 1, true), Shape::Fenced(op));
        let got = complete(&fence(0), e);
        assert_eq!(got, Response::of(cmd.quiet_outcome()), "{cmd:?}");
        let wire = [status_frame(op, 0x82), fence(0)].concat();
        assert_eq!(complete(&wire, e), Response::of(ServerError));
        // The first frame is the outcome.
        let wire = [status_frame(op, 1), status_frame(op, 0x82), fence(0x20)];
        assert_eq!(complete(&wire.concat(), e), Response::of(class(cmd, 1)));
        assert_eq!(complete(&fence(0x20), e), Response::of(AuthError));
    }
    let wire = [status_frame(op::ADDQ, 2), fence(0)].concat();
    assert_eq!(
        complete(&wire, quiet_one(Cmd::Add)),
        Response::of(NotStored)
    );
    let wire = [status_frame(op::SETQ, 2), fence(0)].concat();
    assert_eq!(complete(&wire, quiet_one(Cmd::Cas)), Response::of(Exists));
    // No quiet touch: its own frame answers.
    let wire = status_frame(op::TOUCH, 0);
    assert_eq!(
        complete(&wire, quiet_one(Cmd::Touch)),
        Response::of(Touched)
    );
}

#[test]
fn stops_at_the_end_of_its_reply() {
    let wire = [status_frame(op::SET, 0), status_frame(op::SET, 2)].concat();
    let e = one(Cmd::Set);
    assert_eq!(parse_all(&wire, e), Ok(Some((Response::of(Stored), 24))));
    let rest = Ok(Some((Response::of(Exists), wire.len() - 24)));
    assert_eq!(parse_all(&wire[24..], e), rest);
    let wire = [fence(0), fence(0)].concat();
    let first = Ok(Some((Response::of(End), 24)));
    assert_eq!(parse_all(&wire, many(Cmd::Get, 2)), first);
}

#[test]
fn progress_resumes_after_complete_frames() {
    let frame = hit(op::GETKQ, 6);
    let wire = [frame.clone(), frame.clone(), fence(0)].concat();
    let e = many(Cmd::Get, 2);
    let mut progress = Progress::default();
    let cut = 2 * frame.len() + 10;
    assert_eq!(parse(&wire[..cut], &mut progress, e, &[]), Ok(None));
    let saved = (progress.offset, progress.values, progress.cas);
    assert_eq!(saved, (2 * frame.len(), 2, 6));
    // The frames before the saved offset are not read again: garbage there
    // goes unnoticed, which shows they were skipped.
    let mut tampered = wire.clone();
    tampered[0] = 0;
    let whole = Ok(Some((Response::hits(2, 6), wire.len())));
    assert_eq!(parse(&tampered, &mut progress, e, &[]), whole);
    // An error resets it too.
    assert_eq!(parse(&wire[..cut], &mut progress, e, &[]), Ok(None));
    let mut foreign_fence = wire.clone();
    foreign_fence[2 * frame.len() + 15] = 7; // the noop's opaque
    let got = parse(&foreign_fence, &mut progress, e, &[]);
    assert_eq!(got, Err(ParseError::OpaqueMismatch));
    assert_eq!(progress, Progress::default());
}

#[test]
fn opaque_and_opcode_must_match() {
    let foreign = |mut wire: Vec<u8>| {
        wire[15] = 0x2b;
        wire
    };
    let e = one(Cmd::Set);
    assert_eq!(err(&foreign(status_frame(op::SET, 0)), e), OpaqueMismatch);
    // Reported from the header, without waiting for the body.
    let long = foreign(status_frame(op::SET, 2));
    assert_eq!(err(&long[..24], e), OpaqueMismatch);
    let wire = [hit(op::GETKQ, 1), foreign(fence(0))].concat();
    assert_eq!(err(&wire, many(Cmd::Get, 2)), OpaqueMismatch);
    let wire = [foreign(hit(op::GETKQ, 1)), fence(0)].concat();
    assert_eq!(err(&wire, many(Cmd::Get, 2)), OpaqueMismatch);
    // The reply to another command.
    assert_eq!(err(&status_frame(op::ADD, 0), e), UnexpectedReply);
    assert_eq!(err(&fence(0), e), UnexpectedReply);
    assert_eq!(
        err(&status_frame(op::SET, 0), quiet_one(Cmd::Set)),
        UnexpectedReply
    );
    let wire = [status_frame(op::GET, 0), fence(0)].concat();
    assert_eq!(err(&wire, many(Cmd::Get, 2)), UnexpectedReply);
}

#[test]
fn malformed_frames() {
    let e = one(Cmd::Get);
    let good = res(op::GET, 0, 1, &[0; 4], b"", b"v");
    for magic in [0x80, 0x00, b'V', 0xff] {
        let mut wire = good.clone();
        wire[0] = magic;
        // At the first byte.
        assert_eq!(err(&wire[..1], e), BadFrame, "{magic:#x}");
        assert_eq!(err(&wire, e), BadFrame);
        assert_eq!(err(&wire, many(Cmd::Get, 3)), BadFrame);
        assert_eq!(parse_auth(&wire), Err(BadFrame));
    }
    let header_with = |at: usize, bytes: &[u8]| {
        let mut wire = good.clone();
        wire[at..at + bytes.len()].copy_from_slice(bytes);
        wire.truncate(24);
        wire
    };
    // Extras and key longer than the body (body 5).
    assert_eq!(err(&header_with(4, &[6]), e), BadFrame);
    assert_eq!(err(&header_with(2, &[0, 2]), e), BadFrame);
    assert_eq!(err(&header_with(2, &[0xff, 0xff]), e), BadFrame);
    // A data type other than raw bytes.
    assert_eq!(err(&header_with(5, &[1]), e), BadFrame);
    // A body past the ceiling is refused from its header; one at it waits.
    assert_eq!(
        err(&header_with(8, &(MAX_BODY + 1).to_be_bytes()), e),
        BadFrame
    );
    assert_eq!(err(&header_with(8, &[0xff; 4]), e), BadFrame);
    let at_ceiling = header_with(8, &MAX_BODY.to_be_bytes());
    assert_eq!(parse_all(&at_ceiling, e), Ok(None));
    // Garbage after a complete reply is the next reply's problem.
    let wire = [good.clone(), vec![0; 30]].concat();
    let first = Ok(Some((Response::hits(1, 1), good.len())));
    assert_eq!(parse_all(&wire, e), first);
}

#[test]
fn auth_replies() {
    // Captured: accepted, refused, and a server without -S.
    let cases = [
        (
            "81210000000000000000000d00000000 0000000000000000
             41757468656e74696361746564",
            AuthOutcome::Accepted,
        ),
        (
            "81210000000000200000000d00000000 0000000000000000
             41757468206661696c7572652e",
            AuthOutcome::Refused,
        ),
        (
            "81210000000000810000000f00000000 0000000000000000
             556e6b6e6f776e20636f6d6d616e64",
            AuthOutcome::Other(0x81),
        ),
        (
            "81210000000000210000000000000000 0000000000000000",
            AuthOutcome::Continue,
        ),
    ];
    for (wire, outcome) in cases {
        let wire = hex(wire);
        for cut in 0..wire.len() {
            assert_eq!(parse_auth(&wire[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(parse_auth(&wire), Ok(Some((outcome, wire.len()))));
    }
    assert_eq!(parse_auth(&fence(0)), Err(UnexpectedReply));
    let mut bad = status_frame(op::SASL_AUTH, 0);
    bad[4] = 1;
    assert_eq!(parse_auth(&bad), Err(BadFrame));
}

#[test]
fn oversized_fields_are_cut_to_fit() {
    let long_key = vec![b'k'; 70_000];
    let mut out = Vec::new();
    frame(&mut out, op::DELETE, &[], &long_key, &[], 0, 0);
    assert_eq!(&out[2..4], &[0xff, 0xff]);
    assert_eq!(&out[8..12], &65535u32.to_be_bytes());
    assert_eq!(out.len(), 24 + 65535);
}

#[test]
fn keyed_hits_must_carry_the_keys_asked_and_no_more_hits_than_keys() {
    let keyed = |key: &[u8]| res(op::GETKQ, 0, 1, &[0; 4], key, b"v");
    let e = many(Cmd::Get, 2);
    let run = |wire: &[u8]| parse(wire, &mut Progress::default(), e, b"k1 k2");
    let ok = [keyed(b"k1"), keyed(b"k2"), fence(0)].concat();
    assert_eq!(run(&ok), Ok(Some((Response::hits(2, 1), ok.len()))));
    for wire in [
        [keyed(b"k9"), fence(0)].concat(),
        [keyed(b"k2"), keyed(b"k1"), fence(0)].concat(),
        [keyed(b"k1"), keyed(b"k1"), fence(0)].concat(),
    ] {
        assert_eq!(run(&wire), Err(ParseError::KeyMismatch));
    }
    // Keys not returned (or not given): the count of hits still bounds.
    let three = [
        hit(op::GETKQ, 1),
        hit(op::GETKQ, 1),
        hit(op::GETKQ, 1),
        fence(0),
    ]
    .concat();
    let unkeyed = parse(&three, &mut Progress::default(), e, &[]);
    assert_eq!(unkeyed, Err(ParseError::TooManyValues));
    // A wrong opaque on the one frame of a single get.
    let mut foreign = hit(op::GET, 1);
    foreign[15] = 0x2b;
    let single = parse(&foreign, &mut Progress::default(), one(Cmd::Get), b"key");
    assert_eq!(single, Err(ParseError::OpaqueMismatch));
}
