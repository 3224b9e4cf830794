//! A worker's sockets: its connections, the readiness it waits on, and
//! the buffers and lists its turns share.

use super::{EVENTS, SCRATCH_LEN};
use crate::engine::conn::Conn;
use crate::engine::transport::Transport;

/// The connections and what the loop keeps of them between turns.
pub(super) struct Sockets {
    /// The sockets' readiness and connects (or, in tests, memory's).
    pub(super) transport: Transport,
    pub(super) conns: Vec<Conn>,
    /// Connections up.
    pub(super) alive: usize,
    /// Per server: this worker's live connections to it.
    pub(super) alive_on: Vec<usize>,
    /// Requests written or queued on connections, not yet answered.
    pub(super) in_flight: usize,
    /// Some connection is UDP: requests can be lost and must time out.
    pub(super) has_udp: bool,
    /// Every connection is stamped by the kernel: an open loop's send lag
    /// and gaps come from transmit stamps (`stamps`).
    pub(super) tx_stamped: bool,
    /// The most bytes one answer may take (the codec's bound per
    /// connection).
    pub(super) max_pending: usize,
    /// The read buffer the connections share.
    pub(super) scratch: Box<[u8]>,
    /// Connections with output to write this turn.
    pub(super) dirty: Vec<usize>,
    /// Connections of this turn's writes whose transmit stamps are to be
    /// read once every write is out (`writes`).
    pub(super) stamped_writes: Vec<usize>,
    /// Readiness events of the current wait: (connection, flags).
    pub(super) events: Vec<(usize, u32)>,
}

impl Sockets {
    /// `conns`, registered with `transport`, to `servers` servers.
    pub(super) fn new(
        transport: Transport,
        conns: Vec<Conn>,
        servers: usize,
        max_pending: usize,
    ) -> Self {
        let mut alive_on = vec![0; servers];
        for c in conns.iter().filter(|c| c.alive) {
            alive_on[c.server] += 1;
        }
        Sockets {
            transport,
            alive: conns.iter().filter(|c| c.alive).count(),
            alive_on,
            in_flight: 0,
            has_udp: conns.iter().any(|c| c.udp.is_some()),
            tx_stamped: !conns.is_empty() && conns.iter().all(Conn::kernel_stamped),
            conns,
            max_pending,
            scratch: vec![0; SCRATCH_LEN].into_boxed_slice(),
            dirty: Vec::new(),
            stamped_writes: Vec::new(),
            events: Vec::with_capacity(EVENTS),
        }
    }
}
