//! `--tls`: how the run reaches its servers over TLS (memcached's `-Z`,
//! Redis's `--tls-port`, a managed cache). What to trust, what to show,
//! what name to check, and whether sessions resume; the files are read
//! and the configuration built where connections are made (`net::tls`).

use super::SpecError;

use super::RunSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TlsSpec {
    /// The certificates to trust (PEM); `None`: the system's roots.
    pub ca: Option<PathBuf>,
    /// The client's certificate chain and key (PEM), for a server that
    /// asks for one (memcached's `ssl_verify_mode`).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The name sent (SNI) and checked; `None`: each server's host as
    /// written.
    pub server_name: Option<String>,
    /// No verification of the server's certificate at all.
    pub insecure: bool,
    /// Resume sessions (tickets) on later connections.
    pub resume: bool,
}

impl RunSpec {
    /// TLS goes over TCP only, for every server of the run or none.
    pub(super) fn validate_tls(&self) -> Result<(), SpecError> {
        let prefixed = self
            .target
            .servers
            .iter()
            .filter(|s| s.has_tls_prefix())
            .count();
        if prefixed > 0 && prefixed < self.target.servers.len() {
            return Err(SpecError::Refused("some servers are named tls: and some not: a run is over TLS or not; name every server tls:, or none and give --tls"));
        }
        let Some(tls) = self.target.tls.as_ref() else {
            return Ok(());
        };
        if let Some(s) = self.target.servers.iter().find(|s| !s.is_tcp()) {
            return Err(SpecError::Invalid(format!(
                "--tls goes over TCP only: {s} is not a TCP server (drop --tls, or name a TCP server)"
            )));
        }
        if self.target.servers.is_empty() {
            return Err(SpecError::Refused("--tls needs a server started with TLS (-s HOST:PORT); the memcached mcbench starts for itself speaks none"));
        }
        if tls.cert.is_some() != tls.key.is_some() {
            return Err(SpecError::Refused(
                "--tls-cert and --tls-key go together: give both",
            ));
        }
        if tls.insecure && tls.ca.is_some() {
            return Err(SpecError::Refused(
                "--tls-insecure checks no certificate: drop --tls-ca, or --tls-insecure",
            ));
        }
        if self.conns.facebook {
            return Err(SpecError::Refused(
                "--facebook sends gets over UDP: it cannot go over --tls",
            ));
        }
        Ok(())
    }
}
