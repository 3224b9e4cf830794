//! Live telemetry for Prometheus: `--metrics-listen`'s `/metrics`.
//!
//! What it is for: the run's counters and latency histograms, added up
//! over every closed interval, served while the process runs, in the text
//! formats (Prometheus 0.0.4, OpenMetrics 1.0.0) any Prometheus reads and
//! in the protobuf one that carries native histograms (exponential buckets
//! at schema 5, ≤ 2.2 % apart), as the scraper's `Accept` asks. Counters
//! and histograms, not percentiles, so that sums across op types and
//! machines stay exact in PromQL; a master serves its agents' intervals
//! merged, and each agent's under its `agent` label.
//!
//! What it is not: the result. The report is the run's own; these are its
//! intervals as they close, updated once per interval off the load's
//! threads. Labels are bounded: op types, servers, agents, the run's name;
//! never a key or a connection.

mod error;
mod exported;
mod family;
mod histogram;
mod http;
mod proto;
mod text;

pub use error::TelemetryError;
pub use exported::{Exported, Phase};
pub use histogram::default_bounds;
pub use http::Endpoint;

use crate::stats::IntervalSummary;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What `--metrics-listen` and its companions asked for.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// `--metrics-allow-remote`: serve on an address beyond loopback.
    pub allow_remote: bool,
    /// Classic histogram bounds, seconds (`--metrics-buckets`).
    pub bounds: Vec<f64>,
    /// `--metrics-hold`: after the run, serve until a scrape has read the
    /// final counts, at most this long.
    pub hold: Duration,
}

impl Config {
    /// Refuses what cannot be served: an address beyond loopback not
    /// allowed, bounds that are not positive, finite and increasing.
    pub fn validate(&self) -> Result<(), TelemetryError> {
        if !self.listen.ip().is_loopback() && !self.allow_remote {
            return Err(TelemetryError::Remote(self.listen));
        }
        if self.bounds.is_empty() || self.bounds.len() > 1000 {
            return Err(TelemetryError::Buckets(format!(
                "1 to 1000 bounds, got {}",
                self.bounds.len()
            )));
        }
        if let Some(b) = self.bounds.iter().find(|b| !(b.is_finite() && **b > 0.0)) {
            return Err(TelemetryError::Buckets(format!(
                "each bound is a positive number of seconds, got {b}"
            )));
        }
        if let Some(w) = self.bounds.windows(2).find(|w| w[0] >= w[1]) {
            return Err(TelemetryError::Buckets(format!(
                "bounds must increase, got {} then {}",
                w[0], w[1]
            )));
        }
        Ok(())
    }
}

/// What a run's series are named by: its `run` label (`--label`, else
/// its servers; `None` for an agent before its first share, which serves
/// nothing), its servers in order, its target rate, and the `agent` label
/// an agent's own endpoint adds to all of them.
#[derive(Debug, Clone)]
pub struct Named {
    pub run: Option<String>,
    pub servers: Vec<String>,
    pub target_rate: Option<f64>,
    pub agent: Option<String>,
}

impl Named {
    /// An agent before its first share: it serves nothing.
    pub fn idle() -> Named {
        Named {
            run: None,
            servers: Vec::new(),
            target_rate: None,
            agent: None,
        }
    }

    pub fn of(spec: &crate::spec::RunSpec, agent: Option<String>) -> Named {
        let servers: Vec<String> = spec.target.servers.iter().map(|s| s.to_string()).collect();
        let run = spec
            .recording
            .label
            .clone()
            .unwrap_or_else(|| servers.join(","));
        Named {
            run: Some(run),
            servers,
            target_rate: spec.rate(),
            agent,
        }
    }
}

/// A run's endpoint and what it serves.
pub struct Telemetry {
    exported: Arc<Mutex<Exported>>,
    endpoint: Endpoint,
    hold: Duration,
}

impl Telemetry {
    /// Checks `config` and binds its address, serving a run named `run`
    /// against `servers` at `target_rate`: before any traffic.
    pub fn start(config: &Config, named: Named) -> Result<Telemetry, TelemetryError> {
        config.validate()?;
        let exported = Arc::new(Mutex::new(Exported::new(named, config.bounds.clone())));
        let endpoint = Endpoint::bind(config.listen, exported.clone())?;
        Ok(Telemetry {
            exported,
            endpoint,
            hold: config.hold,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.endpoint.addr()
    }

    /// Adds this process's closed interval.
    pub fn record(&self, s: &IntervalSummary) {
        self.sink().record(s, None);
    }

    /// A handle that adds intervals from another thread (a master's
    /// merge of its agents' intervals).
    pub fn sink(&self) -> Sink {
        Sink {
            exported: self.exported.clone(),
        }
    }

    /// Another measurement begins in this process (a search's or scan's
    /// next probe, at `target_rate`): starting, until its first interval.
    /// The counters go on adding up.
    pub fn begin(&self, target_rate: Option<f64>) {
        let mut e = self.exported.lock().unwrap_or_else(|p| p.into_inner());
        e.set_target_rate(target_rate);
        e.set_phase(Phase::Starting);
    }

    /// The run's measurement is over: the phase says so, the counts are
    /// final.
    pub fn done(&self) {
        self.sink().done();
    }

    /// With `--metrics-hold`: serves until a scrape has read the final
    /// counts, the hold has passed or `stopped` says a signal came.
    pub fn hold(&self, stopped: impl Fn() -> bool) {
        self.done();
        let g = self
            .exported
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .generation();
        let until = Instant::now() + self.hold;
        while !self.endpoint.served(g) && Instant::now() < until && !stopped() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Adds intervals to what an endpoint serves.
#[derive(Clone)]
pub struct Sink {
    exported: Arc<Mutex<Exported>>,
}

impl Sink {
    /// Adds a closed interval (`agent`: one agent's share; None: the run's
    /// own, or a master's merge). One that cannot be shown is said on
    /// stderr; the run goes on.
    pub fn record(&self, s: &IntervalSummary, agent: Option<&str>) {
        self.add(s, agent, exported::Whole::Interval);
    }

    /// The run served from now on (an agent's next share): what the last
    /// one served is dropped, its series end.
    pub fn begin_run(&self, named: Named) {
        let mut e = self.exported.lock().unwrap_or_else(|p| p.into_inner());
        e.rename(named);
    }

    /// This run's measurement is over: its counts are final.
    pub fn done(&self) {
        let mut e = self.exported.lock().unwrap_or_else(|p| p.into_inner());
        if e.phase() != Phase::Done {
            e.set_phase(Phase::Done);
        }
    }

    /// Adds an agent's part to a merged interval already added (it came
    /// after the others): its counts and histograms, not as an interval.
    pub fn record_late(&self, s: &IntervalSummary) {
        self.add(s, None, exported::Whole::LatePart);
    }

    fn add(&self, s: &IntervalSummary, agent: Option<&str>, whole: exported::Whole) {
        let mut e = self.exported.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(err) = e.record(s, agent, whole) {
            crate::stderr_line!("mcbench: warning: interval {}: {err}", s.index);
        }
    }
}
