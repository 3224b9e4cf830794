use super::*;
use ResponseClass::*;

fn enc(req: Request) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&mut out, &req);
    out
}

fn enc64(req: Request) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = Options {
        base64_keys: true,
        ..Options::default()
    };
    encode_with(&mut out, &req, opts);
    out
}

fn req<'a>(cmd: Cmd, keys: &'a [u8]) -> Request<'a> {
    Request::new(cmd, keys)
}

fn expect(cmd: Cmd) -> Expect {
    Expect {
        cmd,
        keys: 1,
        noreply: false,
        unfenced: false,
        opaque: 0,
        max_value: u32::MAX,
        hash: false,
    }
}

fn quiet(cmd: Cmd) -> Expect {
    Expect {
        noreply: true,
        unfenced: false,
        ..expect(cmd)
    }
}

fn multi(cmd: Cmd, keys: u32) -> Expect {
    Expect {
        keys,
        ..expect(cmd)
    }
}

fn with_opaque(e: Expect, opaque: u32) -> Expect {
    Expect { opaque, ..e }
}

fn try_parse(wire: &[u8], e: Expect) -> Result<Option<(Response, usize)>, ParseError> {
    parse(wire, &mut Progress::default(), e, &[])
}

/// The one response `wire` holds, which must take all of it.
fn one(wire: &[u8], e: Expect) -> Response {
    let (resp, used) = try_parse(wire, e).unwrap().expect("complete");
    assert_eq!(used, wire.len(), "{wire:?}");
    resp
}

#[test]
fn encodes_retrievals() {
    let mut r = req(Cmd::Get, b"k");
    assert_eq!(enc(r), b"mg k v f\r\n");
    r.cmd = Cmd::Gets;
    assert_eq!(enc(r), b"mg k v f c\r\n");
    r.cmd = Cmd::Gat;
    r.exptime = 60;
    assert_eq!(enc(r), b"mg k v f T60\r\n");
    r.cmd = Cmd::Gats;
    assert_eq!(enc(r), b"mg k v f c T60\r\n");
    r.opaque = 7;
    assert_eq!(enc(r), b"mg k v f c T60 O7\r\n");
    // gat with exptime 0 still sends T: it clears the expiry.
    let mut r = req(Cmd::Gat, b"k");
    assert_eq!(enc(r), b"mg k v f T0\r\n");
    r.noreply = true;
    assert_eq!(enc(r), b"mg k v f q T0\r\nmn\r\n");
}

#[test]
fn encodes_multigets() {
    let mut r = req(Cmd::Get, b"a bb ccc");
    assert_eq!(
        enc(r),
        b"mg a v f q\r\nmg bb v f q\r\nmg ccc v f q\r\nmn\r\n"
    );
    r.cmd = Cmd::Gats;
    r.exptime = 5;
    r.opaque = 9;
    r.keys = b"a bb";
    assert_eq!(
        enc(r),
        b"mg a v f q c T5 O9\r\nmg bb v f q c T5 O9\r\nmn\r\n"
    );
    // noreply changes nothing: a multiget is quiet and fenced anyway.
    r.noreply = true;
    assert_eq!(
        enc(r),
        b"mg a v f q c T5 O9\r\nmg bb v f q c T5 O9\r\nmn\r\n"
    );
    // No keys: only the fence, which the parser expects for keys == 0.
    assert_eq!(enc(req(Cmd::Get, b"")), b"mn\r\n");
    assert_eq!(req(Cmd::Get, b"").expect().keys, 0);
}

#[test]
fn encodes_storage() {
    let mut r = req(Cmd::Set, b"k");
    r.value = b"hello";
    r.flags = 3;
    assert_eq!(enc(r), b"ms k 5 T0 F3 MS\r\nhello\r\n");
    r.exptime = 300;
    r.flags = u32::MAX;
    r.cmd = Cmd::Add;
    assert_eq!(enc(r), b"ms k 5 T300 F4294967295 ME\r\nhello\r\n");
    r.cmd = Cmd::Replace;
    assert_eq!(enc(r), b"ms k 5 T300 F4294967295 MR\r\nhello\r\n");
    r.cmd = Cmd::Append;
    assert_eq!(enc(r), b"ms k 5 T300 F4294967295 MA\r\nhello\r\n");
    r.cmd = Cmd::Prepend;
    assert_eq!(enc(r), b"ms k 5 T300 F4294967295 MP\r\nhello\r\n");
    let mut r = req(Cmd::Cas, b"k");
    r.value = b"vv";
    r.flags = 3;
    r.cas = 12345678901;
    assert_eq!(enc(r), b"ms k 2 T0 F3 MS C12345678901\r\nvv\r\n");
    r.noreply = true;
    r.opaque = 4;
    assert_eq!(enc(r), b"ms k 2 T0 F3 MS C12345678901 q O4\r\nvv\r\nmn\r\n");
    let mut r = req(Cmd::Set, b"k");
    r.noreply = true;
    assert_eq!(enc(r), b"ms k 0 T0 F0 MS q\r\n\r\nmn\r\n");
}

#[test]
fn encodes_others() {
    let mut r = req(Cmd::Touch, b"k");
    r.exptime = 9;
    assert_eq!(enc(r), b"mg k T9\r\n");
    r.noreply = true;
    r.opaque = 1;
    assert_eq!(enc(r), b"mg k T9 q O1\r\nmn\r\n");
    let mut r = req(Cmd::Incr, b"n");
    r.delta = 5;
    assert_eq!(enc(r), b"ma n D5 MI\r\n");
    r.noreply = true;
    assert_eq!(enc(r), b"ma n D5 MI q\r\nmn\r\n");
    let mut r = req(Cmd::Decr, b"n");
    r.delta = u64::MAX;
    r.opaque = u32::MAX;
    assert_eq!(enc(r), b"ma n D18446744073709551615 MD O4294967295\r\n");
    let mut r = req(Cmd::Delete, b"k");
    assert_eq!(enc(r), b"md k\r\n");
    r.noreply = true;
    r.opaque = 2;
    assert_eq!(enc(r), b"md k q O2\r\nmn\r\n");
    // mn takes no flags: neither q nor O.
    let mut r = req(Cmd::Noop, b"");
    r.noreply = true;
    r.opaque = 3;
    assert_eq!(enc(r), b"mn\r\n");
}

#[test]
fn encodes_base64_keys() {
    let mut r = req(Cmd::Set, b"foo");
    r.value = b"hi";
    assert_eq!(enc64(r), b"ms Zm9v 2 b T0 F0 MS\r\nhi\r\n");
    assert_eq!(
        enc64(req(Cmd::Get, b"a bb")),
        b"mg YQ== b v f q\r\nmg YmI= b v f q\r\nmn\r\n"
    );
    assert_eq!(enc64(req(Cmd::Gets, b"foob")), b"mg Zm9vYg== b v f c\r\n");
    assert_eq!(enc64(req(Cmd::Delete, b"fooba")), b"md Zm9vYmE= b\r\n");
    assert_eq!(enc64(req(Cmd::Touch, b"foobar")), b"mg Zm9vYmFy b T0\r\n");
    assert_eq!(
        enc64(req(Cmd::Incr, b"\x00\xff k")),
        b"ma AP8gaw== b D0 MI\r\n"
    );
}

#[test]
fn base64_vectors() {
    // RFC 4648 section 10, and every byte value.
    let cases: &[(&[u8], &[u8])] = &[
        (b"", b""),
        (b"f", b"Zg=="),
        (b"fo", b"Zm8="),
        (b"foo", b"Zm9v"),
        (b"foob", b"Zm9vYg=="),
        (b"fooba", b"Zm9vYmE="),
        (b"foobar", b"Zm9vYmFy"),
        (b"\xfb\xff\xbf", b"+/+/"),
    ];
    for (raw, want) in cases {
        let mut out = Vec::new();
        base64(&mut out, raw);
        assert_eq!(out, *want, "{raw:?}");
    }
}

#[test]
fn encode_appends_and_defaults() {
    let r = req(Cmd::Delete, b"k");
    let mut out = b"md x\r\n".to_vec();
    encode(&mut out, &r);
    assert_eq!(out, b"md x\r\nmd k\r\n");
    let mut with = Vec::new();
    encode_with(&mut with, &r, Options::default());
    assert_eq!(with, enc(r));
}

#[test]
fn supported_commands() {
    for cmd in Cmd::ALL {
        assert!(supports(cmd), "{cmd:?}");
        assert_eq!(supports_noreply(cmd), cmd != Cmd::Noop, "{cmd:?}");
    }
}

#[test]
fn parses_retrievals() {
    let get = expect(Cmd::Get);
    assert_eq!(one(b"VA 5 f7\r\nhello\r\n", get), Response::hits(1, 0));
    assert_eq!(one(b"VA 0\r\n\r\n", get), Response::hits(1, 0));
    // Data holding CRLF and reply codes is skipped by length.
    assert_eq!(
        one(b"VA 8 f0\r\nMN\r\nEN\r\n\r\n", get),
        Response::hits(1, 0)
    );
    assert_eq!(one(b"EN\r\n", get), Response::hits(0, 0));
    assert_eq!(one(b"EN\r\n", get).class, End);
    let gets = expect(Cmd::Gets);
    assert_eq!(
        one(b"VA 5 f7 c123\r\nhello\r\n", gets),
        Response::hits(1, 123)
    );
    assert_eq!(one(b"VA 1 c0\r\nx\r\n", gets), Response::hits(1, 0));
    assert_eq!(
        one(b"VA 1 f1 c18446744073709551615\r\nx\r\n", gets),
        Response::hits(1, u64::MAX)
    );
    // A hit without a value is still a hit.
    assert_eq!(one(b"HD c9\r\n", expect(Cmd::Gats)), Response::hits(1, 9));
    // Return flags are tokens, in any order and spacing, unknown ones ignored.
    assert_eq!(
        one(
            b"VA 5  t-1 kk\xc3\xa9y W X Z   c77 \r\nhello\r\n",
            expect(Cmd::Gat)
        ),
        Response::hits(1, 77)
    );
    assert_eq!(
        one(b"EN O12 knope\r\n", with_opaque(get, 12)),
        Response::hits(0, 0)
    );
}

#[test]
fn parses_single_replies() {
    let cases: &[(Cmd, &[u8], ResponseClass)] = &[
        (Cmd::Touch, b"HD\r\n", Touched),
        (Cmd::Touch, b"HD O9 kfoo\r\n", Touched),
        (Cmd::Touch, b"EN\r\n", NotFound),
        (Cmd::Incr, b"HD\r\n", Num),
        (Cmd::Incr, b"VA 2\r\n11\r\n", Num),
        (Cmd::Decr, b"VA 1 c8 t-1\r\n0\r\n", Num),
        (Cmd::Decr, b"NF\r\n", NotFound),
        (Cmd::Incr, b"NS\r\n", NotStored),
        (Cmd::Incr, b"EX\r\n", Exists),
        (Cmd::Delete, b"HD\r\n", Deleted),
        (Cmd::Delete, b"NF O7\r\n", NotFound),
        (Cmd::Delete, b"EX\r\n", Exists),
        (Cmd::Noop, b"MN\r\n", End),
    ];
    for (cmd, wire, class) in cases {
        assert_eq!(
            one(wire, expect(*cmd)),
            Response::of(*class),
            "{cmd:?} {wire:?}"
        );
    }
    for cmd in Cmd::ALL.into_iter().filter(|c| c.is_storage()) {
        let e = expect(cmd);
        assert_eq!(one(b"HD\r\n", e), Response::of(Stored));
        assert_eq!(one(b"HD c5\r\n", e), Response::of(Stored));
        assert_eq!(one(b"NS\r\n", e), Response::of(NotStored));
        assert_eq!(one(b"EX\r\n", e), Response::of(Exists));
        assert_eq!(one(b"NF\r\n", e), Response::of(NotFound));
    }
}

#[test]
fn parses_errors_for_every_command() {
    let cases: &[(&[u8], ResponseClass)] = &[
        (b"ERROR\r\n", Error),
        (b"ERROR unknown command\r\n", Error),
        (b"CLIENT_ERROR bad command line format\r\n", ClientError),
        (b"CLIENT_ERROR\r\n", ClientError),
        (b"CLIENT_ERROR unauthenticated\r\n", AuthError),
        (
            b"SERVER_ERROR out of memory storing object\r\n",
            ServerError,
        ),
    ];
    for cmd in Cmd::ALL {
        for (wire, class) in cases {
            for e in [expect(cmd), quiet(cmd), multi(cmd, 3)] {
                let resp = try_parse(wire, e).unwrap();
                let fenced = e.noreply && cmd != Cmd::Noop || cmd.is_retrieval() && e.keys != 1;
                if fenced && *class != AuthError {
                    // Fenced: the error is held until MN.
                    assert_eq!(resp, None, "{cmd:?} {wire:?}");
                    let mut fenced = wire.to_vec();
                    fenced.extend_from_slice(b"MN\r\n");
                    assert_eq!(one(&fenced, e), Response::of(*class));
                } else {
                    assert_eq!(resp, Some((Response::of(*class), wire.len())));
                }
            }
        }
    }
}

/// Unauthenticated, memcached answers a whole read with one error and
/// drops the rest, fence included: the error ends the fenced response.
#[test]
fn auth_error_ends_a_fence() {
    let wire = b"CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR unauthenticated\r\n";
    for e in [quiet(Cmd::Set), multi(Cmd::Get, 3), quiet(Cmd::Touch)] {
        assert_eq!(try_parse(wire, e), Ok(Some((Response::of(AuthError), 30))));
    }
    let wire = b"VA 1\r\na\r\nCLIENT_ERROR unauthenticated\r\n";
    let e = multi(Cmd::Get, 2);
    assert_eq!(one(wire, e), Response::of(AuthError));
}

#[test]
fn replies_that_answer_another_command() {
    let cases: &[(Cmd, &[u8])] = &[
        (Cmd::Get, b"NS\r\n"),
        (Cmd::Get, b"NF\r\n"),
        (Cmd::Get, b"MN\r\n"),
        (Cmd::Touch, b"NF\r\n"),
        (Cmd::Set, b"EN\r\n"),
        (Cmd::Set, b"VA 1\r\nx\r\n"),
        (Cmd::Delete, b"NS\r\n"),
        (Cmd::Incr, b"EN\r\n"),
        (Cmd::Noop, b"HD\r\n"),
        (Cmd::Delete, b"MN\r\n"),
    ];
    for (cmd, wire) in cases {
        assert_eq!(
            try_parse(wire, expect(*cmd)),
            Err(ParseError::UnexpectedReply),
            "{cmd:?} {wire:?}"
        );
    }
    let fenced = b"NS\r\nMN\r\n";
    assert_eq!(
        try_parse(fenced, multi(Cmd::Get, 2)),
        Err(ParseError::UnexpectedReply)
    );
}

#[test]
fn parses_multigets() {
    let e = multi(Cmd::Get, 3);
    assert_eq!(
        one(b"VA 1 f0\r\na\r\nVA 2 f0\r\nbb\r\nMN\r\n", e),
        Response::hits(2, 0)
    );
    assert_eq!(one(b"MN\r\n", e), Response::hits(0, 0));
    assert_eq!(one(b"MN\r\n", multi(Cmd::Get, 0)), Response::hits(0, 0));
    let e = multi(Cmd::Gets, 3);
    assert_eq!(
        one(b"VA 1 f0 c5\r\na\r\nVA 1 f0 c6\r\nb\r\nMN\r\n", e),
        Response::hits(2, 6)
    );
    // A miss q should have hidden is a miss all the same.
    assert_eq!(
        one(b"EN\r\nVA 1 c3\r\nx\r\nEN\r\nMN\r\n", e),
        Response::hits(1, 3)
    );
    // An error does not end the multiget: the server goes on to MN.
    let wire = b"VA 1\r\na\r\nCLIENT_ERROR bad command line format\r\nVA 1\r\nb\r\nSERVER_ERROR x\r\nMN\r\n";
    assert_eq!(one(wire, e), Response::of(ClientError));
    // Only the first response is taken.
    let wire = b"VA 1\r\na\r\nMN\r\nMN\r\n";
    assert_eq!(try_parse(wire, e), Ok(Some((Response::hits(1, 0), 13))));
    assert_eq!(
        try_parse(b"MN\r\nMN\r\n", e),
        Ok(Some((Response::hits(0, 0), 4)))
    );
}

#[test]
fn parses_quiet_outcomes() {
    let cases: &[(Cmd, &[u8], Response)] = &[
        (Cmd::Set, b"MN\r\n", Response::of(Stored)),
        (Cmd::Add, b"NS\r\nMN\r\n", Response::of(NotStored)),
        (Cmd::Cas, b"EX\r\nMN\r\n", Response::of(Exists)),
        (Cmd::Cas, b"NF\r\nMN\r\n", Response::of(NotFound)),
        // A stray HD is the success q should have hidden.
        (Cmd::Append, b"HD\r\nMN\r\n", Response::of(Stored)),
        // The first reply wins.
        (Cmd::Replace, b"NS\r\nEX\r\nMN\r\n", Response::of(NotStored)),
        (
            Cmd::Set,
            b"CLIENT_ERROR bad data chunk\r\nERROR\r\nMN\r\n",
            Response::of(ClientError),
        ),
        (Cmd::Delete, b"MN\r\n", Response::of(Deleted)),
        (Cmd::Delete, b"NF\r\nMN\r\n", Response::of(NotFound)),
        (Cmd::Incr, b"MN\r\n", Response::of(Num)),
        (Cmd::Decr, b"NF\r\nMN\r\n", Response::of(NotFound)),
        // mg's q hides the miss, not the hit.
        (Cmd::Touch, b"MN\r\n", Response::of(NotFound)),
        (Cmd::Touch, b"HD\r\nMN\r\n", Response::of(Touched)),
        (Cmd::Get, b"MN\r\n", Response::hits(0, 0)),
        (
            Cmd::Gets,
            b"VA 1 f0 c4\r\nx\r\nMN\r\n",
            Response::hits(1, 4),
        ),
    ];
    for (cmd, wire, resp) in cases {
        assert_eq!(one(wire, quiet(*cmd)), *resp, "{cmd:?} {wire:?}");
    }
    // A noop cannot be quiet: its MN is its reply.
    assert_eq!(one(b"MN\r\n", quiet(Cmd::Noop)), Response::of(End));
}

#[test]
fn checks_opaque() {
    let get = with_opaque(expect(Cmd::Get), 12);
    assert_eq!(one(b"VA 1 f0 O12\r\nx\r\n", get), Response::hits(1, 0));
    // Error lines and MN carry no opaque.
    assert_eq!(
        one(b"SERVER_ERROR busy\r\n", get),
        Response::of(ServerError)
    );
    let mismatches: &[&[u8]] = &[
        b"VA 1 f0 O13\r\nx\r\n",
        b"EN O1\r\n",
        b"EN O\r\n",
        b"EN O012\r\n",
        b"HD O12 O13\r\n",
    ];
    for wire in mismatches {
        assert_eq!(
            try_parse(wire, get),
            Err(ParseError::OpaqueMismatch),
            "{wire:?}"
        );
    }
    // The opaque is checked before the data block arrives.
    assert_eq!(
        try_parse(b"VA 5 O13\r\n", get),
        Err(ParseError::OpaqueMismatch)
    );
    // A request without an opaque ignores one in the reply.
    assert_eq!(one(b"HD O5\r\n", expect(Cmd::Set)), Response::of(Stored));
    let set = with_opaque(quiet(Cmd::Set), 4);
    assert_eq!(one(b"NS O4\r\nMN\r\n", set), Response::of(NotStored));
    assert_eq!(
        try_parse(b"NS O5\r\nMN\r\n", set),
        Err(ParseError::OpaqueMismatch)
    );
    let mget = with_opaque(multi(Cmd::Get, 3), 7);
    assert_eq!(
        try_parse(b"VA 1 O7\r\na\r\nVA 1 O8\r\nb\r\nMN\r\n", mget),
        Err(ParseError::OpaqueMismatch)
    );
}

#[test]
fn malformed() {
    let cases: &[(&[u8], ParseError)] = &[
        (b"XX\r\n", ParseError::UnknownReply),
        (b"HDX\r\n", ParseError::UnknownReply),
        (b"hd\r\n", ParseError::UnknownReply),
        (b"END\r\n", ParseError::UnknownReply),
        (b"STORED\r\n", ParseError::UnknownReply),
        (b"H\r\n", ParseError::UnknownReply),
        (b"\r\n", ParseError::UnknownReply),
        (b"HD\tc1\r\n", ParseError::UnknownReply),
        (b"HD \x01\r\n", ParseError::UnknownReply),
        (b"HD c\x7f\r\n", ParseError::UnknownReply),
        (b"ERRORS\r\n", ParseError::UnknownReply),
        (b"HD\n", ParseError::BadLineEnding),
        (b"\n", ParseError::BadLineEnding),
        (b"HD c1\rx\r\n", ParseError::BadLineEnding),
        (b"ERROR x\ry\r\n", ParseError::BadLineEnding),
        (b"VA\r\n", ParseError::BadValueHeader),
        (b"VA \r\n", ParseError::BadValueHeader),
        (b"VA x\r\n", ParseError::BadValueHeader),
        (b"VA -1\r\n", ParseError::BadValueHeader),
        (b"VA f0 5\r\n", ParseError::BadValueHeader),
        (
            b"VA 99999999999999999999999\r\n",
            ParseError::BadValueHeader,
        ),
        (b"VA 1073741825\r\n", ParseError::BadValueHeader),
        (b"VA 1\r\nxyz\r\n", ParseError::BadValueTerminator),
        (b"VA 0\r\nx\r\n", ParseError::BadValueTerminator),
        (b"HD c\r\n", ParseError::BadNumber),
        (b"HD cx\r\n", ParseError::BadNumber),
        (b"HD c-1\r\n", ParseError::BadNumber),
        (b"HD c18446744073709551616\r\n", ParseError::BadNumber),
    ];
    for (wire, err) in cases {
        for e in [expect(Cmd::Gets), multi(Cmd::Gets, 2)] {
            assert_eq!(try_parse(wire, e), Err(err.clone()), "{wire:?} {e:?}");
        }
    }
    // The largest value accepted waits for its data.
    assert_eq!(try_parse(b"VA 1073741824\r\n", expect(Cmd::Get)), Ok(None));
    let long = vec![b'H'; crate::ascii::MAX_LINE + 10];
    assert_eq!(
        try_parse(&long, expect(Cmd::Get)),
        Err(ParseError::LineTooLong)
    );
    let mut long = b"HD ".to_vec();
    long.resize(crate::ascii::MAX_LINE, b'k');
    assert_eq!(
        try_parse(&long, quiet(Cmd::Set)),
        Err(ParseError::LineTooLong)
    );
    // Inside a fence too.
    let wire = b"VA 1\r\nx\r\nSTORED\r\n";
    assert_eq!(
        try_parse(wire, multi(Cmd::Get, 2)),
        Err(ParseError::UnknownReply)
    );
}

/// Each wire, cut anywhere, is incomplete; fed a byte at a time with the
/// progress carried over, it completes exactly at its last byte.
#[test]
fn incomplete_at_every_cut() {
    let cases: &[(&[u8], Expect, Response)] = &[
        (
            b"VA 5 f7 c1\r\nhello\r\n",
            expect(Cmd::Gets),
            Response::hits(1, 1),
        ),
        (
            b"EN O3\r\n",
            with_opaque(expect(Cmd::Get), 3),
            Response::hits(0, 0),
        ),
        (b"HD\r\n", expect(Cmd::Set), Response::of(Stored)),
        (b"VA 2\r\n11\r\n", expect(Cmd::Incr), Response::of(Num)),
        (
            b"SERVER_ERROR busy\r\n",
            expect(Cmd::Delete),
            Response::of(ServerError),
        ),
        (b"MN\r\n", expect(Cmd::Noop), Response::of(End)),
        (
            b"VA 1 f0 c5\r\na\r\nEN\r\nVA 3 f0 c6\r\nb\r\n\r\nMN\r\n",
            multi(Cmd::Gets, 3),
            Response::hits(2, 6),
        ),
        (
            b"VA 1\r\na\r\nCLIENT_ERROR bad\r\nMN\r\n",
            multi(Cmd::Get, 2),
            Response::of(ClientError),
        ),
        (
            b"NS\r\nEX\r\nMN\r\n",
            quiet(Cmd::Add),
            Response::of(NotStored),
        ),
        (b"HD\r\nMN\r\n", quiet(Cmd::Touch), Response::of(Touched)),
    ];
    for (wire, e, resp) in cases {
        for cut in 0..wire.len() {
            assert_eq!(
                try_parse(&wire[..cut], *e),
                Ok(None),
                "{wire:?} cut at {cut}"
            );
        }
        let mut progress = Progress::default();
        for cut in 0..wire.len() {
            let got = parse(&wire[..cut], &mut progress, *e, &[]);
            assert_eq!(got, Ok(None), "{wire:?} resumed at {cut}");
        }
        let got = parse(wire, &mut progress, *e, &[]);
        assert_eq!(got, Ok(Some((*resp, wire.len()))), "{wire:?}");
        assert_eq!(progress, Progress::default());
    }
}

#[test]
fn progress_skips_complete_replies() {
    let e = multi(Cmd::Gets, 3);
    let wire = b"VA 1 c5\r\na\r\nVA 1 c6\r\nb\r\nMN\r\n";
    let mut progress = Progress::default();
    // Cut inside the second header: the first value block is done.
    assert_eq!(parse(&wire[..15], &mut progress, e, &[]), Ok(None));
    assert_eq!(
        progress,
        Progress {
            offset: 12,
            values: 1,
            cas: 5,
            seen: None,
            key_pos: 0,
        }
    );
    // The resumed parse never looks before the offset: garbage there is
    // not seen, and the first block still counts.
    let mut resumed = vec![b'X'; 12];
    resumed.extend_from_slice(&wire[12..]);
    let resp = parse(&resumed, &mut progress, e, &[]);
    assert_eq!(resp, Ok(Some((Response::hits(2, 6), wire.len()))));
    assert_eq!(progress, Progress::default());
    // A seen error is carried over too.
    let wire = b"NS\r\nEX\r\nMN\r\n";
    assert_eq!(
        parse(&wire[..6], &mut progress, quiet(Cmd::Add), &[]),
        Ok(None)
    );
    assert_eq!(progress.seen, Some(NotStored));
    assert_eq!(progress.offset, 4);
    // An error resets the progress.
    assert!(parse(b"NS\r\nXX\r\n", &mut progress, quiet(Cmd::Add), &[]).is_err());
    assert_eq!(progress, Progress::default());
}

#[test]
fn encodes_return_flags_and_vivify() {
    let opts: Options = "k, t,s,N30".parse().unwrap();
    let mut out = Vec::new();
    encode_with(&mut out, &req(Cmd::Get, b"a"), opts);
    assert_eq!(out, b"mg a v f k t s N30\r\n");
    out.clear();
    encode_with(&mut out, &req(Cmd::Get, b"a b"), opts);
    assert_eq!(
        out,
        b"mg a v f q k t s N30\r\nmg b v f q k t s N30\r\nmn\r\n"
    );
    // Only retrievals carry them.
    out.clear();
    encode_with(&mut out, &req(Cmd::Delete, b"a"), opts);
    assert_eq!(out, b"md a\r\n");
    assert!("b".parse::<Options>().unwrap().base64_keys);
    for bad in ["x", "N", "Nx", "k,v"] {
        let err = bad.parse::<Options>().unwrap_err();
        assert!(err.contains("unknown meta flag"), "{bad}: {err}");
    }
}

#[test]
fn a_vivified_stub_is_a_miss() {
    // Replies memcached 1.6.18 sent to `mg miss v f N30 k t s`.
    let won = b"VA 0 f0 kmiss t30 s0 W\r\n\r\n";
    assert_eq!(one(won, expect(Cmd::Get)), Response::hits(0, 0));
    let other_won = b"VA 0 f0 kmiss t30 s0 Z\r\n\r\n";
    assert_eq!(one(other_won, expect(Cmd::Get)), Response::hits(0, 0));
    let hit = b"VA 2 f0 khit t-1 s2 c2\r\nhi\r\n";
    assert_eq!(one(hit, expect(Cmd::Get)), Response::hits(1, 2));
    // A touch of a stub touched it.
    assert_eq!(one(b"HD Z\r\n", expect(Cmd::Touch)), Response::of(Touched));
    // In a multiget, the stub is not counted among the hits.
    let wire = b"VA 0 f0 W\r\n\r\nVA 2 f0\r\nhi\r\nMN\r\n";
    assert_eq!(one(wire, multi(Cmd::Get, 2)), Response::hits(1, 0));
}

#[test]
fn hits_that_name_their_key_must_name_the_keys_asked() {
    let asked = b"k1 k2";
    let e = multi(Cmd::Get, 2);
    let run = |wire: &[u8]| parse(wire, &mut Progress::default(), e, asked);
    let ok = b"VA 1 kk2\r\nx\r\nMN\r\n";
    assert_eq!(run(ok), Ok(Some((Response::hits(1, 0), ok.len()))));
    assert_eq!(
        run(b"VA 1 kk9\r\nx\r\nMN\r\n"),
        Err(ParseError::KeyMismatch)
    );
    assert_eq!(
        run(b"VA 1 kk2\r\nx\r\nVA 1 kk1\r\nx\r\nMN\r\n"),
        Err(ParseError::KeyMismatch)
    );
    // Without `k`, more hits than keys asked is still caught.
    assert_eq!(
        run(b"VA 1\r\nx\r\nVA 1\r\nx\r\nVA 1\r\nx\r\nMN\r\n"),
        Err(ParseError::TooManyValues)
    );
    // A single get's hit, and a base64 key, which is not compared.
    let one = expect(Cmd::Get);
    let single = |wire: &[u8]| parse(wire, &mut Progress::default(), one, b"k1");
    assert_eq!(single(b"VA 1 kk2\r\nx\r\n"), Err(ParseError::KeyMismatch));
    assert!(single(b"VA 1 kazE= b\r\nx\r\n").unwrap().is_some());
}
