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
//! - when requests are due: `schedule.rs`, the one place the mode is
//!   looked at, over `open_loop.rs` (and its `backlog.rs`),
//!   `closed_loop.rs`, `churn.rs`, `replay.rs` (a timed trace);
//! - what is sent: `source.rs` (preload, mix, trace, delete90);
//! - where it goes: `router.rs` (one socket, by server, by op);
//! - when answers are read: `read_policy.rs`, applied in `wait.rs`;
//! - what an answer updates: `answers.rs`, read in `responses.rs`;
//! - failures: `timeouts.rs`, `stall.rs`, `reconnect.rs`.
//!
//! - the sockets and buffers: `sockets.rs`, over the engine's transport;
//!   the keys drawn with: `keys.rs`.
//!
//! `setup.rs` makes the parts from the worker's plan. The worker reads the
//! time and waits only through the engine's `Clock` and `Transport`:
//! `tests/` runs whole workers on a manual clock over memory.

mod answers;
mod backlog;
mod churn;
mod closed_loop;
mod keys;
mod open_loop;
mod phase;
mod read_policy;
mod reconnect;
mod replay;
mod responses;
mod router;
mod sampler;
mod schedule;
mod setup;
mod skeleton;
mod sockets;
mod source;
mod stall;
mod stamps;
#[cfg(test)]
mod tests;
mod timeouts;
mod wait;
mod writes;

use super::conn::InFlight;
use super::request::Encoder;
use super::{EngineError, Message, PhaseEnd, PhaseKind, Shared};
use crate::stats::{cpu, Recorder, Snapshot};
use crate::workload::Request;
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

/// A worker: its parts, each in its own file (see above).
pub struct Worker {
    index: usize,
    /// Requests in flight per connection.
    depth: usize,
    shared: Arc<Shared>,
    tx: crossbeam_channel::Sender<Message>,
    /// The connections, their readiness and their buffers.
    io: sockets::Sockets,
    /// What the workload draws with and answers update.
    keys: keys::KeyState,
    /// `--miss-window`: the window being counted.
    miss_window: Option<answers::MissCount>,
    rng: SmallRng,
    /// `--save`: which measured requests are written out.
    sampler: Sampler,
    encoder: Encoder,
    /// `--reconnect`: lost connections waiting to be opened again.
    reopening: reconnect::Reopening,
    /// `--facebook`: the sockets of each connection, routed by op.
    router: router::Router,
    /// When timeouts and lost datagrams are next looked for.
    checks: timeouts::Checks,
    recorder: Box<Recorder>,
    /// When answers are read: at once, after a pause, late, or spinning.
    reads: read_policy::ReadPolicy,
    /// When requests are due, and the state of that mode.
    schedule: schedule::Schedule,
    /// `--trace`: the records to replay, and the keys they carry.
    replay: Option<replay::Replay>,
    /// What each phase sends, under the quota.
    requests: source::Requests,
    /// Where the phase is in time: measuring, sending, answered.
    progress: phase::Progress,
}

impl Worker {
    pub fn new(
        mut plan: WorkerPlan,
        shared: Arc<Shared>,
        tx: crossbeam_channel::Sender<Message>,
    ) -> Result<Self, EngineError> {
        let opened = std::mem::take(&mut plan.conns);
        let shape = (plan.depth, shared.addrs.len());
        let io = setup::sockets(opened, &shared.spec, shape, &plan.lanes)?;
        Worker::assemble(plan, shared, tx, io)
    }

    /// A worker over in-memory connections to `net` (unit tests).
    #[cfg(test)]
    pub(super) fn in_memory(
        mut plan: WorkerPlan,
        shared: Arc<Shared>,
        tx: crossbeam_channel::Sender<Message>,
        net: crate::engine::transport::memory::Network,
    ) -> Result<Self, EngineError> {
        let opened = std::mem::take(&mut plan.conns);
        let servers = shared.addrs.len();
        let io = setup::memory_sockets(opened, &shared.spec, plan.depth, servers, net);
        Worker::assemble(plan, shared, tx, io)
    }

    /// The worker of `plan` over the sockets `io`.
    fn assemble(
        plan: WorkerPlan,
        shared: Arc<Shared>,
        tx: crossbeam_channel::Sender<Message>,
        io: sockets::Sockets,
    ) -> Result<Self, EngineError> {
        let spec = &shared.spec;
        let nservers = shared.addrs.len();
        let sockets = io.conns.len();
        let start = shared.clock.now();
        // The pacer starts again as its phase does (`start_open_loop`).
        let run_schedule = setup::schedule(&plan, spec, nservers, sockets, start);
        let unopened: Vec<usize> = (0..sockets).filter(|&c| !io.conns[c].alive).collect();
        let mut worker = Worker {
            index: plan.index,
            depth: plan.depth,
            rng: SmallRng::seed_from_u64(
                spec.workload
                    .seed
                    .wrapping_add(plan.index as u64 * 0x9E37_79B9),
            ),
            sampler: Sampler::new(
                spec.recording.save_rate,
                spec.workload.seed ^ plan.index as u64,
            ),
            schedule: schedule::Schedule::new(run_schedule),
            replay: plan
                .trace
                .map(|rx| setup::replay(rx, spec, nservers, sockets, &plan.lanes)),
            requests: source::Requests::new(plan.load, plan.deletes, plan.quota),
            router: setup::router(spec, nservers, sockets),
            reopening: reconnect::Reopening::new(sockets),
            keys: setup::keys(spec, nservers, plan.index, &plan.lanes),
            miss_window: spec
                .workload
                .miss_window
                .map(|n| answers::MissCount::new(n, plan.index)),
            encoder: setup::encoder(spec)?,
            checks: timeouts::Checks::default(),
            io,
            recorder: Box::default(),
            reads: read_policy::ReadPolicy::new(spec),
            progress: phase::Progress::default(),
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
        if spec.key_space.preload == LoadMode::Load {
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
        self.hand_over_connections();
        self.send(Message::Ready { worker: self.index });
        let _ = go.recv(); // returns when the main thread drops the sender
        let kind = if spec.key_space.preload == LoadMode::LoadOnly {
            PhaseKind::Load
        } else {
            PhaseKind::Measure
        };
        // A failed preload leaves nothing worth measuring.
        let end = if self.shared.abort.load(Ordering::Relaxed) {
            self.start_measuring();
            self.progress.measured_until = self.now();
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

    /// The time now on the worker's clock, ns.
    #[inline]
    fn now(&self) -> u64 {
        self.shared.clock.now()
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
        for conn in &mut self.io.conns {
            conn.forget_in_flight();
        }
        self.schedule.end_phase();
    }

    pub(super) fn source_exhausted(&self) -> bool {
        match &self.requests.source {
            Source::Load(_) => self.requests.preloaded(),
            Source::Mix => self.schedule.exhausted(),
            Source::Trace => self.replay.as_ref().is_some_and(replay::Replay::exhausted),
            Source::Delete(_) => false,
        }
    }

    /// Requests sent or waiting, not yet answered; while sending, connects
    /// under way too (a server that accepts nothing is not answering).
    fn outstanding(&self) -> usize {
        let connecting = match self.progress.sending {
            true => self.schedule.connecting(),
            false => 0,
        };
        self.requests_waiting() + connecting
    }

    /// Requests sent or waiting for a connection, not yet answered.
    fn requests_waiting(&self) -> usize {
        self.io.in_flight + self.schedule.waiting()
    }

    /// A replay the feed has not kept up with (it is looked at again soon).
    fn trace_starved(&self) -> bool {
        self.requests.replaying() && self.replay.as_ref().is_some_and(|r| r.starved)
    }

    /// Connection `c`'s number among all the run's connections.
    fn lane_of(&self, c: usize) -> usize {
        self.keys.cursors[self.keys.open_cursors + c].lane
    }

    /// The open loop's cursor for arrivals to `server`.
    fn open_cursor(&self, server: usize) -> usize {
        if self.keys.open_cursors == 1 {
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
                let cursor = &mut self.keys.cursors[ci];
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

    /// The router's pick in connection `c`'s group for `req`. `None` if
    /// that socket is down, counted (if `measured`) as `no_connection` of
    /// the server it was for.
    fn route_in_group(&mut self, c: usize, req: &Request, measured: bool) -> Option<usize> {
        let lead = self.lead(c);
        let keys = &self.shared.workload.keys;
        let traced_home = self.replay.as_ref().and_then(|r| r.server_of(req.named));
        let home = || traced_home.unwrap_or_else(|| req.key_id().map_or(0, |k| keys.server_of(k)));
        let conns = &self.io.conns;
        let target = (self.router).route(lead, req, home, keys.replicas(), |s| conns[s].alive);
        if target.is_none() && measured {
            let server = match keys.placed() || traced_home.is_some() {
                true => home(),
                false => self.io.conns[lead].server,
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
        let cursor = &mut self.keys.cursors[ci];
        let server = self.io.conns[c].server;
        let conn = &mut self.io.conns[c];
        let before = conn.out().len();
        let opaque = conn.next_opaque();
        if conn.udp.is_some() {
            mcbench_proto::udp::write_header(conn.out(), opaque as u16);
        }
        let traced = self.replay.as_ref().and_then(|r| r.traced(req.named));
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
        if let Some(id) = req
            .key_id()
            .filter(|&k| req.op.writes() && workload.keys.contains(k))
        {
            cursor.set(workload.keys.rank_of(id));
        }
        let size = conn.out().len() - before;
        self.recorder.conns.request_size.record(size as u64);
        self.io.in_flight += 1;
        if due.measured {
            self.recorder.record_op_queue(conn.in_flight.len() + 1);
        }
        conn.queued(
            InFlight {
                op: req.op,
                named: req.named,
                expect,
                intended_ns: due.intended_ns,
                waited_ns: 0,
                sent_ns: due.intended_ns,
                tx_ns: 0,
                tx_wanted: false,
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
            self.io.dirty.push(c);
        }
    }

    /// The current recorder's interval starts at `start` (worker clock):
    /// its answers go to slots by when they come.
    fn start_slots(&mut self, start: u64) {
        let length = self.shared.spec.recording.interval.as_nanos() as u64;
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
