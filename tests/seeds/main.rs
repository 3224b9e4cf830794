//! The seed tools' personalities (memaslap, twemperf, memcache-perf, mutilate), judged beside the real tools and the server's counters.
//!
//! One test binary for the area: it links once (see `.ci/run`).

#[path = "../support/mod.rs"]
mod support;

mod personalities;
mod seed_counts;
mod seed_knobs;
