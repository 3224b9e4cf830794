//! Sockets as the engine and its side threads (the server-stats sampler,
//! the replication-lag probe, trace commands) open and use them: connects
//! with the run's socket options and SASL, blocking exchanges that watch
//! the stop flag, the worker clock, and the end-of-run flag side threads
//! share.
//!
//! And TLS (`tls`): the run's client configuration and each connection's
//! record layer.
//!
//! Below the engine and `server_stats`, so that both reach a server the
//! same way. Not the workers' event loop (that is `engine`), and no wire
//! format (that is the `mcbench-proto` crate).

mod auth;
pub mod blocking;
pub mod connect;
mod error;
mod link;
pub mod sidecar;
pub mod tls;

pub use connect::{connect_blocking, connect_plain};
pub use error::{AuthError, ExchangeError, NetError, TlsError};
pub use link::{Link, Target};
pub use sidecar::RunEnd;

/// `send(2)` through rustix's raw syscall: unlike libc's wrapper it is no
/// thread-cancellation point, which saves two calls per request.
pub fn send_raw(socket: &std::os::fd::OwnedFd, buf: &[u8]) -> std::io::Result<usize> {
    rustix::net::send(socket, buf, rustix::net::SendFlags::NOSIGNAL).map_err(Into::into)
}

/// `recv(2)`, as `send_raw`.
pub fn recv_raw(socket: &std::os::fd::OwnedFd, buf: &mut [u8]) -> std::io::Result<usize> {
    rustix::net::recv(socket, buf, rustix::net::RecvFlags::empty())
        .map(|(n, _)| n)
        .map_err(Into::into)
}

/// The worker clock: CLOCK_MONOTONIC in ns (the vDSO, no syscall). Read
/// directly rather than through `Instant` to skip its checked arithmetic
/// on a path taken a few times per request.
#[inline]
pub fn clock_ns() -> u64 {
    clock_of(libc::CLOCK_MONOTONIC)
}

pub use crate::os::clock_of;
