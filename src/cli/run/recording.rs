//! `mcbench run`'s flags under "Outputs".

use super::parse_on_off;
use crate::cli::CliError;
use crate::spec::units::parse_duration;
use crate::spec::RecordingSpec;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// What the run records beside the exports (`OutputArgs`): live lines, its label, every request's sample, the kernel's stamps, and repeats.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Outputs")]
pub struct RecordingArgs {
    /// Print a live line per interval on stderr (1s, 500ms).
    ///
    /// A live line per interval on stderr; otherwise a progress bar on a
    /// terminal.
    #[arg(value_name = "D", short = 'i', long, value_parser = parse_duration)]
    pub interval: Option<Duration>,

    /// Name the run in reports (default: its servers).
    ///
    /// Name the run in reports: the HTML page's legends and headline,
    /// `report` and `compare` of several runs (default: its servers).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub label: Option<String>,

    /// Write every measured request to FILE, tab-separated (docs/samples.md).
    ///
    /// Write every measured request (intended send, op, latency, service
    /// time, reply) to FILE, tab-separated (docs/samples.md).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// With --save: the share of requests written (0..1), for high rates.
    #[arg(hide_short_help = true, long, value_name = "R", requires = "save")]
    pub save_rate: Option<f64>,

    /// Take latencies apart by the kernel's stamps: on, off, all or 1/N.
    ///
    /// Take latencies apart by the kernel's own stamps: `all` stamps every
    /// write, `1/N` one write in N drawn at random (seeded by `--seed` and
    /// the connection), `on` the default sample (today every write), `off`
    /// none. By default on, except in a closed loop at depth 1, where
    /// reading a transmit stamp back after every request costs 16-24 % more
    /// client CPU per request, and as much throughput with one thread (at
    /// depth 16, 5-12 % more; at 20k ops/s open loop, 8-10 % more: two runs
    /// in `bench/README.md`); a sample reads the error queue only after the
    /// writes it stamps, which saved 1-5 % of that (the rest is the answers'
    /// receive stamps). The kernel stamps when a stamped write's last byte was
    /// transmitted (`SO_TIMESTAMPING`, software, numbered by byte) and when
    /// each answer's last byte was received, and every output splits the
    /// stamped requests' latency into client queue (intended send to the
    /// send call), send path (to the transmit stamp), network and server (to
    /// the receive stamp) and client receive (to the answer parsed; nothing
    /// where answers are timed by their stamp); the four add up to each
    /// request's latency, and the report says how many requests were
    /// stamped. The open loop's send lag is then the transmit stamp less the
    /// intended time (less any wait for a free connection), of the stamped
    /// requests, so it holds the client's own send path; with a sample, the
    /// send gaps are timed at the send calls. TCP without TLS only: over
    /// TLS, UDP, unix sockets and `--num-conns` the parts are left out and
    /// the report says why.
    #[arg(hide_short_help = true, long, value_name = "on|off|all|1/N", value_parser = parse_kernel_stamps)]
    pub kernel_stamps: Option<KernelStamps>,

    /// Run the same configuration N times and keep every run
    ///
    /// Each run opens fresh connections (and starts a fresh memcached when
    /// mcbench starts one). Prints each figure's median over the runs with
    /// its 95 % bootstrap interval; `--json` writes the set (`mcbench
    /// compare` of two sets gives each change with its interval and the A/A
    /// noise floor), `--html` overlays the runs.
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub repeat: Option<u32>,

    /// With --repeat: a shell command run before each run but the first
    /// (restart the server, drop caches); a failure stops the set.
    #[arg(hide_short_help = true, long, value_name = "CMD", requires = "repeat")]
    pub between: Option<String>,
}

impl RecordingArgs {
    /// The spec's recording part: live lines only with `-i`, whose
    /// interval is otherwise 1 s.
    pub(super) fn spec(&self) -> RecordingSpec {
        RecordingSpec {
            label: self.label.clone(),
            interval: self.interval.unwrap_or(Duration::from_secs(1)),
            live: self.interval.is_some(),
            save_rate: self.save_rate(),
            kernel_stamps: self.kernel_stamps.map(|k| k.on),
            stamp_sample: self.kernel_stamps.and_then(|k| k.every),
        }
    }

    /// The share of requests `--save` writes, with it.
    pub(super) fn save_rate(&self) -> Option<f64> {
        self.save.as_ref().map(|_| self.save_rate.unwrap_or(1.0))
    }
}

/// `--kernel-stamps`: whether the kernel stamps, and of how many writes
/// one where it was said (`all`, `1/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelStamps {
    pub on: bool,
    pub every: Option<u32>,
}

fn parse_kernel_stamps(text: &str) -> Result<KernelStamps, CliError> {
    let max = crate::spec::MAX_STAMP_EVERY;
    let refused = || CliError::KernelStamps {
        given: text.to_string(),
        max,
    };
    let t = text.trim().to_ascii_lowercase();
    let every = match t.as_str() {
        "all" => Some(1),
        _ => match t.strip_prefix("1/") {
            Some(n) => Some(
                n.parse::<u32>()
                    .ok()
                    .filter(|n| (1..=max).contains(n))
                    .ok_or_else(refused)?,
            ),
            None => None,
        },
    };
    match every {
        Some(_) => Ok(KernelStamps { on: true, every }),
        None => parse_on_off(&t)
            .map(|on| KernelStamps { on, every: None })
            .map_err(|_| refused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_stamps_take_a_sample_or_all_or_on_and_off() {
        let k = |t| parse_kernel_stamps(t).map(|k| (k.on, k.every));
        assert_eq!(k("on").unwrap(), (true, None));
        assert_eq!(k("off").unwrap(), (false, None));
        assert_eq!(k("all").unwrap(), (true, Some(1)));
        assert_eq!(k("1/8").unwrap(), (true, Some(8)));
        assert_eq!(k("1/1").unwrap(), (true, Some(1)));
        for bad in ["1/0", "1/x", "2/8", "1/65537", "some", ""] {
            assert!(k(bad).is_err(), "{bad}");
        }
    }
}
