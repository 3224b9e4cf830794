//! The router: which of a worker's sockets a request goes out on.
//!
//! - **One** connection per client: the request goes out on it.
//! - **By server** (keys placed on several servers): a connection is a
//!   client with one socket per server, as libmemcached's and memtier's
//!   clients are; a request goes to the socket of its key's server.
//!   In a replication run, the socket `Replicas::target` picks.
//! - **By op** (memaslap's `--facebook`): a UDP socket (the lead) for the
//!   retrievals and `conn_sock` TCP connections, in turn, for the rest.
//!
//! A group's sockets are in a row in the worker's connections, its lead
//! first, and are refilled as one closed loop (its depth counts every
//! socket's requests).

use super::Worker;
use crate::placement::Replicas;
use crate::workload::Request;

/// Sockets of several per client.
pub(super) struct Groups {
    /// Sockets per group.
    size: usize,
    /// Per group: by op, the TCP connection its next non-retrieval
    /// takes; by server in a replication run, which other server its next
    /// read tries first.
    turn: Vec<usize>,
}

impl Groups {
    fn new(size: usize, sockets: usize) -> Groups {
        Groups {
            size,
            turn: vec![0; sockets.div_ceil(size)],
        }
    }

    /// The next turn of `lead`'s group (it is advanced).
    fn next_turn(&mut self, lead: usize) -> usize {
        let turn = &mut self.turn[lead / self.size];
        let now = *turn;
        *turn = turn.wrapping_add(1);
        now
    }
}

pub(super) enum Router {
    One,
    ByServer(Groups),
    ByOp(Groups),
}

impl Router {
    /// Groups of one socket per server, `servers` of them, out of
    /// `sockets`.
    pub(super) fn by_server(servers: usize, sockets: usize) -> Router {
        Router::ByServer(Groups::new(servers, sockets))
    }

    /// `--facebook` groups of `size` sockets, out of `sockets`.
    pub(super) fn by_op(size: usize, sockets: usize) -> Router {
        Router::ByOp(Groups::new(size, sockets))
    }

    /// Sockets per group (1: one per client).
    pub(super) fn size(&self) -> usize {
        match self {
            Router::One => 1,
            Router::ByServer(g) | Router::ByOp(g) => g.size,
        }
    }

    /// The lead socket of socket `c`'s group.
    pub(super) fn lead(&self, c: usize) -> usize {
        c - c % self.size()
    }

    /// Socket `c`'s group.
    pub(super) fn group(&self, c: usize) -> std::ops::Range<usize> {
        let lead = self.lead(c);
        lead..lead + self.size()
    }

    /// Whether requests go to the socket of their key's server.
    pub(super) fn by_key(&self) -> bool {
        matches!(self, Router::ByServer(_))
    }

    /// Requests a group keeps in flight for a run's `depth`: `depth` per
    /// server for a client of several servers, `depth` in all for a
    /// facebook group.
    pub(super) fn cap(&self, depth: usize) -> usize {
        match self {
            Router::ByServer(g) => depth * g.size,
            Router::One | Router::ByOp(_) => depth,
        }
    }

    /// Whether a group whose sockets' states are `up` (lead first) can
    /// send: by op, its UDP socket and one of its TCP connections are up;
    /// otherwise any socket (a key whose server is down fails alone).
    pub(super) fn can_send(&self, mut up: impl Iterator<Item = bool>) -> bool {
        match self {
            Router::ByOp(_) => up.next() == Some(true) && up.any(|u| u),
            Router::One | Router::ByServer(_) => up.any(|u| u),
        }
    }

    /// The socket of `lead`'s group that `req` goes out on; `None` when
    /// that socket is down (`up(c)` false: closed for a timeout and being
    /// reopened, or its server lost). `home` is the server of its key.
    pub(super) fn route(
        &mut self,
        lead: usize,
        req: &Request,
        home: impl FnOnce() -> usize,
        replicas: Option<&Replicas>,
        up: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        match self {
            Router::One => Some(lead),
            Router::ByServer(g) => {
                let home = home();
                let server = match replicas {
                    Some(r) => {
                        let turn = g.next_turn(lead).wrapping_add(1);
                        r.target(!req.op.is_retrieval(), home, turn, |s| up(lead + s))?
                    }
                    None => home,
                };
                up(lead + server).then_some(lead + server)
            }
            Router::ByOp(_) if req.op.is_retrieval() => Some(lead),
            Router::ByOp(g) => {
                let tcp = g.size - 1;
                (0..tcp)
                    .map(|_| lead + 1 + g.next_turn(lead) % tcp)
                    .find(|&c| up(c))
            }
        }
    }
}

impl Worker {
    /// The lead of socket `c`'s group (`c` itself without groups).
    pub(super) fn lead(&self, c: usize) -> usize {
        self.router.lead(c)
    }

    /// Requests in flight on connection `c`: on every socket of its group.
    pub(super) fn load_of(&self, c: usize) -> usize {
        self.io.conns[self.router.group(c)]
            .iter()
            .map(|s| s.in_flight.len())
            .sum()
    }

    /// Whether connection `c`'s group can send.
    pub(super) fn can_send(&self, c: usize) -> bool {
        let group = &self.io.conns[self.router.group(c)];
        self.router.can_send(group.iter().map(|s| s.alive))
    }

    /// A socket of a group was lost (not closed for a timeout, which
    /// reopens it). By op, the UDP socket takes the group with it, and so
    /// does the last TCP connection. By server, the group goes unless the
    /// socket is to be reopened (`--reconnect`): a client that lost a
    /// server is done.
    pub(super) fn lose_group(&mut self, c: usize) {
        let group = self.router.group(c);
        let whole = match self.router {
            Router::One => return,
            Router::ByOp(_) => {
                c == group.start
                    || !self.io.conns[group.start + 1..group.end]
                        .iter()
                        .any(|s| s.alive)
            }
            Router::ByServer(_) => !self.shared.spec.conns.reconnect,
        };
        if whole {
            self.give_up_group(c);
        }
    }

    /// A client whose keys keep landing on a server that is down, with
    /// nothing in flight, or a group lost whole: every socket of it is
    /// closed, and one closed for a timeout and waiting to be reopened
    /// stays closed.
    pub(super) fn give_up_group(&mut self, c: usize) {
        let group = self.router.group(c);
        for member in group.clone() {
            self.drop_conn(member);
        }
        for member in group {
            self.reopening.cancel(member);
        }
    }

    /// Whether any connection can still send: with groups, any group.
    pub(super) fn any_up(&self) -> bool {
        match self.router {
            Router::One => self.io.alive > 0,
            _ => (0..self.io.conns.len())
                .step_by(self.router.size())
                .any(|lead| self.can_send(lead)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::OpKind;

    fn get() -> Request {
        Request::new(OpKind::Get, 7)
    }

    fn set() -> Request {
        Request::new(OpKind::Set, 7)
    }

    #[test]
    fn one_connection_per_client_sends_on_it_whatever_is_down() {
        let mut r = Router::One;
        assert_eq!(r.route(5, &set(), || 3, None, |_| false), Some(5));
        assert_eq!((r.lead(5), r.group(5), r.cap(4)), (5, 5..6, 4));
    }

    #[test]
    fn by_server_a_request_goes_to_its_keys_server_or_fails() {
        // Two clients of three servers: sockets 0-2 and 3-5.
        let mut r = Router::by_server(3, 6);
        assert_eq!((r.lead(4), r.group(4), r.cap(2)), (3, 3..6, 6));
        assert!(r.by_key());
        assert_eq!(r.route(3, &get(), || 2, None, |_| true), Some(5));
        assert_eq!(r.route(3, &get(), || 2, None, |c| c != 5), None);
        assert!(r.can_send([false, true, false].into_iter()));
        assert!(!r.can_send([false, false, false].into_iter()));
    }

    #[test]
    fn by_server_with_replicas_reads_rotate_and_writes_go_home() {
        let replicas = Replicas {
            writers: 1,
            servers: 3,
            any_reader: false,
        };
        let mut r = Router::by_server(3, 3);
        let reads: Vec<_> = (0..4)
            .map(|_| r.route(0, &get(), || 0, Some(&replicas), |_| true))
            .collect();
        assert_eq!(reads, [Some(2), Some(1), Some(2), Some(1)]);
        assert_eq!(r.route(0, &set(), || 0, Some(&replicas), |_| true), Some(0));
        // The home writer down: a write goes to the first replica up.
        assert_eq!(
            r.route(0, &set(), || 0, Some(&replicas), |c| c != 0),
            Some(1)
        );
    }

    #[test]
    fn by_op_retrievals_take_the_lead_and_the_rest_the_tcp_sockets_in_turn() {
        // Facebook groups of a UDP lead and two TCP connections.
        let mut r = Router::by_op(3, 6);
        assert!(!r.by_key());
        assert_eq!(r.cap(4), 4);
        assert_eq!(r.route(3, &get(), || 0, None, |_| true), Some(3));
        let sets: Vec<_> = (0..3)
            .map(|_| r.route(3, &set(), || 0, None, |_| true))
            .collect();
        assert_eq!(sets, [Some(4), Some(5), Some(4)]);
        // One TCP socket down: the other takes every write.
        assert_eq!(r.route(3, &set(), || 0, None, |c| c != 5), Some(4));
        assert_eq!(r.route(3, &set(), || 0, None, |c| c != 5), Some(4));
        assert_eq!(r.route(3, &set(), || 0, None, |c| c == 3), None);
        // It can send while its UDP lead and one TCP socket are up.
        assert!(r.can_send([true, false, true].into_iter()));
        assert!(!r.can_send([false, true, true].into_iter()));
        assert!(!r.can_send([true, false, false].into_iter()));
    }
}
