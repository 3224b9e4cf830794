//! `mcbench trace-stat FILE`: what a trace holds, read through the same
//! feed a replay uses, and how fast it was read.

use crate::cli::TraceStatArgs;
use crate::engine::trace_feed::{self, FeedPlan};
use crate::error::exit;
use crate::trace::TraceReader;
use std::fmt::Write;

pub fn trace_stat(args: &TraceStatArgs) -> i32 {
    let format = match TraceReader::open(&args.file, args.trace_format) {
        Ok(r) => r.format(),
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    let plan = FeedPlan {
        path: args.file.clone(),
        format,
        speed: args.trace_speed,
        client_lanes: None,
        workers: 1,
        max_value: u32::MAX,
        // Nothing is replayed: the span is reported, not waited for.
        bounded: true,
        limit: None,
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let drained = match trace_feed::drain(plan, stop) {
        Ok(d) => d,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    let r = &drained.report;
    let secs = drained.elapsed.as_secs_f64().max(1e-9);
    let mut text = format!("trace {} ({format})\n", args.file.display());
    let _ = writeln!(
        text,
        "records {}, requests {}, nops {}",
        r.records, r.requests, r.nops
    );
    for (op, n) in &drained.ops {
        let _ = writeln!(text, "  {op:<8} {n}");
    }
    let _ = writeln!(text, "span {} s", r.span_s);
    let _ = match (r.recorded_lookups, r.recorded_hits) {
        (0, _) => writeln!(text, "hit ratio: not recorded"),
        (of, hits) => writeln!(
            text,
            "hit ratio: {:.2} % of {of} recorded lookups",
            hits as f64 / of as f64 * 100.0
        ),
    };
    let _ = writeln!(
        text,
        "read in {secs:.3} s: {:.0} records/s",
        r.records as f64 / secs
    );
    let written = crate::error::to_stdout(&text);
    let failed = match (&r.error, &written) {
        (Some(e), _) => Some(e.to_string()),
        (None, Err(e)) => Some(e.to_string()),
        (None, Ok(_)) => None,
    };
    match failed {
        Some(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            exit::FAILED
        }
        None => exit::OK,
    }
}
