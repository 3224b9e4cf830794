//! What can be wrong with kept histograms and the series built of them
//! (from a saved result or an agent, both untrusted).

use crate::untrusted::HistogramError;

/// A histogram, a batch series or an interval that cannot be a run's.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    #[error("a kept histogram does not decode: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
    #[error("a kept histogram is out of range: {0:?}")]
    Range(hdrhistogram::AdditionError),
    #[error("a histogram is not base64: {0}")]
    NotBase64(#[source] base64::DecodeError),
    #[error("{latency} and {service} slots where an interval has {slots}", slots = super::batches::SLOTS)]
    SlotCount { latency: usize, service: usize },
    #[error("its {what} slots hold {sum} requests for a count of {count}")]
    SlotSum {
        what: &'static str,
        sum: u64,
        count: u64,
    },
    #[error("an interval short of slots")]
    ShortOfSlots,
    #[error("batch counts that overflow")]
    CountOverflow,
    #[error("{latency} latency batches beside {service} of service time")]
    BatchLengths { latency: usize, service: usize },
    #[error("{batches} batches, where a run keeps at most {max}")]
    TooManyBatches { batches: usize, max: usize },
    #[error("batches {0} s long")]
    BatchLength(f64),
    #[error("its {what} batches hold {sum} requests for a count of {count}")]
    BatchSum {
        what: &'static str,
        sum: u64,
        count: u64,
    },
    #[error("latency parts: {got} histograms where there are {parts} parts")]
    PartCount { got: usize, parts: usize },
    #[error("latency parts: histograms of {counts:?} requests for {count} answered")]
    PartRequests { counts: Vec<u64>, count: u64 },
    #[error("interval {index}: a CPU time of {secs} s")]
    CpuTime { index: u64, secs: f64 },
    #[error("interval {index}: an error class {class:?} mcbench does not have")]
    ErrorClass { index: u64, class: String },
    #[error("interval {index}: {op}: {source}")]
    OpParts {
        index: u64,
        op: String,
        #[source]
        source: Box<StatsError>,
    },
}
