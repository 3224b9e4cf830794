//! A worker thread: one event loop over its own connections, sharing
//! nothing with other workers but the read-only workload tables.
//!
//! Each phase runs the same loop: schedule → encode → flush → wait → read →
//! parse → record. The loop is closed (a freed slot is refilled at once) or
//! open (a `Pacer` decides when requests are due; a due request with no free
//! slot waits in the client, and that wait counts as latency).
//!
//! The loop's fixed skeleton is `skeleton.rs`, its rules in time `phase.rs`.
//! The parts it is composed of, each with its own state and tests:
//! - when requests are due: `open_loop.rs` (and its `backlog.rs`),
//!   `closed_loop.rs`, `churn.rs`, `replay.rs` (a timed trace);
//! - what is sent: `source.rs` (preload, mix, trace, delete90);
//! - where it goes: `router.rs` (one socket, by server, by op);
//! - when answers are read: `read_policy.rs`, applied in `wait.rs`;
//! - what an answer updates: `answers.rs`, read in `responses.rs`;
//! - failures: `timeouts.rs`, `stall.rs`, `reconnect.rs`.
//!
//! `setup.rs` makes the parts from the worker's plan.

mod answers;
mod backlog;
mod churn;
mod closed_loop;
mod open_loop;
mod phase;
mod read_policy;
mod reconnect;
mod replay;
mod responses;
mod router;
mod sampler;
mod setup;
mod skeleton;
mod source;
mod stall;
mod stamps;
mod timeouts;
mod wait;
mod writes;

use super::conn::{Conn, InFlight};
use super::pacer::Pacer;
use super::poller::Poller;
use super::request::Encoder;
use super::{Message, PhaseEnd, PhaseKind, Shared};
use crate::net::clock_ns;
use crate::stats::{cpu, Recorder, Snapshot};
use crate::workload::{Cursor, Request};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use sampler::Sampler;
use source::Source;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Longest single wait, ns, so that a stop request is seen promptly.
const MAX_WAIT_NS: u64 = 50_000_000;

/// Read buffer shared by the worker's connections, bytes.
const SCRATCH_LEN: usize = 64 * 1024;
/// Arrivals turned into requests per loop turn, at most.
const MAX_DISPATCH: usize = 4096;
/// Readiness events taken per wait.
const EVENTS: usize = 256;

/// What one worker is given.
pub struct WorkerPlan {
    pub index: usize,
    /// Connected sockets and the server each goes to.
    pub conns: Vec<crate::net::connect::Opened>,
    /// Per connection: its number among all the run's connections.
    pub lanes: Vec<usize>,
    /// This worker's share of the target rate, ops/s; `None` is closed loop.
    pub rate: Option<f64>,
    /// This worker's share of `--ops`.
    pub quota: Option<u64>,
    /// Keys this worker preloads: ranges of key ids, each for one server
    /// (`Some`) or where its keys live (`None`, when keys are placed).
    pub load: Vec<(Option<usize>, Range<u64>)>,
    pub cpu: Option<usize>,
    /// Requests in flight per connection: `--depth`, or the measurement
    /// group's `--measure-depth`.
    pub depth: usize,
    /// `--trace`: this worker's share of the trace feed.
    pub trace: Option<crossbeam_channel::Receiver<super::trace_feed::Batch>>,
    /// `--delete90`: this worker's share of the key space, as `load`.
    pub deletes: Vec<(Option<usize>, Range<u64>)>,
    /// Open loop: how late it may wake for an arrival, ns (`--coalesce`).
    pub coalesce_ns: u64,
}

/// A request due to be sent (or waiting for a free slot). Its op and keys
/// are drawn when it is encoded, from its connection's key state, unless it
/// is a fixed request (a preload set, a getset fill).
#[derive(Clone, Copy)]
struct Due {
    req: Option<Request>,
    intended_ns: u64,
    measured: bool,
    /// When it began to wait in the client for a free connection (0: it
    /// did not wait; `queued` sets it).
    queued_at: u64,
}

impl Due {
    /// A request intended at `intended_ns` that has not waited.
    fn new(req: Option<Request>, intended_ns: u64, measured: bool) -> Due {
        Due {
            req,
            intended_ns,
            measured,
            queued_at: 0,
        }
    }

    /// The same, waiting for a free connection since `now`.
    fn queued(self, now: u64) -> Due {
        Due {
            queued_at: now,
            ..self
        }
    }
}

pub struct Worker {
    index: usize,
    /// Requests in flight per connection.
    depth: usize,
    shared: Arc<Shared>,
    tx: crossbeam_channel::Sender<Message>,
    poller: Poller,
    conns: Vec<Conn>,
    alive: usize,
    /// Per server: this worker's live connections to it.
    alive_on: Vec<usize>,
    /// Key state (sequential position, latest write, memaslap window,
    /// cas uniques, expiring keys): first the open loop's, which draws
    /// each arrival before it has a connection (one, or one per server
    /// when keys are not placed, so that a key stays on its server); then
    /// one per connection (a group draws with its lead's).
    cursors: Vec<Cursor>,
    /// How many of `cursors` are the open loop's.
    open_cursors: usize,
    /// Keys whose get missed, to set now (`--getset`).
    fills: Vec<u64>,
    /// `--miss-window`: the window being counted.
    miss_window: Option<answers::MissCount>,
    rng: SmallRng,
    /// `--save`: which measured requests are written out.
    sampler: Sampler,
    encoder: Encoder,
    /// Some connection is UDP: requests can be lost and must time out.
    has_udp: bool,
    /// When UDP requests are next checked for expiry, ns.
    next_udp_check: u64,
    /// `--reconnect`: lost connections waiting to be opened again.
    reopening: reconnect::Reopening,
    /// `--num-conns`: this worker's share of the connection schedule.
    churn: Option<churn::Schedule>,
    /// `--facebook`: the sockets of each connection, routed by op.
    router: router::Router,
    /// The most bytes one answer may take (the codec's bound per
    /// connection).
    max_pending: usize,
    /// When requests and connects are next checked against `--timeout`, ns.
    next_timeout_check: u64,
    recorder: Box<Recorder>,
    scratch: Box<[u8]>,
    /// Connections with output to write this turn.
    dirty: Vec<usize>,
    /// Connections of this turn's writes whose transmit stamps are to be
    /// read once every write is out (`writes`).
    stamped_writes: Vec<usize>,
    /// Readiness events of the current wait: (connection, flags).
    events: Vec<(usize, u32)>,
    /// When answers are read: at once, after a pause, late, or spinning.
    reads: read_policy::ReadPolicy,
    /// Requests written or queued on connections, not yet answered.
    in_flight: usize,
    /// Every connection is stamped by the kernel: an open loop's send lag
    /// and gaps come from transmit stamps (`stamps`).
    tx_stamped: bool,
    /// Open loop: the arrivals' schedule, free slots and waiting requests.
    arrivals: open_loop::OpenLoop,
    /// `--trace`: the records to replay, and the keys they carry.
    replay: Option<replay::Replay>,
    /// What each phase sends, under the quota.
    requests: source::Requests,
    // Per-phase state.
    /// Where the phase is in time: measuring, sending, answered.
    progress: phase::Progress,
    /// The preload's failures this worker has added to the run's count.
    preload_failed_told: u64,
}

impl Worker {
    pub fn new(
        plan: WorkerPlan,
        shared: Arc<Shared>,
        tx: crossbeam_channel::Sender<Message>,
    ) -> Result<Self, String> {
        let spec = &shared.spec;
        let nservers = shared.addrs.len();
        let poller = Poller::new(EVENTS).map_err(|e| format!("epoll: {e}"))?;
        let max_pending = setup::max_pending(spec);
        let alive_on = setup::alive_on(&plan.conns, nservers);
        let conns = setup::conns(plan.conns, spec, plan.depth, max_pending, &poller)?;
        let (cursors, open_cursors) = setup::cursors(spec, nservers, plan.index, &plan.lanes);
        let start = clock_ns();
        let unopened: Vec<usize> = (0..conns.len()).filter(|&c| !conns[c].alive).collect();
        let mut worker = Worker {
            index: plan.index,
            depth: plan.depth,
            rng: SmallRng::seed_from_u64(spec.seed.wrapping_add(plan.index as u64 * 0x9E37_79B9)),
            sampler: Sampler::new(spec.save_rate, spec.seed ^ plan.index as u64),
            alive: conns.len() - unopened.len(),
            arrivals: open_loop::OpenLoop::new(
                // The load's gap shape; the measurement group beside a
                // closed-loop load has a rate of its own, and Poisson gaps.
                plan.rate.map(|r| {
                    let gaps = spec.schedule.gaps().cloned();
                    Pacer::new(
                        gaps.unwrap_or_else(crate::spec::schedule::poisson),
                        r,
                        start,
                    )
                }),
                plan.coalesce_ns,
                nservers,
                conns.len() * plan.depth,
            ),
            replay: plan
                .trace
                .map(|rx| setup::replay(rx, spec, nservers, conns.len(), &plan.lanes)),
            requests: source::Requests::new(plan.load, plan.deletes, plan.quota),
            router: setup::router(spec, nservers, conns.len()),
            has_udp: conns.iter().any(|c| c.udp.is_some()),
            tx_stamped: !conns.is_empty() && conns.iter().all(Conn::kernel_stamped),
            reopening: reconnect::Reopening::new(conns.len()),
            conns,
            alive_on,
            cursors,
            open_cursors,
            fills: Vec::new(),
            miss_window: spec
                .miss_window
                .map(|n| answers::MissCount::new(n, plan.index)),
            encoder: setup::encoder(spec)?,
            next_udp_check: 0,
            churn: spec
                .churn()
                .map(|c| churn::Schedule::new(c, plan.index, spec.threads)),
            max_pending,
            next_timeout_check: 0,
            poller,
            recorder: Box::default(),
            scratch: vec![0; SCRATCH_LEN].into_boxed_slice(),
            dirty: Vec::new(),
            stamped_writes: Vec::new(),
            events: Vec::with_capacity(EVENTS),
            reads: read_policy::ReadPolicy::new(spec),
            in_flight: 0,
            progress: phase::Progress::default(),
            preload_failed_told: 0,
            shared,
            tx,
        };
        // Servers down at the start: their connections are tried after
        // the first pause, as a lost one's.
        for c in unopened {
            worker.reopening.schedule(c, start);
        }
        Ok(worker)
    }

    /// Runs the phases the plan asks for, with the barrier in between.
    pub fn run(mut self, go: crossbeam_channel::Receiver<()>) {
        let spec = self.shared.spec.clone();
        use crate::spec::LoadMode;
        if spec.load == LoadMode::Load {
            let end = self.run_phase(PhaseKind::Load, false);
            // The preload's replies, for the main thread to judge.
            let counts = std::mem::replace(&mut self.recorder, self.shared.empty_recorder());
            self.send(Message::Done {
                worker: self.index,
                phase: PhaseKind::Load,
                end,
                cpu_ns: 0,
                elapsed_ns: 0,
                drain_ns: 0,
                counts: Some(counts),
            });
        }
        if self.churn.is_some() {
            // Only the schedule's connections are measured.
            self.close_held();
        }
        self.send(Message::Ready { worker: self.index });
        let _ = go.recv(); // returns when the main thread drops the sender
        let kind = if spec.load == LoadMode::LoadOnly {
            PhaseKind::Load
        } else {
            PhaseKind::Measure
        };
        // A failed preload leaves nothing worth measuring.
        let end = if self.shared.abort.load(Ordering::Relaxed) {
            self.start_measuring();
            self.progress.measured_until = clock_ns();
            self.progress.record_from = self.progress.measured_until;
            PhaseEnd::Failed("not measured: the preload failed".into())
        } else {
            self.run_phase(kind, true)
        };
        let elapsed_ns = self
            .progress
            .measured_until
            .saturating_sub(self.progress.record_from);
        let drain_ns = self.progress.drain_ns;
        let cpu_ns = cpu::thread_cpu_ns().saturating_sub(self.progress.cpu_start);
        self.send(Message::Done {
            worker: self.index,
            phase: kind,
            end,
            cpu_ns,
            elapsed_ns,
            drain_ns,
            counts: None,
        });
    }

    fn send(&self, msg: Message) {
        let _ = self.tx.send(msg);
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed) != 0
    }

    /// Starts counting: a fresh recorder and CPU baseline, so that nothing
    /// of the warm-up (bytes, errors, CPU) is reported.
    fn start_measuring(&mut self) {
        self.recorder = self.shared.empty_recorder();
        self.start_slots(self.progress.record_from);
        self.progress.cpu_start = cpu::thread_cpu_ns();
        self.progress.interval_cpu_start = self.progress.cpu_start;
        // Windows count measured answers only: not the preload's, nor the
        // warm-up's.
        if let Some(w) = &mut self.miss_window {
            *w = answers::MissCount::new(w.size, self.index);
        }
    }

    /// What a phase leaves behind must not count in the next: requests
    /// still unanswered are no longer measured, waiting ones are dropped
    /// (they were counted as timeouts).
    fn end_phase(&mut self) {
        for conn in &mut self.conns {
            conn.forget_in_flight();
        }
        self.arrivals.backlog.clear();
    }

    pub(super) fn source_exhausted(&self) -> bool {
        match &self.requests.source {
            Source::Load(_) => self.requests.preloaded(),
            Source::Mix => self.churn.as_ref().is_some_and(churn::Schedule::done),
            Source::Trace => self.replay.as_ref().is_some_and(replay::Replay::exhausted),
            Source::Delete(_) => false,
        }
    }

    /// Requests sent or waiting, not yet answered; while sending, connects
    /// under way too (a server that accepts nothing is not answering).
    fn outstanding(&self) -> usize {
        let connecting = match &self.churn {
            Some(s) if self.progress.sending => s.connecting(),
            _ => 0,
        };
        self.requests_waiting() + connecting
    }

    /// Requests sent or waiting for a connection, not yet answered.
    fn requests_waiting(&self) -> usize {
        self.in_flight + self.arrivals.backlog.len()
    }

    /// Fills the free slots of connection `c`: in a closed loop (and a
    /// preload) its group's; in an open loop, hands them to waiting
    /// requests or the ready list.
    fn refill(&mut self, c: usize, now: u64) {
        if self.churning() {
            self.churn_refill(c, now)
        } else if self.open_loop() {
            self.list_free_slots(c);
        } else {
            self.refill_closed(self.lead(c), now);
        }
    }

    /// Open loop: connection `c`'s free slots go to requests waiting for
    /// its server, then to the ready list.
    fn list_free_slots(&mut self, c: usize) {
        let server = self.conns[c].server;
        let depth = self.depth;
        if self.shared.spec.skip() {
            self.recorder.skips += self.arrivals.backlog.skip_late(server, clock_ns());
        }
        // `--moderate`: a quiet connection lists its slots; the waiting
        // requests go out on it once its quiet time is over.
        let quiet = self.conns[c].quiet_until > clock_ns();
        while self.conns[c].alive && self.conns[c].in_flight.len() + self.conns[c].listed < depth {
            let waiting = if quiet {
                None
            } else {
                self.arrivals.backlog.pop(server)
            };
            if let Some(due) = waiting {
                self.issue_waited(c, due);
            } else {
                self.arrivals.ready[server].push_back(c);
                self.conns[c].listed += 1;
            }
        }
    }

    /// Whether arrivals come from a schedule (the measured phase of an
    /// open-loop run: the pacer's, or a trace's timestamps).
    fn open_loop(&self) -> bool {
        match self.requests.source {
            Source::Mix => self.arrivals.pacer.is_some(),
            Source::Trace => {
                self.arrivals.pacer.is_some() || self.replay.as_ref().is_some_and(|r| r.timed)
            }
            Source::Load(_) | Source::Delete(_) => false,
        }
    }

    /// A replay the feed has not kept up with (it is looked at again soon).
    fn trace_starved(&self) -> bool {
        self.requests.replaying() && self.replay.as_ref().is_some_and(|r| r.starved)
    }

    /// The cursor a request on connection `c` draws with and tells.
    fn cursor_index(&self, c: usize) -> usize {
        if self.open_loop() {
            self.open_cursor(self.conns[c].server)
        } else {
            self.open_cursors + self.lead(c)
        }
    }

    /// Connection `c`'s number among all the run's connections.
    fn lane_of(&self, c: usize) -> usize {
        self.cursors[self.open_cursors + c].lane
    }

    /// The open loop's cursor for arrivals to `server`.
    fn open_cursor(&self, server: usize) -> usize {
        if self.open_cursors == 1 {
            0
        } else {
            server
        }
    }

    /// Encodes `due` into connection `c`'s output: in a closed loop, into
    /// the socket of `c`'s group that carries it (its key's server, or its
    /// op's socket with `--facebook`). `false` if that socket is down: the
    /// request fails as `no_connection`.
    fn issue(&mut self, c: usize, due: Due) -> bool {
        let ci = self.cursor_index(c);
        let req = match due.req {
            Some(req) => req,
            None => {
                let cursor = &mut self.cursors[ci];
                (self.shared.workload).next(&mut self.rng, cursor, due.intended_ns)
            }
        };
        match self.route(c, &req, due.measured) {
            Some(target) => {
                self.encode(target, ci, req, due);
                true
            }
            None => false,
        }
    }

    /// The socket `req`, due on connection `c`, goes out on: `c` itself in
    /// an open loop (its slot was taken for it), else the router's pick in
    /// `c`'s group. `None` if that socket is down, counted (if `measured`)
    /// as `no_connection` of the server it was for.
    fn route(&mut self, c: usize, req: &Request, measured: bool) -> Option<usize> {
        if self.open_loop() {
            return Some(c);
        }
        let lead = self.lead(c);
        let keys = &self.shared.workload.keys;
        let traced_home = self.replay.as_ref().and_then(|r| r.server_of(req.key));
        let home = || traced_home.unwrap_or_else(|| keys.server_of(req.key));
        let conns = &self.conns;
        let target = (self.router).route(lead, req, home, keys.replicas(), |s| conns[s].alive);
        if target.is_none() && measured {
            let server = match keys.placed() || traced_home.is_some() {
                true => home(),
                false => self.conns[lead].server,
            };
            self.recorder
                .server_error(server, crate::stats::ErrorClass::NoConnection, 1);
        }
        target
    }

    /// Encodes `req` into connection `c`'s output, its keys drawn with
    /// cursor `ci`, and queues it as in flight.
    fn encode(&mut self, c: usize, ci: usize, req: Request, due: Due) {
        let workload = &self.shared.workload;
        let cursor = &mut self.cursors[ci];
        let server = self.conns[c].server;
        let conn = &mut self.conns[c];
        let before = conn.out().len();
        let opaque = conn.next_opaque();
        if conn.udp.is_some() {
            mcbench_proto::udp::write_header(conn.out(), opaque as u16);
        }
        let traced = self.replay.as_ref().map(|r| r.traced(req.key));
        let expect = self.encoder.encode(
            conn.out(),
            req,
            opaque,
            workload,
            &mut self.rng,
            server,
            cursor,
            traced,
        );
        if traced.is_none() && req.op.writes() && workload.keys.contains(req.key) {
            cursor.set(workload.keys.rank_of(req.key));
        }
        let size = conn.out().len() - before;
        self.recorder.conns.request_size.record(size as u64);
        self.in_flight += 1;
        if due.measured {
            self.recorder.record_op_queue(conn.in_flight.len() + 1);
        }
        conn.queued(
            InFlight {
                op: req.op,
                key: req.key,
                expect,
                intended_ns: due.intended_ns,
                waited_ns: 0,
                sent_ns: due.intended_ns,
                tx_ns: 0,
                rx_ns: 0,
                measured: due.measured,
                check: req.check,
                end_byte: 0,
                asked: 0,
            },
            self.encoder.keys(),
        );
        if !conn.dirty {
            conn.dirty = true;
            self.dirty.push(c);
        }
    }

    /// The current recorder's interval starts at `start` (worker clock):
    /// its answers go to slots by when they come.
    fn start_slots(&mut self, start: u64) {
        let length = self.shared.spec.interval.as_nanos() as u64;
        self.recorder.slot_clock = crate::stats::batches::SlotClock::starting(start, length);
    }

    /// Sends the current recorder as interval `index` and starts a new one.
    fn emit(&mut self, index: u64, end_ns: u64) {
        let recorder = std::mem::replace(&mut self.recorder, self.shared.empty_recorder());
        self.start_slots(self.progress.record_from.saturating_add(end_ns));
        let cpu_now = cpu::thread_cpu_ns();
        let cpu_ns = cpu_now.saturating_sub(self.progress.interval_cpu_start);
        self.progress.interval_cpu_start = cpu_now;
        self.send(Message::Interval(Snapshot {
            worker: self.index,
            index,
            end_ns,
            cpu_ns,
            recorder,
        }));
    }
}
