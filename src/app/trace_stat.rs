//! `mcbench trace-stat FILE`: what a trace holds, read through the same
//! feed a replay uses, and how fast it was read.

use crate::cli::TraceStatArgs;
use crate::engine::trace_feed::{self, FeedPlan};
use crate::error::exit;
use crate::trace::TraceReader;

pub fn trace_stat(args: &TraceStatArgs) -> i32 {
    let format = match TraceReader::open(&args.file, args.trace_format) {
        Ok(r) => r.format(),
        Err(e) => {
            eprintln!("mcbench: error: {e}");
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
        limit: None,
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let drained = match trace_feed::drain(plan, stop) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    let r = &drained.report;
    let secs = drained.elapsed.as_secs_f64().max(1e-9);
    println!("trace {} ({format})", args.file.display());
    println!(
        "records {}, requests {}, nops {}",
        r.records, r.requests, r.nops
    );
    for (op, n) in &drained.ops {
        println!("  {op:<8} {n}");
    }
    println!("span {} s", r.span_s);
    match (r.recorded_lookups, r.recorded_hits) {
        (0, _) => println!("hit ratio: not recorded"),
        (of, hits) => println!(
            "hit ratio: {:.2} % of {of} recorded lookups",
            hits as f64 / of as f64 * 100.0
        ),
    }
    println!(
        "read in {secs:.3} s: {:.0} records/s",
        r.records as f64 / secs
    );
    match &r.error {
        Some(e) => {
            eprintln!("mcbench: error: {e}");
            exit::FAILED
        }
        None => exit::OK,
    }
}
