//! `mcbench run`'s flags under "Protocol".

use crate::spec::RequestSpec;
use clap::Args;

/// The requests' own fields: expiry, delta, CAS, meta flags and noreply.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Protocol")]
pub struct RequestArgs {
    /// Send start_trace before the measured phase and stop_trace after it
    /// to every server (memcache-perf's -e, for tracing memcached builds);
    /// a server that refuses them gets a warning.
    #[arg(hide_short_help = true, long)]
    pub trace_commands: bool,

    /// Expiry of storage commands, gat and touch, in seconds (0: never).
    ///
    /// Expiry of storage commands, `gat` and `touch` (default 0, never); amount
    /// of `incr`/`decr` (default 1)
    #[arg(value_name = "S", long, alias = "exptime", default_value_t = 0)]
    pub expiry: u32,

    /// Amount added or subtracted by incr/decr.
    #[arg(value_name = "N", hide_short_help = true, long, default_value_t = 1)]
    pub delta: u64,

    /// A cas sends this unique instead of the one a gets read first (twemperf's
    /// -m cas sends 1): no gets goes out, and the server answers EXISTS or
    /// NOT_FOUND.
    ///
    /// Every `cas` sends unique N, with no `gets` before it (twemperf's `-m
    /// cas` sends 1): the server answers `EXISTS` or `NOT_FOUND`. Without it, a
    /// `cas` sends the unique its connection's last `gets` read. Refused
    /// without `cas` in `--mix`.
    #[arg(hide_short_help = true, long, value_name = "N")]
    pub cas_unique: Option<u64>,

    /// Meta protocol: extra flags on retrievals, comma-separated: k (return the
    /// key), t (the TTL), s (the size), b (base64 keys), N<ttl> (vivify misses
    /// as stubs, which count as misses).
    ///
    /// Meta protocol: extra flags on retrievals, comma-separated: `k`, `t`, `s`
    /// (return key, TTL, size), `b` (base64 keys, up to 186 raw bytes),
    /// `N<ttl>` (vivify misses; the stub a miss leaves, flagged `W`/`Z` without
    /// data, counts as a miss). `v`, `f`, `c`, `q`, `O`, `T` are sent where the
    /// command needs them.
    #[arg(hide_short_help = true, long, value_name = "FLAGS")]
    pub meta_flags: Option<String>,

    /// Send commands quiet (text noreply, meta q, binary quiet opcodes).
    ///
    /// Quiet commands (text `noreply`, meta `q`, binary quiet opcodes), each
    /// followed by a noop (`version` in text, `mn`, binary noop) so that it is
    /// still timed and its failures still counted. In text, the quiet
    /// commands of one write share one `version` after the last: each is
    /// timed to it, and an error line before the next reply is the first
    /// unanswered one's.
    #[arg(long)]
    pub noreply: bool,
}

impl RequestArgs {
    /// The spec's request part, as the flags say.
    pub(super) fn spec(&self) -> RequestSpec {
        RequestSpec {
            trace_commands: self.trace_commands,
            expiry: self.expiry,
            delta: self.delta,
            cas_unique: self.cas_unique,
            noreply: self.noreply,
            meta_flags: self.meta_flags.clone(),
        }
    }
}
