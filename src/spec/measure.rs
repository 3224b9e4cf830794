//! Measurement connections beside the load (mutilate's and memcache-perf's
//! `-C`, `-Q`, `-D`): a second group of connections at a low fixed rate,
//! whose latency is reported apart. With the load group's queueing out of
//! it, it is what an SLO reads.

use super::SpecError;

use super::{LoadMode, RunSpec, StopAfter};
use serde::{Deserialize, Serialize};

/// The measurement group.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasureGroup {
    /// Connections per server.
    pub connections: usize,
    /// Its own open-loop rate, ops/s over all its connections.
    pub rate: f64,
    /// Requests in flight per connection.
    pub depth: usize,
}

impl RunSpec {
    /// The measurement group's checks: a group that would measure nothing,
    /// or that the run's other modes would send elsewhere, is refused.
    pub(super) fn validate_measure(&self) -> Result<(), SpecError> {
        let Some(m) = &self.measure else {
            return Ok(());
        };
        if m.connections == 0 {
            return Err(SpecError::AtLeastOne("--measure-connections"));
        }
        if m.depth == 0 || m.depth > 65_536 {
            return Err(SpecError::Depth("--measure-depth"));
        }
        if !(m.rate.is_finite() && m.rate > 0.0) {
            return Err(SpecError::Invalid(format!(
                "--measure-rate must be a positive number of ops/s, got {}",
                m.rate
            )));
        }
        if m.rate > super::schedule::MAX_RATE {
            return Err(SpecError::Invalid(format!(
                "--measure-rate {} ops/s is beyond any client: at most {:e} a second",
                m.rate,
                super::schedule::MAX_RATE
            )));
        }
        let refused = [
            (
                !matches!(self.load.stop, StopAfter::Duration(_)),
                "--ops and --num-conns (the group runs for the load's --duration)",
            ),
            (
                self.key_space.preload == LoadMode::LoadOnly,
                "--load-only (nothing is measured)",
            ),
            (self.conns.facebook, "--facebook"),
            (self.server.replication.is_some(), "--rep-write"),
            (
                self.key_space.window.is_some(),
                "--window (windows belong to load connections)",
            ),
            (self.churn().is_some(), "--num-conns"),
            (
                self.recording.save_rate.is_some(),
                "--save (its samples would mix the groups)",
            ),
        ];
        match refused.iter().find(|(given, _)| *given) {
            Some((_, what)) => Err(SpecError::Invalid(format!(
                "--measure-connections does not go with {what}: drop one of them"
            ))),
            None => Ok(()),
        }
    }
}
