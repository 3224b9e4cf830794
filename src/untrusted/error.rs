//! What can be wrong with an input read from outside: a file that cannot
//! be read or is not what it must be, a histogram that does not decode.

use std::path::PathBuf;

/// A file named on the command line or in a result, refused.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a regular file")]
    NotRegular { path: PathBuf },
    #[error("{path} is not text: not {what}")]
    NotText { path: PathBuf, what: String },
    #[error("{path} is larger than {bound}: not {what}")]
    TooLarge {
        path: PathBuf,
        bound: String,
        what: String,
    },
    #[error(
        "{path}: its mode {mode:04o} lets group or others read it; {what} must be the owner's alone: chmod 600 {path}"
    )]
    NotPrivate {
        path: PathBuf,
        mode: u32,
        what: String,
    },
}

/// A histogram's bytes (HdrHistogram V2, compressed) that do not decode
/// within our bounds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HistogramError {
    #[error("a histogram is not in the HdrHistogram V2 compressed encoding")]
    NotV2,
    #[error("a histogram ends inside its header")]
    HeaderCut,
    #[error(
        "a histogram declares {declared} compressed bytes and holds {held} (compressed length)"
    )]
    CompressedLength { declared: usize, held: usize },
    #[error("a histogram whose counts add up past 2^64")]
    CountOverflow,
    #[error("a histogram's counts end inside a number")]
    NumberCut,
    /// The zlib stream's own error, as flate2 words it.
    #[error("a histogram does not inflate: {0}")]
    Inflate(String),
    #[error(
        "a histogram inflates to more than {max} bytes, more than any of ours holds (payload)"
    )]
    TooLarge { max: usize },
    #[error("a histogram is cut short (its compressed stream does not end)")]
    CutShort,
    #[error("a histogram ends inside its V2 header")]
    V2HeaderCut,
    #[error("a histogram's inner cookie is not V2's")]
    InnerCookie,
    #[error(
        "a histogram declares a payload of {declared} bytes and holds {held} (payload length)"
    )]
    PayloadLength { declared: usize, held: usize },
    #[error("a histogram declares {digits} significant digits, more than ours ({max})")]
    Digits { digits: u32, max: u32 },
    #[error("a histogram declares the range {lowest}..{highest}, outside ours (1..{max})")]
    Range { lowest: u64, highest: u64, max: u64 },
}
