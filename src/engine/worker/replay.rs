//! Trace replay in a worker (`--trace`, `--read-file`): requests come
//! from the trace feed's batches instead of the mix.
//!
//! A replayed request names its record by slot (`Named::record`), and the
//! slot holds the key's bytes, value size, expiry, server
//! and intended time while anything still refers to it. Slots are reclaimed
//! by a sweep over what refers to them (requests in flight, waiting, to be
//! filled, queued), run when the free ones run out: no path that drops a
//! request has to free one, and the slots number at most twice the
//! requests outstanding.

use super::{Due, Worker};
use crate::engine::request::TracedKey;
use crate::engine::trace_feed::{Batch, TraceReq};
use crate::trace::TraceOp;
use crate::workload::{KeySpace, Named, OpKind, Request};
use crossbeam_channel::{Receiver, TryRecvError};
use std::collections::VecDeque;

/// Slots kept beyond twice the requests outstanding.
const SPARE_SLOTS: usize = 64;
/// `--trace-clients`: records taken but waiting for their connection, at
/// most; beyond it the worker takes no more until some are sent (the
/// replay then goes at the pace of its busiest client).
const MAX_QUEUED: usize = 1 << 16;
/// How soon a worker the feed has not kept up with looks again, ns.
pub(super) const STARVED_WAKE_NS: u64 = 1_000_000;

#[derive(Default)]
struct Slot {
    key: Vec<u8>,
    value_len: Option<u32>,
    ttl: u32,
    /// Intended send after the replay's start, ns (trace timing).
    at_ns: u64,
    /// Where its key lives, when keys are placed on several servers.
    server: Option<usize>,
    op: TraceOp,
    marked: bool,
}

pub(super) struct Replay {
    rx: Receiver<Batch>,
    batch: Batch,
    pos: usize,
    /// The feed has sent its last batch.
    drained: bool,
    /// The last look found no batch, though more will come.
    pub(super) starved: bool,
    /// Start of the replay on the worker clock, ns.
    pub(super) start_ns: u64,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Records taken, by the connection (group lead) they go on: one
    /// queue, or one per connection with `--trace-clients`.
    queues: Vec<VecDeque<u32>>,
    queued: usize,
    /// `--trace-clients`: each of the run's lanes' local connection.
    local_of_lane: Option<Vec<Option<usize>>>,
}

impl Replay {
    pub(super) fn new(
        rx: Receiver<Batch>,
        conns: usize,
        clients: Option<(usize, &[usize])>,
    ) -> Self {
        let local_of_lane = clients.map(|(lanes, mine)| {
            let mut map = vec![None; lanes];
            for (c, &lane) in mine.iter().enumerate() {
                map[lane] = Some(c);
            }
            map
        });
        let nqueues = if local_of_lane.is_some() { conns } else { 1 };
        Replay {
            rx,
            batch: Batch::default(),
            pos: 0,
            drained: false,
            starved: false,
            start_ns: 0,
            slots: Vec::new(),
            free: Vec::new(),
            queues: vec![VecDeque::new(); nqueues.max(1)],
            queued: 0,
            local_of_lane,
        }
    }

    /// Stops taking batches: the feed goes on with the other workers.
    pub(super) fn close_feed(&mut self) {
        self.rx = crossbeam_channel::never();
        self.drained = true;
        self.starved = false;
    }

    /// Whether every record has been taken and sent.
    pub(super) fn exhausted(&self) -> bool {
        self.drained && self.queued == 0
    }

    /// The next request of the feed; `None` when there is none now.
    fn next_req(&mut self) -> Option<TraceReq> {
        while self.pos >= self.batch.reqs.len() {
            match self.rx.try_recv() {
                Ok(b) => {
                    self.batch = b;
                    self.pos = 0;
                    self.starved = false;
                }
                Err(TryRecvError::Empty) => {
                    self.starved = true;
                    return None;
                }
                Err(TryRecvError::Disconnected) => {
                    self.drained = true;
                    self.starved = false;
                    return None;
                }
            }
        }
        self.pos += 1;
        Some(self.batch.reqs[self.pos - 1])
    }

    /// A new slot, while there are fewer than twice `outstanding` (or
    /// `grow`); `None`: time to sweep.
    fn add_slot(&mut self, outstanding: usize, grow: bool) -> Option<u32> {
        if grow || self.slots.len() < 2 * outstanding + SPARE_SLOTS {
            self.slots.push(Slot::default());
            return Some((self.slots.len() - 1) as u32);
        }
        None
    }

    /// Frees every slot not among the records `live` names (nor queued).
    fn sweep(&mut self, live: impl Iterator<Item = Named>) {
        for s in &mut self.slots {
            s.marked = false;
        }
        let live = live.filter_map(Named::record_slot);
        let queued = self.queues.iter().flatten().copied();
        for id in live.chain(queued) {
            if let Some(s) = self.slots.get_mut(id as usize) {
                s.marked = true;
            }
        }
        self.free.clear();
        self.free
            .extend((0..self.slots.len() as u32).filter(|&i| !self.slots[i as usize].marked));
    }

    /// Writes `req` into slot `id` and queues it.
    fn fill(&mut self, id: u32, req: &TraceReq, keys: &KeySpace, lead_of: impl Fn(usize) -> usize) {
        let slot = &mut self.slots[id as usize];
        slot.key.clear();
        slot.key.extend_from_slice(self.batch.key(req));
        slot.value_len = req.value_len;
        slot.ttl = req.ttl;
        slot.at_ns = req.at_ns;
        slot.op = req.op;
        slot.server = keys.placed().then(|| keys.server_of_key(&slot.key));
        let q = match &self.local_of_lane {
            Some(map) => map[req.client as usize % map.len()].map_or(0, lead_of),
            None => 0,
        };
        self.queues[q].push_back(id);
        self.queued += 1;
    }

    /// The key and value of the record `named` names (`None`: it names a
    /// key of the key space).
    pub(super) fn traced(&self, named: Named) -> Option<TracedKey<'_>> {
        let s = &self.slots[named.record_slot()? as usize];
        Some(TracedKey {
            key: &s.key,
            value_len: s.value_len,
            ttl: s.ttl,
        })
    }

    /// Where the key of the record `named` names lives (`None`: keys are
    /// not placed, or it names no record).
    pub(super) fn server_of(&self, named: Named) -> Option<usize> {
        self.slots[named.record_slot()? as usize].server
    }

    /// The intended time of the next queued request (open loop: one queue).
    pub(super) fn next_at(&self) -> Option<u64> {
        let id = *self.queues[0].front()?;
        Some(self.start_ns.saturating_add(self.slots[id as usize].at_ns))
    }

    fn pop(&mut self, q: usize) -> Option<u32> {
        let id = self.queues[q].pop_front()?;
        self.queued -= 1;
        Some(id)
    }
}

impl Worker {
    /// Closed loop, each turn: a replay the feed had not kept up with
    /// refills every connection; with `--trace-clients`, a connection with
    /// records queued for it is refilled (they may have been taken while
    /// another was refilled), and one that is down fails them
    /// (`no_connection`), so that none waits for ever.
    pub(super) fn service_trace(&mut self, now: u64) {
        let Some(r) = &self.replay else {
            return;
        };
        if r.starved {
            for c in 0..self.io.conns.len() {
                self.refill(c, now);
            }
            return;
        }
        if r.local_of_lane.is_none() || r.queued == 0 {
            return;
        }
        for lead in 0..r.queues.len() {
            let Some(r) = &self.replay else {
                return;
            };
            if r.queues[lead].is_empty() {
                continue;
            }
            if self.can_send(lead) {
                self.refill(lead, now);
            } else {
                self.fail_queued(lead, now);
            }
        }
    }

    /// Records queued for a connection that is down fail as
    /// `no_connection`.
    fn fail_queued(&mut self, lead: usize, now: u64) {
        let measured = now >= self.progress.record_from;
        let server = self.io.conns[lead].server;
        let Some(r) = self.replay.as_mut() else {
            return;
        };
        while let Some(id) = r.pop(lead) {
            if measured {
                let server = r.slots[id as usize].server.unwrap_or(server);
                self.recorder
                    .server_error(server, crate::stats::ErrorClass::NoConnection, 1);
            }
        }
    }

    /// The next record to send on `lead` (without `--trace-clients`, the
    /// one queue): its request, or `None` when none is to hand now.
    pub(super) fn next_traced(&mut self, lead: usize) -> Option<Request> {
        let q = match &self.replay {
            Some(r) if r.local_of_lane.is_some() => lead,
            Some(_) => 0,
            None => return None,
        };
        loop {
            if let Some(id) = self.replay.as_mut()?.pop(q) {
                return Some(self.traced_request(id));
            }
            if !self.take_record() {
                return None;
            }
        }
    }

    /// Open loop: when the next record is due (trace timing), taking one
    /// from the feed when none is queued.
    pub(super) fn next_traced_at(&mut self) -> Option<u64> {
        if !self.traced_ready() {
            return None;
        }
        self.replay.as_ref()?.next_at()
    }

    /// Whether a record is queued, taking one from the feed if none is.
    pub(super) fn traced_ready(&mut self) -> bool {
        self.replay.as_ref().is_some_and(|r| r.queued > 0) || self.take_record()
    }

    /// Takes one record from the feed into a slot and its queue; `false`
    /// when there is none now (or `--trace-clients` holds too many).
    fn take_record(&mut self) -> bool {
        let Some(replay) = self.replay.as_mut() else {
            return false;
        };
        if replay.queued >= MAX_QUEUED {
            // Looked at again once sends have made room.
            replay.starved = true;
            return false;
        }
        let Some(req) = replay.next_req() else {
            return false;
        };
        let id = match replay.free.pop() {
            Some(id) => id,
            None => self.new_slot(),
        };
        let router = &self.router;
        let lead_of = |c: usize| router.lead(c);
        let replay = self.replay.as_mut().expect("replaying");
        replay.fill(id, &req, &self.shared.workload.keys, lead_of);
        true
    }

    /// No slot is free: a new one while there are fewer than twice the
    /// requests outstanding, else a sweep, and a new one if it freed none.
    fn new_slot(&mut self) -> u32 {
        let queued = self.replay.as_ref().map_or(0, |r| r.queued);
        let outstanding = self.requests_waiting() + self.keys.fills.len() + queued;
        let replay = self.replay.as_mut().expect("replaying");
        if let Some(id) = replay.add_slot(outstanding, false) {
            return id;
        }
        self.sweep_slots();
        let replay = self.replay.as_mut().expect("replaying");
        match replay.free.pop() {
            Some(id) => id,
            // Everything referred to: grow.
            None => replay.add_slot(outstanding, true).expect("grows"),
        }
    }

    /// Marks the slots that requests in flight, waiting and to be filled
    /// refer to; frees the rest.
    fn sweep_slots(&mut self) {
        let in_flight = self
            .io
            .conns
            .iter()
            .flat_map(|c| c.in_flight.iter().map(|r| r.named));
        let waiting = self
            .schedule
            .backlog()
            .into_iter()
            .flat_map(|b| b.dues())
            .filter_map(|d: &Due| d.req.map(|r| r.named));
        let fills = self.keys.fills.iter().copied();
        if let Some(replay) = self.replay.as_mut() {
            replay.sweep(in_flight.chain(waiting).chain(fills));
        }
    }

    /// The request of slot `id`: its op, or for a record that names none,
    /// a get (that fills its miss) or the mix's pick.
    fn traced_request(&mut self, id: u32) -> Request {
        let replay = self.replay.as_ref().expect("replaying");
        let op = match replay.slots[id as usize].op {
            TraceOp::Op(op) => op,
            TraceOp::Mix => self.shared.workload.mix.pick(&mut self.rng),
            TraceOp::Access | TraceOp::Nop => OpKind::Get,
        };
        Request::naming(op, Named::record(id))
    }
}
