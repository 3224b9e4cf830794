//! Runs against real and scripted servers, judged by what the servers saw: schedules, timing truth, transports, protocols, checks, workloads, traces, placement and replication.
//!
//! One test binary for the area: it links once (see `.ci/run`).

#[path = "../support/mod.rs"]
mod support;

mod churn;
mod flag_effects;
mod fork_modes;
mod hostile;
mod latency_parts;
mod measure;
mod placement;
mod precision;
mod protocols;
mod read_delay;
mod replication;
mod reply_checks;
mod run;
mod server_stats;
mod signals;
mod telemetry;
mod tls;
mod trace;
mod transports;
mod verify;
mod workload;
