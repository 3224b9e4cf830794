//! Why the command line's flags are refused: a value that does not parse,
//! flags that do not go together, a trace that cannot be replayed as
//! asked. Found before any traffic: usage errors (exit 2).

use crate::placement::PlacementError;
use crate::spec::SpecError;
use crate::trace::{OpenError, TraceError};
use crate::workload::WorkloadError;
use std::path::PathBuf;

/// The most runs one scan may ask for.
pub const MAX_SCAN_POINTS: usize = 1000;

/// A flag, or flags together, refused.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Two flags that do not go together, in one fixed sentence naming
    /// both and what each does.
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Placement(#[from] PlacementError),
    #[error(transparent)]
    Trace(#[from] OpenError),
    /// clap's own refusal (a test's flags).
    #[error(transparent)]
    Clap(#[from] clap::Error),
    #[error("not a run")]
    NotARun,
    /// `--rates TEXT`, refused for `why`.
    #[error("--rates {text}: {why}")]
    Rates { text: String, why: &'static str },
    #[error("--rates {0}: give 1 to {MAX_SCAN_POINTS} rates")]
    RateCount(String),
    #[error("--rates {0} asks for more than {MAX_SCAN_POINTS} runs")]
    ScanPoints(String),
    #[error("'{0}' is not a share: give 2% or 0.02")]
    Share(String),
    #[error("--bracket must be above 0 and below 100%, got {0}")]
    Bracket(String),
    #[error("'{0}' is not a percentile: give numbers above 0 and at most 100, like 50,99,99.9")]
    Percentile(String),
    #[error("'{0}' is neither on nor off")]
    OnOff(String),
    #[error("--kernel-stamps takes on, off, all or 1/N (N from 1 to {max}), got '{given}'")]
    KernelStamps { given: String, max: u32 },
    #[error("invalid --affinity '{0}': expected CPU numbers like 0,2")]
    Affinity(String),
    #[error("--getq-freq is a percentage (0..100), got {0}")]
    GetqFreq(f64),
    /// A `--tls-*` flag given without `--tls`.
    #[error(
        "{0} is for the servers' TLS: add --tls (the agents' control plane is --agent-tls-ca)"
    )]
    TlsFlag(&'static str),
    /// A generated workload's flag beside a trace (a `--read-file` key
    /// list brings only its keys).
    #[error(
        "{flag} shapes the generated workload; a trace brings its own keys{}: drop it",
        if *.keys_only { "" } else { ", ops and value sizes" }
    )]
    Shaping { flag: &'static str, keys_only: bool },
    #[error(
        "{0} is not a regular file: a trace is read once for its format and again to replay it; save it to a file first"
    )]
    TraceNotRegular(PathBuf),
    #[error("{0}: its records have no timestamps to replay: add --trace-timing ignore")]
    Untimed(PathBuf),
    /// The trace at `path`, whose first records do not read.
    #[error("{path}: {source}")]
    Record {
        path: PathBuf,
        #[source]
        source: TraceError,
    },
    /// A timed replay's schedule refused (the judge's words).
    #[error("{path}: {why}")]
    Schedule { path: PathBuf, why: String },
}
