//! Trace replay (`--trace`, `--read-file`) and what it needs of the rest
//! of the run.

use super::SpecError;

use super::{LoadMode, RunSpec, StopAfter};
use crate::trace::TraceFormat;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A trace to replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: TraceFormat,
    /// `--trace-clients`: each trace client's requests go, in order, on
    /// one connection (`client mod connections`).
    pub clients: bool,
    /// Whether its records name their ops; those that do not are gets
    /// that set their key when they miss.
    pub names_ops: bool,
}

/// The fastest and slowest `--trace-speed`.
const SPEED_RANGE: std::ops::RangeInclusive<f64> = 1e-3..=1e6;

/// `2x`, `0.5x` or `2`: how many times faster than recorded.
pub fn parse_speed(s: &str) -> Result<f64, SpecError> {
    let v: f64 = s
        .strip_suffix(['x', 'X'])
        .unwrap_or(s)
        .parse()
        .map_err(|_| SpecError::TraceSpeed(s.into()))?;
    check_speed(v)?;
    Ok(v)
}

/// A timed replay's speed must be in `SPEED_RANGE`.
pub(super) fn check_speed(v: f64) -> Result<(), SpecError> {
    if !SPEED_RANGE.contains(&v) {
        return Err(SpecError::between(
            "--trace-speed",
            format!("{}x", SPEED_RANGE.start()),
            format!("{}x", SPEED_RANGE.end()),
            v,
        ));
    }
    Ok(())
}

impl RunSpec {
    /// A replay sends the trace's keys in the trace's order: every flag
    /// that shapes the key space or needs keys of its own is refused.
    pub(super) fn validate_trace(&self) -> Result<(), SpecError> {
        let Some(t) = &self.trace else {
            if self.load.stop == StopAfter::TraceEnd {
                return Err(SpecError::Refused(
                    "a run without --trace has no trace end to stop at",
                ));
            }
            return Ok(());
        };
        let flag = if t.format == TraceFormat::Keys {
            "--read-file"
        } else {
            "--trace"
        };
        if self.key_space.preload != LoadMode::NoLoad {
            return Err(SpecError::Invalid(format!(
                "{flag} replays the trace's own keys: there is no key space to preload (drop --load/--load-only; --getset fills misses)"
            )));
        }
        if matches!(self.load.stop, StopAfter::Ops(_)) && !self.load.warmup.is_zero() {
            return Err(SpecError::Refused("-x with a trace replays its first N requests; a warm-up would take some of them: drop -w, or cut the run with -t"));
        }
        if t.clients && self.open_loop() {
            return Err(SpecError::Refused("--trace-clients keeps each client's requests in order on one connection, which a closed loop does; an open loop sends each request on any free connection (add --trace-timing ignore, without --rate)"));
        }
        let refused = [
            (self.key_space.window.is_some(), "--window"),
            (self.workload.multiget.share > 0.0, "multigets"),
            (
                self.checks.verify > 0.0 || self.checks.exp_verify > 0.0,
                "--verify/--exp-verify",
            ),
            (self.server.replication.is_some(), "--rep-write"),
            (self.conns.facebook, "--facebook"),
            (self.churn().is_some(), "--num-conns"),
            (self.measure.is_some(), "--measure-connections"),
            (self.workload.miss_ratio > 0.0, "--miss-ratio"),
            (
                self.key_space.popularity != crate::workload::Popularity::Uniform,
                "--key-popularity",
            ),
            (
                crate::spec::ServerAddr::first_udp(&self.target.servers).is_some(),
                "UDP servers",
            ),
        ];
        if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
            return Err(SpecError::Invalid(format!(
                "{flag} takes its keys from the trace: {what} cannot be used with it"
            )));
        }
        let mixed = [crate::workload::OpKind::Cas, crate::workload::OpKind::Mget];
        if t.format == TraceFormat::Keys {
            if let Some(op) = mixed
                .iter()
                .find(|op| self.workload.mix.share_of(**op) > 0.0)
            {
                return Err(SpecError::Invalid(format!(
                    "--read-file draws ops from the mix, one key per request: {op} cannot be in it"
                )));
            }
        }
        Ok(())
    }
}
