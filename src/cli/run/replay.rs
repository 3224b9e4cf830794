//! `mcbench run`'s flags under "Trace replay".

use super::{CliError, KeyArgs, WorkloadArgs};
use crate::spec::TraceSpec;
use crate::trace::{Record, ScheduleJudge, TraceFormat, TraceReader, Verdict};
use crate::workload::Distribution;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A trace replayed instead of a generated workload: its file, format, speed and clients.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Trace replay")]
pub struct ReplayArgs {
    /// Replay a trace file: its keys, ops, sizes and timestamps.
    ///
    /// Replay a trace file instead of the mix: its keys (as given, without
    /// --key-prefix), ops, value sizes and (unless --trace-timing ignore) its
    /// timestamps.
    ///
    /// zstd-compressed files are read as they stream. Runs until the trace ends
    /// unless -t or -x cuts it.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "read_file",
        group = "trace_source"
    )]
    pub trace: Option<PathBuf>,

    /// The trace's format: twitter, oracle-general, oracle-general-opns, lcs or meta-kv.
    ///
    /// The trace's format: twitter, oracle-general, oracle-general-opns,
    /// lcs or meta-kv [default: from the lcs magic, the file name, or the
    /// first line's fields]
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub trace_format: Option<crate::trace::TraceFormat>,

    /// Replay the trace's timestamps this many times faster (2x, 0.5x).
    #[arg(long, value_name = "S", value_parser = crate::spec::parse_speed, requires = "trace")]
    pub trace_speed: Option<f64>,

    /// replay: send at the trace's timestamps (open loop, latency from
    /// each request's intended time); ignore: the run's own --rate, or a
    /// closed loop without it (the mutilate fork's way).
    #[arg(hide_short_help = true, long, value_name = "replay|ignore", value_parser = ["replay", "ignore"], requires = "trace")]
    pub trace_timing: Option<String>,

    /// Send each trace client's requests, in order, on one connection (client
    /// id modulo the run's connections).
    ///
    /// Closed loop only.
    #[arg(hide_short_help = true, long, requires = "trace_source")]
    pub trace_clients: bool,

    /// Keys to send, in a file's order (the mutilate fork's --read_file).
    ///
    /// Keys to send, read from a file in order instead of drawn (the mutilate
    /// fork's --read_file): lines of `key`, `key,value size`, or the fork's
    /// `time,app,req,key,value size` (req 1 get, 2 set); ops not given come
    /// from the mix.
    ///
    /// Runs at --rate or closed loop until the file ends, unless -t or -x cuts
    /// it.
    #[arg(long, alias = "read_file", value_name = "FILE", group = "trace_source")]
    pub read_file: Option<PathBuf>,
}

/// A trace to replay, and its speed if it is replayed at its timestamps.
pub(super) type Replay = (TraceSpec, Option<f64>);

impl ReplayArgs {
    /// Whether a trace is named (`--trace` or `--read-file`).
    pub(super) fn given(&self) -> bool {
        self.trace.is_some() || self.read_file.is_some()
    }

    /// `--trace` or `--read-file`: the file opened to find its format (a
    /// file that cannot be read is a usage error, before any traffic), the
    /// generated workload's flags refused beside it (`generated`), and a
    /// timed replay's schedule judged within `time_limit`.
    pub(super) fn replay(
        &self,
        generated: (&KeyArgs, &WorkloadArgs),
        time_limit: Option<Duration>,
    ) -> Result<Option<Replay>, CliError> {
        let (path, format) = match (&self.trace, &self.read_file) {
            (Some(path), _) => (path, self.trace_format),
            (None, Some(path)) => (path, Some(TraceFormat::Keys)),
            (None, None) => return Ok(None),
        };
        let mut reader = open_regular(path, format)?;
        let format = reader.format();
        refuse_generated(generated, format)?;
        let speed = self.speed(format)?;
        // The first record, read now: a malformed one, or one without the
        // timestamp a replay needs, is refused before any traffic.
        let mut first = Record::default();
        let any = reader.next(&mut first).map_err(|source| CliError::Record {
            path: path.clone(),
            source,
        })?;
        if speed.is_some() && any && first.time_s.is_none() {
            return Err(CliError::Untimed(path.clone()));
        }
        if let (Some(speed), Some(t)) = (speed, first.time_s) {
            judge_schedule(&mut reader, t, speed, time_limit).map_err(|e| match e {
                Judged::Record(source) => CliError::Record {
                    path: path.clone(),
                    source,
                },
                Judged::Refused(why) => CliError::Schedule {
                    path: path.clone(),
                    why,
                },
            })?;
        }
        let trace = TraceSpec {
            path: path.clone(),
            format,
            clients: self.trace_clients,
            names_ops: reader.names_ops(),
        };
        Ok(Some((trace, speed)))
    }

    /// The replay's speed, if a trace of `format` is replayed at its
    /// timestamps.
    fn speed(&self, format: TraceFormat) -> Result<Option<f64>, CliError> {
        let ignore = self.trace_timing.as_deref() == Some("ignore");
        if ignore && self.trace_speed.is_some() {
            return Err(CliError::Refused(
                "--trace-speed sets the replay of timestamps; --trace-timing ignore uses none",
            ));
        }
        Ok((format.timed() && !ignore).then(|| self.trace_speed.unwrap_or(1.0)))
    }
}

/// The trace opened. It is read twice (here for its format and first
/// record, then by the replay), and once per run of a search or scan: not
/// a pipe.
fn open_regular(path: &Path, format: Option<TraceFormat>) -> Result<TraceReader, CliError> {
    if path.exists() && !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(CliError::TraceNotRegular(path.to_path_buf()));
    }
    Ok(TraceReader::open(path, format)?)
}

/// Why a timed replay's schedule was refused: a record that does not
/// read, or the judge's words.
enum Judged {
    Record(crate::trace::TraceError),
    Refused(String),
}

/// A timed replay's schedule, judged before any traffic from the
/// trace's first `PRESCAN_RECORDS` records (`first_s` is the first's
/// time): a gap over a day is refused without `--time-limit` (exit 2),
/// one out of proportion warned of. Past them the feed judges the
/// gaps as it reads (a refused one then fails the run).
fn judge_schedule(
    reader: &mut TraceReader,
    first_s: u64,
    speed: f64,
    time_limit: Option<Duration>,
) -> Result<(), Judged> {
    /// About a second of reading, for a text trace.
    const PRESCAN_RECORDS: u64 = 2_000_000;
    let mut judge = ScheduleJudge::default();
    judge.see(first_s);
    let mut rec = Record::default();
    let mut whole = false;
    for _ in 1..PRESCAN_RECORDS {
        if !reader.next(&mut rec).map_err(Judged::Record)? {
            whole = true;
            break;
        }
        if let Some(t) = rec.time_s {
            judge.see(t);
        }
    }
    match judge.verdict(speed, time_limit) {
        Verdict::Refuse(why) => Err(Judged::Refused(why)),
        Verdict::Warn(why) if whole => {
            crate::stderr_line!("mcbench: warning: {why}");
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The generated workload's flags have no meaning for a trace, whose keys
/// (and, but for `--read-file`, ops and value sizes) are its own: given,
/// they are refused rather than ignored.
fn refuse_generated(
    (keys, workload): (&KeyArgs, &WorkloadArgs),
    format: TraceFormat,
) -> Result<(), CliError> {
    let keys_file = format == TraceFormat::Keys;
    let given = [
        (!keys_file && workload.update.is_some(), "-u/--update"),
        (!keys_file && workload.mix.is_some(), "--mix"),
        // Twitter's misses state no size: -V gives it their fills.
        (
            !matches!(format, TraceFormat::Keys | TraceFormat::Twitter)
                && keys.value_size != Distribution::Fixed(200.0),
            "-V/--value-size",
        ),
    ];
    let flag = keys
        .shaping_flag()
        .or_else(|| given.iter().find(|(g, _)| *g).map(|(_, flag)| *flag));
    match flag {
        Some(flag) => Err(CliError::Shaping {
            flag,
            keys_only: keys_file,
        }),
        None => Ok(()),
    }
}
