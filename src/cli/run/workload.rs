//! `mcbench run`'s flags under "Workload".

use crate::cli::CliError;
use crate::spec::units::parse_count;
use crate::spec::TraceSpec;
use crate::workload::{Mix, MultiGet, OpKind};
use clap::Args;
use std::path::PathBuf;

/// What the requests ask: the op mix, multigets, misses, and the seed tools' profiles and configuration files.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Workload")]
pub struct WorkloadArgs {
    /// Share of requests that are sets (0..1); the rest are gets. Wins over
    /// --mix.
    ///
    /// Share of sets / op weights (default 9:1; `-u` wins over `--mix`). Ops:
    /// `get`, `gets`, `gat`, `gats`, `touch`, `set`, `add`, `replace`,
    /// `append`, `prepend`, `cas` (with the unique of the connection's last
    /// `gets`; without one, a `gets` goes first), `incr`, `decr`, `delete`,
    /// `mget`. Values are decimal digits, so `incr`/`decr` succeed on values of
    /// up to 19 bytes (memcached takes 20 digits, up to 2^64−1); a run with
    /// `incr`/`decr` whose preload or sets store values longer than 19 bytes is
    /// refused (exit 2), since every one would fail as `client_error`.
    #[arg(value_name = "R", short = 'u', long)]
    pub update: Option<f64>,

    /// Op mix as weights, e.g. get=90,set=10 (default get=90,set=10).
    ///
    /// incr/decr count numbers up to 2^64-1: with a preload or sets they need
    /// --value-size 19 or less (values are digits), else the run is refused.
    #[arg(value_name = "WEIGHTS", long)]
    pub mix: Option<Mix>,

    /// Send every get as a multiget of N keys (memaslap --division).
    ///
    /// Send every get as a multiget of N keys (memaslap --division); with
    /// mget in --mix, only the keys per mget.
    #[arg(long, value_name = "N", conflicts_with_all = ["getq_freq"])]
    pub multiget: Option<u32>,

    /// Percentage of gets sent as multigets (memcache-perf -g, 0..100).
    #[arg(value_name = "P", hide_short_help = true, long)]
    pub getq_freq: Option<f64>,

    /// Keys per multiget for --getq-freq (memcache-perf -G).
    #[arg(value_name = "N", hide_short_help = true, long, default_value_t = 100)]
    pub getq_size: u32,

    /// Share of get keys asked from outside the loaded set: planned misses.
    #[arg(value_name = "R", long, default_value_t = 0.0)]
    pub miss_ratio: f64,

    /// On a get miss, set that key (op "fill"); the mutilate fork's --getsetorset.
    ///
    /// On a get miss, set that key (reported as op "fill"); the mix's own
    /// sets are sent too, so this is also the mutilate fork's
    /// --getsetorset (its --getset sends gets only: add -u 0).
    #[arg(long, alias = "getsetorset")]
    pub getset: bool,

    /// Halfway through --ops/-x, delete 90 % of the key space (every key but
    /// each tenth), then go on with the mix: the mutilate fork's --delete90,
    /// after Rumble et al.
    ///
    /// (FAST '14). Needs --getset and --ops; closed loop. The deletes are
    /// measured as op "delete" and are not counted in --ops.
    #[arg(hide_short_help = true, long)]
    pub delete90: bool,

    /// Latency and throughput count only answers without an error reply
    /// (the mutilate fork's --successful); error replies are still
    /// counted and shown as errors.
    #[arg(hide_short_help = true, long)]
    pub successful: bool,

    /// Redis only (--protocol resp): a key longer than B bytes is stored
    /// as field (its last B bytes) of a hash (the rest), with HSET/HGET;
    /// shorter keys stay plain keys (the mutilate fork's --assoc).
    #[arg(hide_short_help = true, long, value_name = "B")]
    pub assoc: Option<u16>,

    /// The miss ratio per window of N measured answers, as a series in
    /// the JSON (`miss_windows`, per worker thread), to see when the cache
    /// reaches a steady state (the mutilate fork's -m/--misswindow).
    #[arg(hide_short_help = true, long, alias = "misswindow", value_parser = parse_count, value_name = "N")]
    pub miss_window: Option<u64>,

    /// A workload profile to start from (see `mcbench profiles`); the config
    /// file and flags override it.
    ///
    /// Start from a workload profile (`mcbench profiles` lists them: `etc`,
    /// `mcperf-1`..`mcperf-4`, `ycsb-a`..`ycsb-d`, `ycsb-f`)
    #[arg(value_name = "NAME", long)]
    pub profile: Option<String>,

    /// A TOML run file whose keys are the long flag names; flags override it.
    ///
    /// A TOML run file whose keys are the long flag names (`threads = 2`,
    /// `key-size = "fb_key"`, `server = ["h:11211"]`)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// A memaslap configuration file (key and value size tables, get/set shares).
    #[arg(
        hide_short_help = true,
        short = 'F',
        long = "cfg-cmd",
        value_name = "FILE"
    )]
    pub cfg_cmd: Option<PathBuf>,

    /// Seed of every random choice, for repeatable runs.
    ///
    /// Seed of every random choice (the request stream repeats exactly with one
    /// connection per thread; with more, the order answers arrive in decides
    /// which connection draws next)
    #[arg(value_name = "N", long, default_value_t = 1)]
    pub seed: u64,
}

impl WorkloadArgs {
    /// Whether gets fill their misses: `--getset`, or a replayed trace
    /// whose records name no op (they are gets that fill their misses).
    pub(super) fn getset(&self, trace: Option<&TraceSpec>) -> bool {
        self.getset || trace.is_some_and(|t| !t.names_ops)
    }

    /// The op mix: `-u` (memaslap's update ratio), else `--mix`, else 10 %
    /// sets; and how its gets become multigets.
    pub(super) fn mix(&self) -> Result<(Mix, MultiGet), CliError> {
        let mix = match (self.update, &self.mix) {
            (Some(u), _) => Mix::from_update_ratio(u)?,
            (None, Some(mix)) => mix.clone(),
            (None, None) => Mix::from_update_ratio(0.1)?,
        };
        let multiget = self.multiget(&mix)?;
        Ok((mix, multiget))
    }

    /// How gets become multigets. With `mget` in the mix, the mix decides
    /// how many there are and `--multiget` (else `--getq-size`) how many
    /// keys each asks for; otherwise `--multiget N` turns every get into a
    /// multiget of N keys and `--getq-freq` a share of them.
    fn multiget(&self, mix: &Mix) -> Result<MultiGet, CliError> {
        if mix.share_of(OpKind::Mget) > 0.0 {
            if self.getq_freq.is_some() {
                return Err(CliError::Refused(
                    "--getq-freq has nothing to do with mget in --mix: the mix sets how many \
                     requests are multigets",
                ));
            }
            return Ok(MultiGet {
                share: 0.0,
                keys: self.multiget.unwrap_or(self.getq_size),
            });
        }
        match (self.multiget, self.getq_freq) {
            (Some(n), _) => Ok(MultiGet {
                share: 1.0,
                keys: n,
            }),
            (None, Some(pct)) if (0.0..=100.0).contains(&pct) => Ok(MultiGet {
                share: pct / 100.0,
                keys: self.getq_size,
            }),
            (None, Some(pct)) => Err(CliError::GetqFreq(pct)),
            (None, None) => Ok(MultiGet::NONE),
        }
    }
}
