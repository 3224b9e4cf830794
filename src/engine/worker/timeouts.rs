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

impl Worker {
    /// Fails what has waited longer than its timeout: connects, requests
    /// in flight and (open loop) requests waiting for a free connection.
    pub(super) fn expire_overdue(&mut self, now: u64) {
        if now < self.next_timeout_check {
            return;
        }
        let spec = &self.shared.spec;
        let timeout = spec.timeout.as_nanos() as u64;
        let connect = spec.connect_timeout().as_nanos() as u64;
        let check = timeout.min(connect) / 16;
        self.next_timeout_check = now + check.clamp(CHECK_MIN_NS, CHECK_MAX_NS);
        // Before a whole timeout has passed on the worker clock, nothing
        // can be overdue.
        let cutoff = now.checked_sub(timeout);
        let connect_cutoff = now.checked_sub(connect);
        for c in 0..self.conns.len() {
            let conn = &self.conns[c];
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
        self.arrivals.backlog.expire(cutoff, |server| {
            recorder.server_error(server, ErrorClass::Timeout, 1)
        });
    }

    /// Connection `c`'s oldest request timed out: its requests fail, and
    /// the connection is closed (and a held one opened again).
    fn time_out(&mut self, c: usize, now: u64) {
        let waiting = self.measured_in_flight(c);
        let server = self.conns[c].server;
        self.recorder
            .server_error(server, ErrorClass::Timeout, waiting);
        self.recorder.conns.client_timo += 1;
        if self.churning() {
            return self.retire(c, now);
        }
        self.close_socket(c);
        // Reopened by the loop (`reopen_due`), a few per turn, while sending
        // (this phase's or the next's): a blocking connect per timed-out
        // connection here would stall every other connection's answers.
        self.reopening.schedule_now(c, now);
        if !self.progress.sending && self.alive_on[server] == 0 {
            // Draining, with no connection left to that server: what waits
            // for one will not be answered.
            self.strand(server, ErrorClass::Timeout);
        }
    }
}
