//! Why agents cannot run a share: the master's or the agent's set-up
//! (the token, the control plane's TLS, its runtime), a run that cannot
//! be shared, a share an agent refuses; and why an agent's data is not
//! believed (it is then lost, never a number in the report).

use crate::spec::SpecError;
use crate::stats::StatsError;
use crate::untrusted::FileError;
use std::path::PathBuf;

/// The set-up of agents, or a share, refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// One fixed sentence: what agents cannot do, and why.
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("--token-file: {0}")]
    TokenFile(#[source] FileError),
    #[error("--token-file {path}: the token must be {why}")]
    Token { path: PathBuf, why: String },
    #[error("the token is not a valid header value")]
    TokenHeader,
    #[error("{flag}: {source}")]
    PemFile {
        flag: &'static str,
        #[source]
        source: FileError,
    },
    #[error("{flag} {path}: not a PEM file holding a {what}")]
    NotPem {
        flag: &'static str,
        path: PathBuf,
        what: &'static str,
    },
    #[error("cannot start the control plane's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error(
        "-c {connections} connections per server cannot be shared among {agents} agents: give at least one each"
    )]
    FewConnections { connections: usize, agents: usize },
    #[error("-x {ops} is too few requests to share among {agents} agents")]
    FewOps { ops: u64, agents: usize },
    /// Agent `agent`'s share (from 1), which the spec's checks refuse.
    #[error("agent {agent}'s share does not make a run: {source}")]
    Share {
        agent: usize,
        #[source]
        source: SpecError,
    },
    #[error(
        "this agent opens no path a master names: {0} is a unix socket on the agent's machine"
    )]
    UnixSocket(String),
    /// A share over one of the agent's limits (`flag` raises it).
    #[error(
        "the share asks for {given} {what}; this agent runs at most {limit} (mcbench agent {flag} raises it)"
    )]
    OverLimit {
        what: &'static str,
        given: String,
        flag: &'static str,
        limit: String,
    },
}

/// What an agent sent that does not add up.
#[derive(Debug, thiserror::Error)]
pub enum AgentDataError {
    #[error("{what} of {s} s, outside the {limit_s:.1} s the run has lasted")]
    OutsideRun {
        what: &'static str,
        s: f64,
        limit_s: f64,
    },
    /// `result::checked`'s refusal, escaped (the agent chose its text).
    #[error("{0}")]
    Unchecked(String),
    #[error(transparent)]
    Stats(#[from] StatsError),
    #[error("interval {index}: {op} holds {held} latencies for a count of {count}")]
    Count {
        index: u64,
        op: String,
        held: u64,
        count: u64,
    },
    /// Op `op` of interval `index`, whose histograms disagree.
    #[error("interval {index}: {op}: {source}")]
    Op {
        index: u64,
        op: String,
        #[source]
        source: StatsError,
    },
    #[error("its result does not parse: {0}")]
    Parse(#[source] serde_json::Error),
    #[error("it was stopped ({by}) {secs:.1} s into its share")]
    StoppedThere { by: String, secs: f64 },
    #[error("its result does not add up: {0}")]
    NotAddingUp(#[source] Box<AgentDataError>),
}
