//! `RunSpec`: one typed, serialisable description of a run, and its
//! validation. Everything that reaches the engine has passed through here.

pub mod units;

use crate::workload::{Distribution, KeySpace, Mix};
use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// How arrivals are spaced in open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Poisson arrivals: exponential gaps.
    Exponential,
    /// Evenly spaced arrivals.
    Fixed,
}

/// Whether keys are written once before measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// Preload every key, then measure.
    Load,
    /// Measure straight away.
    NoLoad,
    /// Preload every key and stop; the report covers the load.
    LoadOnly,
}

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopAfter {
    #[serde(with = "units::seconds")]
    Duration(Duration),
    /// Exactly this many measured requests.
    Ops(u64),
}

/// A complete, validated run description.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    /// Servers as given (`HOST:PORT`); empty means "start one for the run".
    pub servers: Vec<String>,
    pub threads: usize,
    /// Connections per server, spread over the threads.
    pub connections: usize,
    /// Requests in flight per connection.
    pub depth: usize,
    /// Target aggregate ops/s (open loop); `None` is closed loop.
    pub rate: Option<f64>,
    pub arrival: Arrival,
    pub stop: StopAfter,
    #[serde(with = "units::seconds")]
    pub warmup: Duration,
    pub keys: u64,
    pub key_size: Distribution,
    pub value_size: Distribution,
    pub key_prefix: String,
    pub mix: Mix,
    pub load: LoadMode,
    /// Live-report interval; also the length of each JSON interval.
    #[serde(with = "units::seconds")]
    pub interval: Duration,
    /// True when the user asked for live lines (`-i`).
    pub live: bool,
    /// CPUs to pin worker threads to, in order; `None` leaves them free.
    pub affinity: Option<Vec<usize>>,
    pub seed: u64,
    /// Connect timeout, and how long to wait for answers once sending stops.
    #[serde(with = "units::seconds")]
    pub timeout: Duration,
}

/// The largest value the run allows, in bytes (memcached's default item
/// size limit is 1 MiB).
pub const MAX_VALUE_LEN: usize = 1024 * 1024;

impl RunSpec {
    /// Checks everything that can be checked without the network.
    pub fn validate(&self) -> Result<(), String> {
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        if self.depth == 0 || self.depth > 65_536 {
            return Err("--depth must be between 1 and 65536".into());
        }
        if let Some(rate) = self.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(format!(
                    "--rate must be a positive number of ops/s, got {rate}"
                ));
            }
        }
        match self.stop {
            StopAfter::Duration(d) if d.is_zero() => {
                return Err("--duration must be longer than zero".into())
            }
            StopAfter::Ops(0) => return Err("--ops must be at least 1".into()),
            _ => {}
        }
        if self.interval < Duration::from_millis(10) {
            return Err("--interval must be at least 10ms".into());
        }
        let (lo, hi) = self.value_size.support();
        if lo > MAX_VALUE_LEN as f64 || hi < 0.0 {
            return Err(format!(
                "value size {} cannot produce a valid value (0..={MAX_VALUE_LEN} bytes)",
                self.value_size
            ));
        }
        self.key_space(1).map(|_| ())
    }

    /// The key space, shared by `servers` servers.
    pub fn key_space(&self, servers: usize) -> Result<KeySpace, String> {
        KeySpace::new(
            self.keys,
            &self.key_prefix,
            self.key_size.clone(),
            self.seed,
            servers,
        )
    }

    /// Total connections of the run.
    pub fn total_connections(&self, servers: usize) -> usize {
        self.connections * servers
    }
}

/// Resolves `HOST:PORT` (a bare host gets memcached's port 11211).
pub fn resolve_server(text: &str) -> Result<SocketAddr, String> {
    let with_port = if text.starts_with('[') || text.matches(':').count() == 1 {
        text.to_string()
    } else if text.contains(':') {
        format!("[{text}]:11211")
    } else {
        format!("{text}:11211")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve server '{text}': {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve server '{text}': no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_resolve_with_default_port() {
        assert_eq!(resolve_server("127.0.0.1:5").unwrap().port(), 5);
        assert_eq!(resolve_server("127.0.0.1").unwrap().port(), 11211);
        assert_eq!(resolve_server("[::1]:7").unwrap().port(), 7);
        assert!(resolve_server("127.0.0.1:notaport").is_err());
    }
}
