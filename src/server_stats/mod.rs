//! The servers' own view of a run: memcached's `stats` read on connections
//! apart from the load, and what its counters say beside the client's.
//!
//! - [`conn`]: one kept connection that asks `stats`, `stats settings`,
//!   `stats slabs`, ... and times each round trip apart from the connect;
//! - [`sampler`]: during a run (`--server-stats`), `stats` from every
//!   server at the start of measurement, at each interval and at the end,
//!   plus `stats settings` once and `stats slabs`/`stats items` at start
//!   and end;
//! - [`slabs`]: memcached-tool's `display` table of slab classes;
//! - [`top`]: memcache-top's rows, from two `stats` of each server;
//! - [`figures`]: the deltas a benchmark reads (hits, misses, evictions,
//!   connections, bytes, items, the server's CPU per op) and every other
//!   numeric stat that moved.
//!
//! Not here: the wire format of `stats` (the codec crate's `stats`
//! module) or how the figures are printed (`report`).

pub mod conn;
mod error;
pub mod figures;
pub mod sampler;
pub mod slabs;
pub mod top;

use std::collections::BTreeMap;

/// One `stats` reply: name → value, as the server wrote them.
pub type Stats = BTreeMap<String, String>;

pub use conn::StatsConn;
pub use error::StatsQueryError;
pub use figures::Figures;
pub use sampler::{ServerLog, StatsSample};
