//! Command-line definitions of the native subcommands, and their mapping
//! onto a `RunSpec`.

use crate::spec::units::{parse_count, parse_duration};
use crate::spec::{Arrival, LoadMode, RunSpec, StopAfter};
use crate::workload::{Distribution, Mix};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "mcbench",
    version,
    about = "Load generator and latency-measurement tool for memcached",
    long_about = "Load generator and latency-measurement tool for memcached.\n\n\
        Latency is measured from each request's intended send time (no coordinated \
        omission); the tool reports when it, not the server, is the bottleneck."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive get/set load at memcached servers and report throughput and latency.
    Run(Box<RunArgs>),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Server HOST:PORT; repeat or comma-separate for several. With none,
    /// a memcached from PATH is started on loopback for the run.
    #[arg(
        short = 's',
        long = "server",
        env = "MEMCACHED_SERVERS",
        value_delimiter = ','
    )]
    pub servers: Vec<String>,

    /// Worker threads, each with its own event loop.
    #[arg(short = 'T', long, default_value_t = 1)]
    pub threads: usize,

    /// Connections per server, spread over the threads.
    #[arg(short = 'c', long, default_value_t = 4)]
    pub connections: usize,

    /// Most requests in flight per connection (pipelining). In closed loop a
    /// connection is refilled in a batch once half of them are answered.
    #[arg(short = 'd', long, default_value_t = 1)]
    pub depth: usize,

    /// Target aggregate rate in ops/s (open loop). Without it: closed loop.
    #[arg(short = 'q', long)]
    pub rate: Option<f64>,

    /// Spacing of open-loop arrivals.
    #[arg(long, value_enum, default_value_t = Arrival::Exponential)]
    pub arrival: Arrival,

    /// Length of the measured phase (30s, 2m, 1h).
    #[arg(short = 't', long, value_parser = parse_duration, conflicts_with = "ops")]
    pub duration: Option<Duration>,

    /// Stop after exactly this many measured requests.
    #[arg(short = 'x', long, value_parser = parse_count)]
    pub ops: Option<u64>,

    /// Time to run before measuring; not counted.
    #[arg(short = 'w', long, value_parser = parse_duration, default_value = "0s")]
    pub warmup: Duration,

    /// Number of keys in the key space.
    #[arg(short = 'r', long, value_parser = parse_count, default_value = "10000")]
    pub keys: u64,

    /// Key size in bytes (a distribution; fixed for now).
    #[arg(short = 'K', long, default_value = "30")]
    pub key_size: Distribution,

    /// Value size in bytes (a distribution).
    #[arg(short = 'V', long, default_value = "200")]
    pub value_size: Distribution,

    /// Prefix of every key.
    #[arg(long, default_value = "mcb:")]
    pub key_prefix: String,

    /// Share of requests that are sets (0..1); the rest are gets.
    #[arg(short = 'u', long, default_value_t = 0.1)]
    pub update: f64,

    /// Preload every key before measuring, so gets hit (default).
    #[arg(long, overrides_with_all = ["no_load", "load_only"])]
    pub load: bool,

    /// Do not preload.
    #[arg(long, overrides_with_all = ["load", "load_only"])]
    pub no_load: bool,

    /// Preload every key, report the load, and stop.
    #[arg(long, overrides_with_all = ["load", "no_load"])]
    pub load_only: bool,

    /// Print a live line per interval on stderr (1s, 500ms).
    #[arg(short = 'i', long, value_parser = parse_duration)]
    pub interval: Option<Duration>,

    /// Write the results as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Pin worker threads to CPUs: alone, one CPU per thread in order;
    /// or a list such as `1,3`.
    #[arg(long, value_name = "CPUS", num_args = 0..=1, default_missing_value = "auto")]
    pub affinity: Option<String>,

    /// Seed of every random choice, for repeatable runs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Connect timeout; also how long to wait for answers once sending stops.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,
}

/// The default length of a run when neither `--duration` nor `--ops` is given.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunArgs {
    /// Maps the flags onto a validated `RunSpec`.
    pub fn to_spec(&self) -> Result<RunSpec, String> {
        let stop = match (self.ops, self.duration) {
            (Some(n), _) => StopAfter::Ops(n),
            (None, Some(d)) => StopAfter::Duration(d),
            (None, None) => StopAfter::Duration(DEFAULT_DURATION),
        };
        let load = if self.load_only {
            LoadMode::LoadOnly
        } else if self.no_load {
            LoadMode::NoLoad
        } else {
            LoadMode::Load
        };
        let spec = RunSpec {
            servers: self
                .servers
                .iter()
                .filter(|s| !s.trim().is_empty())
                .cloned()
                .collect(),
            threads: self.threads,
            connections: self.connections,
            depth: self.depth,
            rate: self.rate,
            arrival: self.arrival,
            stop,
            warmup: self.warmup,
            keys: self.keys,
            key_size: self.key_size.clone(),
            value_size: self.value_size.clone(),
            key_prefix: self.key_prefix.clone(),
            mix: Mix::from_update_ratio(self.update)?,
            load,
            interval: self.interval.unwrap_or(Duration::from_secs(1)),
            live: self.interval.is_some(),
            affinity: self.affinity.as_deref().map(parse_affinity).transpose()?,
            seed: self.seed,
            timeout: self.timeout,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// `auto` (one CPU per thread, in order of the CPUs this process may use)
/// or a comma-separated list of CPU numbers.
fn parse_affinity(text: &str) -> Result<Vec<usize>, String> {
    if text == "auto" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("invalid --affinity '{text}': expected CPU numbers like 0,2"))
        })
        .collect()
}
