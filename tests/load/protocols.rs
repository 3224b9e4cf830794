//! Every protocol's codec against a real memcached (and redis-server when
//! one is installed): each command does what memcached says it does.
//! A small blocking client drives the codecs directly, so that a failure
//! names the command and the reply.

use crate::support;

use mcbench_proto::{Cmd, Progress, Protocol, Request, Response, ResponseClass};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::*;
use ResponseClass::*;

/// A blocking connection speaking one protocol.
struct Client<S: Read + Write> {
    stream: S,
    protocol: Protocol,
    opaque: u32,
    pending: Vec<u8>,
}

impl<S: Read + Write> Client<S> {
    fn new(stream: S, protocol: Protocol) -> Self {
        Client {
            stream,
            protocol,
            opaque: 0,
            pending: Vec::new(),
        }
    }

    /// Sends `req` and returns its parsed reply.
    fn call(&mut self, mut req: Request) -> Response {
        self.opaque += 1;
        req.opaque = self.opaque;
        let mut out = Vec::new();
        self.protocol.encode(&mut out, &req);
        assert!(
            !out.is_empty(),
            "{:?} encoded nothing for {:?}",
            self.protocol,
            req.cmd
        );
        self.stream.write_all(&out).unwrap();
        let mut progress = Progress::default();
        let mut buf = [0u8; 65536];
        loop {
            match self
                .protocol
                .parse(&self.pending, &mut progress, req.expect(), req.keys)
            {
                Ok(Some((resp, used))) => {
                    self.pending.drain(..used);
                    return resp;
                }
                Ok(None) => {}
                Err(e) => panic!(
                    "{:?} {:?}: {e} in {:?}",
                    self.protocol,
                    req.cmd,
                    String::from_utf8_lossy(&self.pending)
                ),
            }
            let n = self.stream.read(&mut buf).unwrap();
            assert!(n > 0, "server closed during {:?}", req.cmd);
            self.pending.extend_from_slice(&buf[..n]);
        }
    }

    fn class(&mut self, req: Request) -> ResponseClass {
        self.call(req).class
    }
}

fn req(cmd: Cmd, keys: &'static [u8]) -> Request<'static> {
    Request::new(cmd, keys)
}

fn store(cmd: Cmd, key: &'static [u8], value: &'static [u8]) -> Request<'static> {
    Request {
        value,
        ..req(cmd, key)
    }
}

fn tcp(m: &Memcached) -> TcpStream {
    let s = TcpStream::connect(m.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Sends `r`; its reply must be of class `want`.
fn check<S: Read + Write>(
    c: &mut Client<S>,
    r: Request,
    want: ResponseClass,
    what: &str,
) -> Response {
    let got = c.call(r);
    assert_eq!(got.class, want, "{:?} {what}: {got:?}", c.protocol);
    got
}

/// The commands every memcached protocol has, checked one by one.
fn exercise<S: Read + Write>(c: &mut Client<S>) {
    let incr = |key, delta| Request {
        delta,
        ..req(Cmd::Incr, key)
    };
    let ttl = |cmd, key| Request {
        exptime: 100,
        ..req(cmd, key)
    };
    let steps = [
        (store(Cmd::Set, b"k1", b"hello"), Stored, "set"),
        (req(Cmd::Get, b"nope"), End, "get miss"),
        (store(Cmd::Add, b"k1", b"x"), NotStored, "add existing"),
        (store(Cmd::Add, b"k2", b"x"), Stored, "add new"),
        (
            store(Cmd::Replace, b"nope", b"x"),
            NotStored,
            "replace missing",
        ),
        (store(Cmd::Replace, b"k2", b"y"), Stored, "replace"),
        (store(Cmd::Append, b"k2", b"zz"), Stored, "append"),
        (store(Cmd::Prepend, b"k2", b"aa"), Stored, "prepend"),
        (
            store(Cmd::Append, b"nope", b"zz"),
            NotStored,
            "append missing",
        ),
        (incr(b"nope", 1), NotFound, "incr missing"),
        (store(Cmd::Set, b"n", b"10"), Stored, "set a number"),
        (incr(b"n", 5), Num, "incr"),
        (
            Request {
                delta: 3,
                ..req(Cmd::Decr, b"n")
            },
            Num,
            "decr",
        ),
        (incr(b"k1", 1), ClientError, "incr non-numeric"),
        (ttl(Cmd::Touch, b"nope"), NotFound, "touch missing"),
    ];
    for (r, want, what) in steps {
        check(c, r, want, what);
    }
    let p = c.protocol;
    let hit = check(c, req(Cmd::Get, b"k1"), Value, "get");
    assert_eq!(hit.values, 1, "{p:?} get");
    // A multiget of three keys, two present.
    let multi = check(c, req(Cmd::Get, b"k1 nope k2"), Value, "multiget");
    assert_eq!(multi.values, 2, "{p:?} multiget");
    check(c, req(Cmd::Get, b"nope1 nope2"), End, "multiget of misses");
    // cas: a fresh unique stores, a stale one is refused.
    let gets = check(c, req(Cmd::Gets, b"k1"), Value, "gets");
    assert_ne!(gets.cas, 0, "{p:?} gets returns a cas unique");
    let fresh = Request {
        cas: gets.cas,
        ..store(Cmd::Cas, b"k1", b"v2")
    };
    check(c, fresh, Stored, "cas with the current unique");
    check(c, fresh, Exists, "cas with a stale unique");
    check(c, req(Cmd::Delete, b"k2"), Deleted, "delete");
    check(c, req(Cmd::Delete, b"k2"), NotFound, "delete again");
    check(c, ttl(Cmd::Gat, b"k1"), Value, "gat");
    let gats = check(c, ttl(Cmd::Gats, b"k1"), Value, "gats");
    assert_ne!(gats.cas, 0, "{p:?} gats returns a cas unique");
    // Quiet requests, fenced: success is silent, failure still reported.
    let quiet = |r: Request<'static>| Request { noreply: true, ..r };
    check(
        c,
        quiet(store(Cmd::Set, b"q1", b"quiet")),
        Stored,
        "quiet set",
    );
    check(c, req(Cmd::Get, b"q1"), Value, "the quiet set stored");
    if p != Protocol::Ascii {
        // Text noreply hides failures too; meta and binary report them.
        let again = quiet(store(Cmd::Add, b"q1", b"again"));
        check(c, again, NotStored, "quiet add of an existing key");
    }
}

/// The touch that extends an item's life: set to expire in 1 s, touched to
/// 100 s, still there after 2 s.
fn touch_extends_ttl<S: Read + Write>(c: &mut Client<S>) {
    let short = |key| Request {
        exptime: 1,
        ..store(Cmd::Set, key, b"v")
    };
    check(c, short(b"ttl"), Stored, "set for 1 s");
    check(c, short(b"ttl2"), Stored, "set for 1 s");
    let touch = Request {
        exptime: 100,
        ..req(Cmd::Touch, b"ttl")
    };
    check(c, touch, Touched, "touch");
    std::thread::sleep(Duration::from_millis(2100));
    check(c, req(Cmd::Get, b"ttl"), Value, "the touched item lives on");
    check(c, req(Cmd::Get, b"ttl2"), End, "the untouched item expired");
}

#[test]
fn every_memcached_protocol_and_command_over_tcp() {
    let _machine = shared_machine();
    std::thread::scope(|scope| {
        for protocol in [Protocol::Ascii, Protocol::Meta, Protocol::Binary] {
            scope.spawn(move || {
                // A server per protocol: the checks use the same keys.
                let m = Memcached::start(&[]);
                let mut c = Client::new(tcp(&m), protocol);
                exercise(&mut c);
                touch_extends_ttl(&mut c);
            });
        }
    });
}

#[test]
fn commands_over_a_unix_socket() {
    let _machine = shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mc.sock");
    let _m = Memcached::start_unix(&path);
    for protocol in [Protocol::Ascii, Protocol::Meta, Protocol::Binary] {
        let stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut c = Client::new(stream, protocol);
        // The keys the previous protocol left behind.
        for key in [b"k1" as &'static [u8], b"k2", b"q1"] {
            let _ = c.class(req(Cmd::Delete, key));
        }
        exercise(&mut c);
    }
}
