//! How a worker's parts are made from its plan and the run's spec: its
//! sockets registered for readiness, its key cursors, its router, its
//! encoder and its replay.

use super::{replay, router, SCRATCH_LEN};
use crate::engine::conn::Conn;
use crate::engine::poller::{Poller, READABLE};
use crate::engine::request::{Encoder, WireOptions};
use crate::engine::trace_feed::Batch;
use crate::net::connect::Opened;
use crate::spec::RunSpec;
use crate::workload::Cursor;

/// The most bytes one answer may take: a multiget's values with their
/// headers, and slack.
pub(super) fn max_pending(spec: &RunSpec) -> usize {
    (spec.largest_stored_value() + 512) * spec.multiget.keys.max(1) as usize + SCRATCH_LEN
}

/// Per server: how many of `opened` go to it, open.
pub(super) fn alive_on(opened: &[Opened], servers: usize) -> Vec<usize> {
    let mut alive_on = vec![0; servers];
    for o in opened.iter().filter(|o| o.link.is_some()) {
        alive_on[o.server] += 1;
    }
    alive_on
}

/// The worker's connections, each registered with `poller` under its
/// index, stamping answers as they come where the run times them so.
pub(super) fn conns(
    opened: Vec<Opened>,
    spec: &RunSpec,
    depth: usize,
    max_pending: usize,
    poller: &Poller,
) -> Result<Vec<Conn>, String> {
    let mut conns = Vec::with_capacity(opened.len());
    for (i, o) in opened.into_iter().enumerate() {
        let mut c = Conn::new(
            o.link,
            spec.protocol,
            o.datagram,
            o.server,
            depth,
            max_pending,
        );
        if spec.stamps_answers() {
            c.stamp_arrivals()
                .map_err(|e| format!("receive timestamps (SO_TIMESTAMPNS): {e}"))?;
        }
        if spec.latency_parts_blocker().is_none() && c.udp.is_none() {
            c.stamp_kernel()
                .map_err(|e| format!("kernel timestamps (SO_TIMESTAMPING): {e}"))?;
        }
        if c.socket().is_some() {
            poller
                .add(c.fd(), i as u64, READABLE)
                .map_err(|e| format!("epoll: {e}"))?;
        }
        conns.push(c);
    }
    Ok(conns)
}

/// The key cursors: first the open loop's (one, or one per server when
/// keys are not placed), on lanes past every connection's; then one per
/// connection, on its lane. And how many are the open loop's.
pub(super) fn cursors(
    spec: &RunSpec,
    servers: usize,
    worker: usize,
    lanes: &[usize],
) -> (Vec<Cursor>, usize) {
    let open = if spec.places_keys(servers) {
        1
    } else {
        servers
    };
    let first_open_lane = spec.total_connections(servers) + worker * servers;
    let cursors = (first_open_lane..first_open_lane + open)
        .chain(lanes.iter().copied())
        .map(Cursor::new)
        .collect();
    (cursors, open)
}

/// Groups by op for `--facebook`, by server where keys are placed on
/// several, else one socket per client.
pub(super) fn router(spec: &RunSpec, servers: usize, sockets: usize) -> router::Router {
    if spec.facebook {
        router::Router::by_op(spec.sockets_per_connection(), sockets)
    } else if spec.places_keys(servers) {
        router::Router::by_server(servers, sockets)
    } else {
        router::Router::One
    }
}

pub(super) fn encoder(spec: &RunSpec) -> Result<Encoder, String> {
    Ok(Encoder::new(WireOptions {
        protocol: spec.protocol,
        expiry: spec.expiry,
        delta: spec.delta,
        noreply: spec.noreply,
        // Datagrams carry one request each, so each its own fence.
        fence_later: spec.noreply
            && spec.protocol.fences_later()
            && crate::spec::ServerAddr::first_udp(&spec.servers).is_none(),
        meta: spec.meta_options()?,
        max_value: u32::try_from(spec.largest_stored_value()).unwrap_or(u32::MAX),
        hash_field: spec.assoc.unwrap_or(0),
    }))
}

/// `--trace`: the replay of this worker's share of the feed.
pub(super) fn replay(
    feed: crossbeam_channel::Receiver<Batch>,
    spec: &RunSpec,
    servers: usize,
    sockets: usize,
    lanes: &[usize],
) -> replay::Replay {
    let t = spec.trace.as_ref().expect("a trace run");
    let clients = t.clients.then(|| (spec.total_connections(servers), lanes));
    replay::Replay::new(
        feed,
        spec.schedule.trace_speed().is_some(),
        sockets,
        clients,
    )
}
