//! A phase's skeleton in time: its bounds (warm-up, `-t`, `--time-limit`,
//! the stall threshold), fixed when it starts; its intervals; and where
//! its measured time ends. Pure: every time is given (the worker clock,
//! ns), so each rule is tested here without a clock or a server.

use crate::engine::conn::UDP_TIMEOUT_NS;
use crate::engine::{PhaseEnd, PhaseKind};
use crate::spec::{RunSpec, StopAfter};

/// The limits of one phase in time, ns on the worker clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bounds {
    pub start: u64,
    /// Recording starts here, after the warm-up.
    pub record_from: u64,
    /// Sending stops here (`-t`, `--time-limit`); `u64::MAX` for never.
    pub send_until: u64,
    /// `--request-timeout`: for an answer, and for servers that are all
    /// down to come back.
    pub timeout: u64,
    /// `--drain-timeout`: for answers in flight once sending stops.
    pub drain: u64,
    /// Without progress this long, a phase that gives up on its servers
    /// has stalled. Over UDP no sooner than a lost reply is given up on.
    pub stall_after: u64,
    /// The measured phase (warm-up, quota, source and read delay apply),
    /// not the preload.
    pub measured: bool,
}

impl Bounds {
    pub fn new(spec: &RunSpec, kind: PhaseKind, start: u64, udp: bool) -> Bounds {
        let measured = kind == PhaseKind::Measure;
        let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let warmup = if measured { ns(spec.load.warmup) } else { 0 };
        let timeout = ns(spec.load.timeout);
        let record_from = start.saturating_add(warmup);
        let mut send_until = u64::MAX;
        if measured {
            if let StopAfter::Duration(d) = spec.load.stop {
                send_until = record_from.saturating_add(ns(d));
            }
            if let Some(limit) = spec.load.time_limit {
                send_until = send_until.min(record_from.saturating_add(ns(limit)));
            }
        }
        Bounds {
            start,
            record_from,
            send_until,
            timeout,
            drain: ns(spec.drain_timeout()),
            stall_after: if udp {
                timeout.max(UDP_TIMEOUT_NS)
            } else {
                timeout
            },
            measured,
        }
    }

    /// Whether the phase ends in time. Such a phase counts each
    /// unanswered request as it times out and goes on (once its servers
    /// have answered at all); one without an end gives up on servers that
    /// stop answering (a stall).
    pub fn time_bounded(&self, churning: bool) -> bool {
        self.send_until != u64::MAX || churning
    }

    /// Where the measured time ends, the phase having ended as `end` at
    /// `now`: while sending, the load was offered, answered or not, so
    /// that time is measured, and so is the wait for the last answer; the
    /// wait after it for answers that never came is not. A stop (signal,
    /// every connection lost) ends it there and then.
    pub fn measured_until(end: &PhaseEnd, sending_stopped: u64, last_answer: u64, now: u64) -> u64 {
        match end {
            PhaseEnd::Completed | PhaseEnd::Failed(_) => {
                sending_stopped.min(now).max(last_answer).min(now)
            }
            PhaseEnd::Stopped | PhaseEnd::AllLost => now,
        }
    }
}

/// Where a worker's phase is in time (ns on the worker clock).
#[derive(Debug, Default)]
pub(super) struct Progress {
    /// Thread CPU time when measuring started, ns.
    pub cpu_start: u64,
    /// Thread CPU time when the current interval began, ns.
    pub interval_cpu_start: u64,
    /// When recording starts (after the warm-up).
    pub record_from: u64,
    /// Whether the phase still sends.
    pub sending: bool,
    /// When the phase last made progress: an answer came, or nothing was
    /// awaited. A phase whose servers stop answering ends `--timeout`
    /// after it (a stall).
    pub last_progress_ns: u64,
    /// When the last answer of the phase came.
    pub last_answer_ns: u64,
    /// End of the measured time (`Bounds::measured_until`).
    pub measured_until: u64,
    /// Of the measured time, how long answers were waited for after
    /// sending stopped.
    pub drain_ns: u64,
    /// The preload's failures this worker has added to the run's count.
    pub preload_failed_told: u64,
}

impl Progress {
    /// A phase starts sending at `start`, recording from `record_from`.
    pub fn begin(&mut self, start: u64, record_from: u64) {
        self.record_from = record_from;
        self.sending = true;
        self.last_progress_ns = start;
        self.last_answer_ns = start;
    }

    /// Whether the servers have gone `stall_after` without progress by `now`.
    pub fn stalled(&self, now: u64, stall_after: u64) -> bool {
        now.saturating_sub(self.last_progress_ns) >= stall_after
    }

    /// The phase ended as `end` at `now`, sending having stopped at
    /// `sending_stopped` (`u64::MAX`: never): where its measured time
    /// ends, and its drain.
    pub fn finish(&mut self, end: &PhaseEnd, sending_stopped: u64, now: u64) {
        self.measured_until =
            Bounds::measured_until(end, sending_stopped, self.last_answer_ns, now);
        self.drain_ns = self
            .measured_until
            .saturating_sub(sending_stopped.max(self.record_from));
    }

    /// The measured time, ns.
    pub fn measured_ns(&self) -> u64 {
        self.measured_until.saturating_sub(self.record_from)
    }
}

/// The intervals of a reporting phase: numbered from 0, each `length` ns,
/// from the recording start.
#[derive(Debug)]
pub(super) struct Intervals {
    /// The number of the interval now open.
    pub index: u64,
    next_end: u64,
    length: u64,
}

impl Intervals {
    pub fn new(record_from: u64, length: u64) -> Intervals {
        Intervals {
            index: 0,
            next_end: record_from.saturating_add(length),
            length,
        }
    }

    /// When the open interval closes.
    pub fn next_end(&self) -> u64 {
        self.next_end
    }

    /// The interval that has closed by `now`, if one has: its number and
    /// its end, ns after `record_from`. One per call: a late turn closes
    /// the intervals it missed one turn each.
    pub fn closed_by(&mut self, now: u64, record_from: u64) -> Option<(u64, u64)> {
        if now < self.next_end {
            return None;
        }
        let closed = (self.index, self.next_end - record_from);
        self.index += 1;
        self.next_end = self.next_end.saturating_add(self.length);
        Some(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args: &[&str]) -> RunSpec {
        crate::cli::run_spec(&[&["-s", "127.0.0.1:1"], args].concat())
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn warm_up_then_duration_bound_the_measured_phase_only() {
        let s = spec(&["-t", "10s", "-w", "2s", "--timeout", "1s"]);
        let b = Bounds::new(&s, PhaseKind::Measure, 5 * S, false);
        assert_eq!(b.record_from, 7 * S);
        assert_eq!(b.send_until, 17 * S);
        assert_eq!((b.timeout, b.drain, b.stall_after), (S, S, S));
        // Each timeout apart: the drain's own.
        let apart = spec(&["-t", "10s", "--timeout", "1s", "--drain-timeout", "3s"]);
        let b = Bounds::new(&apart, PhaseKind::Measure, 0, false);
        assert_eq!((b.timeout, b.drain, b.stall_after), (S, 3 * S, S));
        assert!(b.time_bounded(false));
        // The preload has no warm-up and no end in time: it stalls.
        let load = Bounds::new(&s, PhaseKind::Load, 5 * S, false);
        assert_eq!((load.record_from, load.send_until), (5 * S, u64::MAX));
        assert!(!load.time_bounded(false));
        assert!(load.time_bounded(true), "a churn schedule ends in time");
    }

    #[test]
    fn a_time_limit_cuts_a_request_bound_phase_and_udp_waits_for_its_loss() {
        let s = spec(&["-x", "1000", "--time-limit", "3s", "--timeout", "1ms"]);
        let b = Bounds::new(&s, PhaseKind::Measure, 0, true);
        assert_eq!(b.send_until, 3 * S);
        assert_eq!(b.stall_after, UDP_TIMEOUT_NS.max(1_000_000));
        let s = spec(&["-x", "1000"]);
        let b = Bounds::new(&s, PhaseKind::Measure, 0, false);
        assert_eq!(b.send_until, u64::MAX);
        let s = spec(&["-t", "10s", "--time-limit", "3s"]);
        assert_eq!(
            Bounds::new(&s, PhaseKind::Measure, 0, false).send_until,
            3 * S
        );
        let s = spec(&["-t", "2s", "--time-limit", "3s"]);
        assert_eq!(
            Bounds::new(&s, PhaseKind::Measure, 0, false).send_until,
            2 * S
        );
    }

    #[test]
    fn measured_time_ends_with_the_last_answer_not_the_wait_for_lost_ones() {
        let end = |e: PhaseEnd, stopped, last, now| Bounds::measured_until(&e, stopped, last, now);
        // Sending stopped at 10 s, the last answer at 10.2 s, the drain
        // gave up at 11 s: 10.2 s.
        assert_eq!(
            end(PhaseEnd::Completed, 10 * S, 10 * S + S / 5, 11 * S),
            10 * S + S / 5
        );
        // Answers all in before sending stopped: the sending time.
        assert_eq!(end(PhaseEnd::Completed, 10 * S, 9 * S, 11 * S), 10 * S);
        // Still sending when it failed (a stall): until then.
        assert_eq!(
            end(PhaseEnd::Failed("x".into()), u64::MAX, 4 * S, 6 * S),
            6 * S
        );
        // A signal: there and then.
        assert_eq!(
            end(PhaseEnd::Stopped, 10 * S, 10 * S + S / 5, 12 * S),
            12 * S
        );
        assert_eq!(end(PhaseEnd::AllLost, 10 * S, 0, 12 * S), 12 * S);
    }

    #[test]
    fn intervals_close_one_per_turn_from_the_recording_start() {
        let from = 3 * S;
        let mut i = Intervals::new(from, S);
        assert_eq!(i.next_end(), 4 * S);
        assert_eq!(i.closed_by(4 * S - 1, from), None);
        assert_eq!(i.closed_by(4 * S, from), Some((0, S)));
        // A turn 2.5 intervals late closes the missed ones one by one.
        let late = 6 * S + S / 2;
        assert_eq!(i.closed_by(late, from), Some((1, 2 * S)));
        assert_eq!(i.closed_by(late, from), Some((2, 3 * S)));
        assert_eq!(i.closed_by(late, from), None);
        assert_eq!((i.index, i.next_end()), (3, 7 * S));
    }

    #[test]
    fn progress_measures_to_the_last_answer_and_counts_the_drain() {
        let mut p = Progress::default();
        p.begin(S, 2 * S);
        assert!(p.sending && !p.stalled(S + 99, 100) && p.stalled(S + 100, 100));
        p.last_answer_ns = 13 * S;
        // Sending stopped at 12 s, the last answer came at 13 s, the
        // drain went on to 15 s for answers that never came.
        p.finish(&PhaseEnd::Completed, 12 * S, 15 * S);
        assert_eq!((p.measured_until, p.drain_ns), (13 * S, S));
        assert_eq!(p.measured_ns(), 11 * S);
        // A stop ends the measured time there and then.
        p.finish(&PhaseEnd::Stopped, u64::MAX, 7 * S);
        assert_eq!((p.measured_until, p.drain_ns), (7 * S, 0));
    }
}
