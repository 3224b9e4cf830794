//! Trace files decoded into records: the Twitter cache-trace CSV, Meta's
//! KV cache CSV, libCacheSim's binary formats (oracleGeneral, its OpNS
//! variant, lcs v1–v8) and the mutilate fork's `--read_file` lines, plain
//! or zstd-compressed.
//!
//! A `TraceReader` streams one record at a time into a reused `Record`:
//! memory stays flat over a trace of any length. This module knows nothing
//! of timing, connections or wire formats; the engine's trace feed turns
//! records into a schedule.

mod binary;
mod error;
mod reader;
mod schedule;
mod text;

pub use error::{OpenError, RecordError};
pub use reader::TraceReader;
pub use schedule::{ScheduleJudge, Verdict};

use crate::workload::OpKind;
use std::fmt;

/// The formats a trace can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// `timestamp,key,key size,value size,client id,op,TTL` (Twitter).
    Twitter,
    /// 24-byte records: u32 time, u64 id, u32 size, i64 next access.
    OracleGeneral,
    /// 27-byte records: oracleGeneral with a u8 op and a u16 namespace.
    OracleGeneralOpns,
    /// libCacheSim's lcs: an 8,192-byte header, then v1–v8 records.
    Lcs,
    /// Meta's KV cache CSV, 2022 (5 columns) or 2024 (10 columns).
    MetaKv,
    /// `--read-file`: `key`, `key,value size`, or the mutilate fork's
    /// `time,app,req,key,value size`.
    Keys,
}

impl TraceFormat {
    pub const NAMES: &'static str = "twitter, oracle-general, oracle-general-opns, lcs, meta-kv";

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Twitter => "twitter",
            TraceFormat::OracleGeneral => "oracle-general",
            TraceFormat::OracleGeneralOpns => "oracle-general-opns",
            TraceFormat::Lcs => "lcs",
            TraceFormat::MetaKv => "meta-kv",
            TraceFormat::Keys => "keys",
        }
    }

    /// Whether records carry a timestamp the trace can be replayed by.
    pub fn timed(self) -> bool {
        !matches!(self, TraceFormat::Keys)
    }
}

impl std::str::FromStr for TraceFormat {
    type Err = OpenError;
    fn from_str(s: &str) -> Result<Self, OpenError> {
        Ok(match s {
            "twitter" => TraceFormat::Twitter,
            "oracle-general" | "oracleGeneral" => TraceFormat::OracleGeneral,
            "oracle-general-opns" | "oracleGeneralOpNS" => TraceFormat::OracleGeneralOpns,
            "lcs" => TraceFormat::Lcs,
            "meta-kv" => TraceFormat::MetaKv,
            _ => return Err(OpenError::UnknownFormat(s.into())),
        })
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a record asks the server to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceOp {
    /// An op sent as it is.
    Op(OpKind),
    /// The record names no op (oracleGeneral, lcs v1): an access, replayed
    /// as a get that sets the key when it misses.
    #[default]
    Access,
    /// The record names no op and the run's mix decides (`--read-file`
    /// keys without one).
    Mix,
    /// Nothing to send (op code 0): skipped and counted.
    Nop,
}

/// One decoded record. Its buffers are reused from record to record.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// The trace's clock, in seconds (`None`: the format has none).
    pub time_s: Option<u64>,
    pub op: TraceOp,
    /// The key as sent: given, cut or padded to its stated size; binary
    /// ids as 16 hex digits.
    pub key: Vec<u8>,
    /// Value size, bytes (`None`: not given, the run's `--value-size`).
    pub value_len: Option<u32>,
    /// Expiry the trace gives writes, s (0: none given).
    pub ttl: u32,
    /// The trace's client (Twitter's client id, a namespace or tenant).
    pub client: u32,
    /// How many requests the record stands for (Meta's op_count; else 1).
    pub repeat: u32,
    /// How many of them the traced cache answered with a hit, where the
    /// trace records it.
    pub hits: Option<u32>,
}

impl Record {
    fn clear(&mut self) {
        self.time_s = None;
        self.op = TraceOp::Access;
        self.key.clear();
        self.value_len = None;
        self.ttl = 0;
        self.client = 0;
        self.repeat = 1;
        self.hits = None;
    }
}

/// A record that cannot be read: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The line (text formats) or record (binary ones), from 1.
    pub at: u64,
    pub binary: bool,
    pub why: RecordError,
}

impl std::error::Error for TraceError {}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.binary { "record" } else { "line" };
        write!(f, "{unit} {}: {}", self.at, self.why)
    }
}

/// libCacheSim's op codes (`req_op_e`).
fn op_of_code(code: u8) -> Result<TraceOp, RecordError> {
    Ok(match code {
        0 => TraceOp::Nop,
        1 | 12 => TraceOp::Op(OpKind::Get),
        2 => TraceOp::Op(OpKind::Gets),
        3 | 13 | 14 => TraceOp::Op(OpKind::Set),
        4 => TraceOp::Op(OpKind::Add),
        // A cas needs the unique of an earlier gets, which the trace does
        // not hold: replayed as the set it is when it wins.
        5 => TraceOp::Op(OpKind::Set),
        6 => TraceOp::Op(OpKind::Replace),
        7 => TraceOp::Op(OpKind::Append),
        8 => TraceOp::Op(OpKind::Prepend),
        9 => TraceOp::Op(OpKind::Delete),
        10 => TraceOp::Op(OpKind::Incr),
        11 => TraceOp::Op(OpKind::Decr),
        _ => return Err(RecordError::OpCode(code)),
    })
}

/// The ops a trace of `format` can send (their histograms are kept).
pub fn ops_of(format: TraceFormat) -> &'static [OpKind] {
    use OpKind::*;
    match format {
        TraceFormat::OracleGeneral => &[Get, Fill],
        TraceFormat::MetaKv => &[Get, Set, Delete],
        TraceFormat::Keys => &[Get, Set],
        TraceFormat::Twitter | TraceFormat::OracleGeneralOpns | TraceFormat::Lcs => &[
            Get, Gets, Set, Add, Replace, Append, Prepend, Delete, Incr, Decr, Fill,
        ],
    }
}
