//! Per-server counts of a run with several servers: where its keys sent
//! the load, and how each server answered.

use hdrhistogram::Histogram;

/// Per-server histograms keep 2 significant digits (1 % resolution):
/// about 40 KB each, against 350 KB at the run's 3, in every recorder.
const SIGFIGS: u8 = 2;
const HIGHEST_NS: u64 = 3_600_000_000_000;

#[derive(Debug, Clone)]
pub struct ServerRecorder {
    /// Intended send → answer, ns, of every answered request.
    pub latency: Histogram<u64>,
    pub hits: u64,
    pub misses: u64,
    /// Answers that were error replies (counted in `latency` too, and in
    /// `failures`): never throughput.
    pub error_replies: u64,
    /// Failed requests (error replies, lost, timed out, no connection).
    pub failures: u64,
}

impl Default for ServerRecorder {
    fn default() -> Self {
        ServerRecorder {
            latency: Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIGS)
                .expect("static histogram bounds are valid"),
            hits: 0,
            misses: 0,
            error_replies: 0,
            failures: 0,
        }
    }
}

impl ServerRecorder {
    pub fn reset(&mut self) {
        self.latency.reset();
        self.hits = 0;
        self.misses = 0;
        self.error_replies = 0;
        self.failures = 0;
    }

    pub fn merge(&mut self, other: &ServerRecorder) {
        self.latency.add(&other.latency).expect("same bounds");
        self.hits += other.hits;
        self.misses += other.misses;
        self.error_replies += other.error_replies;
        self.failures += other.failures;
    }
}

/// A replication run's reads from a server their key was not written to
/// (`--rep-write`): a miss there is a replication miss.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplicaReads {
    /// Measured single-key reads of loaded keys answered by a replica.
    pub reads: u64,
    /// Those that missed.
    pub misses: u64,
}

impl ReplicaReads {
    pub fn merge(&mut self, other: &ReplicaReads) {
        self.reads += other.reads;
        self.misses += other.misses;
    }
}
