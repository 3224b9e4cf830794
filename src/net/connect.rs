//! Opening the run's connections, authenticating them, and sharing them
//! out among the workers.

use super::{auth, Link, NetError, Target};
use crate::spec::{Address, RunSpec, SocketOptions};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// One open connection: its socket (and TLS session) and the server it
/// goes to.
pub struct Opened {
    /// `None`: its server was down at the start of a run that passes a
    /// down server over (`--rep-write`); it is opened once it is up.
    pub link: Option<Link>,
    pub server: usize,
    /// A UDP socket: requests and replies are framed datagrams.
    pub datagram: bool,
}

/// Opens `spec.connections` connections to each address (with the
/// spec's socket options), authenticates them if the spec has a user, and
/// leaves them non-blocking. Fails with a message naming the server; an
/// unreachable server and refused credentials both end the run (exit 1).
///
/// With `--facebook` each connection is a group of sockets, in a row: a UDP
/// socket to the server's port number, then `conn_sock` TCP connections.
///
/// A signal (`stop` set) ends it within a moment, with [`STOPPED`].
///
/// In a run that passes a down server over (`--rep-write`), a server that
/// cannot be reached is tried once: its connections are left unopened
/// (for the workers to open once it is up) and it is named in `down`,
/// with why. Unless every server is down.
pub fn connect_all(
    addrs: &[Target],
    spec: &RunSpec,
    stop: &AtomicUsize,
) -> Result<Connected, NetError> {
    let mut out =
        Vec::with_capacity(addrs.len() * spec.load.connections * spec.sockets_per_connection());
    let mut down: Vec<Option<String>> = vec![None; addrs.len()];
    for server in connection_order(addrs.len(), spec) {
        for addr in group(&addrs[server], spec) {
            if stop.load(Ordering::Relaxed) != 0 {
                return Err(NetError::Stopped);
            }
            let link = match &down[server] {
                Some(_) => None,
                None => match open(&addr, spec, spec.connect_timeout(), out.len(), Some(stop)) {
                    Ok(link) => Some(link),
                    Err(why @ NetError::Unreachable { .. })
                        if spec.server.replication.is_some() =>
                    {
                        down[server] = Some(why.to_string());
                        None
                    }
                    Err(e) => {
                        let open = out.len();
                        return Err(NetError::After {
                            open,
                            source: Box::new(e),
                        });
                    }
                },
            };
            out.push(Opened {
                link,
                server,
                datagram: addr.is_udp(),
            });
        }
    }
    let mut down: Vec<(usize, String)> = (down.into_iter().enumerate())
        .filter_map(|(server, why)| Some((server, why?)))
        .collect();
    if !down.is_empty() && down.len() == addrs.len() {
        return Err(NetError::AllDown(down.swap_remove(0).1));
    }
    Ok(Connected { conns: out, down })
}

/// The run's connections, and the servers down at the start (by number,
/// with why) whose connections wait to be opened.
pub struct Connected {
    pub conns: Vec<Opened>,
    pub down: Vec<(usize, String)>,
}

/// `connect_one`, typed: [`NetError::Unreachable`] when the server could
/// not be reached.
fn open(
    addr: &Target,
    spec: &RunSpec,
    timeout: Duration,
    nth: usize,
    stop: Option<&AtomicUsize>,
) -> Result<Link, NetError> {
    let link = connect_blocking(addr, spec, timeout, nth, stop)?;
    set_nonblocking(&link.socket).map_err(|e| NetError::Io(e).at(addr))?;
    Ok(link)
}

/// The servers of the run's connections, in the order they are opened:
/// when keys are placed on several servers, each connection is a client
/// with one socket per server, in a row; otherwise server by server.
fn connection_order(nservers: usize, spec: &RunSpec) -> Vec<usize> {
    // A connection schedule opens its own; held ones would only preload
    // (and, with nothing to preload, be counted by the server for nothing:
    // twemperf opens none).
    let c = match spec.churn().is_some() && spec.key_space.preload == crate::spec::LoadMode::NoLoad
    {
        true => 0,
        false => spec.load.connections,
    };
    if spec.places_keys(nservers) {
        (0..c).flat_map(|_| 0..nservers).collect()
    } else {
        (0..nservers)
            .flat_map(|s| std::iter::repeat_n(s, c))
            .collect()
    }
}

/// The sockets one connection to `addr` is made of.
fn group(addr: &Target, spec: &RunSpec) -> Vec<Target> {
    match addr.addr {
        Address::Tcp(a) if spec.conns.facebook => std::iter::once(Target::plain(Address::Udp(a)))
            .chain(std::iter::repeat_n(addr.clone(), spec.conns.conn_sock))
            .collect(),
        _ => vec![addr.clone()],
    }
}

/// Why `connect_all` gave up when a signal came.
pub const STOPPED: &str = "stopped by a signal while connecting";

/// Opens one connection to `addr`, authenticated, non-blocking. Blocks
/// for the connect and the authentication exchange (each bounded by
/// `timeout`; the connect cut short once `stop` is set). `nth` picks its
/// source address among `--source-addrs`.
pub fn connect_one(
    addr: &Target,
    spec: &RunSpec,
    timeout: Duration,
    nth: usize,
    stop: Option<&AtomicUsize>,
) -> Result<Link, NetError> {
    open(addr, spec, timeout, nth, stop)
}

/// `connect_one`, left blocking with `timeout` on its reads and writes.
/// Over TLS the handshake is done (within `timeout`) before the
/// authentication. [`NetError::Unreachable`] when the server could not
/// be reached.
pub fn connect_blocking(
    addr: &Target,
    spec: &RunSpec,
    timeout: Duration,
    nth: usize,
    stop: Option<&AtomicUsize>,
) -> Result<Link, NetError> {
    let mut link = secured(addr, spec, timeout, nth, stop);
    if matches!(&link, Err(NetError::Resumption)) {
        // Once, on a new socket: the session now makes a full handshake.
        link = secured(addr, spec, timeout, nth, stop);
    }
    let mut link = link.map_err(|e| match e {
        NetError::Resumption => e.at(addr),
        e => e,
    })?;
    if let (Some(user), Some(password)) = (&spec.target.user, &spec.target.password) {
        auth::authenticate(&mut link, spec.target.protocol, user, password)
            .map_err(|e| NetError::from(e).at(addr))?;
    }
    Ok(link)
}

/// A blocking connection to `addr`, with its TLS handshake done if over
/// TLS (the handshake's time kept); [`NetError::Resumption`] when the
/// server refused to resume its session.
fn secured(
    addr: &Target,
    spec: &RunSpec,
    timeout: Duration,
    nth: usize,
    stop: Option<&AtomicUsize>,
) -> Result<Link, NetError> {
    let socket = connect(addr, &spec.conns.socket, timeout, nth, stop).map_err(|source| {
        NetError::Unreachable {
            addr: addr.to_string(),
            source,
        }
    })?;
    let mut link = Link::plain(socket);
    let tls = addr.session();
    if let Some(mut tls) = tls.map_err(|e| NetError::Io(e).at(addr))? {
        let began = super::clock_ns();
        if let Err(why) = handshake_blocking(&link.socket, &mut tls, timeout, stop) {
            return Err(match tls.resumption_refused() {
                true => NetError::Resumption,
                false => why.at(addr),
            });
        }
        link.handshake_ns = super::clock_ns() - began;
        link.tls = Some(tls);
    }
    Ok(link)
}

/// A TLS handshake on a connected socket, within `timeout` in all: a
/// server that sends its records a byte at a time is not waited for byte
/// by byte. A signal (`stop`) ends it within a moment. The socket is left
/// blocking.
fn handshake_blocking(
    socket: &OwnedFd,
    tls: &mut super::tls::Session,
    timeout: Duration,
    stop: Option<&AtomicUsize>,
) -> Result<(), NetError> {
    set_nonblocking(socket).map_err(NetError::Io)?;
    let deadline = std::time::Instant::now() + timeout;
    let mut scratch = vec![0u8; 16 << 10];
    while !tls.handshake(socket, &mut scratch).map_err(NetError::Io)? {
        wait_handshake(socket, tls.has_output(), deadline, stop)?;
    }
    while tls.has_output() {
        tls.send(socket).map_err(NetError::Io)?;
        if tls.has_output() {
            wait_handshake(socket, true, deadline, stop)?;
        }
    }
    socket2::SockRef::from(socket)
        .set_nonblocking(false)
        .map_err(NetError::Io)?;
    tls.confirm(socket, CONFIRM_WAIT).map_err(NetError::Io)
}

/// Waits until the handshake can go on (`send`: its records wait to go
/// out), within what is left before `deadline`.
fn wait_handshake(
    socket: &OwnedFd,
    send: bool,
    deadline: std::time::Instant,
    stop: Option<&AtomicUsize>,
) -> Result<(), NetError> {
    use super::blocking::{ready, Broken, Wait};
    use rustix::event::PollFlags;
    let timeout = deadline.saturating_duration_since(std::time::Instant::now());
    let events = if send {
        PollFlags::IN | PollFlags::OUT
    } else {
        PollFlags::IN
    };
    match ready(socket, events, Wait { timeout, stop }) {
        Ok(()) => Ok(()),
        Err(Broken::Stopped) => Err(NetError::Stopped),
        Err(Broken::TimedOut) => Err(NetError::HandshakeTimeout),
        Err(e) => Err(NetError::Wait(e)),
    }
}

/// How long a TLS 1.3 connect waits for the server's verdict on the
/// client (its first tickets, or its refusal): memcached and Redis, on
/// OpenSSL, send tickets at once; a server that sends none costs this
/// per held connection.
const CONFIRM_WAIT: Duration = Duration::from_millis(50);

/// A blocking TCP or unix connection to `addr` with default socket
/// options and `timeout` on the connect, reads and writes; nothing sent
/// (the stats tools). A signal (`stop` set) ends the connect's wait.
pub fn connect_plain(
    addr: &Address,
    timeout: Duration,
    stop: Option<&AtomicUsize>,
) -> Result<OwnedFd, NetError> {
    if matches!(addr, Address::Udp(_)) {
        return Err(NetError::NotStream(addr.to_string()));
    }
    connect(addr, &SocketOptions::default(), timeout, 0, stop).map_err(|source| NetError::Connect {
        addr: addr.to_string(),
        source,
    })
}

/// A connect error, with what to do about running out of ports.
pub fn describe(e: &std::io::Error) -> String {
    if crate::stats::ConnError::of(e) == crate::stats::ConnError::AddrUnavail {
        format!("{e}: no local port is free for this server (ports wait 60 s in TIME_WAIT; --linger 0 or --source-addrs go past it)")
    } else {
        e.to_string()
    }
}

/// A blocking socket, connected, with `timeout` on reads and writes (for
/// the authentication exchange).
fn connect(
    addr: &Address,
    opts: &SocketOptions,
    timeout: Duration,
    nth: usize,
    stop: Option<&AtomicUsize>,
) -> std::io::Result<OwnedFd> {
    match addr {
        Address::Tcp(a) => {
            let socket = tcp_socket(a, opts, nth, Type::STREAM)?;
            connect_within(&socket, &(*a).into(), timeout, stop)?;
            socket.set_read_timeout(Some(timeout))?;
            socket.set_write_timeout(Some(timeout))?;
            Ok(socket.into())
        }
        Address::Udp(a) => udp(a, timeout),
        Address::Unix(path) => {
            // A full accept backlog makes a unix connect wait: bounded too.
            let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
            connect_within(&socket, &SockAddr::unix(path)?, timeout, stop)?;
            socket.set_read_timeout(Some(timeout))?;
            socket.set_write_timeout(Some(timeout))?;
            Ok(socket.into())
        }
    }
}

/// Connects `socket` to `target` within `timeout`, as socket2's
/// `connect_timeout`, but waiting in steps that look at `stop`: a signal
/// ends the wait within a moment (`Interrupted`). Leaves it blocking.
fn connect_within(
    socket: &Socket,
    target: &SockAddr,
    timeout: Duration,
    stop: Option<&AtomicUsize>,
) -> std::io::Result<()> {
    socket.set_nonblocking(true)?;
    match socket.connect(target) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            let wait = super::blocking::Wait { timeout, stop };
            match super::blocking::ready(socket, rustix::event::PollFlags::OUT, wait) {
                Ok(()) => {}
                Err(super::blocking::Broken::Stopped) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        STOPPED,
                    ))
                }
                Err(super::blocking::Broken::TimedOut) => {
                    return Err(std::io::ErrorKind::TimedOut.into())
                }
                Err(e) => return Err(std::io::Error::other(e.to_string())),
            }
            if let Some(e) = socket.take_error()? {
                return Err(e);
            }
        }
        Err(e) => return Err(e),
    }
    socket.set_nonblocking(false)
}

/// How a non-blocking connect started.
pub enum Connecting {
    /// Connected at once (a unix socket, usually).
    Done(OwnedFd),
    /// Under way: the socket turns writable when it is done
    /// (`finish_connect` says how).
    Pending(OwnedFd),
}

/// Starts a non-blocking connect to `addr` (TCP or unix) with the spec's
/// socket options. Fails only when no connect could be started.
pub fn start_connect(
    addr: &Address,
    opts: &SocketOptions,
    nth: usize,
) -> std::io::Result<Connecting> {
    // Non-blocking from socket() on: no fcntl calls per connection.
    let ty = Type::STREAM.nonblocking();
    let (socket, target) = match addr {
        Address::Tcp(a) => (tcp_socket(a, opts, nth, ty)?, SockAddr::from(*a)),
        Address::Unix(path) => (Socket::new(Domain::UNIX, ty, None)?, SockAddr::unix(path)?),
        Address::Udp(_) => return Err(std::io::ErrorKind::Unsupported.into()),
    };
    match socket.connect(&target) {
        Ok(()) => Ok(Connecting::Done(socket.into())),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            Ok(Connecting::Pending(socket.into()))
        }
        // A full unix listen queue: as a refusal, not a pending connect.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            Err(std::io::Error::from_raw_os_error(libc::ECONNREFUSED))
        }
        Err(e) => Err(e),
    }
}

/// Whether a pending connect succeeded, once its socket turned writable.
pub fn finish_connect(fd: &OwnedFd) -> std::io::Result<()> {
    match socket2::SockRef::from(fd).take_error()? {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A TCP socket with the spec's options, bound to the `nth` source
/// address in turn if any are given, not yet connected.
fn tcp_socket(
    a: &SocketAddr,
    opts: &SocketOptions,
    nth: usize,
    ty: Type,
) -> std::io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(*a), ty, Some(Protocol::TCP))?;
    socket.set_nodelay(!opts.no_nodelay)?;
    if let Some(secs) = opts.linger_s {
        socket.set_linger(Some(Duration::from_secs(secs.into())))?;
    }
    if let Some(n) = opts.send_buffer {
        socket.set_send_buffer_size(n)?;
    }
    if let Some(n) = opts.recv_buffer {
        socket.set_recv_buffer_size(n)?;
    }
    if !opts.source_addrs.is_empty() {
        let ip = opts.source_addrs[nth % opts.source_addrs.len()];
        // The port is chosen at connect(), per destination, rather than at
        // bind() among every port of the address: each source address
        // then adds a whole range of ports for this server.
        bind_address_no_port(&socket);
        socket.bind(&SocketAddr::new(ip, 0).into())?;
    }
    Ok(socket)
}

/// IP_BIND_ADDRESS_NO_PORT (Linux 4.2); socket2 does not wrap it. Without
/// it the bind still works, with ports shared across destinations.
fn bind_address_no_port(socket: &Socket) {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket and an int option of the right size.
    unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(socket),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            std::ptr::addr_of!(one).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

fn udp(a: &SocketAddr, timeout: Duration) -> std::io::Result<OwnedFd> {
    let socket = Socket::new(Domain::for_address(*a), Type::DGRAM, Some(Protocol::UDP))?;
    // A connected UDP socket only receives from its server.
    socket.connect(&(*a).into())?;
    // Room for a burst of replies while the worker is busy.
    let _ = socket.set_recv_buffer_size(4 << 20);
    socket.set_read_timeout(Some(timeout))?;
    socket.set_write_timeout(Some(timeout))?;
    Ok(socket.into())
}

fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    socket2::SockRef::from(fd).set_nonblocking(true)
}

/// Which worker gets each socket.
pub struct Owners {
    workers: usize,
    /// Sockets that stay together (a client's sockets to every server, a
    /// `--facebook` group).
    unit: usize,
    /// `--roundrobin`: per server, the workers that serve it, and how many
    /// of its connections were handed out.
    roundrobin: Option<Vec<(Vec<usize>, usize)>>,
}

impl Owners {
    pub fn new(spec: &RunSpec, nservers: usize) -> Self {
        let workers = spec.load.threads;
        let roundrobin = spec.target.roundrobin.then(|| {
            (0..nservers)
                .map(|s| {
                    (
                        (0..workers)
                            .filter(|&t| serves(t, s, workers, nservers))
                            .collect(),
                        0,
                    )
                })
                .collect()
        });
        Owners {
            workers,
            unit: spec.sockets_per_unit(nservers),
            roundrobin,
        }
    }

    /// The worker of socket `i`, which goes to `server`: units round-robin
    /// over the workers, so that each server's connections spread over
    /// every thread; with `--roundrobin`, over the workers serving it.
    pub fn worker_of(&mut self, i: usize, server: usize) -> usize {
        match &mut self.roundrobin {
            Some(per_server) => {
                let (workers, handed) = &mut per_server[server];
                let w = workers[(*handed / self.unit) % workers.len()];
                *handed += 1;
                w
            }
            None => (i / self.unit) % self.workers,
        }
    }
}

/// `--roundrobin` (mutilate's and memcache-perf's `-R`): thread `t` serves
/// server `t mod servers`; with fewer threads than servers, server `s` is
/// served by thread `s mod threads`.
pub fn serves(t: usize, s: usize, threads: usize, servers: usize) -> bool {
    if threads >= servers {
        t % servers == s
    } else {
        s % threads == t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundrobin_gives_each_thread_its_servers() {
        // 4 threads, 2 servers: threads 0 and 2 serve server 0.
        assert!(serves(0, 0, 4, 2) && serves(2, 0, 4, 2) && serves(3, 1, 4, 2));
        assert!(!serves(1, 0, 4, 2));
        // 2 threads, 5 servers: thread 1 serves servers 1 and 3.
        let of_1: Vec<usize> = (0..5).filter(|&s| serves(1, s, 2, 5)).collect();
        assert_eq!(of_1, [1, 3]);
        // Every server has a thread either way.
        for (t, n) in [(4, 2), (2, 5), (3, 3), (1, 4)] {
            assert!((0..n).all(|s| (0..t).any(|w| serves(w, s, t, n))));
        }
    }
}
