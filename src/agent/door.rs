//! The agent's front door: accepting connections so that strangers
//! cannot lock the masters out.
//!
//! A connection that has not yet made a call with the right token is a
//! guest. A guest has [`HANDSHAKE_TIMEOUT`] to authenticate (TCP, TLS and
//! HTTP/2 handshakes included) or is closed; at most [`MAX_GUESTS`] wait
//! at once, and a new one closes the oldest. Accept errors (out of file
//! descriptors above all) back off instead of spinning, and close the
//! oldest guest to free a descriptor. An authenticated connection is
//! left alone, as an SSH daemon leaves a logged-in session.
//!
//! The accept loop is ours rather than tonic's: tonic's has no handshake
//! timeout, no cap, and ends or spins on `EMFILE`.

use atomic_waker::AtomicWaker;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How long a connection may take to make its first authenticated call.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The most connections waiting to authenticate at once.
pub const MAX_GUESTS: usize = 64;

/// The longest wait after an accept error, and the first.
const BACKOFF_MAX: Duration = Duration::from_secs(1);
const BACKOFF_FIRST: Duration = Duration::from_millis(10);

/// One connection's standing: who it is from, and whether it has
/// authenticated or been told to go.
#[derive(Debug)]
pub struct Gate {
    pub peer: SocketAddr,
    authenticated: AtomicBool,
    evicted: AtomicBool,
    /// Whether it is still in the lobby's count of guests.
    counted: AtomicBool,
    waker: AtomicWaker,
    lobby: Weak<Lobby>,
}

impl Gate {
    /// The connection made a call with the right token: it is no longer
    /// a guest.
    pub fn admit(&self) {
        self.authenticated.store(true, Ordering::Release);
        self.leave();
    }

    /// Closes the connection (at its next read or write, which this
    /// wakes).
    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.waker.wake();
        self.leave();
    }

    /// Leaves the count of guests, once.
    fn leave(&self) {
        if self.counted.swap(false, Ordering::AcqRel) {
            if let Some(lobby) = self.lobby.upgrade() {
                lobby.waiting.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// The guests in the order they came.
#[derive(Debug, Default)]
struct Lobby {
    queue: Mutex<VecDeque<Weak<Gate>>>,
    /// Guests still connected.
    waiting: AtomicUsize,
}

impl Lobby {
    fn enter(self: &Arc<Self>, peer: SocketAddr) -> Arc<Gate> {
        while self.waiting.load(Ordering::Acquire) >= MAX_GUESTS {
            if !self.evict_oldest() {
                break;
            }
        }
        let gate = Arc::new(Gate {
            peer,
            authenticated: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            counted: AtomicBool::new(true),
            waker: AtomicWaker::new(),
            lobby: Arc::downgrade(self),
        });
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if queue.len() >= 2 * MAX_GUESTS {
            // Forget those admitted or gone, so the queue stays short.
            queue.retain(|w| {
                w.upgrade()
                    .is_some_and(|g| g.counted.load(Ordering::Acquire))
            });
        }
        queue.push_back(Arc::downgrade(&gate));
        gate
    }

    /// Closes the guest that has waited longest; whether there was one.
    fn evict_oldest(&self) -> bool {
        let oldest = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            std::iter::from_fn(|| queue.pop_front())
                .filter_map(|weak| weak.upgrade())
                .find(|g| g.counted.load(Ordering::Acquire))
        };
        // Evicted outside the lock: leaving the count takes no lock, but
        // waking may run a task.
        oldest.map(|g| g.evict()).is_some()
    }
}

/// An accepted connection, closed if it stays a guest too long or is
/// evicted.
pub struct Guest {
    io: TcpStream,
    gate: Arc<Gate>,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Guest {
    /// `Ok` while the connection may go on; wakes `cx` when that ends.
    fn allowed(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let gate = &self.gate;
        if gate.authenticated.load(Ordering::Acquire) && !gate.evicted.load(Ordering::Acquire) {
            return Ok(());
        }
        self.gate.waker.register(cx.waker());
        if self.gate.evicted.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed for a newer unauthenticated connection",
            ));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no authenticated call in time",
            ));
        }
        Ok(())
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        // A guest that goes leaves the count (an admitted or evicted one
        // has left it already).
        self.gate.leave();
    }
}

impl AsyncRead for Guest {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.allowed(cx)?;
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Guest {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.allowed(cx)?;
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for Guest {
    type ConnectInfo = Arc<Gate>;

    fn connect_info(&self) -> Arc<Gate> {
        self.gate.clone()
    }
}

/// The gate of the connection a call came on, TLS or not.
pub fn gate_of<T>(req: &tonic::Request<T>) -> Option<&Gate> {
    let ext = req.extensions();
    ext.get::<Arc<Gate>>()
        .or_else(|| {
            ext.get::<tonic::transport::server::TlsConnectInfo<Arc<Gate>>>()
                .map(|t| t.get_ref())
        })
        .map(|g| &**g)
}

/// Accepts on `listener` for ever, handing each connection to `tx` as a
/// guest; ends when the receiver is gone.
pub async fn accept(listener: TcpListener, tx: mpsc::Sender<io::Result<Guest>>) {
    let lobby = Arc::new(Lobby::default());
    let mut backoff = BACKOFF_FIRST;
    loop {
        let (io, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) if transient(&e) => continue,
            Err(e) => {
                log_accept_error(&e, backoff);
                lobby.evict_oldest();
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        backoff = BACKOFF_FIRST;
        let _ = io.set_nodelay(true);
        let guest = Guest {
            io,
            gate: lobby.enter(peer),
            deadline: Box::pin(tokio::time::sleep(HANDSHAKE_TIMEOUT)),
        };
        if tx.send(Ok(guest)).await.is_err() {
            return;
        }
    }
}

/// Errors of one connection that came and went, not of the listener.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// Logs an accept error at most once a second.
fn log_accept_error(e: &io::Error, wait: Duration) {
    static LAST_S: AtomicUsize = AtomicUsize::new(0);
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as usize);
    if LAST_S.swap(now_s, Ordering::Relaxed) != now_s {
        crate::stderr_line!(
            "mcbench agent: accepting a connection failed ({e}); closing the oldest unauthenticated one and waiting {wait:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:1".parse().unwrap()
    }

    #[test]
    fn the_oldest_guest_goes_when_the_lobby_is_full_and_the_admitted_stay() {
        let lobby = Arc::new(Lobby::default());
        let first = lobby.enter(addr());
        let admitted = lobby.enter(addr());
        admitted.admit();
        let rest: Vec<_> = (0..MAX_GUESTS).map(|_| lobby.enter(addr())).collect();
        assert_eq!(lobby.waiting.load(Ordering::Acquire), MAX_GUESTS);
        assert!(first.evicted.load(Ordering::Acquire));
        assert!(!admitted.evicted.load(Ordering::Acquire));
        assert!(!rest[0].evicted.load(Ordering::Acquire));
        // One more: the next oldest guest goes, the admitted one stays.
        let _last = lobby.enter(addr());
        assert!(rest[0].evicted.load(Ordering::Acquire));
        assert!(!admitted.evicted.load(Ordering::Acquire));
        // Admitting twice, or after eviction, counts once.
        rest[1].admit();
        rest[1].admit();
        first.admit();
        assert_eq!(lobby.waiting.load(Ordering::Acquire), MAX_GUESTS - 1);
    }
}
