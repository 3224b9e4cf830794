//! twemperf's timeouts: a connect that takes longer than
//! `--connect-timeout` fails (`socket-timo`), and a request unanswered
//! `--request-timeout` after its intended send fails with its connection
//! (`client-timo`). A held connection is
//! then opened again in its place; a scheduled one (`--num-conns`) is done.

use super::Worker;
use crate::stats::{ConnError, ErrorClass};

/// Timeouts are checked at 1/16 of `--timeout`, within these bounds, ns:
/// a scan covers every connection, and a timeout need not be exact to the
/// microsecond.
const CHECK_MIN_NS: u64 = 1_000_000;
const CHECK_MAX_NS: u64 = 100_000_000;

/// When the periodic scans are next due, ns (0: at the first look).
#[derive(Default)]
pub(super) struct Checks {
    /// Requests and connects against `--timeout`.
    pub(super) timeout_at: u64,
    /// UDP requests for expiry.
    pub(super) udp_at: u64,
}

impl Worker {
    /// Fails what has waited longer than its timeout: connects, requests
    /// in flight and (open loop) requests waiting for a free connection.
    pub(super) fn expire_overdue(&mut self, now: u64) {
        if now < self.checks.timeout_at {
            return;
        }
        let spec = &self.shared.spec;
        let timeout = spec.load.timeout.as_nanos() as u64;
        let connect = spec.connect_timeout().as_nanos() as u64;
        let check = timeout.min(connect) / 16;
        self.checks.timeout_at = now + check.clamp(CHECK_MIN_NS, CHECK_MAX_NS);
        // Before a whole timeout has passed on the worker clock, nothing
        // can be overdue.
        let cutoff = now.checked_sub(timeout);
        let connect_cutoff = now.checked_sub(connect);
        for c in 0..self.io.conns.len() {
            let conn = &self.io.conns[c];
            // UDP requests expire on their own rule (`expire_datagrams`).
            if !conn.alive || conn.udp.is_some() {
                continue;
            }
            if let Some(started) = self.connect_started(c) {
                if connect_cutoff.is_some_and(|c| started <= c) {
                    self.fail_connecting(c, ConnError::SocketTimo, now);
                }
            } else if conn
                .in_flight
                .front()
                .is_some_and(|r| cutoff.is_some_and(|c| r.intended_ns <= c))
            {
                self.time_out(c, now);
            }
        }
        let Some(cutoff) = cutoff else {
            return;
        };
        let recorder = &mut self.recorder;
        if let Some(b) = self.schedule.backlog_mut() {
            b.expire(cutoff, |server| {
                recorder.server_error(server, ErrorClass::Timeout, 1)
            });
        }
    }

    /// Connection `c`'s oldest request timed out: its requests fail, and
    /// the connection is closed (and a held one opened again).
    fn time_out(&mut self, c: usize, now: u64) {
        let waiting = self.measured_in_flight(c);
        let server = self.io.conns[c].server;
        self.recorder
            .server_error(server, ErrorClass::Timeout, waiting);
        self.recorder.conns.client_timo += 1;
        self.end_timed_out(c, now);
    }

    /// Held connection `c` timed out: it is closed, and opened again.
    pub(super) fn reopen_timed_out(&mut self, c: usize, now: u64) {
        let server = self.io.conns[c].server;
        self.close_socket(c);
        // Reopened by the loop (`reopen_due`), a few per turn, while sending
        // (this phase's or the next's): a blocking connect per timed-out
        // connection here would stall every other connection's answers.
        self.reopening.schedule_now(c, now);
        if !self.progress.sending && self.io.alive_on[server] == 0 {
            // Draining, with no connection left to that server: what waits
            // for one will not be answered.
            self.strand(server, ErrorClass::Timeout);
        }
    }
}
