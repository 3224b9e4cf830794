//! The flags of the tools that read servers rather than load them:
//! `route`, `stats`, `slabs`, `top`.

use crate::spec::units::{parse_count, parse_duration};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The servers a stats command reads.
#[derive(Debug, Args)]
pub struct ServersArgs {
    /// Server HOST:PORT or unix:/path; repeat or comma-separate.
    #[arg(
        short = 's',
        long = "server",
        required = true,
        value_delimiter = ',',
        env = "MEMCACHED_SERVERS"
    )]
    pub servers: Vec<String>,

    /// Longest wait for a connect or a reply.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,
}

/// `mcbench stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub target: ServersArgs,

    /// The group: slabs, items, settings, conns, sizes, or any other word
    /// the server knows (none: the general stats).
    pub group: Option<String>,

    /// Print {server: {name: value}} as JSON instead.
    #[arg(long)]
    pub json: bool,
}

/// `mcbench top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub target: ServersArgs,

    /// Refresh every this long (memcache-top's --sleep).
    #[arg(short = 'i', long, alias = "sleep", value_parser = parse_duration, default_value = "3s")]
    pub interval: Duration,

    /// Stop after this many refreshes (as top's -n); without it, until q
    /// or Ctrl-C.
    #[arg(short = 'n', long, value_parser = parse_count)]
    pub iterations: Option<u64>,
}

/// `mcbench route`: which server each key goes to, under a distribution.
#[derive(Debug, Args)]
pub struct RouteArgs {
    /// Servers, in the client's order (HOST:PORT[:WEIGHT], ranges too).
    #[arg(short = 's', long = "server", required = true, value_delimiter = ',')]
    pub servers: Vec<String>,

    /// modula, ketama, ketama-spy or ch3 (see `mcbench run --help`).
    #[arg(long, value_name = "NAME", default_value = "modula")]
    pub distribution: String,

    /// modula's key hash.
    #[arg(long, value_name = "NAME")]
    pub hash: Option<crate::placement::KeyHash>,

    /// Keys to place; with none, one per line from standard input. Each
    /// is printed with its server's index and address, tab-separated.
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct TraceStatArgs {
    /// The trace (plain or zstd).
    pub file: PathBuf,

    /// Its format (see `mcbench run --help`); found by itself otherwise.
    #[arg(long, value_name = "FORMAT")]
    pub trace_format: Option<crate::trace::TraceFormat>,

    /// Also spread its timestamps as a replay at this speed would (2x).
    #[arg(long, value_name = "S", value_parser = crate::spec::parse_speed)]
    pub trace_speed: Option<f64>,
}

/// `mcbench agent`: serve the control plane for a master's `--agent`.
#[cfg(feature = "agents")]
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Address to listen on. Loopback unless told otherwise: an agent
    /// reachable from elsewhere must be meant to be.
    #[arg(long, default_value = "127.0.0.1:5556", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,

    /// The file holding the shared token (its first line, 16 characters
    /// or more); every call must carry it.
    #[arg(long, value_name = "FILE")]
    pub token_file: std::path::PathBuf,

    /// This agent's weight: its share of connections, rate and requests
    /// is in this proportion (mutilate's -l/--lambda_mul).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub lambda_mul: u32,

    /// Threads this agent runs its share on (mutilate's agent -T)
    /// [default: the master's -t, at most the share's connections].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Serve over TLS with this certificate (PEM, chain first); the
    /// master trusts it with --agent-tls-ca. The token is still required.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,

    /// Listen beyond loopback without TLS: the token and every share
    /// (SASL credentials included) then cross the network in clear.
    /// Refused without this flag.
    #[arg(long)]
    pub insecure_plaintext: bool,

    /// The most keys one share may have (its preload's size).
    #[arg(long, value_parser = parse_count, default_value = "100000000", value_name = "N")]
    pub max_keys: u64,

    /// The most sockets one share may open, over every server.
    #[arg(long, value_parser = parse_count, default_value = "10000", value_name = "N")]
    pub max_connections: u64,

    /// The highest rate one share may send, requests/s.
    #[arg(long, value_parser = crate::spec::units::parse_rate, default_value = "10M", value_name = "R")]
    pub max_rate: f64,

    /// The longest one share may run (warm-up included); a share bounded
    /// by requests is cut by it.
    #[arg(long, value_parser = parse_duration, default_value = "24h", value_name = "D")]
    pub max_duration: std::time::Duration,

    /// `--metrics-listen`: each share's intervals, served while it runs
    /// (`--metrics-hold` is a run's: an agent serves until stopped).
    #[command(flatten)]
    pub telemetry: crate::cli::run::TelemetryArgs,
}
