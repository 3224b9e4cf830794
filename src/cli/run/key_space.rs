//! `mcbench run`'s flags under "Keys and values".

use crate::spec::units::parse_count;
use crate::spec::{KeySpaceSpec, LoadMode, DEFAULT_MAX_VALUE};
use crate::workload::{ClientSlice, Distribution, KeyDigits, Popularity};
use clap::Args;

/// The key space and value sizes, and its preload.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Keys and values")]
pub struct KeyArgs {
    /// Number of keys in the key space.
    ///
    /// Key space size (default 10000; `10k`, `1M` accepted)
    #[arg(value_name = "N", short = 'r', long, value_parser = parse_count, default_value_t = DEFAULT_KEYS)]
    pub keys: u64,

    /// Key size in bytes (a distribution).
    ///
    /// Sizes in bytes, as distributions (below), truncated to whole bytes as
    /// mutilate and twemperf do (`uniform:10,12` and `u10,12` give 10 or 11).
    /// Keys are clamped to 1..250 bytes, values to 1 byte..`--max-value-size`
    /// (default 1 MiB, at most 1 GiB)
    #[arg(value_name = "SIZE", short = 'K', long, default_value = "30")]
    pub key_size: Distribution,

    /// Value size in bytes (a distribution).
    #[arg(value_name = "SIZE", short = 'V', long, default_value = "200")]
    pub value_size: Distribution,

    /// Prefix of every key.
    ///
    /// Key prefix (default `mcb:`)
    #[arg(value_name = "P", hide_short_help = true, long, default_value = DEFAULT_PREFIX)]
    pub key_prefix: String,

    /// How key numbers are written after the prefix: decimal, or hex as
    /// twemperf's (`mcp:0000000a`).
    #[arg(value_name = "D", hide_short_help = true, long, value_enum, default_value_t = crate::workload::KeyDigits::Decimal)]
    pub key_digits: crate::workload::KeyDigits,

    /// The number of the first key (twemperf's is 1).
    #[arg(value_name = "N", hide_short_help = true, long, default_value_t = 0)]
    pub first_key: u64,

    /// Which keys requests ask for: uniform, zipf:THETA, hotspot:F,S, sequential, latest.
    ///
    /// Which keys requests ask for: uniform, zipf:THETA, hotspot:FRACTION,SHARE,
    /// sequential, latest[:THETA] (YCSB's request distributions).
    #[arg(value_name = "P", long, alias = "keyorder", default_value = "uniform")]
    pub key_popularity: Popularity,

    /// Use the I-th of N disjoint slices of the key space (twemperf's -c), so
    /// that N instances share a run without overlapping.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "I/N",
        default_value = "0/1"
    )]
    pub client: ClientSlice,

    /// memaslap's task window: each connection uses the N keys it last wrote.
    ///
    /// memaslap's task window: each connection works on the last N keys it
    /// wrote, sets write new keys (memaslap --win_size).
    ///
    /// Replaces the key space and the preload.
    #[arg(value_name = "N", long, alias = "win-size", value_parser = parse_count)]
    pub window: Option<u64>,

    /// With --window: share of sets that overwrite a key of the window.
    ///
    /// With --window: share of sets that overwrite a key of the window
    /// rather than write a new one (memaslap -o).
    #[arg(value_name = "R", short = 'o', long, default_value_t = 0.0)]
    pub overwrite: f64,

    /// Largest value size allowed, bytes (memcached's -I; default 1 MiB).
    #[arg(value_name = "B", long, value_parser = parse_count, default_value_t = DEFAULT_MAX_VALUE as u64)]
    pub max_value_size: u64,

    /// Preload every key before measuring, so gets hit (default).
    ///
    /// Preload every key once before measuring (default), don't, or only
    /// preload.
    #[arg(long, conflicts_with_all = ["no_load", "load_only"])]
    pub load: bool,

    /// Do not preload.
    #[arg(long, conflicts_with_all = ["load", "load_only"])]
    pub no_load: bool,

    /// Every thread preloads every key of its servers, as each of
    /// mutilate's threads does (the server counts threads × the sets).
    #[arg(hide_short_help = true, long, conflicts_with = "no_load")]
    pub load_each_thread: bool,

    /// Preload every key, report the load, and stop.
    #[arg(long, conflicts_with_all = ["load", "no_load"])]
    pub load_only: bool,
}

/// `-r`'s default: the key space's size.
const DEFAULT_KEYS: u64 = 10_000;
/// `--key-prefix`'s default.
const DEFAULT_PREFIX: &str = "mcb:";

impl KeyArgs {
    /// The spec's key space; `replay`: a trace gives the keys.
    pub(super) fn spec(&self, replay: bool) -> KeySpaceSpec {
        KeySpaceSpec {
            keys: self.keys,
            key_size: self.key_size.clone(),
            value_size: self.value_size.clone(),
            key_prefix: self.key_prefix.clone(),
            key_digits: self.key_digits,
            first_key: self.first_key,
            popularity: self.key_popularity,
            client: self.client,
            window: self.window,
            overwrite: self.overwrite,
            max_value_size: usize::try_from(self.max_value_size).unwrap_or(usize::MAX),
            preload: self.load_mode(replay),
            load_each_thread: self.load_each_thread,
        }
    }

    /// Whether the key space is preloaded. A replay has no key space to
    /// preload, unless asked (and then refused).
    pub(super) fn load_mode(&self, replay: bool) -> LoadMode {
        if self.load_only {
            LoadMode::LoadOnly
        } else if self.no_load || (replay && !self.load) {
            LoadMode::NoLoad
        } else {
            LoadMode::Load
        }
    }

    /// The first flag given that shapes the generated keys, which a trace
    /// brings its own of.
    pub(super) fn shaping_flag(&self) -> Option<&'static str> {
        let given = [
            (self.keys != DEFAULT_KEYS, "-r/--keys"),
            (self.key_size != Distribution::Fixed(30.0), "-K/--key-size"),
            (self.key_prefix != DEFAULT_PREFIX, "--key-prefix"),
            (self.key_digits != KeyDigits::Decimal, "--key-digits"),
            (self.first_key != 0, "--first-key"),
            (self.client != ClientSlice { index: 0, of: 1 }, "--client"),
        ];
        given.iter().find(|(g, _)| *g).map(|(_, flag)| *flag)
    }
}
