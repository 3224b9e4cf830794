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
pub use workload::WorkloadArgs;

use super::OutputArgs;
use crate::spec::{RunSpec, Schedule, ScheduleFlags, StopAfter};
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
}

/// How long a run without `-t`, `-x`, a churn schedule or a trace lasts.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunArgs {
    /// Maps the flags onto a validated `RunSpec`.
    pub fn to_spec(&self) -> Result<RunSpec, String> {
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
    fn assemble(&self) -> Result<RunSpec, String> {
        let (t, l, r, k, w) = (
            &self.target,
            &self.load,
            &self.request,
            &self.key_space,
            &self.workload,
        );
        let (trace, trace_speed) = self.replay.replay((k, w), l.time_limit)?.unzip();
        let mix = w.mix()?;
        let multiget = w.multiget(&mix)?;
        let (servers, weights) = t.servers()?;
        Ok(RunSpec {
            label: self.recording.label.clone(),
            tls: t.tls_spec(&servers)?,
            servers,
            weights,
            distribution: t.distribution()?,
            roundrobin: t.roundrobin,
            protocol: t.wire_protocol(),
            user: t.user.clone(),
            password: t.password.clone(),
            replication: self.server.replication()?,
            server_stats: self.server.server_stats,
            measure: self.measure.group(),
            threads: l.threads,
            connections: l.connections,
            depth: l.depth,
            refill_batch: l.refill_batch,
            stop: self.stop_after(),
            time_limit: l.time_limit,
            warmup: l.warmup.unwrap_or(Duration::ZERO),
            wait: l.wait.unwrap_or(Duration::ZERO),
            precision: l.precision.clone(),
            decide: None,
            affinity: l.affinity()?,
            timeout: l.request_timeout.unwrap_or(l.timeout),
            connect_timeout: Some(l.connect_timeout.unwrap_or(l.timeout)),
            drain_timeout: Some(l.drain_timeout.unwrap_or(l.timeout)),
            busy_poll: l.busy_poll,
            read_answers: l.read_answers,
            read_delay: l.read_delay,
            schedule: self.schedule(trace_speed.flatten())?,
            keys: k.keys,
            key_size: k.key_size.clone(),
            value_size: k.value_size.clone(),
            key_prefix: k.key_prefix.clone(),
            key_digits: k.key_digits,
            first_key: k.first_key,
            popularity: k.key_popularity,
            client: k.client,
            window: k.window,
            overwrite: k.overwrite,
            max_value_size: usize::try_from(k.max_value_size).unwrap_or(usize::MAX),
            load: k.load_mode(trace.is_some()),
            load_each_thread: k.load_each_thread,
            multiget,
            mix,
            miss_ratio: w.miss_ratio,
            // Records that name no op are gets that fill their misses.
            getset: w.getset || trace.as_ref().is_some_and(|t| !t.names_ops),
            delete90: w.delete90,
            successful: w.successful,
            miss_window: w.miss_window,
            assoc: w.assoc,
            seed: w.seed,
            trace,
            trace_commands: r.trace_commands,
            expiry: r.expiry,
            delta: r.delta,
            cas_unique: r.cas_unique,
            noreply: r.noreply,
            meta_flags: r.meta_flags.clone(),
            interval: self.recording.interval.unwrap_or(Duration::from_secs(1)),
            live: self.recording.interval.is_some(),
            save_rate: self.recording.save_rate(),
            kernel_stamps: self.recording.kernel_stamps,
            reconnect: self.conns.reconnect || self.server.rep_write.is_some(),
            facebook: self.conns.facebook,
            conn_sock: self.conns.conn_sock,
            socket: self.conns.socket_options()?,
            verify: self.checks.verify.unwrap_or(0.0),
            exp_verify: self.checks.exp_verify.unwrap_or(0.0),
            exp_verify_ttl: self.checks.exp_verify_ttl,
            verbose: self.checks.verbose,
            tolerate_check_failures: self.checks.tolerate_check_failures,
        })
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
    fn schedule(&self, trace_speed: Option<f64>) -> Result<Schedule, String> {
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
fn parse_on_off(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is neither on nor off")),
    }
}
