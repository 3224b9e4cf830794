//! Why a layer of flags beneath the command line is refused: a run file,
//! a memaslap config file or a profile. Each message names the file (and
//! the line or key) that holds the fault.

use crate::untrusted::FileError;

/// A config file or a profile refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    File(#[from] FileError),
    /// A run file that is not TOML (toml's own message).
    #[error("{origin}: {message}")]
    Toml { origin: String, message: String },
    #[error("{origin}: '{key}' cannot be set in a run file")]
    NotInRunFile { origin: String, key: String },
    /// A run file's key whose value the flag refuses (clap's first line).
    #[error("{origin}: key '{key}': {why}")]
    BadValue {
        origin: String,
        key: String,
        why: String,
    },
    #[error("{origin}: '{key}' must be a string, number or boolean")]
    NotScalar { origin: String, key: String },
    #[error("profile mcperf-3 names its percentile (p99.9) but no bound: give --slo p99.9:BOUND")]
    NoBound,
    #[error("profile '{0}' states no latency objective: give --slo PERCENTILE:BOUND")]
    NoSlo(String),
    #[error("profile 'ycsb-e' needs range scans, which memcached does not have")]
    RangeScans,
    #[error("unknown profile '{name}'; profiles: {names}")]
    UnknownProfile { name: String, names: String },
    #[error(transparent)]
    Slo(#[from] crate::result::ResultError),
    /// A memaslap config row (`at`: the file, the line and its text).
    #[error("{at}: {source}")]
    Row {
        at: String,
        #[source]
        source: Box<ConfigError>,
    },
    #[error("sizes must be {min} <= START <= END <= {max}")]
    Sizes { min: u64, max: u64 },
    #[error("the proportion must be between 0 and 1")]
    Proportion,
    #[error(
        "a third cmd row: memaslap's table holds two (set, get) and would \
         overrun it"
    )]
    ThirdCmd,
    #[error("{0}: no configuration in it (memaslap refuses such a file)")]
    Empty(String),
    #[error("{origin}: the {what} proportions sum to {total}, not 1")]
    Total {
        origin: String,
        what: &'static str,
        total: f64,
    },
}

impl ConfigError {
    /// This error, found at `at` (a memaslap config row).
    pub fn at(self, at: impl Into<String>) -> ConfigError {
        ConfigError::Row {
            at: at.into(),
            source: Box::new(self),
        }
    }
}
