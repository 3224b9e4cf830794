//! `mcbench run`'s flags under "Server stats and replication".

use crate::spec::units::parse_duration;
use crate::spec::Replication;
use clap::Args;
use std::time::Duration;

/// The servers' own `stats`, and the writes and lag probe of a replicating pair.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Server stats and replication")]
pub struct ServerStatsArgs {
    /// Read every server's own `stats` at each interval and report them beside
    /// the client's.
    ///
    /// Read every server's own `stats` on a connection of its own: at the start
    /// of measurement (without a warm-up, before the first measured request),
    /// at each `--interval` and at the end, with `stats settings` once and
    /// `stats slabs`/`stats items` at start and end. The report shows per
    /// server `cmd_get`, `cmd_set`, commands/s, hit ratio, evictions,
    /// reclaimed, connections (peak/new/rejected), bytes read and written,
    /// items and the server's CPU per command (`rusage_user + rusage_system`),
    /// every other numeric stat that moved, and the `stats` round trip on the
    /// kept connection (the connect timed apart); JSON has it per interval too,
    /// and the HTML report charts it. When a server's lookups or hits differ
    /// from what the run's answers account for (beyond the failed requests and
    /// 1 %), a warning says so. memcached's text `stats` only: not with
    /// `--protocol resp`, UDP servers, or `--user` over binary.
    #[arg(long)]
    pub server_stats: bool,

    /// memaslap's replication test: the first N servers take the writes, reads
    /// go elsewhere.
    ///
    /// memaslap's replication test (`--rep_write`): the first N servers take
    /// the writes, each key on the writer `--distribution` places it on, and
    /// every read goes to a server the key was not written to (in turn among
    /// them in a closed loop, at random in an open loop). A miss there is a
    /// *replication miss*, reported apart from the other misses (text,
    /// `replication` in JSON, and per interval); a replica that evicted the key
    /// counts too, and so does a key written to another server while its writer
    /// was down. Only get and the storage commands and counters may be in the
    /// mix, without `--expiry`, `--verify`, `--exp-verify` or `--getset`, so
    /// that nothing else can pass for one. A server that is down (at the
    /// start, or later) is passed over: writes go to the next writer up, then any server; reads to another
    /// server, then the key's own writer. Implies `--reconnect`: a server that
    /// returns is used again; when every server has been down for `--timeout`,
    /// the run fails. Needs `--load` (the default), single-key reads and held
    /// TCP or unix connections.
    #[arg(long, alias = "rep_write", value_name = "N")]
    pub rep_write: Option<usize>,

    /// With --rep-write: replication-lag probes per second, each a write of its
    /// own key on its own connection, polled on another server until it shows
    /// (0: none) [default: 10]
    ///
    /// With `--rep-write`: R replication-lag probes a second (default 10; 0:
    /// none), one at a time on connections of their own: each writes a key of
    /// its own to a writer and, from the acknowledgement, polls another server
    /// every D (default 100us, or 1 % of the time waited if longer) until the
    /// key shows with its value, for at most `--timeout`. The lag (an upper
    /// bound: up to the answer of the poll that found it) is a histogram;
    /// probes not seen, failed, and found by the first poll (below the
    /// resolution) are counted.
    #[arg(hide_short_help = true, long, value_name = "R", requires = "rep_write")]
    pub rep_lag_rate: Option<f64>,

    /// With --rep-write: where reads go: `others` (a server the key was not
    /// written to) or `any` (any server, its writer included, as memaslap's
    /// `-p` draws one) [default: others]
    #[arg(hide_short_help = true, long, value_name = "WHERE", value_parser = ["others", "any"], requires = "rep_write")]
    pub rep_read: Option<String>,

    /// With --rep-write: the wait between polls of a probe's key (the
    /// lag's resolution, with a poll's round trip) [default: 100us]
    #[arg(hide_short_help = true, long, value_parser = parse_duration, value_name = "D", requires = "rep_write")]
    pub rep_lag_poll: Option<Duration>,
}

impl ServerStatsArgs {
    /// `--rep-write` and its lag probe; the probe's flags alone are refused.
    pub(super) fn replication(&self) -> Result<Option<Replication>, crate::cli::CliError> {
        use crate::spec::replication::{DEFAULT_LAG_POLL, DEFAULT_LAG_RATE};
        let Some(writers) = self.rep_write else {
            return Ok(None);
        };
        if self.rep_lag_rate == Some(0.0) && self.rep_lag_poll.is_some() {
            return Err(crate::cli::CliError::Refused(
                "--rep-lag-poll sets how the lag probe polls; --rep-lag-rate 0 runs none",
            ));
        }
        Ok(Some(Replication {
            writers,
            any_reader: self.rep_read.as_deref() == Some("any"),
            lag_rate: self.rep_lag_rate.unwrap_or(DEFAULT_LAG_RATE),
            lag_poll: self.rep_lag_poll.unwrap_or(DEFAULT_LAG_POLL),
        }))
    }
}
