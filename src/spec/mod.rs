//! `RunSpec`: one typed, serialisable description of a run, and its
//! validation. Everything that reaches the engine has passed through here.

pub mod units;

use crate::workload::{ClientSlice, Distribution, KeySpace, Mix, MultiGet, Popularity};
use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

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
    /// Shape of the gaps between open-loop arrivals, rescaled to the rate
    /// (mutilate's `--iadist`): exponential is Poisson arrivals.
    pub arrival: Distribution,
    pub stop: StopAfter,
    #[serde(with = "units::seconds")]
    pub warmup: Duration,
    pub keys: u64,
    pub key_size: Distribution,
    pub value_size: Distribution,
    pub key_prefix: String,
    /// Which keys requests ask for.
    pub popularity: Popularity,
    /// This instance's slice of the key space.
    pub client: ClientSlice,
    pub mix: Mix,
    pub multiget: MultiGet,
    /// Share of get keys asked from outside the loaded set.
    pub miss_ratio: f64,
    /// On a get miss, set that key.
    pub getset: bool,
    /// memaslap's task window: keys per connection; `None` uses the key space.
    pub window: Option<u64>,
    /// Window mode: share of sets that overwrite a key of the window.
    pub overwrite: f64,
    /// Largest value size allowed, bytes.
    pub max_value_size: usize,
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

/// The default largest value, in bytes: memcached's default item size
/// limit (`-I 1m`).
pub const DEFAULT_MAX_VALUE: usize = 1024 * 1024;

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
        // Each interval closes a set of histograms per worker (~2.4 MB);
        // ten a second is the most that stays cheap.
        if self.interval < Duration::from_millis(100) {
            return Err("--interval must be at least 100ms".into());
        }
        let (lo, hi) = self.value_size.support();
        let max = self.max_value_size;
        if lo > max as f64 || hi < 1.0 {
            return Err(format!(
                "value size {} cannot produce a valid value (1..={max} bytes; --max-value-size raises the limit)",
                self.value_size
            ));
        }
        let gap = self.arrival.mean();
        if !(gap.is_finite() && gap > 0.0) {
            return Err(format!(
                "--arrival {} has no finite positive mean, so it cannot be scaled to a rate",
                self.arrival
            ));
        }
        if !(0.0..=1.0).contains(&self.miss_ratio) {
            return Err(format!(
                "--miss-ratio must be between 0 and 1, got {}",
                self.miss_ratio
            ));
        }
        if !(0.0..=1.0).contains(&self.multiget.share)
            || self.multiget.keys == 0
            || self.multiget.keys > 10_000
        {
            return Err("multiget needs 1..=10000 keys and a share between 0 and 100 %".into());
        }
        match self.window {
            Some(0) => return Err("--window must hold at least one key".into()),
            Some(_) if self.load == LoadMode::LoadOnly => return Err(
                "--load-only has nothing to load with --window (windows fill as the run writes)"
                    .into(),
            ),
            None if self.overwrite > 0.0 => {
                return Err(
                    "--overwrite needs --window: with a fixed key space every set overwrites"
                        .into(),
                )
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.overwrite) {
            return Err(format!(
                "--overwrite must be between 0 and 1, got {}",
                self.overwrite
            ));
        }
        self.key_space(1).map(|_| ())
    }

    /// The key space, shared by `servers` servers.
    pub fn key_space(&self, servers: usize) -> Result<KeySpace, String> {
        KeySpace::new(
            self.keys,
            self.client,
            &self.key_prefix,
            self.key_size.clone(),
            self.popularity,
            self.seed,
            servers,
        )
    }

    /// The largest value size a request can have, bytes.
    pub fn max_value_len(&self) -> usize {
        let (_, hi) = self.value_size.support();
        (hi.ceil().max(1.0) as usize).min(self.max_value_size)
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
