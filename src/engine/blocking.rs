//! Blocking exchanges on a connected socket whose read and write timeouts
//! bound every wait: authentication before a run, the replication-lag
//! probe and the server-stats poller. The load itself never blocks.

use rustix::net::{RecvFlags, SendFlags};
use std::os::fd::OwnedFd;

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// The peer closed the connection.
    Closed,
    /// Nothing came within the socket's timeout.
    TimedOut,
    /// Any other socket error.
    Io(String),
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Closed => f.write_str("the server closed the connection"),
            Broken::TimedOut => f.write_str("no answer within --timeout"),
            Broken::Io(e) => f.write_str(e),
        }
    }
}

/// Sends all of `bytes`.
pub fn send_all(socket: &OwnedFd, mut bytes: &[u8]) -> Result<(), Broken> {
    while !bytes.is_empty() {
        match rustix::net::send(socket, bytes, SendFlags::NOSIGNAL) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => return Err(Broken::TimedOut),
            Err(e) => return Err(Broken::Io(e.to_string())),
        }
    }
    Ok(())
}

/// Appends what one read brings to `reply`.
pub fn read_more(socket: &OwnedFd, reply: &mut Vec<u8>) -> Result<(), Broken> {
    let mut buf = [0u8; 16384];
    loop {
        match rustix::net::recv(socket, &mut buf, RecvFlags::empty()) {
            Ok((0, _)) => return Err(Broken::Closed),
            Ok((n, _)) => {
                reply.extend_from_slice(&buf[..n]);
                return Ok(());
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => return Err(Broken::TimedOut),
            Err(e) => return Err(Broken::Io(e.to_string())),
        }
    }
}

/// Sends `request` and reads until `complete` finds a whole reply at the
/// front of what came (`Ok(Some(len))`), or says it cannot be one
/// (`Err`); at most `limit` bytes are read. The reply stays in `reply`.
pub fn exchange(
    socket: &OwnedFd,
    request: &[u8],
    reply: &mut Vec<u8>,
    limit: usize,
    mut complete: impl FnMut(&[u8]) -> Result<Option<usize>, String>,
) -> Result<usize, String> {
    reply.clear();
    send_all(socket, request).map_err(|e| e.to_string())?;
    loop {
        if let Some(len) = complete(reply)? {
            return Ok(len);
        }
        if reply.len() > limit {
            return Err(format!("a reply longer than {limit} bytes"));
        }
        read_more(socket, reply).map_err(|e| e.to_string())?;
    }
}
