//! `--hdr-log`: the HdrHistogram interval log (what HistogramLogProcessor,
//! HdrHistogram's plotter and other latency tools read). Per interval, the
//! latency of all ops untagged, then one histogram tagged with each op
//! type. Values are ns; the max column is in ms (divisor 10^6, as Java's
//! log writer).

use crate::report::RenderError;

use super::Exporter;
use crate::result::RunResult;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::time::{Duration, UNIX_EPOCH};

pub struct HdrLogExporter;

impl Exporter for HdrLogExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let r = &runs[0];
        let start = UNIX_EPOCH + Duration::from_secs_f64(r.started_unix_s.max(0.0));
        let mut buf = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(&format!("[Logged with mcbench {}]", r.version))
            .add_comment("[Histogram log format version 1.3]")
            .add_comment("[latency: intended send -> response parsed, ns]")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut buf, &mut serializer)
            .map_err(|e| RenderError::Log(e.to_string()))?;
        for s in &r.intervals {
            let from = Duration::from_secs_f64((s.time_s - s.duration_s).max(0.0));
            let length = Duration::from_secs_f64(s.duration_s.max(0.0));
            for (name, op) in &s.ops {
                let tag = if name == "total" {
                    None
                } else {
                    Some(Tag::new(name).ok_or_else(|| RenderError::LogTag(name.clone()))?)
                };
                log.write_histogram(&op.latency_hdr.decode()?, from, length, tag)
                    .map_err(|e| RenderError::Log(format!("{e:?}")))?;
            }
        }
        drop(log);
        Ok(buf)
    }
}
