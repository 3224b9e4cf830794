//! Blocking exchanges on a connected socket whose read and write timeouts
//! bound every wait: authentication before a run, the replication-lag
//! probe and the server-stats poller. The load itself never blocks.

use super::{ExchangeError, Link};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::{RecvFlags, SendFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a wait looks at the stop flag.
const STEP: Duration = Duration::from_millis(50);

/// Once a signal asked to stop, how much longer a wait may last: a reply
/// already on its way (the last `stats` of a run) still arrives.
pub const GRACE: Duration = Duration::from_millis(200);

/// How long a blocking wait may last: `timeout`, cut to [`GRACE`] once
/// `stop` (the run's signal flag) is set.
#[derive(Clone, Copy)]
pub struct Wait<'a> {
    pub timeout: Duration,
    pub stop: Option<&'a AtomicUsize>,
}

impl Wait<'_> {
    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed) != 0)
    }
}

/// Waits until `socket` is readable (or `events`), within `wait`.
pub fn ready(socket: &impl AsFd, events: PollFlags, wait: Wait) -> Result<(), Broken> {
    let mut deadline = Instant::now() + wait.timeout;
    let mut cut = false;
    loop {
        let now = Instant::now();
        if !cut && wait.stopped() {
            cut = true;
            deadline = deadline.min(now + GRACE);
        }
        if now >= deadline {
            return Err(if cut {
                Broken::Stopped
            } else {
                Broken::TimedOut
            });
        }
        let step = (deadline - now).min(STEP);
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: step.as_nanos() as _,
        };
        let mut fds = [PollFd::new(socket, events)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(Broken::Io(e.to_string())),
        }
    }
}

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    /// The peer closed the connection.
    #[error("the server closed the connection")]
    Closed,
    /// Nothing came within the socket's timeout.
    #[error("no answer within --timeout")]
    TimedOut,
    /// A signal asked the run to stop.
    #[error("not answered before the run was stopped")]
    Stopped,
    /// Any other socket error.
    #[error("{0}")]
    Io(String),
}

/// Sends all of `bytes` (sealed first over TLS).
pub fn send_all(link: &mut Link, bytes: &[u8]) -> Result<(), Broken> {
    match link.tls.as_deref_mut() {
        Some(tls) => {
            tls.push(bytes).map_err(|e| Broken::Io(e.to_string()))?;
            while tls.has_output() {
                tls.send(&link.socket).map_err(|e| match e.kind() {
                    std::io::ErrorKind::WouldBlock => Broken::TimedOut,
                    _ => Broken::Io(e.to_string()),
                })?;
            }
            Ok(())
        }
        None => send_plain(&link.socket, bytes),
    }
}

fn send_plain(socket: &OwnedFd, mut bytes: &[u8]) -> Result<(), Broken> {
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

/// Appends what one read brings to `reply` (opened, over TLS: maybe
/// nothing, when only part of a record came).
pub fn read_more(link: &mut Link, reply: &mut Vec<u8>) -> Result<(), Broken> {
    let mut buf = [0u8; 16384];
    loop {
        match rustix::net::recv(&link.socket, &mut buf, RecvFlags::empty()) {
            Ok((0, _)) => return Err(Broken::Closed),
            Ok((n, _)) => {
                match link.tls.as_deref_mut() {
                    Some(tls) => {
                        tls.open(&buf[..n], reply)
                            .map_err(|e| Broken::Io(e.to_string()))?;
                    }
                    None => reply.extend_from_slice(&buf[..n]),
                }
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
/// (`Err`); at most `limit` bytes are read, the whole reply waited for
/// within `wait` (a server that sends a byte now and then is not waited
/// for byte by byte). The reply stays in `reply`.
pub fn exchange(
    link: &mut Link,
    request: &[u8],
    reply: &mut Vec<u8>,
    limit: usize,
    wait: Wait,
    mut complete: impl FnMut(&[u8]) -> Result<Option<usize>, String>,
) -> Result<usize, ExchangeError> {
    reply.clear();
    let deadline = Instant::now() + wait.timeout;
    send_all(link, request)?;
    loop {
        if let Some(len) = complete(reply).map_err(ExchangeError::Reply)? {
            return Ok(len);
        }
        if reply.len() > limit {
            return Err(ExchangeError::TooLong(limit));
        }
        let left = Wait {
            timeout: deadline.saturating_duration_since(Instant::now()),
            ..wait
        };
        ready(&link.socket, PollFlags::IN, left)?;
        read_more(link, reply)?;
    }
}
