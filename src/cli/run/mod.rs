//! `mcbench run`'s flags, and their mapping onto a validated `RunSpec`.
//!
//! One group of flags per file, each under its own heading of `run --help`
//! and each mapping onto its part of the spec; this file joins them. A
//! check that needs no file or terminal belongs in `RunSpec::validate`,
//! not here: here are only what the flags alone decide (which of two flags
//! wins, a flag given without the one it needs) and the trace, which is
//! opened to learn its format.

mod checks;
mod conns;
#[cfg(feature = "agents")]
mod fleet;
mod key_space;
mod load;
mod measure;
mod recording;
mod replay;
mod request;
mod server;
mod target;
mod telemetry;
mod workload;

pub use checks::CheckArgs;
pub use conns::ConnectionArgs;
#[cfg(feature = "agents")]
pub use fleet::FleetArgs;
pub use key_space::KeyArgs;
pub use load::LoadArgs;
pub use measure::MeasureArgs;
pub use recording::RecordingArgs;
pub use replay::ReplayArgs;
pub use request::RequestArgs;
pub use server::ServerStatsArgs;
pub use target::TargetArgs;
pub use telemetry::TelemetryArgs;
pub use workload::WorkloadArgs;

use super::{CliError, OutputArgs};
use crate::spec::{
    ConnectionSpec, LoadSpec, RunSpec, Schedule, ScheduleFlags, ServerSpec, SpecError, StopAfter,
    TargetSpec, TraceSpec, WorkloadSpec,
};
use clap::Args;
use std::time::Duration;

/// Every flag of `mcbench run` (and of `search` and `scan`, which take
/// them), in the order of `run --help`'s headings.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub request: RequestArgs,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub key_space: KeyArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub recording: RecordingArgs,
    #[command(flatten, next_help_heading = "Outputs")]
    pub outputs: OutputArgs,
    #[command(flatten)]
    pub conns: ConnectionArgs,
    #[command(flatten)]
    pub checks: CheckArgs,
    #[cfg(feature = "agents")]
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub server: ServerStatsArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// How long a run without `-t`, `-x`, a churn schedule or a trace lasts.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunArgs {
    /// Maps the flags onto a validated `RunSpec`.
    pub fn to_spec(&self) -> Result<RunSpec, CliError> {
        let spec = self.assemble()?;
        // --each runs each server alone: each of those runs is checked,
        // not the servers together (whose key placement none of them has).
        // With agents, the agents open the connections: this host's
        // descriptors are no limit of the run.
        if self.target.each {
            spec.each()?;
        } else if self.by_agents() {
            spec.validate_plan()?;
        } else {
            spec.validate()?;
        }
        Ok(spec)
    }

    /// The spec the flags say, each field from its group, not yet checked
    /// as a whole.
    fn assemble(&self) -> Result<RunSpec, CliError> {
        let (trace, trace_speed) = self.trace()?;
        let (timeout, connect_timeout, drain_timeout) = self.load.timeouts();
        let (mix, multiget) = self.workload.mix()?;
        let (servers, weights, tls) = self.target.servers()?;
        Ok(RunSpec {
            target: TargetSpec {
                servers,
                weights,
                distribution: self.target.distribution()?,
                roundrobin: self.target.roundrobin,
                protocol: self.target.wire_protocol(),
                user: self.target.user.clone(),
                password: self.target.password.clone(),
                tls,
            },
            load: LoadSpec {
                threads: self.load.threads,
                connections: self.load.connections,
                depth: self.load.depth,
                refill_batch: self.load.refill_batch,
                schedule: self.schedule(trace_speed)?,
                stop: self.stop_after(),
                time_limit: self.load.time_limit,
                warmup: self.load.warmup.unwrap_or(Duration::ZERO),
                wait: self.load.wait.unwrap_or(Duration::ZERO),
                precision: self.load.precision.clone(),
                decide: None,
                affinity: self.load.affinity()?,
                timeout,
                connect_timeout: Some(connect_timeout),
                drain_timeout: Some(drain_timeout),
                busy_poll: self.load.busy_poll,
                read_answers: self.load.read_answers,
                read_delay: self.load.read_delay,
            },
            request: self.request.spec(),
            key_space: self.key_space.spec(trace.is_some()),
            workload: WorkloadSpec {
                mix,
                multiget,
                miss_ratio: self.workload.miss_ratio,
                getset: self.workload.getset(trace.as_ref()),
                delete90: self.workload.delete90,
                successful: self.workload.successful,
                miss_window: self.workload.miss_window,
                assoc: self.workload.assoc,
                seed: self.workload.seed,
            },
            recording: self.recording.spec(),
            conns: ConnectionSpec {
                reconnect: self.conns.reconnect || self.server.rep_write.is_some(),
                facebook: self.conns.facebook,
                conn_sock: self.conns.conn_sock,
                socket: self.conns.socket_options()?,
            },
            checks: self.checks.spec(),
            server: ServerSpec {
                replication: self.server.replication()?,
                server_stats: self.server.server_stats,
            },
            measure: self.measure.group(),
            trace,
        })
    }

    /// The trace to replay, and its speed if it is replayed at its
    /// timestamps; the key space's and workload's flags are refused beside
    /// one.
    fn trace(&self) -> Result<(Option<TraceSpec>, Option<f64>), CliError> {
        let generated = (&self.key_space, &self.workload);
        let replay = self.replay.replay(generated, self.load.time_limit)?;
        Ok(replay.map_or((None, None), |(trace, speed)| (Some(trace), speed)))
    }

    /// When the run stops: after `-x` requests, after `-t`, at the end of a
    /// churn schedule or a trace, else after `DEFAULT_DURATION`.
    fn stop_after(&self) -> StopAfter {
        match (self.load.ops, self.load.duration) {
            (Some(n), _) => StopAfter::Ops(n),
            (None, Some(d)) => StopAfter::Duration(d),
            (None, None) if self.conns.num_conns.is_some() => StopAfter::Schedule,
            (None, None) if self.replay.given() => StopAfter::TraceEnd,
            (None, None) => StopAfter::Duration(DEFAULT_DURATION),
        }
    }

    /// When requests are sent: the load's rate and arrivals, the
    /// connections' churn, or the trace's timestamps at `trace_speed`.
    fn schedule(&self, trace_speed: Option<f64>) -> Result<Schedule, SpecError> {
        let l = &self.load;
        ScheduleFlags {
            rate: l.rate,
            arrival: l.arrival.clone(),
            coalesce: l.coalesce,
            skip: l.skip,
            moderate: l.moderate,
            churn: self.conns.churn(),
            trace_speed,
        }
        .schedule()
    }

    /// Whether agents make the run (`--agent`), not this process.
    fn by_agents(&self) -> bool {
        #[cfg(feature = "agents")]
        return !self.fleet.agents.is_empty();
        #[cfg(not(feature = "agents"))]
        false
    }
}

/// `on` or `off` (also true/false, yes/no, 1/0).
fn parse_on_off(text: &str) -> Result<bool, CliError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(CliError::OnOff(text.to_string())),
    }
}
