//! memaslap's replication test (`--rep-write N`) as a run sets it: how
//! many servers take writes, and how the replication lag is probed.

use super::SpecError;

use super::{units, RunSpec};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Lag probes per second unless `--rep-lag-rate` says otherwise.
pub const DEFAULT_LAG_RATE: f64 = 10.0;

/// Between polls of a probe key on a replica unless `--rep-lag-poll`
/// says otherwise.
pub const DEFAULT_LAG_POLL: Duration = Duration::from_micros(100);

/// The fastest probe schedule: the probe has one connection per server
/// and must not become load.
const MAX_LAG_RATE: f64 = 1000.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replication {
    /// The first `writers` servers take the writes (memaslap's
    /// `--rep_write`); reads go to a server the key was not written to.
    pub writers: usize,
    /// Reads go to any server, the key's writer included (memaslap's
    /// own `-p`), not only to the others.
    #[serde(default)]
    pub any_reader: bool,
    /// Lag probes started per second on their own connections (0: none).
    pub lag_rate: f64,
    /// How long a probe waits between polls of its key on a replica.
    #[serde(with = "units::seconds")]
    pub lag_poll: Duration,
}

impl RunSpec {
    /// The servers' roles in a replication run, if it is one.
    pub fn replicas(&self) -> Option<crate::placement::Replicas> {
        self.server
            .replication
            .as_ref()
            .map(|r| crate::placement::Replicas {
                writers: r.writers,
                servers: self.target.servers.len(),
                any_reader: r.any_reader,
            })
    }

    /// `--rep-write`: two servers at least, writers among them, and only
    /// what routes each request by its key on held TCP or unix
    /// connections (memaslap refuses UDP and its facebook test too).
    pub(super) fn validate_replication(&self) -> Result<(), SpecError> {
        let Some(r) = &self.server.replication else {
            return Ok(());
        };
        let n = self.target.servers.len();
        if n < 2 {
            return Err(SpecError::Refused("--rep-write needs at least two servers (-s A -s B): reads go to a server the key was not written to"));
        }
        if r.writers == 0 || r.writers > n {
            return Err(SpecError::Invalid(format!(
                "--rep-write {} names the servers that take writes: 1 to {n} (the number of servers)",
                r.writers
            )));
        }
        if !(r.lag_rate.is_finite() && (0.0..=MAX_LAG_RATE).contains(&r.lag_rate)) {
            return Err(SpecError::Invalid(format!(
                "--rep-lag-rate is lag probes per second, 0 (none) to {MAX_LAG_RATE}; got {}",
                r.lag_rate
            )));
        }
        if r.lag_poll.is_zero() || r.lag_poll > Duration::from_secs(1) {
            return Err(SpecError::Refused(
                "--rep-lag-poll must be above 0 and at most 1s",
            ));
        }
        self.validate_replicated_load(r)
    }

    /// `--rep-write`'s load: only what routes each request by its key to
    /// a writer, and reads a replica can answer.
    fn validate_replicated_load(&self, r: &Replication) -> Result<(), SpecError> {
        let refuse = |what: &str| {
            Err(SpecError::NotWith {
                flag: "--rep-write",
                what: what.to_string(),
            })
        };
        if let Some(s) = crate::spec::ServerAddr::first_udp(&self.target.servers) {
            return refuse(&format!("UDP ('{s}'), as memaslap's does not"));
        }
        if self.conns.facebook {
            return refuse("--facebook, as memaslap's does not");
        }
        if !self.target.distribution.places_keys() || self.target.roundrobin {
            return refuse("--distribution none or --roundrobin: it places each key on a writer");
        }
        if self.churn().is_some() {
            return refuse("--num-conns: it holds a connection to every server");
        }
        // A window's keys are read once written; only where reads go
        // anywhere, as memaslap's, is a window not mistaken for replication.
        if self.key_space.window.is_some() && !r.any_reader {
            return refuse(
                "--window unless --rep-read any: it reads the keys of the preloaded key space",
            );
        }
        if self.workload.multiget.share > 0.0
            || self.workload.mix.share_of(crate::workload::OpKind::Mget) > 0.0
        {
            return refuse("multigets: each key of a read is judged by where it was written");
        }
        // A replica answers reads only: ops that change a key or hand out
        // a server's cas unique would go to the wrong server, and a key
        // that expires or is deleted would pass for a replication miss.
        use crate::workload::OpKind;
        let changes = [
            OpKind::Delete,
            OpKind::Touch,
            OpKind::Gat,
            OpKind::Gats,
            OpKind::Gets,
            OpKind::Cas,
        ];
        if let Some(op) = changes
            .iter()
            .find(|op| self.workload.mix.share_of(**op) > 0.0)
        {
            return refuse(&format!("{op} in the mix: a replica serves get, the writers the storage commands and counters"));
        }
        if self.request.expiry != 0 {
            return refuse("--expiry: a key that expires would pass for a replication miss");
        }
        if self.checks.verify > 0.0 || self.checks.exp_verify > 0.0 {
            return refuse("--verify or --exp-verify: every replication miss would count again as a failed check");
        }
        if self.workload.getset {
            return refuse("--getset: every replication miss would write its key again to a writer that holds it");
        }
        if self.key_space.preload != super::LoadMode::Load && self.key_space.window.is_none() {
            return refuse("--no-load or --load-only: a read from a replica can only miss replication if the key was written");
        }
        Ok(())
    }
}
