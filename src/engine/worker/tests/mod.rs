//! A worker driven through the in-memory transport on a manual clock:
//! its schedules, timeouts, drain and stalls tested exactly, with no
//! socket, no sleep and no dependence on the machine's speed. The
//! scripted server (`Scripted`) speaks memcached's text protocol, answers
//! each request after the delay the test gives it (or never), and records
//! what it saw and when: the server is the judge here too.

mod churn;
mod drain;
mod open_loop;
mod preload;
mod read_delay;
mod stall;
mod timeouts;

use super::{Worker, WorkerPlan};
use crate::engine::clock::Clock;
use crate::engine::transport::memory::{Answer, Network, Script};
use crate::engine::{Message, PhaseEnd, Shared};
use crate::spec::RunSpec;
use crate::stats::{ErrorClass, Recorder};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};

/// Where the manual clock starts, ns (any time far from 0).
pub(super) const T0: u64 = 1_000_000_000_000;
pub(super) const MS: u64 = 1_000_000;

/// A request as the scripted server saw it.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub pipe: usize,
    pub at: u64,
    pub command: String,
    pub key: String,
}

/// How long the server takes to answer the `n`th request it sees (from
/// 0), ns; `None`: it never answers.
pub(super) type Delay = Box<dyn FnMut(usize, &Seen) -> Option<u64> + Send>;

/// A memcached that keeps what is set and answers after `delay`.
pub(super) struct Scripted {
    delay: Delay,
    /// The request (by number) at which the server closes its connection
    /// instead of answering.
    closes_at: Option<usize>,
    store: HashMap<String, Vec<u8>>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Scripted {
    pub fn new(delay: impl FnMut(usize, &Seen) -> Option<u64> + Send + 'static) -> Scripted {
        Scripted {
            delay: Box::new(delay),
            closes_at: None,
            store: HashMap::new(),
            seen: Arc::default(),
        }
    }

    /// The same, closing the connection of request `n` instead of
    /// answering it.
    pub fn closing_at(self, n: usize) -> Scripted {
        Scripted {
            closes_at: Some(n),
            ..self
        }
    }

    /// Answers every request after `ns`.
    pub fn after(ns: u64) -> Scripted {
        Scripted::new(move |_, _| Some(ns))
    }

    /// The reply to one request, and how many bytes of `inbox` it took
    /// (`None`: incomplete).
    fn serve(&mut self, inbox: &[u8]) -> Option<(usize, String, String, Vec<u8>)> {
        let end = inbox.windows(2).position(|w| w == b"\r\n")?;
        let line = String::from_utf8_lossy(&inbox[..end]).into_owned();
        let words: Vec<&str> = line.split(' ').collect();
        let (command, key) = (
            words[0].to_string(),
            words.get(1).unwrap_or(&"").to_string(),
        );
        let mut used = end + 2;
        let reply = match command.as_str() {
            "get" | "gets" => self.get(&words[1..]),
            "set" | "add" | "replace" => {
                let len: usize = words.get(4)?.parse().ok()?;
                if inbox.len() < used + len + 2 {
                    return None;
                }
                self.store
                    .insert(key.clone(), inbox[used..used + len].to_vec());
                used += len + 2;
                b"STORED\r\n".to_vec()
            }
            "delete" => match self.store.remove(&key) {
                Some(_) => b"DELETED\r\n".to_vec(),
                None => b"NOT_FOUND\r\n".to_vec(),
            },
            _ => b"ERROR\r\n".to_vec(),
        };
        Some((used, command, key, reply))
    }

    fn get(&self, keys: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for k in keys {
            if let Some(v) = self.store.get(*k) {
                out.extend_from_slice(format!("VALUE {k} 0 {}\r\n", v.len()).as_bytes());
                out.extend_from_slice(v);
                out.extend_from_slice(b"\r\n");
            }
        }
        out.extend_from_slice(b"END\r\n");
        out
    }
}

impl Script for Scripted {
    fn on_bytes(
        &mut self,
        pipe: usize,
        _server: usize,
        inbox: &mut Vec<u8>,
        now: u64,
    ) -> Vec<Answer> {
        let mut answers = Vec::new();
        while let Some((used, command, key, reply)) = self.serve(inbox) {
            inbox.drain(..used);
            let seen = Seen {
                pipe,
                at: now,
                command,
                key,
            };
            let n = {
                let mut log = self.seen.lock().unwrap();
                log.push(seen.clone());
                log.len() - 1
            };
            if self.closes_at == Some(n) {
                answers.push(Answer::Close(now));
                inbox.clear();
                break;
            }
            if let Some(delay) = (self.delay)(n, &seen) {
                answers.push(Answer::Bytes(now + delay, reply));
            }
        }
        answers
    }
}

/// What a worker's run left: its messages, summed.
pub(super) struct Ran {
    /// The measured phase's recorders, every interval merged.
    pub total: Recorder,
    pub intervals: usize,
    /// How the preload ended, and when, if one ran.
    pub preload: Option<(PhaseEnd, u64)>,
    /// How the measured phase ended.
    pub end: PhaseEnd,
    pub elapsed_ns: u64,
    pub drain_ns: u64,
    /// What the server saw.
    pub seen: Vec<Seen>,
    /// When the run ended on the manual clock.
    pub ended_at: u64,
    pub connections: usize,
}

impl Ran {
    pub fn errors(&self, class: ErrorClass) -> u64 {
        self.total.errors[class as usize]
    }

    /// Gets the server saw (the mix of the tests' runs is all gets).
    pub fn gets_seen(&self) -> usize {
        self.seen.iter().filter(|s| s.command == "get").count()
    }
}

/// Runs `mcbench run ARGS` as one worker over the in-memory network with
/// `script` as its server, on a manual clock from `T0`.
pub(super) fn run(args: &[&str], script: Scripted) -> Ran {
    // Memory stamps each answer with when it came, as the kernel's
    // receive stamps do (an open loop reads late by default, timed by
    // them); it takes no transmit stamps.
    let mut all = vec!["-s", "127.0.0.1:11211", "-T", "1", "--kernel-stamps", "off"];
    all.extend_from_slice(args);
    let spec = crate::cli::run_spec(&all);
    let seen = script.seen.clone();
    let clock = Clock::manual(T0);
    let net = Network::new(script, clock.clone());
    let shared = shared(spec, clock.clone());
    let plan = plan(&shared);
    let (tx, rx) = crossbeam_channel::unbounded();
    let (go_tx, go) = crossbeam_channel::bounded(0);
    // Made on its own thread, as the engine makes each worker.
    let (on_thread, net_there) = (shared.clone(), net.clone());
    let thread = std::thread::spawn(move || {
        let worker = Worker::in_memory(plan, on_thread, tx, net_there).expect("a worker");
        worker.run(go)
    });
    let mut ran = Ran {
        total: Recorder::default(),
        intervals: 0,
        preload: None,
        end: PhaseEnd::Completed,
        elapsed_ns: 0,
        drain_ns: 0,
        seen: Vec::new(),
        ended_at: 0,
        connections: 0,
    };
    // The main thread's part, as `engine::collect` plays it: the
    // preload judged at the barrier, then the workers released.
    let mut go_tx = Some(go_tx);
    for msg in rx.iter() {
        match msg {
            Message::Ready { .. } => {
                let failed = ran
                    .preload
                    .as_ref()
                    .is_some_and(|(e, _)| !matches!(e, PhaseEnd::Completed));
                shared
                    .abort
                    .store(failed, std::sync::atomic::Ordering::Relaxed);
                go_tx = None;
            }
            Message::Done {
                end,
                counts: Some(_),
                ..
            } => ran.preload = Some((end, clock.now())),
            msg => take(&mut ran, msg),
        }
    }
    drop(go_tx);
    thread.join().expect("the worker ran");
    ran.ended_at = clock.now();
    ran.connections = net.connections();
    ran.seen = seen.lock().unwrap().clone();
    ran
}

fn take(ran: &mut Ran, msg: Message) {
    match msg {
        Message::Interval(s) => {
            ran.total.merge(&s.recorder);
            ran.intervals += 1;
        }
        Message::Done {
            end,
            elapsed_ns,
            drain_ns,
            counts: None,
            ..
        } => {
            ran.end = end;
            ran.elapsed_ns = elapsed_ns;
            ran.drain_ns = drain_ns;
        }
        Message::Done { .. } | Message::Ready { .. } => {}
    }
}

/// What the worker shares with the run, on `clock`.
fn shared(spec: RunSpec, clock: Clock) -> Arc<Shared> {
    let keys = spec.key_space(spec.router()).expect("keys");
    let addr = crate::spec::Address::resolve("127.0.0.1:11211").expect("an address");
    let (_, recorders) = crossbeam_channel::unbounded();
    Arc::new(Shared {
        workload: spec.workload(keys),
        ops: spec.ops_sent(),
        spec,
        addrs: vec![crate::net::Target::plain(addr)],
        stop: Arc::new(AtomicUsize::new(0)),
        recorders,
        abort: AtomicBool::new(false),
        open_now: AtomicUsize::new(0),
        open_max: AtomicUsize::new(0),
        baseline: None,
        preload_sets: AtomicU64::new(0),
        preload_failed: AtomicU64::new(0),
        precise: AtomicBool::new(false),
        noticed: Mutex::new(Vec::new()),
        clock,
    })
}

/// The one worker's plan, as the engine makes it, over connections that
/// `Worker::in_memory` then opens in memory.
fn plan(shared: &Shared) -> WorkerPlan {
    let spec = &shared.spec;
    let conns = (0..spec.total_connections(1))
        .map(|_| crate::net::connect::Opened {
            link: None,
            server: 0,
            datagram: false,
        })
        .collect();
    let mut plans = crate::engine::plan::plan_workers(spec, &shared.workload.keys, conns, 1);
    plans.remove(0)
}
