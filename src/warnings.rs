//! Every warning the user can see about the truth of the numbers, in one
//! place, each with the words it prints.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Send-lag p99 above which the client is said to miss its schedule, µs.
pub const LAG_P99_LIMIT_US: f64 = 1000.0;
/// Worker CPU share above which the worker is said to be saturated.
pub const BUSY_LIMIT: f64 = 0.95;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// An agent of an `--agent` run dropped out.
    AgentLost {
        agent: String,
        at_s: f64,
        why: String,
    },
    /// The client sent late: its schedule, not the server, set the pace.
    LateSchedule {
        send_lag_p99_us: f64,
    },
    /// The requests at the tail were made mostly of the client's own time
    /// (its queue and its receive, by the kernel's stamps), and more than
    /// the late-schedule limit of it.
    ClientTail {
        percentile: f64,
        latency_us: f64,
        client_queue_us: f64,
        client_receive_us: f64,
    },
    /// The measurement connections (`--measure-connections`) were late to
    /// their own schedule: their latency, which an SLO reads, holds the
    /// client's delay. (A group that cannot carry its rate because the
    /// server is slow is the server's doing: a search's probe fails.)
    MeasureLate {
        send_lag_p99_us: f64,
    },
    /// `--busy-poll` with more worker threads than CPUs this process may
    /// use: spinning threads take turns, and each waits for a CPU while
    /// its answers are in.
    BusyPollOversubscribed {
        threads: usize,
        cpus: usize,
    },
    /// A worker thread used (nearly) a whole CPU.
    WorkerSaturated {
        worker: usize,
        busy: f64,
    },
    ConnectionsLost {
        lost: u64,
        of: usize,
    },
    Unanswered {
        requests: u64,
    },
    /// `--verify`/`--exp-verify` found answers that are not what this run
    /// stored.
    ChecksFailed {
        verify_misses: u64,
        verify_failed: u64,
        expired_get: u64,
        unexpired_unget: u64,
    },
    /// Connects failed for want of a local port (EADDRNOTAVAIL): closed
    /// connections hold theirs for 60 s in TIME_WAIT.
    PortsExhausted {
        failures: u64,
        /// Ports of `ip_local_port_range`, if it could be read.
        ports: Option<u32>,
        /// Source addresses used (`--source-addrs`; 1 without it).
        addresses: usize,
    },
    /// After sending stopped, answers still in flight took a long share
    /// of the measured time to come: the rates divide by all of it.
    LongDrain {
        drain_s: f64,
        duration_s: f64,
    },
    /// The server answered requests with an error reply: answered, and
    /// counted apart, never as throughput.
    ErrorReplies {
        replies: u64,
        share: f64,
        /// `server_error 120, client_error 3`.
        classes: String,
    },
    /// Requests waited in the client for a free connection slot.
    ClientWaits {
        waits: u64,
        share: f64,
    },
    /// `--skip`: arrivals the client dropped unsent while it was behind;
    /// the latency leaves them out.
    Skipped {
        skips: u64,
        share: f64,
    },
    /// `--rep-write`: a server could not be reached at the start; its
    /// connections were opened once it was up, if it came up.
    DownAtStart {
        server: String,
        why: String,
    },
    /// `--trace-commands`: a server did not take `start_trace` or
    /// `stop_trace`.
    TraceRefused {
        server: String,
        command: String,
        reply: String,
    },
    /// The thread that closes intervals fell behind the workers: in an
    /// open loop it runs only on CPU time they leave (`engine::summariser`).
    IntervalsBehind {
        intervals: u64,
    },
    /// Open loop: the rate answered is not the rate asked for.
    RateMissed {
        target: f64,
        achieved: f64,
    },
    /// `--server-stats`: a server counted more or fewer of something than
    /// this run's answers account for.
    ServerCountsDisagree {
        server: String,
        /// What was counted, as the server names it.
        what: String,
        server_count: u64,
        client_count: u64,
    },
}

impl Warning {
    /// True for the warnings that mean the results measure the client.
    pub fn client_bound(&self) -> bool {
        matches!(
            self,
            Warning::LateSchedule { .. }
                | Warning::ClientTail { .. }
                | Warning::MeasureLate { .. }
                | Warning::WorkerSaturated { .. }
        )
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fmt_client(f) {
            Some(written) => written,
            None => match self.fmt_requests(f) {
                Some(written) => written,
                None => self.fmt_servers(f),
            },
        }
    }
}

impl Warning {
    /// The warnings that the numbers measure the client: `None` for the
    /// others.
    fn fmt_client(&self, f: &mut fmt::Formatter<'_>) -> Option<fmt::Result> {
        Some(match self {
            Warning::LateSchedule { send_lag_p99_us } => write!(
                f,
                "CLIENT-BOUND: mcbench sent late (send lag p99 {send_lag_p99_us:.0} µs > {LAG_P99_LIMIT_US:.0} µs); \
                 these results measure the client, not the server. Use more threads or a lower rate."
            ),
            Warning::ClientTail {
                percentile,
                latency_us,
                client_queue_us,
                client_receive_us,
            } => write!(
                f,
                "CLIENT-BOUND: the requests at p{percentile} ({latency_us:.0} µs) spent {:.0} µs in mcbench itself \
                 (queue {client_queue_us:.0} µs, receive {client_receive_us:.0} µs, by the kernel's stamps); \
                 this tail is the client's, not the server's. Use more threads, connections or a lower rate.",
                client_queue_us + client_receive_us
            ),
            Warning::MeasureLate { send_lag_p99_us } => write!(
                f,
                "CLIENT-BOUND: the measurement connections sent late (send lag p99 {send_lag_p99_us:.0} µs > {LAG_P99_LIMIT_US:.0} µs); \
                 their latency holds mcbench's own delay. Give the run more CPU or a lower --measure-rate."
            ),
            Warning::WorkerSaturated { worker, busy } => write!(
                f,
                "CLIENT-BOUND: worker {worker} used {:.0}% of a CPU; the throughput measures the client, \
                 not the server. Use more threads (-T) or more client machines.",
                busy * 100.0
            ),
            Warning::BusyPollOversubscribed { threads, cpus } => write!(
                f,
                "{threads} busy-polling threads on {cpus} CPUs: each spins on a whole CPU, so they take turns \
                 and an answer waits for its thread's turn, which is in the latency. Use at most {cpus} threads \
                 (-T) with --busy-poll."
            ),
            Warning::IntervalsBehind { intervals } => write!(
                f,
                "intervals were closed up to {intervals} behind the workers: every CPU was busy, and in an open \
                 loop that work yields to theirs. The live lines came late, and each waiting interval held its \
                 histograms (~4 MB per worker) in memory. The results are whole."
            ),
            Warning::ClientWaits { waits, share } => write!(
                f,
                "{waits} requests ({:.1}%) found every connection at its depth and waited in the client; \
                 that wait is part of their latency. Add connections (-c) or depth (-d) if it is not what you meant.",
                share * 100.0
            ),
            _ => return None,
        })
    }

    /// The warnings about the requests' fate: `None` for the others.
    fn fmt_requests(&self, f: &mut fmt::Formatter<'_>) -> Option<fmt::Result> {
        Some(match self {
            Warning::ConnectionsLost { lost, of } => {
                write!(f, "{lost} of {of} connections were lost during the run")
            }
            Warning::Unanswered { requests } => write!(
                f,
                "{requests} requests got no answer within --timeout (counted as timeouts, not latencies)"
            ),
            Warning::ChecksFailed {
                verify_misses,
                verify_failed,
                expired_get,
                unexpired_unget,
            } => write!(
                f,
                "CHECKS FAILED: the server returned what this run did not store: verify_misses \
                 {verify_misses}, verify_failed {verify_failed}, expired_get {expired_get}, \
                 unexpired_unget {unexpired_unget} (--verbose shows the first)"
            ),
            Warning::PortsExhausted {
                failures,
                ports,
                addresses,
            } => {
                let ports = ports.map_or("the ephemeral ports".into(), |p| format!("{p} ephemeral ports"));
                write!(
                    f,
                    "PORTS EXHAUSTED: {failures} connects found no free local port (addrunavail). \
                     Each closed connection holds its port 60 s in TIME_WAIT, so {ports} per \
                     source address ({addresses} here) allow about ports/60 new connections/s \
                     to one server. --linger 0 closes with a reset and no TIME_WAIT; \
                     --source-addrs 127.0.0.2,127.0.0.3,... adds a range of ports per address."
                )
            }
            Warning::LongDrain {
                drain_s,
                duration_s,
            } => write!(
                f,
                "sending stopped {drain_s:.2} s before the last answer came ({:.0}% of the measured \
                 {duration_s:.2} s): the server was still working off what it was sent, and the rates \
                 divide by the whole measured time",
                100.0 * drain_s / duration_s.max(1e-9)
            ),
            Warning::ErrorReplies {
                replies,
                share,
                classes,
            } => write!(
                f,
                "{replies} requests ({:.1}%) were answered with an error ({classes}): they are counted \
                 apart, not in the ops or rates of answered requests",
                share * 100.0
            ),
            Warning::Skipped { skips, share } => write!(
                f,
                "{skips} transmissions ({:.1}%) were skipped while mcbench was behind its schedule \
                 (--skip): their latency is not measured, so the tail leaves out the worst moments",
                share * 100.0
            ),
            Warning::RateMissed { target, achieved } => write!(
                f,
                "the run asked for {target:.0} ops/s and got {achieved:.0} ops/s answered ({:+.1}%); \
                 the latencies are those of the rate achieved",
                (achieved / target - 1.0) * 100.0
            ),
            _ => return None,
        })
    }

    /// The warnings about servers and agents. Every variant is named here,
    /// so that a new one is placed in a family before it compiles.
    fn fmt_servers(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::AgentLost { agent, at_s, why } => write!(
                f,
                "AGENT LOST: {agent}, {at_s:.1} s after the start: {why}. What it measured until its last interval is counted; the load it offered after that is not"
            ),
            Warning::DownAtStart { server, why } => write!(
                f,
                "{server} was down at the start ({why}): passed over (--rep-write), its connections \
                 tried again after pauses and opened once it was up (connections.reopened)"
            ),
            Warning::TraceRefused {
                server,
                command,
                reply,
            } => write!(
                f,
                "{server} did not take '{command}' (--trace-commands): it answered '{reply}'; \
                 no server-side trace was taken"
            ),
            Warning::ServerCountsDisagree {
                server,
                what,
                server_count,
                client_count,
            } => write!(
                f,
                "{server} counted {server_count} {what} over the measured run where this run's answers \
                 account for {client_count}: other clients use the server, or replies were lost"
            ),
            // Written by `fmt_client` and `fmt_requests`.
            Warning::LateSchedule { .. } | Warning::ClientTail { .. } | Warning::MeasureLate { .. } | Warning::WorkerSaturated { .. } | Warning::BusyPollOversubscribed { .. } | Warning::IntervalsBehind { .. } | Warning::ClientWaits { .. } | Warning::ConnectionsLost { .. } | Warning::Unanswered { .. } | Warning::ChecksFailed { .. } | Warning::PortsExhausted { .. } | Warning::LongDrain { .. } | Warning::ErrorReplies { .. } | Warning::Skipped { .. } | Warning::RateMissed { .. } => Ok(()),
        }
    }
}
