//! Why a run's spec is refused: a flag's value that does not parse or is
//! out of range, flags that do not go together, a server address that is
//! malformed or does not resolve. Found before any traffic, so most end as
//! usage errors (exit 2); a name that does not resolve is the network's
//! answer, and its caller makes it a failed run.

use std::net::IpAddr;

/// A spec, or one of its flags, refused.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A value, or flags together, that the run refuses: one fixed
    /// sentence naming the flags and the way out.
    #[error("{0}")]
    Refused(&'static str),
    /// A one-off refusal that names the values given.
    #[error("{0}")]
    Invalid(String),
    #[error("{0} must be at least 1")]
    AtLeastOne(&'static str),
    /// A queue depth (`--depth`, `--measure-depth`) out of range.
    #[error("{0} must be between 1 and 65536")]
    Depth(&'static str),
    #[error("{flag} must be between {min} and {max}, got {got}")]
    Between {
        flag: &'static str,
        min: String,
        max: String,
        got: String,
    },
    /// `flag` beside a flag (or a server) it cannot work with.
    #[error("{flag} does not go with {what}")]
    NotWith { flag: &'static str, what: String },
    /// `flag` without a server named: the embedded one cannot serve it.
    #[error("{flag} needs --server: {why}")]
    NeedsServer {
        flag: &'static str,
        why: &'static str,
    },
    #[error("{flag} must be at most {max}, got {got}")]
    AtMost {
        flag: &'static str,
        max: String,
        got: String,
    },
    #[error("{flag} does not go with --num-conns: {why} (drop one of them)")]
    WithChurn {
        flag: &'static str,
        why: &'static str,
    },
    #[error("invalid duration '{0}': expected e.g. 30s, 2m, 1h, 500ms")]
    Duration(String),
    #[error("invalid duration '{text}': unknown unit '{unit}' (use ns, us, ms, s, m or h)")]
    DurationUnit { text: String, unit: String },
    #[error("invalid duration '{0}': out of range")]
    DurationRange(String),
    #[error("invalid count '{0}': expected e.g. 10000, 10k, 1M")]
    Count(String),
    #[error("invalid rate '{0}': expected ops/s, e.g. 20000, 20k, 1.5M")]
    Rate(String),
    /// twemperf's `--rate` syntax, refused for `why`.
    #[error(
        "invalid rate '{text}': {why} (twemperf's syntax: R per second, 0 for one after \
         another, or dT, eT, uT1,T2 with intervals in seconds)"
    )]
    Gaps { text: String, why: &'static str },
    #[error("invalid buffer size '{0}': between 1 byte and 1 GiB")]
    Buffer(String),
    #[error("'{0}' is not a precision target: give PERCENTILE:HALF-WIDTH, like p99.9:5%")]
    PrecisionTarget(String),
    #[error("--trace-speed is a factor such as 2x or 0.5x, not {0:?}")]
    TraceSpeed(String),
    #[error("an empty server address (-s '' or MEMCACHED_SERVERS='')")]
    EmptyAddress,
    #[error("'{0}' names no socket path (unix:/path/to/socket)")]
    NoSocketPath(String),
    #[error("'{0}' is no server address (HOST:PORT, [IPv6]:PORT, udp:..., unix:/path)")]
    NotAnAddress(String),
    #[error("cannot resolve server '{host}': {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot resolve server '{host}': no address")]
    NoAddress { host: String },
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    #[error(transparent)]
    Host(#[from] crate::os::FdLimitError),
    #[error("invalid source address '{0}': expected an IP address such as 127.0.0.2")]
    SourceAddrText(String),
    #[error("--source-addrs {ip}: not an address of this host ({source})")]
    SourceAddr {
        ip: IpAddr,
        #[source]
        source: std::io::Error,
    },
}

impl SpecError {
    /// `flag` outside `min..=max`, given `got`.
    pub fn between(
        flag: &'static str,
        min: impl ToString,
        max: impl ToString,
        got: impl ToString,
    ) -> SpecError {
        SpecError::Between {
            flag,
            min: min.to_string(),
            max: max.to_string(),
            got: got.to_string(),
        }
    }

    /// `flag` above its largest value `max`, given `got`.
    pub fn at_most(flag: &'static str, max: impl ToString, got: impl ToString) -> SpecError {
        SpecError::AtMost {
            flag,
            max: max.to_string(),
            got: got.to_string(),
        }
    }
}

/// Equal when they read the same (an I/O error has no equality of its
/// own): for tests that compare results.
impl PartialEq for SpecError {
    fn eq(&self, other: &SpecError) -> bool {
        self.to_string() == other.to_string()
    }
}
