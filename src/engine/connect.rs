//! Opening the run's connections, and sharing them out among the workers.

use socket2::{Domain, Protocol, Socket, Type};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Opens `per_server` connections to each address, TCP_NODELAY on,
/// non-blocking. Fails with a message naming the server.
pub fn connect_all(
    addrs: &[SocketAddr],
    per_server: usize,
    timeout: Duration,
) -> Result<Vec<(TcpStream, usize)>, String> {
    let mut out = Vec::with_capacity(addrs.len() * per_server);
    for (server, addr) in addrs.iter().enumerate() {
        for _ in 0..per_server {
            let stream = connect(addr, timeout).map_err(|e| {
                format!(
                    "cannot connect to memcached at {addr}: {e} (after {} open)",
                    out.len()
                )
            })?;
            out.push((stream, server));
        }
    }
    Ok(out)
}

fn connect(addr: &SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
    let socket = Socket::new(
        Domain::for_address(*addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    socket.connect_timeout(&(*addr).into(), timeout)?;
    socket.set_nodelay(true)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Which worker gets connection `i` of `total`: round-robin, so that each
/// server's connections spread over every thread.
pub fn worker_of(i: usize, workers: usize) -> usize {
    i % workers
}
