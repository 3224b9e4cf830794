//! mcbench: a load generator and latency-measurement tool for memcached.
//!
//! The binary is a thin shell over this library. Data flows one way:
//! flags → [`spec::RunSpec`] → [`engine`] (worker threads) → [`stats`]
//! snapshots → [`result::RunResult`] → [`report`] renderers. Wire formats
//! live in the `mcbench-proto` crate, which knows nothing of sockets.
//! Files, saved results and histograms from outside are read through
//! [`untrusted`], each within its stated bound.
//!
//! The modules form layers, each using only those below it (lowest
//! first): facts with no knowledge of a run (`error`, `warnings`,
//! `untrusted`, `placement`, `os`; then `embedded`, `workload`; then
//! `stats`, `trace`; then `precision`), `spec`, `net` (reaching a server), `server_stats`,
//! `engine`, `result`, `report`, `run` (one run, spec to result) and
//! `telemetry` (its intervals served to Prometheus),
//! `agent`, `cli`, `config`, `app`, `personality`. `tests/cli/layers.rs`
//! holds the order and checks it.

#[cfg(feature = "agents")]
pub mod agent;
pub mod app;
pub mod cli;
pub mod config;
pub mod embedded;
pub mod engine;
pub mod error;
pub mod net;
pub mod os;
pub mod personality;
pub mod placement;
pub mod precision;
pub mod report;
pub mod result;
pub mod run;
pub mod server_stats;
pub mod spec;
pub mod stats;
pub mod telemetry;
pub mod trace;
pub mod untrusted;
pub mod warnings;
pub mod workload;
