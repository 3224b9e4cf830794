//! Every protocol's codec against a real memcached (and redis-server when
//! one is installed): each command does what memcached says it does.
//! A small blocking client drives the codecs directly, so that a failure
//! names the command and the reply.

mod support;

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
                .parse(&self.pending, &mut progress, req.expect())
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
    let mut r = Request::new(cmd, key);
    r.value = value;
    r
}

fn tcp(m: &Memcached) -> TcpStream {
    let s = TcpStream::connect(m.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// The commands every memcached protocol has, checked one by one.
fn exercise<S: Read + Write>(c: &mut Client<S>) {
    let p = c.protocol;
    assert_eq!(
        c.class(store(Cmd::Set, b"k1", b"hello")),
        Stored,
        "{p:?} set"
    );
    assert_eq!(
        c.call(req(Cmd::Get, b"k1")),
        Response::hits(1, 0).with_cas_of(c, b"k1"),
        "{p:?} get"
    );
    assert_eq!(c.class(req(Cmd::Get, b"nope")), End, "{p:?} get miss");
    assert_eq!(
        c.class(store(Cmd::Add, b"k1", b"x")),
        NotStored,
        "{p:?} add existing"
    );
    assert_eq!(
        c.class(store(Cmd::Add, b"k2", b"x")),
        Stored,
        "{p:?} add new"
    );
    assert_eq!(
        c.class(store(Cmd::Replace, b"nope", b"x")),
        NotStored,
        "{p:?} replace missing"
    );
    assert_eq!(
        c.class(store(Cmd::Replace, b"k2", b"y")),
        Stored,
        "{p:?} replace"
    );
    assert_eq!(
        c.class(store(Cmd::Append, b"k2", b"zz")),
        Stored,
        "{p:?} append"
    );
    assert_eq!(
        c.class(store(Cmd::Prepend, b"k2", b"aa")),
        Stored,
        "{p:?} prepend"
    );
    assert_eq!(
        c.class(store(Cmd::Append, b"nope", b"zz")),
        NotStored,
        "{p:?} append missing"
    );
    // A multiget of three keys, two present.
    let multi = c.call(req(Cmd::Get, b"k1 nope k2"));
    assert_eq!((multi.class, multi.values), (Value, 2), "{p:?} multiget");
    let none = c.call(req(Cmd::Get, b"nope1 nope2"));
    assert_eq!(
        (none.class, none.values),
        (End, 0),
        "{p:?} multiget of misses"
    );
    // cas: a fresh unique stores, a stale one is refused.
    let gets = c.call(req(Cmd::Gets, b"k1"));
    assert_eq!(gets.values, 1, "{p:?} gets");
    assert_ne!(gets.cas, 0, "{p:?} gets returns a cas unique");
    let mut fresh = store(Cmd::Cas, b"k1", b"v2");
    fresh.cas = gets.cas;
    assert_eq!(c.class(fresh), Stored, "{p:?} cas with the current unique");
    assert_eq!(c.class(fresh), Exists, "{p:?} cas with a stale unique");
    // incr/decr.
    assert_eq!(
        c.class(arith(Cmd::Incr, b"nope", 1)),
        NotFound,
        "{p:?} incr missing"
    );
    assert_eq!(c.class(store(Cmd::Set, b"n", b"10")), Stored);
    assert_eq!(c.class(arith(Cmd::Incr, b"n", 5)), Num, "{p:?} incr");
    assert_eq!(c.class(arith(Cmd::Decr, b"n", 3)), Num, "{p:?} decr");
    assert_eq!(
        c.class(arith(Cmd::Incr, b"k1", 1)),
        ClientError,
        "{p:?} incr non-numeric"
    );
    // delete.
    assert_eq!(c.class(req(Cmd::Delete, b"k2")), Deleted, "{p:?} delete");
    assert_eq!(
        c.class(req(Cmd::Delete, b"k2")),
        NotFound,
        "{p:?} delete again"
    );
    // touch, gat, gats.
    assert_eq!(
        c.class(ttl(Cmd::Touch, b"nope", 100)),
        NotFound,
        "{p:?} touch missing"
    );
    let gat = c.call(ttl(Cmd::Gat, b"k1", 100));
    assert_eq!((gat.class, gat.values), (Value, 1), "{p:?} gat");
    let gats = c.call(ttl(Cmd::Gats, b"k1", 100));
    assert!(gats.values == 1 && gats.cas != 0, "{p:?} gats: {gats:?}");
    // Quiet requests, fenced: success is silent, failure still reported.
    let mut quiet = store(Cmd::Set, b"q1", b"quiet");
    quiet.noreply = true;
    assert_eq!(c.class(quiet), Stored, "{p:?} quiet set");
    assert_eq!(
        c.call(req(Cmd::Get, b"q1")).values,
        1,
        "{p:?} the quiet set stored"
    );
    let mut quiet_add = store(Cmd::Add, b"q1", b"again");
    quiet_add.noreply = true;
    if p != Protocol::Ascii {
        // Text noreply hides failures too; meta and binary report them.
        assert_eq!(
            c.class(quiet_add),
            NotStored,
            "{p:?} quiet add of an existing key"
        );
    }
}

/// The touch that extends an item's life: set to expire in 1 s, touched to
/// 100 s, still there after 2 s.
fn touch_extends_ttl<S: Read + Write>(c: &mut Client<S>) {
    let p = c.protocol;
    let mut short = store(Cmd::Set, b"ttl", b"v");
    short.exptime = 1;
    assert_eq!(c.class(short), Stored);
    assert_eq!(
        c.class(ttl(Cmd::Touch, b"ttl", 100)),
        Touched,
        "{p:?} touch"
    );
    let mut gone = store(Cmd::Set, b"ttl2", b"v");
    gone.exptime = 1;
    assert_eq!(c.class(gone), Stored);
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(
        c.call(req(Cmd::Get, b"ttl")).values,
        1,
        "{p:?} touched item lives on"
    );
    assert_eq!(
        c.call(req(Cmd::Get, b"ttl2")).values,
        0,
        "{p:?} untouched item expired"
    );
}

trait WithCas {
    fn with_cas_of<S: Read + Write>(self, c: &mut Client<S>, key: &'static [u8]) -> Response;
}

impl WithCas for Response {
    /// Binary replies always carry the cas; text and meta only when asked.
    fn with_cas_of<S: Read + Write>(self, c: &mut Client<S>, key: &'static [u8]) -> Response {
        if c.protocol == Protocol::Binary {
            Response::hits(self.values, c.call(req(Cmd::Gets, key)).cas)
        } else {
            self
        }
    }
}

fn arith(cmd: Cmd, key: &'static [u8], delta: u64) -> Request<'static> {
    let mut r = Request::new(cmd, key);
    r.delta = delta;
    r
}

fn ttl(cmd: Cmd, key: &'static [u8], exptime: u32) -> Request<'static> {
    let mut r = Request::new(cmd, key);
    r.exptime = exptime;
    r
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
