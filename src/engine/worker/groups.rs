//! memaslap's facebook test (`--facebook`): each connection is a group of
//! sockets to one server, a UDP socket for the retrievals and `conn_sock`
//! TCP connections for everything else. The group is refilled as one
//! closed loop (its depth counts every socket's requests); each request
//! goes out on the socket its op takes.
//!
//! A group's sockets are in a row in the worker's connections: the UDP
//! socket (the lead) first, then its TCP connections.

use super::Worker;
use crate::engine::conn::Conn;
use crate::workload::OpKind;

pub struct Groups {
    /// Sockets per group.
    size: usize,
    /// Per group: the TCP connection its next non-retrieval takes.
    turn: Vec<usize>,
}

impl Groups {
    pub fn new(size: usize, sockets: usize) -> Self {
        Groups {
            size,
            turn: vec![0; sockets.div_ceil(size)],
        }
    }

    /// The lead (UDP) socket of socket `c`'s group.
    pub fn lead(&self, c: usize) -> usize {
        c - c % self.size
    }
}

/// The socket of `lead`'s group a request of `op` goes out on: the UDP
/// lead for retrievals, the group's live TCP connections in turn for the
/// rest; `None` when none is up (one timed out and is being reopened).
/// Without groups, `lead` itself.
pub fn route(
    groups: &mut Option<Groups>,
    conns: &[Conn],
    lead: usize,
    op: OpKind,
) -> Option<usize> {
    let Some(g) = groups else {
        return Some(lead);
    };
    if op.is_retrieval() {
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
    /// Requests in flight on connection `c`: with `--facebook`, on every
    /// socket of its group.
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

    /// Whether connection `c` can send every op: with `--facebook`, its
    /// group's UDP socket and at least one of its TCP connections are up.
    pub(super) fn can_send(&self, c: usize) -> bool {
        match &self.groups {
            Some(g) => {
                let lead = g.lead(c);
                self.conns[lead].alive
                    && self.conns[lead + 1..lead + g.size].iter().any(|s| s.alive)
            }
            None => self.conns[c].alive,
        }
    }

    /// A socket of a group was lost (not closed for a timeout, which
    /// reopens it): the UDP socket takes the group with it, and so does
    /// the last TCP connection.
    pub(super) fn lose_group(&mut self, c: usize) {
        let Some(g) = &self.groups else {
            return;
        };
        let (lead, size) = (g.lead(c), g.size);
        if c == lead {
            for member in lead + 1..lead + size {
                self.lose(member);
            }
        } else if !self.conns[lead + 1..lead + size].iter().any(|s| s.alive) {
            self.lose(lead);
        } else {
            return;
        }
        // The group is lost whole: a member closed for a timeout and
        // waiting to be reopened stays closed.
        for member in lead..lead + size {
            self.reopening.cancel(member);
        }
    }

    /// Whether any connection can still send: with `--facebook`, any
    /// group (its UDP socket alone cannot).
    pub(super) fn any_up(&self) -> bool {
        match &self.groups {
            Some(g) => (0..self.conns.len())
                .step_by(g.size)
                .any(|lead| self.can_send(lead)),
            None => self.alive > 0,
        }
    }
}
