//! When a worker reads answers: `--read-delay` (a closed loop's batched
//! reads) and `--read-answers` (an open loop's reads at its next wake-up).

use super::{LoadMode, RunSpec, ServerAddr};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The longest `--read-delay`: beyond it the delay would dominate the
/// latencies of any server worth measuring.
const MAX_READ_DELAY: Duration = Duration::from_millis(10);

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
        self.read_answers != Some(ReadAnswers::AtOnce) && self.late_reads_blocker().is_none()
    }

    /// Whether the kernel stamps each answer as it comes and the engine
    /// times it by that stamp, not by when it is read: wherever reads wait
    /// on purpose (late reads, `--read-delay`) and the servers are reached
    /// over TCP. A unix stream carries no stamps: delayed reads there are
    /// timed when read, up to the delay late, and the report says so.
    pub fn stamps_answers(&self) -> bool {
        self.reads_late() || (!self.read_delay.is_zero() && self.tcp_only())
    }

    /// Why the kernel cannot take this run's latencies apart, if it
    /// cannot (`kernel_stamps`).
    pub fn latency_parts_blocker(&self) -> Option<&'static str> {
        let blockers = [
            (self.kernel_stamps == Some(false), "--kernel-stamps off"),
            (
                !self.tcp_only() || self.facebook,
                "the kernel stamps TCP only, not UDP or unix sockets",
            ),
            (
                self.tls.is_some(),
                "over TLS the kernel stamps records, not requests",
            ),
            (
                self.churn().is_some(),
                "--num-conns opens connections as it goes",
            ),
            // Measured (bench/README.md, issue 37): a write per request,
            // so a read of the error queue per request.
            (
                self.kernel_stamps.is_none() && !self.open_loop() && self.depth == 1,
                "a closed loop at depth 1 would pay 16-24 % more client CPU per request \
                 for the transmit stamps; --kernel-stamps on takes them",
            ),
        ];
        blockers
            .iter()
            .find(|(given, _)| *given)
            .map(|(_, why)| *why)
    }

    fn tcp_only(&self) -> bool {
        self.servers.iter().all(ServerAddr::is_tcp)
    }

    /// Why answers cannot be read late in this run, if they cannot.
    fn late_reads_blocker(&self) -> Option<&'static str> {
        let tcp_only = self.tcp_only();
        let blockers = [
            (
                !self.open_loop(),
                "a closed loop sends on each answer, so it reads each at once: give --rate",
            ),
            (self.busy_poll, "--busy-poll never sleeps"),
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

    pub(super) fn validate_read_answers(&self) -> Result<(), String> {
        if let (Some(true), Some(why)) = (self.kernel_stamps, self.latency_parts_blocker()) {
            return Err(format!("--kernel-stamps on: {why}; drop --kernel-stamps"));
        }
        match (self.read_answers, self.late_reads_blocker()) {
            (Some(ReadAnswers::Late), Some(why)) => Err(format!("--read-answers late: {why}")),
            _ => Ok(()),
        }
    }

    /// Delaying reads is for closed loops (an open loop reads late at its
    /// arrivals instead, `--read-answers`), and it stays short: it is time
    /// a closed loop's connections sit answered and idle. Over UDP each
    /// datagram is a wake-up of its own: there is nothing to batch.
    pub(super) fn validate_read_delay(&self) -> Result<(), String> {
        if self.read_delay.is_zero() {
            return Ok(());
        }
        if self.open_loop() {
            return Err("--read-delay is for closed loops: with --rate answers are read as they arrive, so that each is timed against its schedule".into());
        }
        if self.load == LoadMode::LoadOnly {
            return Err("--read-delay applies to measured reads: --load-only measures the preload, which reads at once".into());
        }
        if crate::spec::ServerAddr::first_udp(&self.servers).is_some() {
            return Err("--read-delay is for streams (TCP, unix sockets): a UDP socket is read one datagram per wake-up".into());
        }
        if self.read_delay > MAX_READ_DELAY {
            return Err(format!(
                "--read-delay must be at most 10ms, got {:?}",
                self.read_delay
            ));
        }
        Ok(())
    }
}
