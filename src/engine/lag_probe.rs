//! The replication-lag probe of a `--rep-write` run. On connections of its
//! own (one per server, opened when first needed and again after a
//! failure), it writes a key of its own to a writer and, from the write's
//! acknowledgement, polls another server until the key shows there with
//! the value written. One probe at a time, started `lag_rate` times a
//! second: it samples replication, it is not load.
//!
//! The lag recorded is an upper bound: from the acknowledgement to the
//! answer of the poll that found the key. Its resolution is the gap
//! between polls (`lag_poll`, or 1 % of the time already waited if that
//! is longer, which bounds the polls of a key that never shows) plus a
//! poll's round trip (`poll_rtt`).

use crate::net::RunEnd;
use crate::net::{blocking, clock_ns, connect};
use crate::net::{Link, Target};
use crate::spec::RunSpec;
use hdrhistogram::Histogram;
use mcbench_proto::{Cmd, Progress, Protocol, Request, ResponseClass};

use std::time::Duration;

/// The most bytes a probe's reply may take (its value is its key).
const MAX_REPLY: usize = 4096;

/// What the probe measured.
#[derive(Debug, Clone)]
pub struct LagRecorder {
    /// Probes whose write was acknowledged (the last may have been cut
    /// short by the end of the run).
    pub probes: u64,
    /// Acknowledged probes found on the other server.
    pub seen: u64,
    /// Of them, found by the first poll: a lag below the resolution.
    pub first_poll: u64,
    /// Acknowledged probes not found there within `--timeout`.
    pub unseen: u64,
    /// Probes that could not be written or polled: a connection failed,
    /// the write was refused, a reply did not parse.
    pub failed: u64,
    /// Acknowledgement → answer of the poll that found the key, ns.
    pub lag: Histogram<u64>,
    /// Round trip of every poll, ns.
    pub poll_rtt: Histogram<u64>,
    /// Per server: polls it answered, and of them hits (for the
    /// `--server-stats` cross-check: they are lookups too).
    pub polls: Vec<(u64, u64)>,
}

impl Default for LagRecorder {
    fn default() -> Self {
        LagRecorder {
            probes: 0,
            seen: 0,
            first_poll: 0,
            unseen: 0,
            failed: 0,
            lag: crate::stats::new_histogram(),
            poll_rtt: crate::stats::new_histogram(),
            polls: Vec::new(),
        }
    }
}

/// Why a probe ended without a lag.
enum Miss {
    /// Not seen within the timeout.
    Unseen,
    /// The run is over.
    Done,
    /// A connection or a reply failed.
    Failed,
}

/// The probe thread's state.
struct Probe {
    spec: RunSpec,
    addrs: Vec<Target>,
    replicas: crate::placement::Replicas,
    links: Vec<Option<Link>>,
    end: RunEnd,
    /// Tells this run's probe keys from any earlier run's.
    nonce: u64,
    rec: LagRecorder,
}

/// Starts the probe of a replication run with a lag rate; it probes from
/// the end of the warm-up until the run is over and returns what it
/// measured. `go` releases it with the workers.
pub fn spawn(
    spec: &RunSpec,
    addrs: &[Target],
    go: crossbeam_channel::Receiver<()>,
    end: RunEnd,
) -> Option<std::thread::JoinHandle<LagRecorder>> {
    let replicas = spec.replicas()?;
    let rate = spec.server.replication.as_ref()?.lag_rate;
    if rate <= 0.0 {
        return None;
    }
    let probe = Probe {
        spec: spec.clone(),
        addrs: addrs.to_vec(),
        replicas,
        links: (0..addrs.len()).map(|_| None).collect(),
        end,
        nonce: clock_ns() ^ u64::from(std::process::id()) << 32,
        rec: LagRecorder {
            polls: vec![(0, 0); addrs.len()],
            ..LagRecorder::default()
        },
    };
    std::thread::Builder::new()
        .name("mcbench-lag".into())
        .spawn(move || probe.run(go, rate))
        .ok()
}

impl Probe {
    fn run(mut self, go: crossbeam_channel::Receiver<()>, rate: f64) -> LagRecorder {
        let _ = go.recv(); // returns when the workers are released
        let every = (1e9 / rate) as u64;
        let mut next = clock_ns() + self.spec.load.warmup.as_nanos() as u64;
        let mut n: u64 = 0;
        while self.end.pause_until(next) {
            next += every;
            self.probe(n);
            n += 1;
            // A probe longer than the schedule's gap starts the next at
            // once, without a burst to catch up.
            next = next.max(clock_ns());
        }
        self.rec
    }

    /// Probe `n`: writer `n mod writers`, then polls on another server,
    /// in turn.
    fn probe(&mut self, n: u64) {
        let key = format!("{}lag-{:x}-{n}", self.spec.key_space.key_prefix, self.nonce);
        let writer = (n % self.replicas.writers as u64) as usize;
        let Some(reader) = self.replicas.target(false, writer, n as usize, |_| true) else {
            return;
        };
        let Some(acked) = self.write(writer, key.as_bytes()) else {
            self.rec.failed += 1;
            return;
        };
        self.rec.probes += 1;
        match self.poll(reader, key.as_bytes(), acked) {
            Ok(lag) => {
                self.rec.seen += 1;
                self.rec.lag.saturating_record(lag.max(1));
            }
            Err(Miss::Unseen) => self.rec.unseen += 1,
            Err(Miss::Failed) => self.rec.failed += 1,
            // Cut short by the end of the run: neither seen nor unseen.
            Err(Miss::Done) => {}
        }
    }

    /// Writes `key` (its own value) to `server`; when it was acknowledged.
    fn write(&mut self, server: usize, key: &[u8]) -> Option<u64> {
        let req = Request {
            value: key,
            ..Request::new(Cmd::Set, key)
        };
        let (class, _) = self.ask(server, &req)?;
        (class == ResponseClass::Stored).then(clock_ns)
    }

    /// Polls `server` for `key` until it answers with the value written;
    /// ns from `acked` to that answer.
    fn poll(&mut self, server: usize, key: &[u8], acked: u64) -> Result<u64, Miss> {
        let mut first = true;
        let gap = self
            .spec
            .server
            .replication
            .as_ref()
            .map_or(0, |r| r.lag_poll.as_nanos() as u64);
        let give_up = acked + self.spec.load.timeout.as_nanos() as u64;
        let req = Request::new(Cmd::Get, key);
        loop {
            if self.end.over() {
                return Err(Miss::Done);
            }
            let sent = clock_ns();
            let (class, found) = self.ask(server, &req).ok_or(Miss::Failed)?;
            let now = clock_ns();
            self.rec.poll_rtt.saturating_record((now - sent).max(1));
            let polls = &mut self.rec.polls[server];
            polls.0 += 1;
            polls.1 += u64::from(class == ResponseClass::Value);
            if class == ResponseClass::Value && found.as_deref() == Some(key) {
                self.rec.first_poll += u64::from(first);
                return Ok(now - acked);
            }
            first = false;
            if class != ResponseClass::Value && class != ResponseClass::End {
                return Err(Miss::Failed);
            }
            if now >= give_up {
                return Err(Miss::Unseen);
            }
            let wait = gap.max((now - acked) / 100).min(give_up - now);
            std::thread::sleep(Duration::from_nanos(wait));
        }
    }

    /// Sends `req` to `server` and reads its reply: its class and, for a
    /// hit, the value. `None` (and the connection dropped, to be opened
    /// again next time) when either fails.
    fn ask(&mut self, server: usize, req: &Request) -> Option<(ResponseClass, Option<Vec<u8>>)> {
        let protocol = self.spec.target.protocol;
        let stop = self.end.stop.clone();
        let wait = blocking::Wait {
            timeout: self.spec.load.timeout,
            stop: Some(&stop),
        };
        let answer = self
            .link(server)
            .and_then(|link| exchange(link, protocol, req, wait));
        if answer.is_none() {
            self.links[server] = None;
        }
        answer
    }

    /// The connection to `server`, opened if it is not.
    fn link(&mut self, server: usize) -> Option<&mut Link> {
        if self.links[server].is_none() {
            let timeout = self.spec.connect_timeout();
            let stop = Some(&*self.end.stop);
            self.links[server] =
                connect::connect_blocking(&self.addrs[server], &self.spec, timeout, 0, stop).ok();
        }
        self.links[server].as_mut()
    }
}

/// One request and its reply on a blocking socket (its timeouts bound
/// both).
fn exchange(
    link: &mut Link,
    protocol: Protocol,
    req: &Request,
    wait: blocking::Wait,
) -> Option<(ResponseClass, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    protocol.encode(&mut out, req);
    let mut reply = Vec::new();
    let mut progress = Progress::default();
    let mut class = ResponseClass::Error;
    let used = blocking::exchange(
        link,
        &out,
        &mut reply,
        MAX_REPLY,
        wait,
        |buf| match protocol.parse(buf, &mut progress, req.expect(), req.keys) {
            Ok(Some((resp, used))) => {
                class = resp.class;
                Ok(Some(used))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        },
    )
    .ok()?;
    let value = protocol.first_value(&reply[..used]).map(<[u8]>::to_vec);
    Some((class, value))
}
