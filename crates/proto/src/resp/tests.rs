//! Byte-exact vectors and reply classification for RESP.

use super::*;
use Cmd::*;
use ResponseClass::*;

fn enc(req: Request) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&mut out, &req);
    out
}

fn expect(cmd: Cmd, keys: u32) -> Expect {
    Expect {
        keys,
        ..Request::new(cmd, b"").expect()
    }
}

type Parsed = Result<Option<(Response, usize)>, ParseError>;

fn one(buf: &[u8], cmd: Cmd, keys: u32) -> Parsed {
    parse(buf, &mut Progress::default(), expect(cmd, keys))
}

const fn of(class: ResponseClass) -> Response {
    Response::of(class)
}

const fn hits(n: u32) -> Response {
    Response::hits(n, 0)
}

#[test]
fn encodes_every_supported_command() {
    let mut req = Request::new(Get, b"key");
    // (command, keys, exptime, value, its encoding)
    type Case<'a> = (Cmd, &'a [u8], u32, &'a [u8], &'a [u8]);
    #[rustfmt::skip]
    let cases: &[Case] = &[
        (Get, b"a bb ccc", 0, b"", b"*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbb\r\n$3\r\nccc\r\n"),
        (Get, b"key", 9, b"", b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"),
        (Set, b"k", 0, b"v\r\n", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n"),
        (Set, b"k", 300, b"v", b"*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nEX\r\n$3\r\n300\r\n"),
        (Add, b"k", 0, b"", b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\nNX\r\n"),
        (Add, b"k", 9, b"", b"*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\nEX\r\n$1\r\n9\r\n$2\r\nNX\r\n"),
        (Replace, b"k", 0, b"v", b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nXX\r\n"),
        (Append, b"k", 9, b"tail", b"*3\r\n$6\r\nAPPEND\r\n$1\r\nk\r\n$4\r\ntail\r\n"),
        (Delete, b"k", 9, b"v", b"*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"),
    ];
    for &(cmd, keys, exptime, value, wire) in cases {
        (req.cmd, req.keys, req.exptime, req.value) = (cmd, keys, exptime, value);
        assert_eq!(enc(req), wire, "{cmd:?}");
    }
    req.cmd = Incr;
    req.delta = 5;
    assert_eq!(enc(req), b"*3\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$1\r\n5\r\n");
    req.cmd = Decr;
    req.delta = u64::MAX;
    let wire = b"*3\r\n$6\r\nDECRBY\r\n$1\r\nk\r\n$20\r\n18446744073709551615\r\n";
    assert_eq!(enc(req), wire);
}

#[test]
fn supported_commands() {
    let yes = [Get, Set, Add, Replace, Append, Incr, Decr, Delete];
    for cmd in Cmd::ALL {
        assert_eq!(supports(cmd), yes.contains(&cmd), "{cmd:?}");
        assert!(!supports_noreply(cmd));
        if !yes.contains(&cmd) {
            assert_eq!(enc(Request::new(cmd, b"k")), b"", "{cmd:?}");
        }
    }
}

#[test]
fn auth_forms() {
    let mut out = Vec::new();
    auth(&mut out, b"", b"secret");
    assert_eq!(out, b"*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n");
    out.clear();
    auth(&mut out, b"bench", b"pw");
    assert_eq!(out, b"*3\r\n$4\r\nAUTH\r\n$5\r\nbench\r\n$2\r\npw\r\n");
}

#[test]
fn class_per_command() {
    let cases: &[(&[u8], Cmd, u32, Response)] = &[
        (b"$5\r\nhello\r\n", Get, 1, hits(1)),
        (b"$0\r\n\r\n", Get, 1, hits(1)),
        (b"$4\r\n\r\n\r\n\r\n", Get, 1, hits(1)),
        (b"$-1\r\n", Get, 1, hits(0)),
        (b"*3\r\n$1\r\na\r\n$-1\r\n$0\r\n\r\n", Get, 3, hits(2)),
        (b"*2\r\n$-1\r\n$-1\r\n", Get, 2, hits(0)),
        (b"*0\r\n", Get, 0, hits(0)),
        (b"+OK\r\n", Set, 1, of(Stored)),
        (b"+OK\r\n", Add, 1, of(Stored)),
        (b"$-1\r\n", Add, 1, of(NotStored)),
        (b"+OK\r\n", Replace, 1, of(Stored)),
        (b"$-1\r\n", Replace, 1, of(NotStored)),
        (b":1\r\n", Delete, 1, of(Deleted)),
        (b":0\r\n", Delete, 1, of(NotFound)),
        (b":-7\r\n", Incr, 1, of(Num)),
        (b":9223372036854775807\r\n", Decr, 1, of(Num)),
        (b":-9223372036854775808\r\n", Decr, 1, of(Num)),
        (b":12\r\n", Append, 1, of(Stored)),
        (b"-ERR wrong number of arguments\r\n", Get, 0, of(RespError)),
        (b"-WRONGTYPE Operation against\r\n", Get, 1, of(RespError)),
        (b"-ERR value is not an integer\r\n", Incr, 1, of(RespError)),
        (b"-\r\n", Set, 1, of(RespError)),
        (b"-NOAUTH Authentication\r\n", Set, 1, of(AuthError)),
        (b"-WRONGPASS invalid\r\n", Get, 2, of(AuthError)),
        (b"-ERR invalid password\r\n", Set, 1, of(AuthError)),
        (b"-NOAUTHX\r\n", Set, 1, of(RespError)),
    ];
    for &(wire, cmd, keys, resp) in cases {
        let whole = Ok(Some((resp, wire.len())));
        assert_eq!(one(wire, cmd, keys), whole, "{cmd:?} {wire:?}");
        // Complete only at the last byte.
        for cut in 0..wire.len() {
            assert_eq!(one(&wire[..cut], cmd, keys), Ok(None), "{wire:?} {cut}");
        }
    }
    // The first reply only.
    assert_eq!(one(b"+OK\r\n:1\r\n", Set, 1), Ok(Some((of(Stored), 5))));
}

#[test]
fn replies_that_cannot_answer() {
    let cases: &[(&[u8], Cmd, u32)] = &[
        (b"*1\r\n$1\r\nx\r\n", Get, 1),
        (b"+OK\r\n", Get, 1),
        (b"$-1\r\n", Get, 2),
        (b"*-1\r\n", Get, 2),
        (b"*1\r\n$1\r\nx\r\n$-1\r\n", Get, 0),
        (b"*1\r\n$1\r\nx\r\n$-1\r\n", Get, 2),
        (b"*2\r\n$1\r\nx\r\n:1\r\n", Get, 2),
        (b"*2\r\n$1\r\nx\r\n*1\r\n$1\r\ny\r\n", Get, 2),
        (b"*2\r\n$1\r\nx\r\n+OK\r\n", Get, 2),
        (b"*1\r\n+OK\r\n", Set, 1),
        (b"*-1\r\n", Set, 1),
        (b"$-1\r\n", Set, 1),
        (b"+QUEUED\r\n", Set, 1),
        (b":1\r\n", Set, 1),
        (b"+OK\r\n", Delete, 1),
        (b"$1\r\n1\r\n", Incr, 1),
        (b"+OK\r\n", Append, 1),
        (b"+OK\r\n", Touch, 1),
        (b":1\r\n", Noop, 1),
    ];
    for &(wire, cmd, keys) in cases {
        let err = Err(ParseError::UnexpectedReply);
        assert_eq!(one(wire, cmd, keys), err, "{cmd:?} {wire:?}");
    }
}

/// Every RESP2 form is parsed to its end whatever the command in front,
/// nested and nil arrays included, and only then found not to answer.
#[test]
fn generic_values() {
    let cases: &[&[u8]] = &[
        b"+PONG\r\n",
        b":-1\r\n",
        b"$3\r\nabc\r\n",
        b"*0\r\n",
        b"*3\r\n:1\r\n*2\r\n+a\r\n*-1\r\n$2\r\nbc\r\n",
        b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n",
        b"*2\r\n*0\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n$-1\r\n",
    ];
    for &wire in cases {
        let stream = [wire, b"+OK\r\n"].concat();
        assert_eq!(one(&stream, Set, 1), Err(ParseError::UnexpectedReply));
        for cut in 0..wire.len() {
            assert_eq!(one(&wire[..cut], Set, 1), Ok(None), "{wire:?} cut at {cut}");
        }
        let (_, end) = value_end(&stream, 0, MAX_DEPTH, expect(Cmd::Get, 1))
            .unwrap()
            .unwrap();
        assert_eq!(end, wire.len(), "{wire:?}");
    }
    let nested = b"*3\r\n:1\r\n*2\r\n+a\r\n*-1\r\n$2\r\nbc\r\n";
    let whole = Ok(Some((Item::Array(3), nested.len())));
    assert_eq!(value_end(nested, 0, MAX_DEPTH, expect(Cmd::Get, 1)), whole);
    assert_eq!(
        value_end(nested, 0, 1, expect(Cmd::Get, 1)),
        Err(ParseError::BadFrame)
    );
}

#[test]
fn malformed() {
    use ParseError::*;
    let deep: &[u8] = b"*2\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n";
    let cases: &[(&[u8], ParseError)] = &[
        (b"OK\r\n", UnknownReply),
        (b"_\r\n", UnknownReply),
        (b"\r\n", UnknownReply),
        (b"+OK\n", BadLineEnding),
        (b"+O\rK\r\n", BadLineEnding),
        (b"-ERR \r\r\n", BadLineEnding),
        (b":\r\n", BadNumber),
        (b":-\r\n", BadNumber),
        (b":+1\r\n", BadNumber),
        (b":1 \r\n", BadNumber),
        (b":9223372036854775808\r\n", BadNumber),
        (b":99999999999999999999\r\n", BadNumber),
        (b"$x\r\n", BadNumber),
        (b"$-2\r\n", BadNumber),
        (b"$536870913\r\n", BadNumber),
        (b"*-2\r\n", BadNumber),
        (b"*1048577\r\n", BadFrame),
        (b"$1\r\nxy\r\n", BadValueTerminator),
        (b"$1\r\nx\n\r", BadValueTerminator),
        (b"*2\r\n$1\r\nx\r\n?\r\n", UnknownReply),
        (b"*2\r\n$1\r\nx\r\n$2\r\nx\r\n\r\n", BadValueTerminator),
        (&[deep, b"*0\r\n"].concat(), BadFrame),
        (&[deep, b"*-1\r\n"].concat(), BadFrame),
    ];
    for (wire, err) in cases {
        for (cmd, keys) in [(Get, 1), (Get, 2), (Set, 1)] {
            assert_eq!(one(wire, cmd, keys), Err(err.clone()), "{cmd:?} {wire:?}");
        }
    }
    // The largest sizes are fine, and wait for their data.
    assert_eq!(one(b"$536870912\r\nxx", Get, 1), Ok(None));
    assert_eq!(one(b"*1048576\r\n", Set, 1), Ok(None));
}

#[test]
fn line_limit() {
    let mut long = vec![b'-'; MAX_LINE - 2];
    long.extend_from_slice(b"\r\n");
    assert_eq!(one(&long, Set, 1), Ok(Some((of(RespError), MAX_LINE))));
    long.insert(0, b'-');
    assert_eq!(one(&long, Set, 1), Err(ParseError::LineTooLong));
    assert_eq!(one(&long[..MAX_LINE - 1], Set, 1), Ok(None));
}

/// A multiget resumes after its complete elements: the bytes before the
/// saved offset are not looked at again.
#[test]
fn multiget_resumes() {
    let wire = b"*3\r\n$3\r\nabc\r\n$-1\r\n$2\r\nde\r\n";
    let mut progress = Progress::default();
    let exp = expect(Get, 3);
    assert_eq!(parse(&wire[..20], &mut progress, exp), Ok(None));
    assert_eq!((progress.offset, progress.values, progress.cas), (18, 1, 2));
    // Corrupt the parsed part: a resumed parse does not notice.
    let mut changed = wire.to_vec();
    changed[4] = b'?';
    assert_eq!(one(&changed, Get, 3), Err(ParseError::UnknownReply));
    let done = Ok(Some((hits(2), wire.len())));
    assert_eq!(parse(&changed, &mut progress, exp), done);
    assert_eq!(progress, Progress::default());
    // Fed one byte at a time it agrees with a fresh parse.
    for end in 0..=wire.len() {
        let fresh = parse(&wire[..end], &mut Progress::default(), exp);
        assert_eq!(parse(&wire[..end], &mut progress, exp), fresh, "at {end}");
    }
    // A saved position that cannot belong to the reply is ignored.
    let (offset, values, cas, seen) = (99, 7, 1, None);
    progress = Progress {
        offset,
        values,
        cas,
        seen,
        key_pos: 0,
    };
    assert_eq!(parse(wire, &mut progress, exp), done);
}

#[test]
fn assoc_keys_are_hash_fields_and_short_keys_stay_plain() {
    let hashed = |cmd, key: &'static [u8]| Request {
        value: b"v",
        hash_field: 2,
        ..Request::new(cmd, key)
    };
    assert_eq!(
        enc(hashed(Get, b"user:42")),
        b"*3\r\n$4\r\nHGET\r\n$5\r\nuser:\r\n$2\r\n42\r\n"
    );
    assert_eq!(
        enc(hashed(Set, b"user:42")),
        b"*4\r\n$4\r\nHSET\r\n$5\r\nuser:\r\n$2\r\n42\r\n$1\r\nv\r\n"
    );
    // No longer than the field: a plain key.
    assert_eq!(enc(hashed(Get, b"42")), b"*2\r\n$3\r\nGET\r\n$2\r\n42\r\n");
    // HSET's integer answers a hashed set only.
    let hset = hashed(Set, b"user:42").expect();
    let parsed = parse(b":1\r\n", &mut Progress::default(), hset);
    assert_eq!(parsed, Ok(Some((of(Stored), 4))));
    assert_eq!(one(b":1\r\n", Set, 1), Err(ParseError::UnexpectedReply));
}
