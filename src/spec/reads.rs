//! When a worker reads answers: `--read-delay` (a closed loop's batched
//! reads, by default where deep pipelines cover the pause) and
//! `--read-answers` (an open loop's reads at its next wake-up).

use super::SpecError;

use super::{LoadMode, RunSpec, ServerAddr};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The longest `--read-delay`: beyond it the delay would dominate the
/// latencies of any server worth measuring.
const MAX_READ_DELAY: Duration = Duration::from_millis(10);

/// The default pause of a closed loop without `--read-delay` (`read_pause`),
/// as measured in bench/README.md ("The depth default", issue 37), against
/// reading at once, 50 memcached connections of one worker:
/// - depth 1 and 2 lose 8-27 % of the ops/s for no CPU saved: a
///   connection's few requests are answered within the pause, and it idles;
/// - from depth 4 with 64 or more in flight per worker, ops/s rise and the
///   CPU per op falls to 0.36-0.67×; one connection at depth 16 (16 in
///   flight) lost half its ops/s;
/// - 100 µs did better than 50 from 200 in flight, 50 µs better at 64.
const PAUSE_MIN_DEPTH: usize = 4;
/// Requests in flight per worker, from which the default pauses: 50 µs,
/// and 100 µs from `LONG_PAUSE_IN_FLIGHT`.
const PAUSE_MIN_IN_FLIGHT: usize = 64;
const SHORT_PAUSE: Duration = Duration::from_micros(50);
const LONG_PAUSE_IN_FLIGHT: usize = 256;
const LONG_PAUSE: Duration = Duration::from_micros(100);

/// Where the kernel stamps writes and the run does not say how many: of
/// how many one (1: every write).
pub const DEFAULT_STAMP_EVERY: u32 = 1;
/// The sparsest sample `--kernel-stamps 1/N` takes.
pub const MAX_STAMP_EVERY: u32 = 1 << 16;

/// When an open loop's worker reads answers (`--read-answers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAnswers {
    /// At the worker's next wake-up for an arrival, each answer timed by
    /// the kernel's receive stamp: one wake-up per arrival, not one more
    /// per answer.
    Late,
    /// As each answer comes, timed when it is read.
    AtOnce,
}

impl RunSpec {
    /// Whether an open loop's workers leave answers in their sockets until
    /// the next arrival's wake-up (`--read-answers late`, the default where
    /// the run allows it). The engine then times them by kernel stamps.
    pub fn reads_late(&self) -> bool {
        self.load.read_answers != Some(ReadAnswers::AtOnce) && self.late_reads_blocker().is_none()
    }

    /// Whether the kernel stamps each answer as it comes and the engine
    /// times it by that stamp, not by when it is read: wherever reads wait
    /// on purpose (late reads, a pause) and the servers are reached over
    /// TCP. A unix stream carries no stamps: delayed reads there are timed
    /// when read, up to the delay late, and the report says so.
    pub fn stamps_answers(&self) -> bool {
        self.reads_late() || (!self.read_pause().is_zero() && self.tcp_only())
    }

    /// The pause a closed loop's worker takes after a wake-up before it
    /// reads: `--read-delay` if given, else the default's where the run's
    /// pipelines cover it (`pauses_by_default`), else none.
    pub fn read_pause(&self) -> Duration {
        match self.load.read_delay {
            Some(given) => given,
            None if !self.pauses_by_default() => Duration::ZERO,
            None if self.in_flight_per_worker() >= LONG_PAUSE_IN_FLIGHT => LONG_PAUSE,
            None => SHORT_PAUSE,
        }
    }

    /// Requests a closed loop keeps in flight per worker (its fewest, when
    /// the connections do not divide evenly).
    fn in_flight_per_worker(&self) -> usize {
        let conns = self.load.connections * self.target.servers.len().max(1);
        conns / self.load.threads.max(1) * self.load.depth
    }

    /// Whether a closed loop pauses before its reads without being asked:
    /// only where nothing refuses a pause (`pause_refusal`), the kernel's
    /// receive stamps keep it out of every latency (TCP, stamps not turned
    /// off; a busy-polling worker spins for its answers instead), and the
    /// requests in flight keep the server busy through it.
    pub fn pauses_by_default(&self) -> bool {
        let covered = self.load.depth >= PAUSE_MIN_DEPTH
            && self.in_flight_per_worker() >= PAUSE_MIN_IN_FLIGHT;
        let stamped =
            self.tcp_only() && !self.load.busy_poll && self.recording.kernel_stamps != Some(false);
        self.load.read_delay.is_none() && covered && stamped && self.pause_refusal().is_none()
    }

    /// Why no pause before reads can apply to this run, if none can: every
    /// mode that refuses `--read-delay`, in one list, so that the default
    /// never pauses where a given delay would be refused.
    fn pause_refusal(&self) -> Option<&'static str> {
        if self.open_loop() {
            return Some("--read-delay is for closed loops: with --rate answers are read as they arrive, so that each is timed against its schedule");
        }
        if self.key_space.preload == LoadMode::LoadOnly {
            return Some("--read-delay applies to measured reads: --load-only measures the preload, which reads at once");
        }
        if crate::spec::ServerAddr::first_udp(&self.target.servers).is_some() {
            return Some("--read-delay is for streams (TCP, unix sockets): a UDP socket is read one datagram per wake-up");
        }
        if self.conns.facebook {
            return Some(
                "--read-delay does not go with --facebook: its UDP replies are read as they come",
            );
        }
        if self.churn().is_some() {
            return Some("--read-delay does not go with --num-conns: it batches the reads of held connections (drop one of them)");
        }
        if self.measure.is_some() {
            return Some("--read-delay does not go with --measure-connections: it would delay the group's reads (drop one of them)");
        }
        None
    }

    /// Of how many writes the kernel stamps one, where it stamps them
    /// (`--kernel-stamps`; 1: every write).
    pub fn stamp_every(&self) -> u32 {
        self.recording.stamp_sample.unwrap_or(DEFAULT_STAMP_EVERY)
    }

    /// Why the kernel cannot take this run's latencies apart, if it
    /// cannot (`kernel_stamps`).
    pub fn latency_parts_blocker(&self) -> Option<&'static str> {
        let blockers = [
            (
                self.recording.kernel_stamps == Some(false),
                "--kernel-stamps off",
            ),
            (
                !self.tcp_only() || self.conns.facebook,
                "the kernel stamps TCP only, not UDP or unix sockets",
            ),
            (
                self.target.tls.is_some(),
                "over TLS the kernel stamps records, not requests",
            ),
            (
                self.churn().is_some(),
                "--num-conns opens connections as it goes",
            ),
            // Measured (bench/README.md, issue 37): a write per request,
            // so a read of the error queue per request.
            (
                self.recording.kernel_stamps.is_none() && !self.open_loop() && self.load.depth == 1,
                "a closed loop at depth 1 would pay 16-24 % more client CPU per request \
                 for the kernel's stamps; --kernel-stamps on takes them",
            ),
        ];
        blockers
            .iter()
            .find(|(given, _)| *given)
            .map(|(_, why)| *why)
    }

    fn tcp_only(&self) -> bool {
        self.target.servers.iter().all(ServerAddr::is_tcp)
    }

    /// Why answers cannot be read late in this run, if they cannot.
    fn late_reads_blocker(&self) -> Option<&'static str> {
        let tcp_only = self.tcp_only();
        let blockers = [
            (
                !self.open_loop(),
                "a closed loop sends on each answer, so it reads each at once: give --rate",
            ),
            (self.load.busy_poll, "--busy-poll never sleeps"),
            (
                !tcp_only,
                "the kernel stamps answers over TCP only, not over UDP or unix sockets",
            ),
            (
                self.churn().is_some(),
                "--num-conns times each connect as it completes",
            ),
            (
                self.moderate(),
                "--moderate spaces sends by when answers came, which a late read learns too late",
            ),
        ];
        blockers
            .iter()
            .find(|(given, _)| *given)
            .map(|(_, why)| *why)
    }

    pub(super) fn validate_read_answers(&self) -> Result<(), SpecError> {
        match (self.recording.stamp_sample, self.recording.kernel_stamps) {
            (Some(n), _) if !(1..=MAX_STAMP_EVERY).contains(&n) => {
                return Err(SpecError::Invalid(format!(
                    "--kernel-stamps 1/N: N from 1 to {MAX_STAMP_EVERY}, got {n}"
                )))
            }
            (Some(_), Some(false)) => {
                return Err(SpecError::Invalid(
                    "a sample of kernel stamps with --kernel-stamps off".into(),
                ))
            }
            _ => {}
        }
        if let (Some(true), Some(why)) =
            (self.recording.kernel_stamps, self.latency_parts_blocker())
        {
            let given = match self.recording.stamp_sample {
                Some(1) => "all".to_string(),
                Some(n) => format!("1/{n}"),
                None => "on".to_string(),
            };
            return Err(SpecError::Invalid(format!(
                "--kernel-stamps {given}: {why}; drop --kernel-stamps"
            )));
        }
        match (self.load.read_answers, self.late_reads_blocker()) {
            (Some(ReadAnswers::Late), Some(why)) => {
                Err(SpecError::Invalid(format!("--read-answers late: {why}")))
            }
            _ => Ok(()),
        }
    }

    /// Delaying reads is for closed loops (an open loop reads late at its
    /// arrivals instead, `--read-answers`), and it stays short: it is time
    /// a closed loop's connections sit answered and idle. Over UDP each
    /// datagram is a wake-up of its own: there is nothing to batch.
    pub(super) fn validate_read_delay(&self) -> Result<(), SpecError> {
        let Some(read_delay) = self.load.read_delay.filter(|d| !d.is_zero()) else {
            return Ok(());
        };
        if let Some(why) = self.pause_refusal() {
            return Err(SpecError::Refused(why));
        }
        if read_delay > MAX_READ_DELAY {
            return Err(SpecError::at_most(
                "--read-delay",
                "10ms",
                format!("{read_delay:?}"),
            ));
        }
        Ok(())
    }
}
