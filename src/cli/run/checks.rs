//! `mcbench run`'s flags under "Checks".

use crate::spec::CheckSpec;
use clap::Args;

/// Checks of the answers: values read back and expiries verified.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Checks")]
pub struct CheckArgs {
    /// Share of single-key gets whose value is checked byte for byte
    /// (memaslap's --verify).
    ///
    /// memaslap's `-v`: a share R of single-key gets (`get`, `gets`, `gat`,
    /// `gats`) checks the value byte for byte against what this run stores for
    /// the key. A value's bytes follow from its key and length, so no table is
    /// kept per key: another client's write, a truncated value or one meant for
    /// another key fails (`verify_failed`). It cannot tell this run's latest
    /// write of a key from an earlier one. After a full preload with no
    /// `delete` in the mix and no `--expiry`, a checked get that misses is a
    /// `verify_misses`; so is one in memaslap's task window (`--window`) of a
    /// key whose set this connection saw STORED before the get went out
    /// (evicted or not, as memaslap counts). Refused with `append`, `prepend`,
    /// `incr` or `decr` in the mix.
    #[arg(long, value_name = "R")]
    pub verify: Option<f64>,

    /// Share of sets with a short expiry, read back to check it (memaslap's
    /// --exp_verify).
    ///
    /// memaslap's `-e`: a share R of each connection's sets (counted, so R
    /// within one set) carries a short expiry (`--exp-verify-ttl`), each on a
    /// fresh key apart from the key space, all run long; and a share R of gets
    /// reads one back. 16 of them per connection (or in an open loop per worker
    /// and server) are kept to read, spread over ages up to 2 s past the
    /// expiry, so that gets land on both sides of it. Judged outside the server
    /// clock's second either side of the expiry: a miss before it is
    /// `unexpired_unget`, a hit after it `expired_get`.
    #[arg(long, alias = "exp_verify", value_name = "R")]
    pub exp_verify: Option<f64>,

    /// The expiry of --exp-verify's sets, s [default: --expiry, else 2;
    /// memaslap's is 60].
    ///
    /// The expiry of `--exp-verify`'s sets, s (default `--expiry`, else 2;
    /// `mcbench memaslap -e` sends memaslap's 60)
    #[arg(
        hide_short_help = true,
        long,
        value_name = "S",
        requires = "exp_verify"
    )]
    pub exp_verify_ttl: Option<u32>,

    /// Print the first failed checks: key, expected, got (memaslap's -b).
    ///
    /// With `--verify`/`--exp-verify`: print the first 10 failed checks (key,
    /// expected and got); memaslap's `-b` prints them in its layout.
    #[arg(hide_short_help = true, long)]
    pub verbose: bool,

    /// Failed --verify/--exp-verify checks are a warning, not a failed run
    /// (exit 0 instead of 1).
    ///
    /// Failed checks are a warning (`CHECKS FAILED`) and the run exits 0;
    /// without it a run whose checks failed exits 1, its report written
    /// (memaslap's personality too)
    #[arg(hide_short_help = true, long)]
    pub tolerate_check_failures: bool,
}

impl CheckArgs {
    /// The spec's checks, as the flags say (none when not asked).
    pub(super) fn spec(&self) -> CheckSpec {
        CheckSpec {
            verify: self.verify.unwrap_or(0.0),
            exp_verify: self.exp_verify.unwrap_or(0.0),
            exp_verify_ttl: self.exp_verify_ttl,
            verbose: self.verbose,
            tolerate_check_failures: self.tolerate_check_failures,
        }
    }
}
