//! The end of a phase whose servers stopped answering, and of requests a
//! signal cut off: neither may hang the run or go uncounted.

use super::Worker;
use crate::engine::PhaseKind;
use crate::stats::ErrorClass;
use std::sync::atomic::Ordering;

impl Worker {
    /// Why the phase ends: which servers hold requests that got no answer
    /// for `--timeout`.
    pub(super) fn stall_message(&self, kind: PhaseKind, report: bool, now: u64) -> String {
        let phase = match (kind, report) {
            (PhaseKind::Load, false) => "preload",
            (PhaseKind::Load, true) => "preload (--load-only)",
            (PhaseKind::Measure, _) => "measured run",
        };
        let mut waiting: Vec<usize> = self
            .io
            .conns
            .iter()
            .filter(|c| c.alive && (c.connecting || !c.in_flight.is_empty()))
            .map(|c| c.server)
            .chain(
                self.schedule
                    .backlog()
                    .into_iter()
                    .flat_map(|b| b.waiting_servers()),
            )
            .collect();
        waiting.sort_unstable();
        waiting.dedup();
        let servers: Vec<String> = waiting
            .iter()
            .map(|&s| self.shared.addrs[s].to_string())
            .collect();
        let connecting = self.schedule.connecting();
        let connects = match connecting {
            0 => String::new(),
            n => format!(", {n} connects under way"),
        };
        format!(
            "{phase}: no answer from {} for {:.1} s (--timeout); {} requests unanswered{connects}",
            servers.join(", "),
            now.saturating_sub(self.progress.last_progress_ns) as f64 / 1e9,
            self.requests_waiting()
        )
    }

    /// Counts the measured requests a signal left unanswered (`cut_off`):
    /// no latency, but not lost from the books either.
    /// The preload's failure is certain once the sets that failed, over
    /// every worker, pass the share of the whole preload that fails it
    /// (`preload::FAILED_SHARE`): no more of them is worth sending.
    pub(super) fn preload_doomed(&mut self) -> Option<String> {
        let (failed, _) = self.recorder.failed_of_attempted();
        // A report phase swaps its recorder at each interval.
        let new = failed
            .checked_sub(self.progress.preload_failed_told)
            .unwrap_or(failed);
        self.progress.preload_failed_told = failed;
        let shared = &self.shared;
        // Written only when this worker has news: the loop reads it each
        // turn, and workers should not contend for its cache line.
        let total = match new {
            0 => shared.preload_failed.load(Ordering::Relaxed),
            _ => shared.preload_failed.fetch_add(new, Ordering::Relaxed) + new,
        };
        let sets = shared.preload_sets.load(Ordering::Relaxed);
        let doomed = total as f64 > crate::engine::preload::FAILED_SHARE * sets as f64;
        doomed.then(|| {
            format!(
                "preload: stopped once {total} of its {sets} sets had failed ({}); the keys the run reads cannot all be on the server",
                self.recorder.failure_summary()
            )
        })
    }

    pub(super) fn cut_off(&mut self) {
        let waiting = self.waiting_measured().iter().sum();
        self.recorder.error(ErrorClass::CutOff, waiting);
    }

    /// Counts the measured requests still waiting when the phase stopped
    /// waiting for them (`timeout`, against their servers), and connects
    /// still under way (`socket-timo`). Requests of an earlier phase or of
    /// the warm-up are not this phase's to count.
    pub(super) fn time_out_waiting(&mut self) {
        for (server, waiting) in self.waiting_measured().into_iter().enumerate() {
            self.recorder
                .server_error(server, ErrorClass::Timeout, waiting);
        }
        let now = self.now();
        for c in 0..self.io.conns.len() {
            if self.io.conns[c].alive && self.connect_started(c).is_some() {
                self.fail_connecting(c, crate::stats::ConnError::SocketTimo, now);
            }
        }
    }

    /// Per server: measured requests sent or queued, not yet answered.
    fn waiting_measured(&self) -> Vec<u64> {
        let mut waiting = vec![0; self.shared.addrs.len()];
        for conn in &self.io.conns {
            waiting[conn.server] += conn.in_flight.iter().filter(|r| r.measured).count() as u64;
        }
        if let Some(b) = self.schedule.backlog() {
            b.add_measured(&mut waiting);
        }
        waiting
    }
}
