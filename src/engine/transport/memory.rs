//! An in-memory network for unit tests: a scripted server answers each
//! connection's requests at the times it chooses on a manual clock, and
//! the worker reads an answer once the clock has reached it. A wait with
//! nothing ready moves the clock on to the first answer due (or by the
//! whole timeout), as tokio's paused clock skips idle time: a test runs a
//! second of schedule in microseconds, and every time in it is exact.

use crate::engine::clock::Clock;
use crate::engine::conn::Conn;
use crate::engine::poller::{HANGUP, READABLE};
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// What a scripted server sends back, and when (ns on the clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Bytes(u64, Vec<u8>),
    /// The server closes the connection.
    Close(u64),
}

/// A scripted server (or several: `server` tells which was reached).
pub trait Script: Send {
    /// Bytes came on connection `pipe` to server `server` at `now`:
    /// takes the complete requests from the front of `inbox` (a partial
    /// one stays) and says what to answer. Answers on one connection are
    /// delivered in order: one due before an earlier one waits for it.
    fn on_bytes(
        &mut self,
        pipe: usize,
        server: usize,
        inbox: &mut Vec<u8>,
        now: u64,
    ) -> Vec<Answer>;
}

/// One connection's two directions.
struct PipeState {
    server: usize,
    /// The worker's token for its events; `None` once the client closed.
    token: Option<usize>,
    inbox: Vec<u8>,
    /// Answers not yet read: when each is due, and its bytes (`None`: the
    /// server's close).
    outbox: VecDeque<(u64, Option<Vec<u8>>)>,
    /// The latest time an answer is due (answers keep their order).
    last_due: u64,
}

struct State {
    script: Box<dyn Script>,
    pipes: Vec<PipeState>,
    /// Looks in a row that found nothing and moved no time.
    idle_looks: u64,
}

/// So many looks in a row with nothing ready and no time passing is a
/// worker that spins: the test fails rather than hang.
const MAX_IDLE_LOOKS: u64 = 1_000_000;

/// The network: its scripted server and every connection made to it.
#[derive(Clone)]
pub struct Network {
    state: Arc<Mutex<State>>,
    clock: Clock,
}

/// The client's end of one connection (held by a `Conn`).
pub struct Pipe {
    net: Network,
    id: usize,
}

impl Network {
    pub fn new(script: impl Script + 'static, clock: Clock) -> Network {
        let state = State {
            script: Box::new(script),
            pipes: Vec::new(),
            idle_looks: 0,
        };
        Network {
            state: Arc::new(Mutex::new(state)),
            clock,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked holding it has failed already.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new connection to `server`.
    pub fn connect(&self, server: usize) -> Pipe {
        let mut st = self.lock();
        st.pipes.push(PipeState {
            server,
            token: None,
            inbox: Vec::new(),
            outbox: VecDeque::new(),
            last_due: 0,
        });
        Pipe {
            net: self.clone(),
            id: st.pipes.len() - 1,
        }
    }

    /// A new connection of one slot (`--num-conns`), up at once.
    pub(super) fn dial(&self, dial: &super::Dial) -> Conn {
        let pipe = self.connect(dial.server);
        let conn = Conn::in_memory(pipe, dial.protocol, dial.server, 1, dial.max_pending);
        self.register(&conn, dial.token);
        conn
    }

    /// Opens closed connection `conn` again.
    pub(super) fn redial(&self, conn: &mut Conn, dial: &super::Dial) {
        conn.reopen_memory(self.connect(dial.server));
        self.register(conn, dial.token);
    }

    /// How many connections were made.
    pub fn connections(&self) -> usize {
        self.lock().pipes.len()
    }

    pub(super) fn register(&self, conn: &Conn, token: usize) {
        if let Some(pipe) = conn.memory_pipe() {
            self.lock().pipes[pipe.id].token = Some(token);
        }
    }

    /// Events of the connections with an answer due; with none and a
    /// timeout, the clock moves on to the first due (at most the timeout).
    pub(super) fn wait_into(&self, events: &mut Vec<(usize, u32)>, timeout_ns: u64, clock: &Clock) {
        let mut st = self.lock();
        let now = clock.now();
        ready(&st, now, events);
        st.idle_looks = match (events.is_empty(), timeout_ns) {
            (true, 0) => st.idle_looks + 1,
            _ => 0,
        };
        assert!(
            st.idle_looks < MAX_IDLE_LOOKS,
            "the worker spins: nothing ready, no time passing"
        );
        if !events.is_empty() || timeout_ns == 0 {
            return;
        }
        let until = now.saturating_add(timeout_ns);
        let next = st
            .pipes
            .iter()
            .filter(|p| p.token.is_some())
            .filter_map(|p| p.outbox.front().map(|&(at, _)| at))
            .min();
        clock.advance_to(next.map_or(until, |at| at.min(until)));
        ready(&st, clock.now(), events);
    }
}

/// The connections whose next answer is due by `now`.
fn ready(st: &State, now: u64, events: &mut Vec<(usize, u32)>) {
    for p in &st.pipes {
        let (Some(token), Some((at, what))) = (p.token, p.outbox.front()) else {
            continue;
        };
        if *at <= now {
            let flags = if what.is_some() { READABLE } else { HANGUP };
            events.push((token, flags));
        }
    }
}

impl Pipe {
    /// Sends `bytes` now; the server takes them whole.
    pub fn send(&self, bytes: &[u8]) -> usize {
        let now = self.net.clock.now();
        let mut st = self.net.lock();
        let st = &mut *st;
        let pipe = &mut st.pipes[self.id];
        pipe.inbox.extend_from_slice(bytes);
        let answers = st
            .script
            .on_bytes(self.id, pipe.server, &mut pipe.inbox, now);
        for answer in answers {
            let (at, bytes) = match answer {
                Answer::Bytes(at, b) => (at, Some(b)),
                Answer::Close(at) => (at, None),
            };
            pipe.last_due = pipe.last_due.max(at).max(now);
            pipe.outbox.push_back((pipe.last_due, bytes));
        }
        bytes.len()
    }

    /// Reads into `buf` the answers due by now, and when the last of
    /// them came (as the kernel's receive stamp of a TCP read, that of its
    /// last segment): `WouldBlock` if none is due, 0 bytes once the
    /// server has closed.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<(usize, u64)> {
        let now = self.net.clock.now();
        let mut st = self.net.lock();
        let outbox = &mut st.pipes[self.id].outbox;
        let (mut n, mut last) = (0, now);
        while let Some((at, what)) = outbox.front_mut() {
            if *at > now || n == buf.len() {
                break;
            }
            let Some(bytes) = what else {
                // The close, once what came before it is read.
                if n == 0 {
                    return Ok((0, now));
                }
                break;
            };
            last = *at;
            let take = bytes.len().min(buf.len() - n);
            buf[n..n + take].copy_from_slice(&bytes[..take]);
            bytes.drain(..take);
            n += take;
            if bytes.is_empty() {
                outbox.pop_front();
            }
        }
        match n {
            0 => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok((n, last)),
        }
    }
}

impl Drop for Pipe {
    /// The client closed: no more events for it.
    fn drop(&mut self) {
        self.net.lock().pipes[self.id].token = None;
    }
}
