//! Opening the run's connections, authenticating them, and sharing them
//! out among the workers.

use super::auth;
use crate::spec::{Address, RunSpec};
use socket2::{Domain, Protocol, Socket, Type};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// One open connection: its socket and the server it goes to.
pub struct Opened {
    pub socket: OwnedFd,
    pub server: usize,
    /// A UDP socket: requests and replies are framed datagrams.
    pub datagram: bool,
}

/// Opens `spec.connections` connections to each address (TCP_NODELAY on),
/// authenticates them if the spec has a user, and leaves them
/// non-blocking. Fails with a message naming the server; an unreachable
/// server and refused credentials both end the run (exit 1).
pub fn connect_all(addrs: &[Address], spec: &RunSpec) -> Result<Vec<Opened>, String> {
    let mut out = Vec::with_capacity(addrs.len() * spec.connections);
    for (server, addr) in addrs.iter().enumerate() {
        for _ in 0..spec.connections {
            let socket = connect_one(addr, spec, spec.timeout)
                .map_err(|e| format!("{e} (after {} open)", out.len()))?;
            out.push(Opened {
                socket,
                server,
                datagram: addr.is_udp(),
            });
        }
    }
    Ok(out)
}

/// Opens one connection to `addr`, authenticated, non-blocking. Blocks
/// for the connect and the authentication exchange (each bounded by
/// `timeout`).
pub fn connect_one(addr: &Address, spec: &RunSpec, timeout: Duration) -> Result<OwnedFd, String> {
    let socket = connect(addr, timeout)
        .map_err(|e| format!("cannot connect to the server at {addr}: {e}"))?;
    if let (Some(user), Some(password)) = (&spec.user, &spec.password) {
        auth::authenticate(&socket, spec.protocol, user, password)
            .map_err(|e| format!("{addr}: {e}"))?;
    }
    set_nonblocking(&socket).map_err(|e| format!("{addr}: {e}"))?;
    Ok(socket)
}

/// A blocking socket, connected, with `timeout` on reads and writes (for
/// the authentication exchange).
fn connect(addr: &Address, timeout: Duration) -> std::io::Result<OwnedFd> {
    match addr {
        Address::Tcp(a) => inet(a, Type::STREAM, Protocol::TCP, timeout),
        Address::Udp(a) => inet(a, Type::DGRAM, Protocol::UDP, timeout),
        Address::Unix(path) => {
            let stream = UnixStream::connect(path)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))?;
            Ok(stream.into())
        }
    }
}

fn inet(a: &SocketAddr, ty: Type, proto: Protocol, timeout: Duration) -> std::io::Result<OwnedFd> {
    let socket = Socket::new(Domain::for_address(*a), ty, Some(proto))?;
    if ty == Type::STREAM {
        socket.connect_timeout(&(*a).into(), timeout)?;
        socket.set_nodelay(true)?;
    } else {
        // A connected UDP socket only receives from its server.
        socket.connect(&(*a).into())?;
        // Room for a burst of replies while the worker is busy.
        let _ = socket.set_recv_buffer_size(4 << 20);
    }
    socket.set_read_timeout(Some(timeout))?;
    socket.set_write_timeout(Some(timeout))?;
    Ok(socket.into())
}

fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    socket2::SockRef::from(fd).set_nonblocking(true)
}

/// Which worker gets connection `i` of `total`: round-robin, so that each
/// server's connections spread over every thread.
pub fn worker_of(i: usize, workers: usize) -> usize {
    i % workers
}
