//! Connections made of several sockets, refilled as one closed loop (its
//! depth counts every socket's requests), each request going out on the
//! socket that carries it. A group's sockets are in a row in the worker's
//! connections, its lead first.
//!
//! - **By server** (keys placed on several servers): a connection is a
//!   client with one socket per server, as libmemcached's and memtier's
//!   clients are; a request goes to the socket of its key's server.
//!   In a replication run, the socket `Replicas::target` picks.
//! - **By op** (memaslap's `--facebook`): a UDP socket (the lead) for the
//!   retrievals and `conn_sock` TCP connections, in turn, for the rest.

use super::Worker;
use crate::engine::conn::Conn;
use crate::workload::{KeySpace, Request};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    ByServer,
    ByOp,
}

pub struct Groups {
    kind: Kind,
    /// Sockets per group.
    size: usize,
    /// Per group: by op, the TCP connection its next non-retrieval
    /// takes; by server in a replication run, which other server its next
    /// read tries first.
    turn: Vec<usize>,
}

impl Groups {
    /// Groups of one socket per server, `servers` of them, out of
    /// `sockets`.
    pub fn by_server(servers: usize, sockets: usize) -> Self {
        Groups {
            kind: Kind::ByServer,
            size: servers,
            turn: vec![0; sockets.div_ceil(servers)],
        }
    }

    /// `--facebook` groups of `size` sockets, out of `sockets`.
    pub fn by_op(size: usize, sockets: usize) -> Self {
        Groups {
            kind: Kind::ByOp,
            size,
            turn: vec![0; sockets.div_ceil(size)],
        }
    }

    /// The lead socket of socket `c`'s group.
    pub fn lead(&self, c: usize) -> usize {
        c - c % self.size
    }

    /// Whether requests go to the socket of their key's server.
    pub fn by_key(&self) -> bool {
        self.kind == Kind::ByServer
    }

    /// Requests a group keeps in flight for a run's `depth`: `depth` per
    /// server for a client of several servers, `depth` in all for a
    /// facebook group.
    pub fn cap(&self, depth: usize) -> usize {
        match self.kind {
            Kind::ByServer => depth * self.size,
            Kind::ByOp => depth,
        }
    }
}

/// The socket of `lead`'s group that `req` goes out on; `None` when that
/// socket is down (closed for a timeout and being reopened, or its server
/// lost). Without groups, `lead` itself. `home` is where a replayed
/// request's key lives (else the key space says).
pub fn route(
    groups: &mut Option<Groups>,
    conns: &[Conn],
    lead: usize,
    req: &Request,
    keys: &KeySpace,
    home: Option<usize>,
) -> Option<usize> {
    let Some(g) = groups else {
        return Some(lead);
    };
    if g.kind == Kind::ByServer {
        let home = home.unwrap_or_else(|| keys.server_of(req.key));
        let server = match keys.replicas() {
            Some(r) => {
                let turn = &mut g.turn[lead / g.size];
                *turn = turn.wrapping_add(1);
                r.target(!req.op.is_retrieval(), home, *turn, |s| {
                    conns[lead + s].alive
                })?
            }
            None => home,
        };
        let c = lead + server;
        return conns[c].alive.then_some(c);
    }
    if req.op.is_retrieval() {
        return Some(lead);
    }
    let tcp = g.size - 1;
    let turn = &mut g.turn[lead / g.size];
    for _ in 0..tcp {
        let c = lead + 1 + *turn % tcp;
        *turn = turn.wrapping_add(1);
        if conns[c].alive {
            return Some(c);
        }
    }
    None
}

impl Worker {
    /// The lead of socket `c`'s group (`c` itself without groups).
    pub(super) fn lead(&self, c: usize) -> usize {
        self.groups.as_ref().map_or(c, |g| g.lead(c))
    }

    /// Requests in flight on connection `c`: on every socket of its group.
    pub(super) fn load_of(&self, c: usize) -> usize {
        match &self.groups {
            Some(g) => {
                let lead = g.lead(c);
                self.conns[lead..lead + g.size]
                    .iter()
                    .map(|s| s.in_flight.len())
                    .sum()
            }
            None => self.conns[c].in_flight.len(),
        }
    }

    /// Whether connection `c` can send: by op, its group's UDP socket and
    /// at least one of its TCP connections are up; by server, any socket
    /// (a key whose server is down fails alone).
    pub(super) fn can_send(&self, c: usize) -> bool {
        match &self.groups {
            Some(g) => {
                let lead = g.lead(c);
                let members = &self.conns[lead..lead + g.size];
                match g.kind {
                    Kind::ByOp => members[0].alive && members[1..].iter().any(|s| s.alive),
                    Kind::ByServer => members.iter().any(|s| s.alive),
                }
            }
            None => self.conns[c].alive,
        }
    }

    /// A socket of a group was lost (not closed for a timeout, which
    /// reopens it). By op, the UDP socket takes the group with it, and so
    /// does the last TCP connection. By server, the group goes unless the
    /// socket is to be reopened (`--reconnect`): a client that lost a
    /// server is done.
    pub(super) fn lose_group(&mut self, c: usize) {
        let reconnect = self.shared.spec.reconnect;
        let Some(g) = &self.groups else {
            return;
        };
        let (lead, size, kind) = (g.lead(c), g.size, g.kind);
        let whole = match kind {
            Kind::ByOp => c == lead || !self.conns[lead + 1..lead + size].iter().any(|s| s.alive),
            Kind::ByServer => !reconnect,
        };
        if !whole {
            return;
        }
        for member in lead..lead + size {
            self.drop_conn(member);
        }
        // The group is lost whole: a member closed for a timeout and
        // waiting to be reopened stays closed.
        for member in lead..lead + size {
            self.reopening.cancel(member);
        }
    }

    /// A client whose keys keep landing on a server that is down, with
    /// nothing in flight: it is closed whole, as a lost group is.
    pub(super) fn give_up_group(&mut self, c: usize) {
        let (lead, size) = match &self.groups {
            Some(g) => (g.lead(c), g.size),
            None => (c, 1),
        };
        for member in lead..lead + size {
            self.drop_conn(member);
            self.reopening.cancel(member);
        }
    }

    /// Whether any connection can still send: with groups, any group.
    pub(super) fn any_up(&self) -> bool {
        match &self.groups {
            Some(g) => (0..self.conns.len())
                .step_by(g.size)
                .any(|lead| self.can_send(lead)),
            None => self.alive > 0,
        }
    }
}
