//! Measurement: recorders on the hot path, snapshots per interval, their
//! lossless merge, and the client's own CPU use.

pub mod batches;
mod checks;
mod collector;
mod connections;
pub mod cpu;
mod error;
mod error_class;
mod hdr;
pub mod parts;
mod recorder;
mod send_gaps;
mod servers;

pub use checks::CheckCounts;
pub use collector::{Collected, Collector, IntervalOp, IntervalServer, IntervalSummary, Snapshot};
pub use connections::{ConnError, ConnStats, Sizes};
pub use error::StatsError;
pub use error_class::ErrorClass;
pub use hdr::Hdr;
pub use recorder::{
    max_us, new_histogram, quantile_us, MissWindow, OpRecorder, Recorder, Sample, HIGHEST_NS,
};
pub use send_gaps::SendGaps;
pub use servers::{ReplicaReads, ServerRecorder};
