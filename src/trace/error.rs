//! What can be wrong with a trace: the file (unreadable, of no format we
//! can tell) or one of its records (at line or record N, and why).

use super::TraceFormat;
use std::path::PathBuf;

/// Why one record (a line of a text format, a packed record of a binary
/// one) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("{what} is not a whole number: {field:?}")]
    NotNumber { what: &'static str, field: String },
    #[error("{0} is too large")]
    TooLarge(&'static str),
    #[error("the key is empty")]
    EmptyKey,
    #[error("the key holds byte {0:#04x}, which memcached keys cannot")]
    KeyByte(u8),
    #[error("{what} has {want} comma-separated fields; this line has {got}")]
    FieldCount {
        what: &'static str,
        want: usize,
        got: usize,
    },
    #[error("unknown operation {0:?}")]
    TwitterOp(String),
    #[error("a Meta KV line has 5 (2022) or 10 (2024) comma-separated fields; this one has {0}")]
    MetaFields(usize),
    #[error("unknown op {0:?}: GET, GET_LEASE, SET or DELETE")]
    MetaOp(String),
    #[error("op_count {count} is over {max}")]
    OpCount { count: u32, max: u32 },
    #[error("req is 1 (get) or 2 (set), not {0:?}")]
    Req(String),
    #[error(
        "a key file line is `key`, `key,value size` or `time,app,req,key,value size`; this one has {0} fields"
    )]
    KeyFields(usize),
    #[error("unknown op code {0}")]
    OpCode(u8),
    #[error("lcs version {0} is unknown (1 to 8 are)")]
    LcsVersion(u64),
    #[error("an lcs trace starts with an {want}-byte header; the file has {got} bytes")]
    LcsShort { want: usize, got: usize },
    #[error("not an lcs trace: its header's magic numbers are wrong")]
    LcsMagic,
    #[error("the trace ends inside a record ({got} of {want} bytes)")]
    Cut { got: usize, want: usize },
    #[error("a line longer than {0} bytes")]
    LongLine(usize),
    /// The I/O error's text: a record error stays cheap to clone and
    /// compare.
    #[error("{0}")]
    Read(String),
}

/// A trace that cannot be opened or started.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    File(#[from] crate::untrusted::FileError),
    /// What was wrong with the trace at `path`.
    #[error("{path}: {source}")]
    In {
        path: PathBuf,
        #[source]
        source: Box<OpenError>,
    },
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    #[error("zstd: {0}")]
    Zstd(#[source] std::io::Error),
    /// Reading the header or the first line failed.
    #[error("{0}")]
    Head(#[source] std::io::Error),
    #[error(transparent)]
    Header(#[from] RecordError),
    #[error("unknown trace format {0:?}: use one of {names}", names = TraceFormat::NAMES)]
    UnknownFormat(String),
    #[error(
        "cannot tell the trace's format from its name or first line: give --trace-format ({names})",
        names = TraceFormat::NAMES
    )]
    Undetected,
}
