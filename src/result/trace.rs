//! `--trace`, `--read-file`: what the replay read, and the trace's own
//! hit ratio beside the one the server gave.

use crate::engine::trace_feed::FeedReport;
use crate::spec::RunSpec;
use crate::trace::TraceFormat;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub file: String,
    pub format: TraceFormat,
    /// The timestamps' speed-up (`None`: the trace's timing not used).
    pub speed: Option<f64>,
    /// Records read (a Meta KV record may stand for several requests).
    pub records: u64,
    /// Requests the records made.
    pub requests: u64,
    /// Records with nothing to send (op 0).
    pub nops: u64,
    /// Values cut to `--max-value-size`.
    pub values_cut: u64,
    /// The trace's span, s: its last timestamp minus its first.
    pub span_s: u64,
    /// Whether the trace was read to its end (else `-t`, `-x`, a stop or
    /// `error` cut it).
    pub read_whole: bool,
    pub error: Option<String>,
    /// The hit ratio of the traced cache, where the trace records it:
    /// Twitter's gets with a value size, Meta's cache_hits (null else).
    pub recorded_hit_ratio: Option<f64>,
    pub recorded_lookups: u64,
    /// The hit ratio the server gave the replay's retrievals.
    pub server_hit_ratio: Option<f64>,
}

impl TraceSummary {
    pub fn build(spec: &RunSpec, feed: &FeedReport, hits: u64, misses: u64) -> Option<Self> {
        let t = spec.trace.as_ref()?;
        let ratio = |hits: u64, of: u64| (of > 0).then(|| hits as f64 / of as f64);
        Some(TraceSummary {
            file: t.path.display().to_string(),
            format: t.format,
            speed: spec.load.schedule.trace_speed(),
            records: feed.records,
            requests: feed.requests,
            nops: feed.nops,
            values_cut: feed.values_cut,
            span_s: feed.span_s,
            read_whole: feed.ended,
            error: feed.error.clone(),
            recorded_hit_ratio: ratio(feed.recorded_hits, feed.recorded_lookups),
            recorded_lookups: feed.recorded_lookups,
            server_hit_ratio: ratio(hits, hits + misses),
        })
    }

    /// One line for the text report.
    pub fn describe(&self) -> String {
        let pct = |r: Option<f64>| {
            r.map_or("not recorded".to_string(), |r| {
                format!("{:.1} %", r * 100.0)
            })
        };
        let timing = match self.speed {
            Some(s) => format!("timestamps at {s}x"),
            None => "the run's own pace".into(),
        };
        let end = match (&self.error, self.read_whole) {
            (Some(e), _) => format!("; reading stopped: {e}"),
            (None, true) => String::new(),
            (None, false) => "; cut before its end".into(),
        };
        format!(
            "trace {} ({}, {timing}): {} records, {} requests, {} nops skipped, {} values cut, {} s of trace{end}\n\
             hit ratio: the trace's own {}, the server's {}",
            self.file,
            self.format,
            self.records,
            self.requests,
            self.nops,
            self.values_cut,
            self.span_s,
            pct(self.recorded_hit_ratio),
            pct(self.server_hit_ratio),
        )
    }
}

impl TraceSummary {
    /// Runs that each replayed a trace (`report --merge`): counts added,
    /// the trace's hit ratio weighed by lookups; `None` unless every run
    /// replayed one, in one format.
    pub fn merge(parts: &[Option<&TraceSummary>], hits: u64, misses: u64) -> Option<Self> {
        let parts: Vec<&TraceSummary> = parts.iter().copied().collect::<Option<_>>()?;
        let first = *parts.first()?;
        if parts.iter().any(|p| p.format != first.format) {
            return None;
        }
        let sum = |f: fn(&TraceSummary) -> u64| parts.iter().map(|p| f(p)).sum::<u64>();
        let recorded_hits: f64 = parts
            .iter()
            .filter_map(|p| Some(p.recorded_hit_ratio? * p.recorded_lookups as f64))
            .sum();
        let recorded_lookups = sum(|p| p.recorded_lookups);
        Some(TraceSummary {
            file: if parts.iter().all(|p| p.file == first.file) {
                first.file.clone()
            } else {
                parts
                    .iter()
                    .map(|p| p.file.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            speed: first.speed,
            format: first.format,
            records: sum(|p| p.records),
            requests: sum(|p| p.requests),
            nops: sum(|p| p.nops),
            values_cut: sum(|p| p.values_cut),
            span_s: parts.iter().map(|p| p.span_s).max().unwrap_or(0),
            read_whole: parts.iter().all(|p| p.read_whole),
            error: parts.iter().find_map(|p| p.error.clone()),
            recorded_hit_ratio: (recorded_lookups > 0)
                .then(|| (recorded_hits / recorded_lookups as f64).clamp(0.0, 1.0)),
            recorded_lookups,
            server_hit_ratio: (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
        })
    }
}
