//! A connection over the in-memory transport (unit tests): a pipe in
//! place of the socket, with no TLS, datagrams or kernel stamps.

use super::Conn;
use crate::engine::transport::memory::Pipe;
use mcbench_proto::Protocol;

impl Conn {
    /// A connection over an in-memory pipe (unit tests).
    pub fn in_memory(
        pipe: Pipe,
        protocol: Protocol,
        server: usize,
        depth: usize,
        max_pending: usize,
    ) -> Self {
        let mut conn = Conn::new(None, protocol, false, server, depth, max_pending);
        conn.memory = Some(pipe);
        conn.alive = true;
        conn
    }

    /// Its in-memory pipe, if it is one.
    pub fn memory_pipe(&self) -> Option<&Pipe> {
        self.memory.as_ref()
    }

    /// Takes `pipe` as this (closed) connection's new one.
    pub fn reopen_memory(&mut self, pipe: Pipe) {
        self.memory = Some(pipe);
        self.alive = true;
    }
}
