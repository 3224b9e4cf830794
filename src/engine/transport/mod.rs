//! How a worker's bytes and readiness reach its servers, as tokio keeps
//! its io driver apart from its time driver: the kernel's sockets under
//! one epoll set (`Poller`), or in unit tests an in-memory network of
//! scripted servers on a manual clock (`memory`), so that a worker's
//! schedule, read policy, timeouts, drain and stalls are tested exactly,
//! without sockets or sleeps.
//!
//! An enum rather than a trait object: the one variant of a run costs a
//! predictable branch per call and no indirect call on the hot path.

#[cfg(test)]
pub mod memory;

use super::clock::Clock;
use super::conn::Conn;
use super::poller::{Poller, READABLE, WRITABLE};
use super::EngineError;
use crate::net::{connect, Link, Target};
use crate::spec::RunSpec;
use crate::stats::ConnError;
use mcbench_proto::Protocol;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

/// What a new connection needs of its run.
pub struct Dial<'a> {
    pub target: &'a Target,
    /// The server's number.
    pub server: usize,
    /// Its number among the run's connections (its source address).
    pub nth: usize,
    /// Its events' token.
    pub token: usize,
    pub protocol: Protocol,
    pub max_pending: usize,
}

pub enum Transport {
    /// The kernel's sockets, under one epoll set.
    Os(Poller),
    /// Scripted servers in memory (tests).
    #[cfg(test)]
    Memory(memory::Network),
}

impl Transport {
    /// The kernel's sockets, taking up to `events` readiness events a wait.
    pub fn os(events: usize) -> io::Result<Transport> {
        Ok(Transport::Os(Poller::new(events)?))
    }

    /// Watches connection `conn` for `interest`, its events under `token`.
    pub fn add(&self, conn: &Conn, token: usize, interest: u32) -> io::Result<()> {
        match self {
            Transport::Os(p) => match conn.socket() {
                Some(_) => p.add(conn.fd(), token as u64, interest),
                None => Ok(()),
            },
            #[cfg(test)]
            Transport::Memory(net) => {
                net.register(conn, token);
                Ok(())
            }
        }
    }

    /// Changes what connection `conn` is watched for.
    pub fn modify(&self, conn: &Conn, token: usize, interest: u32) -> io::Result<()> {
        match self {
            Transport::Os(p) => p.modify(conn.fd(), token as u64, interest),
            // Memory takes every write whole: never waits to write.
            #[cfg(test)]
            Transport::Memory(_) => Ok(()),
        }
    }

    /// Starts a connection (`--num-conns`) without waiting for it: the new
    /// connection of one slot, and whether its connect is still under way
    /// (it turns writable when done). Watched under `dial.token`.
    pub fn start_connect(&self, dial: &Dial, spec: &RunSpec) -> Result<(Conn, bool), ConnError> {
        match self {
            Transport::Os(p) => start_os_connect(p, dial, spec),
            #[cfg(test)]
            Transport::Memory(net) => Ok((net.dial(dial), false)),
        }
    }

    /// Opens closed connection `conn` again, waiting at most `timeout`
    /// (or until `stop` is set), watched under `dial.token`. How long its
    /// TLS handshake took, ns (0: none).
    pub fn reopen(
        &self,
        conn: &mut Conn,
        dial: &Dial,
        spec: &RunSpec,
        timeout: Duration,
        stop: Option<&AtomicUsize>,
    ) -> Result<u64, EngineError> {
        match self {
            Transport::Os(p) => reopen_os(p, conn, dial, spec, timeout, stop),
            #[cfg(test)]
            Transport::Memory(net) => {
                net.redial(conn, dial);
                Ok(0)
            }
        }
    }

    /// Waits up to `timeout_ns` (0: looks without waiting) for readiness,
    /// into `events` as (token, flags). In memory the wait moves `clock`
    /// on to the first answer due, or by the whole timeout.
    pub fn wait_into(
        &mut self,
        events: &mut Vec<(usize, u32)>,
        timeout_ns: u64,
        clock: &Clock,
    ) -> io::Result<()> {
        events.clear();
        match self {
            Transport::Os(p) => {
                let _ = clock;
                let ready = p.wait(timeout_ns)?;
                events.extend(ready.map(|ev| (ev.token as usize, ev.flags)));
            }
            #[cfg(test)]
            Transport::Memory(net) => net.wait_into(events, timeout_ns, clock),
        }
        Ok(())
    }
}

/// `Transport::start_connect` on the kernel's sockets.
fn start_os_connect(p: &Poller, dial: &Dial, spec: &RunSpec) -> Result<(Conn, bool), ConnError> {
    let (fd, pending) = match connect::start_connect(dial.target, &spec.conns.socket, dial.nth) {
        Ok(connect::Connecting::Done(fd)) => (fd, false),
        Ok(connect::Connecting::Pending(fd)) => (fd, true),
        Err(e) => return Err(ConnError::of(&e)),
    };
    let interest = if pending { WRITABLE } else { READABLE };
    let tls = dial.target.session();
    let added = p.add(fd.as_raw_fd(), dial.token as u64, interest);
    let (Ok(tls), Ok(())) = (tls, added) else {
        return Err(ConnError::Other);
    };
    let link = Link {
        socket: fd,
        tls,
        handshake_ns: 0,
    };
    let conn = Conn::new(
        Some(link),
        dial.protocol,
        false,
        dial.server,
        1,
        dial.max_pending,
    );
    Ok((conn, pending))
}

/// `Transport::reopen` on the kernel's sockets.
fn reopen_os(
    p: &Poller,
    conn: &mut Conn,
    dial: &Dial,
    spec: &RunSpec,
    timeout: Duration,
    stop: Option<&AtomicUsize>,
) -> Result<u64, EngineError> {
    let link = connect::connect_one(dial.target, spec, timeout, dial.nth, stop)?;
    p.add(link.socket.as_raw_fd(), dial.token as u64, READABLE)
        .map_err(EngineError::Socket)?;
    let handshake_ns = link.handshake_ns;
    // Closing the socket on failure takes it out of the epoll set.
    conn.reopen(link).map_err(EngineError::Socket)?;
    Ok(handshake_ns)
}
