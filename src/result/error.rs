//! What can be wrong with a result read back (a saved file, an agent's)
//! or with results put together (merged, compared, put on a curve).

use super::SCHEMA;
use crate::stats::StatsError;
use crate::untrusted::FileError;
use std::path::PathBuf;

/// A result refused, or results that cannot be put together.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// What was wrong with the file at `path`.
    #[error("{path}: {source}")]
    In {
        path: PathBuf,
        #[source]
        source: Box<ResultError>,
    },
    #[error("not an mcbench result (no \"schema\" field)")]
    NoSchema,
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error(
        "schema {0}, but this mcbench reads {SCHEMA}; results of schema \
         mcbench.run/1 kept no histograms and cannot be rendered again"
    )]
    OldSchema(String),
    #[error("schema {0}, but this mcbench reads {SCHEMA}")]
    Schema(String),
    #[error("not a valid {SCHEMA} result: {0}")]
    NotValid(#[source] serde_json::Error),
    #[error("not a valid {schema} set: {source}", schema = super::RUN_SET_SCHEMA)]
    NotValidSet {
        #[source]
        source: serde_json::Error,
    },
    #[error("a set of runs without \"runs\"")]
    SetWithoutRuns,
    #[error("a set of no runs")]
    EmptySet,
    /// Run `index` (from 1) of a set.
    #[error("run {index}: {source}")]
    Run {
        index: usize,
        #[source]
        source: Box<ResultError>,
    },
    #[error("its spec: {0}")]
    Spec(#[source] crate::spec::SpecError),
    #[error("duration_s: {0} s is no run's length")]
    Duration(f64),
    #[error("{prefix}total: a count of {count} where its ops count {sum}")]
    TotalCount {
        prefix: &'static str,
        count: u64,
        sum: u64,
    },
    /// What was wrong with one op (`prefix` names its group: "measure.").
    #[error("{prefix}{op}: {source}")]
    Op {
        prefix: &'static str,
        op: String,
        #[source]
        source: Box<ResultError>,
    },
    #[error("an op mcbench does not send")]
    UnknownOp,
    #[error("an op {0:?} mcbench does not send")]
    UnknownOpNamed(String),
    #[error("{count} requests in {secs:.1} s")]
    TooManyRequests { count: u64, secs: f64 },
    #[error("{ok} answered of {count} sent")]
    OkPastCount { ok: u64, count: u64 },
    #[error("interval {index}: {source}")]
    Interval {
        index: u64,
        #[source]
        source: Box<ResultError>,
    },
    #[error("{what} of {secs} s")]
    IntervalTime { what: &'static str, secs: f64 },
    #[error("{what} holds {held} values for a count of {count}")]
    Holds {
        what: &'static str,
        held: u64,
        count: u64,
    },
    #[error("{hits} hits and {misses} misses for {count} requests")]
    Keys { hits: u64, misses: u64, count: u64 },
    #[error("{what} says {shown}, where its histogram gives {kept}")]
    Figure { what: String, shown: f64, kept: f64 },
    #[error("latency parts: {names:?} where the parts are {parts:?}", parts = crate::stats::parts::PART_NAMES)]
    PartNames { names: Vec<String> },
    #[error("latency parts: {requests} requests, histograms of {held}")]
    PartRequests { requests: u64, held: u64 },
    #[error("latency parts: band {0} does not fit")]
    Band(u32),
    #[error("latency parts: bands of {banded} requests for {requests}")]
    Banded { banded: u64, requests: u64 },
    #[error("fewer histograms than counted")]
    FewerHistograms,
    #[error("nothing to merge")]
    NothingToMerge,
    #[error(
        "cannot merge runs with intervals of {0:?} and {1:?}: their time series do not line up"
    )]
    Intervals(std::time::Duration, std::time::Duration),
    /// A signal stopped a merge between two intervals.
    #[error("{}", super::merge::STOPPED)]
    Stopped,
    #[error("'{0}' is not an SLO: give PERCENTILE:BOUND, like p99:1ms or 99.9:500us")]
    NotSlo(String),
    #[error("the SLO's percentile must be above 0 and below 100, got {0}")]
    SloPercentile(f64),
    #[error("the SLO's bound must be above 0, got '{0}'")]
    SloBound(String),
}

impl ResultError {
    /// This error, as found in the file at `path`.
    pub fn in_file(self, path: &std::path::Path) -> ResultError {
        ResultError::In {
            path: path.into(),
            source: Box::new(self),
        }
    }
}
