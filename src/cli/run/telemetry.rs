//! `mcbench run`'s flags for the Prometheus endpoint, under "Outputs": it is one.

use crate::spec::units::parse_duration;
use crate::telemetry::Config;
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

/// `/metrics` for Prometheus while the run goes.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Outputs")]
pub struct TelemetryArgs {
    /// Serve Prometheus's /metrics on ADDR (127.0.0.1:9464) while running.
    ///
    /// Serve `/metrics` on ADDR while the run goes: per op type the requests
    /// answered, error replies, hits and misses; failures by class; bytes;
    /// the load's CPU; per server with several; the phase and target rate;
    /// and latency, service time and the kernel-stamped parts as histograms,
    /// classic (`--metrics-buckets`) in the text formats (Prometheus 0.0.4,
    /// OpenMetrics 1.0.0) and native
    /// (exponential, schema 5, ≤ 2.2 % apart) in the protobuf one a
    /// Prometheus with native histograms asks for. Updated once per interval
    /// (`-i`, 1 s by default). With `--agent`, the agents' intervals merged,
    /// and each agent's under its `agent` label. Port 0 picks a free port
    /// (said on stderr). A loopback address unless --metrics-allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,

    /// With --metrics-listen: serve on an address beyond loopback.
    #[arg(hide_short_help = true, long, requires = "metrics_listen")]
    pub metrics_allow_remote: bool,

    /// With --metrics-listen: the classic histograms' bounds (10us,100us,1ms).
    ///
    /// The classic histograms' upper bounds, increasing, comma-separated
    /// durations (default: five per decade from 1us to 10s).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "D,D,...",
        value_delimiter = ',',
        value_parser = parse_duration,
        requires = "metrics_listen"
    )]
    pub metrics_buckets: Option<Vec<Duration>>,

    /// With --metrics-listen: after the run, serve until a scrape has read
    /// its final counts, at most D (default 0s).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "D",
        value_parser = parse_duration,
        requires = "metrics_listen"
    )]
    pub metrics_hold: Option<Duration>,
}

impl TelemetryArgs {
    /// The endpoint asked for, if any (checked when it is started).
    pub fn config(&self) -> Option<Config> {
        let listen = self.metrics_listen?;
        let bounds = match &self.metrics_buckets {
            Some(b) => b.iter().map(Duration::as_secs_f64).collect(),
            None => crate::telemetry::default_bounds(),
        };
        Some(Config {
            listen,
            allow_remote: self.metrics_allow_remote,
            bounds,
            hold: self.metrics_hold.unwrap_or(Duration::ZERO),
        })
    }
}
