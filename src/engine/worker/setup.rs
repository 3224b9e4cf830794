//! How a worker's parts are made from its plan and the run's spec: its
//! sockets registered for readiness, its key cursors, its router, its
//! encoder and its replay.

use super::keys::KeyState;
use super::open_loop::OpenLoop;
use super::schedule::WorkerSchedule;
use super::sockets::Sockets;
use super::{churn, replay, router, WorkerPlan, EVENTS, SCRATCH_LEN};
use crate::engine::conn::Conn;
use crate::engine::pacer::Pacer;
use crate::engine::poller::READABLE;
use crate::engine::request::{Encoder, WireOptions};
use crate::engine::trace_feed::Batch;
use crate::engine::transport::Transport;
use crate::engine::EngineError;
use crate::net::connect::Opened;
use crate::spec::{RunSpec, SpecError};
use crate::workload::Cursor;

/// The run's schedule for this worker, over its `conns` connections: a
/// connection schedule (`--num-conns`), an open loop where it has a rate
/// or replays a trace in time, else a closed loop. A preload runs closed
/// whatever the schedule (`Schedule::begin`).
pub(super) fn schedule(
    plan: &WorkerPlan,
    spec: &RunSpec,
    servers: usize,
    conns: usize,
    start: u64,
) -> WorkerSchedule {
    if let Some(c) = spec.churn() {
        return WorkerSchedule::Churn(Box::new(churn::Schedule::new(
            c,
            plan.index,
            spec.load.threads,
        )));
    }
    // A trace replayed in time (`--trace-speed`) sends at its records'
    // times (else at the pacer's, or as answered).
    let timed_replay = plan.trace.is_some() && spec.load.schedule.trace_speed().is_some();
    if plan.rate.is_none() && !timed_replay {
        return WorkerSchedule::Closed;
    }
    // The load's gap shape; the measurement group beside a closed-loop
    // load has a rate of its own, and Poisson gaps.
    let pacer = plan.rate.map(|r| {
        let gaps = spec.load.schedule.gaps().cloned();
        Pacer::new(
            gaps.unwrap_or_else(crate::spec::schedule::poisson),
            r,
            start,
        )
    });
    let open = OpenLoop::new(pacer, plan.coalesce_ns, servers, conns, plan.depth);
    WorkerSchedule::Open(Box::new(open.moderated(spec.moderate(), spec.skip())))
}

/// The most bytes one answer may take: a multiget's values with their
/// headers, and slack.
fn max_pending(spec: &RunSpec) -> usize {
    (spec.largest_stored_value() + 512) * spec.workload.multiget.keys.max(1) as usize + SCRATCH_LEN
}

/// The worker's sockets: its connections registered for readiness, and
/// the buffers they share.
pub(super) fn sockets(
    opened: Vec<Opened>,
    spec: &RunSpec,
    (depth, servers): (usize, usize),
    lanes: &[usize],
) -> Result<Sockets, EngineError> {
    let transport = Transport::os(EVENTS).map_err(EngineError::Epoll)?;
    let max_pending = max_pending(spec);
    let conns = conns(opened, spec, (depth, max_pending), lanes, &transport)?;
    Ok(Sockets::new(transport, conns, servers, max_pending))
}

/// In unit tests: a connection in memory for each of `opened`, over
/// `net`.
#[cfg(test)]
pub(super) fn memory_sockets(
    opened: Vec<Opened>,
    spec: &RunSpec,
    depth: usize,
    servers: usize,
    net: crate::engine::transport::memory::Network,
) -> Sockets {
    let max_pending = max_pending(spec);
    let transport = Transport::Memory(net.clone());
    let conns = opened.iter().enumerate().map(|(i, o)| {
        let pipe = net.connect(o.server);
        let mut conn = Conn::in_memory(pipe, spec.target.protocol, o.server, depth, max_pending);
        // As `conns` does; memory stamps each answer with when it came.
        if spec.stamps_answers() {
            conn.stamp_arrivals()
                .expect("memory stamps what it carries");
        }
        transport
            .add(&conn, i, READABLE)
            .expect("memory takes every connection");
        conn
    });
    let conns = conns.collect();
    Sockets::new(transport, conns, servers, max_pending)
}

/// The worker's connections, each registered with `transport` under its
/// index, stamping answers as they come where the run times them so, and
/// stamped by the kernel where the run takes latencies apart (a sample
/// of writes drawn per connection, seeded by the run's seed and the
/// connection's lane).
fn conns(
    opened: Vec<Opened>,
    spec: &RunSpec,
    (depth, max_pending): (usize, usize),
    lanes: &[usize],
    transport: &Transport,
) -> Result<Vec<Conn>, EngineError> {
    let mut conns = Vec::with_capacity(opened.len());
    for (i, o) in opened.into_iter().enumerate() {
        let mut c = Conn::new(
            o.link,
            spec.target.protocol,
            o.datagram,
            o.server,
            depth,
            max_pending,
        );
        if spec.stamps_answers() {
            c.stamp_arrivals().map_err(EngineError::RxStamps)?;
        }
        if spec.latency_parts_blocker().is_none() && c.udp.is_none() {
            let lane = lanes.get(i).copied().unwrap_or(i) as u64;
            let seed = spec.workload.seed ^ (lane + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            c.stamp_kernel(spec.stamp_every(), seed)
                .map_err(EngineError::KernelStamps)?;
        }
        transport.add(&c, i, READABLE).map_err(EngineError::Epoll)?;
        conns.push(c);
    }
    Ok(conns)
}

/// The key cursors: first the open loop's (one, or one per server when
/// keys are not placed), on lanes past every connection's; then one per
/// connection, on its lane.
pub(super) fn keys(spec: &RunSpec, servers: usize, worker: usize, lanes: &[usize]) -> KeyState {
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
    KeyState {
        cursors,
        open_cursors: open,
        fills: Vec::new(),
    }
}

/// Groups by op for `--facebook`, by server where keys are placed on
/// several, else one socket per client.
pub(super) fn router(spec: &RunSpec, servers: usize, sockets: usize) -> router::Router {
    if spec.conns.facebook {
        router::Router::by_op(spec.sockets_per_connection(), sockets)
    } else if spec.places_keys(servers) {
        router::Router::by_server(servers, sockets)
    } else {
        router::Router::One
    }
}

pub(super) fn encoder(spec: &RunSpec) -> Result<Encoder, SpecError> {
    Ok(Encoder::new(WireOptions {
        protocol: spec.target.protocol,
        expiry: spec.request.expiry,
        delta: spec.request.delta,
        noreply: spec.request.noreply,
        // Datagrams carry one request each, so each its own fence.
        fence_later: spec.request.noreply
            && spec.target.protocol.fences_later()
            && crate::spec::ServerAddr::first_udp(&spec.target.servers).is_none(),
        meta: spec.meta_options()?,
        max_value: u32::try_from(spec.largest_stored_value()).unwrap_or(u32::MAX),
        hash_field: spec.workload.assoc.unwrap_or(0),
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
    replay::Replay::new(feed, sockets, clients)
}
