//! Why a seed tool's flags (memaslap's, mutilate's, twemperf's,
//! memcache-perf's) cannot be translated: a value in the tool's syntax
//! that does not read, a flag mcbench does not support, flags that do not
//! go together. All usage errors (exit 2), worded as the tool's flags.

use std::path::PathBuf;

/// A seed tool's flags refused.
#[derive(Debug, thiserror::Error)]
pub enum PersonalityError {
    /// Flags, or a value, refused in one fixed sentence.
    #[error("{0}")]
    Refused(&'static str),
    /// A one-off refusal that names the values given.
    #[error("{0}")]
    Invalid(String),
    #[error("{flag} is not supported: {why}")]
    Unsupported { flag: String, why: String },
    #[error("invalid time '{0}': expected N with s, m, h or d (2m)")]
    Time(String),
    #[error("invalid number '{0}': expected N, NK or NM (10k)")]
    Number(String),
    #[error("invalid proportion '{0}': expected 0..1 (0.05)")]
    Proportion(String),
    #[error("invalid sizes '{0}': expected [D]R1[,R2] with D d, u or e (d1, u1,16, e100)")]
    Sizes(String),
    #[error("-F/--cfg_cmd: {0}")]
    ConfigFile(#[source] crate::untrusted::FileError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    #[error(
        "agent mode needs a token shared by the master and its agents, which mutilate does not have: \
         write one line of 16 or more characters to {0} on every machine, or name such a file in MCBENCH_TOKEN_FILE"
    )]
    NoToken(PathBuf),
}

/// Equal when they read the same (a file error has no equality of its
/// own): for tests that compare results.
impl PartialEq for PersonalityError {
    fn eq(&self, other: &PersonalityError) -> bool {
        self.to_string() == other.to_string()
    }
}
