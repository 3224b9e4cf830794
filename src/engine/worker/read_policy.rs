//! The read policy: when a worker reads the answers in its sockets.
//! At once (the default); after `--read-delay`'s pause, so that reads come
//! in batches; late, after sleeping to the next arrival
//! (`--read-answers late`); or spinning without sleep (`--busy-poll`).
//! Where answers are stamped by the kernel, it also keeps the bound each
//! poll puts on when what it finds came.
//!
//! Pure state: every method takes the time it needs, so the rules are
//! tested below without a clock or a socket.

use crate::spec::RunSpec;
use std::time::Duration;

/// How the worker waits this turn.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Wait {
    /// `--busy-poll`: ask without sleeping until something is ready or the
    /// wait is over.
    Spin,
    /// Late reading: sleep to the next wake-up with the answers left in
    /// their sockets, then see whether an arrival is due (`woke`).
    Sleep,
    /// Only look at the sockets, without waiting.
    Look,
    /// Block on readiness for the whole wait.
    Block,
}

pub(super) struct ReadPolicy {
    /// `--read-delay` in the measuring phase (never while preloading): the
    /// pause between a wake-up and the reads it brings (zero: none).
    delay: Duration,
    /// `--busy-poll`.
    busy: bool,
    /// This phase's answers wait in their sockets until the next
    /// arrival's wake-up (`--read-answers late`).
    late: bool,
    /// A late reader woke for an arrival and sends it before it reads the
    /// answers that waited.
    waiting: bool,
    /// Answers are stamped by the kernel (`RunSpec::stamps_answers`).
    stamped: bool,
    /// When the last poll whose events were handled began, ns.
    last_poll_ns: u64,
    /// The bound the last poll gave on what the current turn finds, ns
    /// (0: none; `note_poll`).
    readable_since: u64,
    /// The last turn may have left bytes in some socket.
    left_unread: bool,
}

impl ReadPolicy {
    pub(super) fn new(spec: &RunSpec) -> ReadPolicy {
        ReadPolicy {
            delay: Duration::ZERO,
            busy: spec.load.busy_poll,
            late: false,
            waiting: false,
            stamped: spec.stamps_answers(),
            last_poll_ns: 0,
            readable_since: 0,
            left_unread: false,
        }
    }

    /// A phase begins: the pause and late reads are for the measured
    /// phase only, and late reads for an open loop only (a closed loop has
    /// no arrival to wake for).
    pub(super) fn begin_phase(&mut self, spec: &RunSpec, measured: bool, open: bool) {
        self.delay = match measured {
            true => spec.read_pause(),
            false => Duration::ZERO,
        };
        self.late = measured && open && spec.reads_late();
        self.waiting = false;
        self.last_poll_ns = 0;
    }

    /// How to wait `timeout_ns` this turn. `holding_back`: requests wait
    /// in the client for a slot, so answers that would free one are read
    /// as they come (never late).
    pub(super) fn wait(&mut self, timeout_ns: u64, sending: bool, holding_back: bool) -> Wait {
        if self.busy {
            return Wait::Spin;
        }
        let late = self.late && sending && !holding_back;
        if late && timeout_ns > 0 && !self.waiting && !self.left_unread {
            return Wait::Sleep;
        }
        // A late reader that has slept (or left bytes unread) only looks;
        // so does the drain of a late phase, which no arrival would wake.
        self.waiting = false;
        match late {
            true => Wait::Look,
            false => Wait::Block,
        }
    }

    /// After `Wait::Sleep`: whether an arrival is due, to go out before
    /// the answers are read (`true`), or they are read now.
    pub(super) fn woke(&mut self, arrival_due: bool) -> bool {
        self.waiting = arrival_due;
        arrival_due
    }

    /// A late reader woke for an arrival and has not yet read the answers
    /// that waited (those that came in time would look overdue).
    pub(super) fn answers_waiting(&self) -> bool {
        self.waiting
    }

    /// Whether to pause before reading: only before reads that start
    /// answers. Not when the last turn left bytes unread, nor when a
    /// waking socket holds the rest of an answer begun, nor for a socket
    /// that only became writable: no answer waits for more than one pause.
    pub(super) fn should_pause(&self, readable: bool, mid_answer: bool) -> bool {
        !self.delay.is_zero() && !self.left_unread && readable && !mid_answer
    }

    pub(super) fn delay(&self) -> Duration {
        self.delay
    }

    /// `now` if answers are stamped: a poll's start bounds what it finds.
    pub(super) fn poll_start(&self, now: u64) -> Option<u64> {
        self.stamped.then_some(now)
    }

    /// A poll that began at `polled` is handled. A socket it finds
    /// readable was not readable at the previous such poll, if that one
    /// saw every ready socket and left none unread.
    pub(super) fn note_poll(&mut self, polled: u64) {
        self.readable_since = if self.left_unread {
            0
        } else {
            self.last_poll_ns
        };
        self.last_poll_ns = polled;
    }

    /// Whether the turn being handled may leave bytes unread: it took as
    /// many events as one wait returns.
    pub(super) fn start_turn(&mut self, events_full: bool) {
        self.left_unread = events_full;
    }

    /// A read left bytes in its socket (a full buffer).
    pub(super) fn left_bytes(&mut self) {
        self.left_unread = true;
    }

    /// The earliest a socket's new answers can have come, ns: a read that
    /// emptied its socket last time (`unread` false) finds only what came
    /// since the previous complete poll (0: no bound).
    pub(super) fn arrived_after(&self, unread: bool) -> u64 {
        match unread {
            true => 0,
            false => self.readable_since,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args: &[&str]) -> RunSpec {
        crate::cli::run_spec(args)
    }

    fn late_open() -> ReadPolicy {
        let s = spec(&["--rate", "1000", "--read-answers", "late"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, true);
        p
    }

    #[test]
    fn reads_at_once_by_default_and_while_preloading() {
        let s = spec(&["--rate", "1000", "--read-answers", "late"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, false, true);
        assert_eq!(p.wait(1_000, true, false), Wait::Block);
        let s = spec(&["--rate", "1000", "--read-answers", "at-once"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, true);
        assert_eq!(p.wait(1_000, true, false), Wait::Block);
        // Late is the default where the run allows it.
        let s = spec(&["--rate", "1000"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, true);
        assert_eq!(p.wait(1_000, true, false), Wait::Sleep);
    }

    /// The measured phase's pause of a closed loop given `args`, µs.
    fn pause_us(args: &[&str]) -> u128 {
        let s = spec(args);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, false);
        p.delay().as_micros()
    }

    #[test]
    fn deep_pipelines_pause_by_default_and_shallow_ones_read_at_once() {
        // 800 and 256 in flight per worker: the long pause; 64: the short.
        assert_eq!(pause_us(&["-c", "50", "-d", "16"]), 100);
        assert_eq!(pause_us(&["-c", "16", "-d", "16"]), 100);
        assert_eq!(pause_us(&["-c", "8", "-d", "8"]), 50);
        assert_eq!(pause_us(&["-c", "50", "-d", "4"]), 50);
        // Per worker: 50 connections over 4 workers keep 12 × 16 each.
        assert_eq!(pause_us(&["-c", "50", "-d", "16", "-T", "4"]), 50);
        // Too shallow, or too few in flight: at once.
        assert_eq!(pause_us(&["-c", "50", "-d", "2"]), 0);
        assert_eq!(pause_us(&["-c", "1", "-d", "16"]), 0);
        assert_eq!(pause_us(&["-c", "7", "-d", "8"]), 0);
        assert_eq!(pause_us(&[]), 0);
        // TLS goes over TCP, whose reads the kernel stamps: as over TCP.
        let tls = ["-s", "127.0.0.1:11211", "--tls", "-c", "50", "-d", "16"];
        assert_eq!(pause_us(&tls), 100);
        // Asked for, or not stamped: as asked, or at once.
        assert_eq!(pause_us(&["-c", "50", "-d", "16", "--read-delay", "0"]), 0);
        assert_eq!(pause_us(&["-c", "1", "--read-delay", "30us"]), 30);
        let unstamped: [&[&str]; 3] = [
            &["--kernel-stamps", "off"],
            &["-s", "unix:/tmp/mc.sock"],
            &["--busy-poll"],
        ];
        for extra in unstamped {
            let args = [&["-c", "50", "-d", "16"][..], extra].concat();
            assert_eq!(pause_us(&args), 0, "{extra:?}");
        }
        // Nor wherever a given --read-delay is refused.
        let refusing: [&[&str]; 5] = [
            &["-q", "1000"],
            &["--load-only"],
            &["-s", "udp:127.0.0.1:11211"],
            &["-s", "127.0.0.1:11211", "--facebook"],
            &["--measure-connections", "1"],
        ];
        for extra in refusing {
            let args = [&["-c", "50", "-d", "16"][..], extra].concat();
            assert_eq!(pause_us(&args), 0, "{extra:?}");
            let asked = [&args[..], &["--read-delay", "50us"]].concat();
            assert!(crate::cli::try_run_spec(&asked).is_err(), "{extra:?}");
        }
        // Never while preloading.
        let s = spec(&["-c", "50", "-d", "16"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, false, false);
        assert!(p.delay().is_zero());
    }

    #[test]
    fn a_phase_without_arrivals_never_reads_late() {
        // (An untimed replay's measured phase, in a run that reads late.)
        let s = spec(&["--rate", "1000", "--read-answers", "late"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, false);
        assert_eq!(p.wait(1_000, true, false), Wait::Block);
    }

    #[test]
    fn a_late_reader_sleeps_then_sends_before_it_reads() {
        let mut p = late_open();
        assert_eq!(p.wait(5_000, true, false), Wait::Sleep);
        assert!(p.woke(true));
        assert!(p.answers_waiting());
        // The next turn reads what waited, without sleeping again.
        assert_eq!(p.wait(5_000, true, false), Wait::Look);
        assert!(!p.answers_waiting());
        assert_eq!(p.wait(5_000, true, false), Wait::Sleep);
        // Woken with no arrival due: the answers are read now.
        assert!(!p.woke(false));
        assert!(!p.answers_waiting());
    }

    #[test]
    fn answers_that_free_slots_for_waiting_requests_are_read_at_once() {
        let mut p = late_open();
        assert_eq!(p.wait(5_000, true, true), Wait::Block);
        // The drain: no arrival would wake a sleeper.
        assert_eq!(p.wait(5_000, false, false), Wait::Block);
    }

    #[test]
    fn bytes_left_unread_are_read_before_the_next_sleep() {
        let mut p = late_open();
        p.start_turn(false);
        p.left_bytes();
        assert_eq!(p.wait(5_000, true, false), Wait::Look);
        p.start_turn(false);
        assert_eq!(p.wait(5_000, true, false), Wait::Sleep);
        // A zero wait never sleeps.
        assert_eq!(p.wait(0, true, false), Wait::Look);
    }

    #[test]
    fn busy_poll_spins_whatever_else_is_asked() {
        let s = spec(&["--busy-poll"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, true, false);
        assert_eq!(p.wait(1_000, true, false), Wait::Spin);
    }

    #[test]
    fn the_pause_is_only_before_reads_that_start_answers() {
        let s = spec(&["--read-delay", "2ms"]);
        let mut p = ReadPolicy::new(&s);
        p.begin_phase(&s, false, false);
        assert!(!p.should_pause(true, false), "never while preloading");
        p.begin_phase(&s, true, false);
        assert_eq!(p.delay(), Duration::from_millis(2));
        assert!(p.should_pause(true, false));
        assert!(!p.should_pause(false, false), "only writable");
        assert!(!p.should_pause(true, true), "an answer begun");
        p.left_bytes();
        assert!(!p.should_pause(true, false), "bytes left unread");
    }

    #[test]
    fn each_complete_poll_bounds_what_the_next_finds() {
        let s = spec(&["--rate", "1000", "--read-answers", "late"]);
        let mut p = ReadPolicy::new(&s);
        assert_eq!(p.poll_start(70), Some(70));
        p.note_poll(100);
        assert_eq!(p.arrived_after(false), 0, "no poll before the first");
        p.start_turn(false);
        p.note_poll(250);
        assert_eq!(p.arrived_after(false), 100);
        // A socket left with bytes in it: they may be older than any poll.
        assert_eq!(p.arrived_after(true), 0);
        // A turn that may have left some socket unread bounds nothing.
        p.start_turn(true);
        p.note_poll(400);
        assert_eq!(p.arrived_after(false), 0);
        p.start_turn(false);
        p.note_poll(500);
        assert_eq!(p.arrived_after(false), 400);
    }

    #[test]
    fn unstamped_answers_take_no_poll_bound() {
        let s = spec(&[]);
        assert_eq!(ReadPolicy::new(&s).poll_start(70), None);
    }
}
