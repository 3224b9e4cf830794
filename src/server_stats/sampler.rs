//! `--server-stats`: a thread that reads every server's `stats` on a
//! connection of its own at the start of measurement, at each interval and
//! at the end, with `stats settings` once and `stats slabs` and `stats
//! items` at the start and the end. Each round trip is timed; a connect is
//! timed apart.
//!
//! The start is exact without a warm-up: the engine holds the workers
//! back, after their preload, until the first `stats` of every server is
//! answered (`Baseline`), so that the deltas count the measured requests
//! and nothing else. After a warm-up it is read when the warm-up ends, as
//! the workers' first requests are under way.

use super::{Stats, StatsConn, StatsQueryError};
use crate::net::Target;
use crate::net::{clock_ns, RunEnd};
use crate::spec::RunSpec;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Failures described per server at most (the rest are counted).
const MAX_ERRORS: usize = 5;

/// One `stats` of one server.
#[derive(Debug, Clone)]
pub struct StatsSample {
    /// When it was answered, s since the start of measurement.
    pub at_s: f64,
    pub stats: Stats,
}

/// What one server said over the run.
#[derive(Debug, Clone)]
pub struct ServerLog {
    /// `stats` at the start, at each interval, at the end (those that were
    /// answered).
    pub samples: Vec<StatsSample>,
    pub settings: Option<Stats>,
    /// `stats slabs` and `stats items` at the start and at the end.
    pub slabs: [Option<Stats>; 2],
    pub items: [Option<Stats>; 2],
    /// Round trip of every `stats`, ns.
    pub rtt: Histogram<u64>,
    /// Each connect (and authentication), ns.
    pub connects: Vec<u64>,
    /// Queries that failed, and the first few of them described.
    pub failures: u64,
    pub errors: Vec<String>,
}

impl Default for ServerLog {
    fn default() -> Self {
        ServerLog {
            samples: Vec::new(),
            settings: None,
            slabs: [None, None],
            items: [None, None],
            rtt: crate::stats::new_histogram(),
            connects: Vec::new(),
            failures: 0,
            errors: Vec::new(),
        }
    }
}

struct Sampler {
    spec: RunSpec,
    addrs: Vec<Target>,
    conns: Vec<Option<StatsConn>>,
    logs: Vec<ServerLog>,
    end: RunEnd,
    /// The start of measurement on the worker clock, ns.
    start_ns: u64,
    /// The run is over: no connection is opened again.
    ending: bool,
}

/// The engine's side of the first `stats`: asked for just before the
/// workers are released (read then when there is no warm-up).
pub struct Baseline {
    now: crossbeam_channel::Sender<()>,
    taken: crossbeam_channel::Receiver<()>,
}

impl Baseline {
    /// The workers are about to be released: without a warm-up, every
    /// server's `stats` is read now; waits (at most `limit`, and no more
    /// once a signal sets `stop`) until it is.
    pub fn take(&self, limit: Duration, stop: &AtomicUsize) {
        if self.now.send(()).is_err() {
            return;
        }
        let until = std::time::Instant::now() + limit;
        while stop.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < until {
            match self.taken.recv_timeout(Duration::from_millis(50)) {
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        }
    }
}

/// A running sampler: its thread and its baseline handshake.
pub struct Running {
    pub thread: std::thread::JoinHandle<Vec<ServerLog>>,
    pub baseline: Baseline,
}

/// Starts the sampler of a `--server-stats` run (`None` otherwise); `go`
/// releases it with the workers, `end` says when the run is over. Its
/// thread returns one log per server.
pub fn spawn(
    spec: &RunSpec,
    addrs: &[Target],
    go: crossbeam_channel::Receiver<()>,
    end: RunEnd,
) -> Option<Running> {
    if !spec.server.server_stats {
        return None;
    }
    let (now, now_rx) = crossbeam_channel::bounded(1);
    let (taken_tx, taken) = crossbeam_channel::bounded(1);
    let sampler = Sampler {
        spec: spec.clone(),
        addrs: addrs.to_vec(),
        conns: (0..addrs.len()).map(|_| None).collect(),
        logs: vec![ServerLog::default(); addrs.len()],
        end,
        start_ns: 0,
        ending: false,
    };
    let thread = std::thread::Builder::new()
        .name("mcbench-stats".into())
        .spawn(move || sampler.run(&now_rx, &taken_tx, go))
        .ok()?;
    Some(Running {
        thread,
        baseline: Baseline { now, taken },
    })
}

impl Sampler {
    fn run(
        mut self,
        now: &crossbeam_channel::Receiver<()>,
        taken: &crossbeam_channel::Sender<()>,
        go: crossbeam_channel::Receiver<()>,
    ) -> Vec<ServerLog> {
        // The engine asks just before it releases the workers, and never
        // if the run failed before that: then there is nothing to sample.
        if now.recv().is_err() {
            return self.logs;
        }
        // Without a warm-up, the first `stats` now; `settings`, `slabs`
        // and `items` (which take server-wide locks) before any measured
        // request either way.
        let warmup = self.spec.load.warmup.as_nanos() as u64;
        let early = warmup == 0;
        if early {
            self.start_ns = clock_ns();
            self.sample_all();
        }
        self.describe_all(0);
        let _ = taken.send(());
        let _ = go.recv(); // returns when the workers are released
        if !early {
            self.start_ns = clock_ns() + warmup;
        }
        let interval = self.spec.recording.interval.as_nanos() as u64;
        if self.end.pause_until(self.start_ns) {
            if !early {
                self.sample_all();
            }
            let mut next = self.start_ns + interval;
            while self.end.pause_until(next) {
                self.sample_all();
                next += interval;
            }
        }
        // The end, once the workers are done: after a signal they cut off
        // what is in flight within a moment. A server whose connection
        // failed is not waited for again.
        self.end.wait_done(self.spec.longest_timeout());
        self.ending = true;
        self.sample_all();
        // After a signal, the last `stats` only: the rest would hold up
        // the results.
        if self.end.stop.load(Ordering::Relaxed) == 0 {
            self.describe_all(1);
        }
        self.logs
    }

    /// `stats settings` (at the start), `stats slabs` and `stats items`
    /// of every server, as reading `at` (0: start, 1: end).
    fn describe_all(&mut self, at: usize) {
        for s in 0..self.addrs.len() {
            if at == 0 {
                self.logs[s].settings = self.ask(s, Some("settings"));
            }
            self.logs[s].slabs[at] = self.ask(s, Some("slabs"));
            self.logs[s].items[at] = self.ask(s, Some("items"));
        }
    }

    fn sample_all(&mut self) {
        for s in 0..self.addrs.len() {
            if let Some(stats) = self.ask(s, None) {
                let at_s = clock_ns().saturating_sub(self.start_ns) as f64 / 1e9;
                self.logs[s].samples.push(StatsSample { at_s, stats });
            }
        }
    }

    /// `stats [group]` from server `s`, connecting first if need be; a
    /// failure is logged and drops the connection (the next ask opens a
    /// new one).
    fn ask(&mut self, s: usize, group: Option<&str>) -> Option<Stats> {
        let answer = self.conn(s).and_then(|c| c.query(group));
        let log = &mut self.logs[s];
        match answer {
            Ok((stats, took)) => {
                if group.is_none() {
                    log.rtt.saturating_record((took.as_nanos() as u64).max(1));
                }
                Some(stats)
            }
            Err(e) => {
                log.failures += 1;
                // A refused group leaves the connection in step.
                if !matches!(e, StatsQueryError::Refused { .. }) {
                    self.conns[s] = None;
                }
                if log.errors.len() < MAX_ERRORS {
                    log.errors.push(e.to_string());
                }
                None
            }
        }
    }

    fn conn(&mut self, s: usize) -> Result<&mut StatsConn, StatsQueryError> {
        if self.conns[s].is_none() && self.ending {
            return Err(StatsQueryError::NotAsked);
        }
        if self.conns[s].is_none() {
            let began = clock_ns();
            let (spec, stop) = (&self.spec, &self.end.stop);
            let socket = crate::net::connect_blocking(
                &self.addrs[s],
                spec,
                spec.connect_timeout(),
                0,
                Some(stop),
            )?;
            let took = Duration::from_nanos(clock_ns() - began);
            self.logs[s].connects.push(took.as_nanos() as u64);
            let conn = StatsConn::over(socket, took, spec.load.timeout, Some(stop.clone()));
            self.conns[s] = Some(conn);
        }
        Ok(self.conns[s].as_mut().expect("just opened"))
    }
}
