//! TLS for the control plane (rustls, through tonic): the agent's
//! certificate and key, and the master's trusted certificate and the name
//! it checks. The token is still required under TLS: TLS says who the
//! agent is, the token who may drive it.

use super::AgentError;
use std::path::Path;
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// Reads a PEM file that must hold `what` (`CERTIFICATE`, `PRIVATE KEY`);
/// a private key must be its owner's alone, as a token file must.
fn pem(path: &Path, flag: &'static str, what: &'static str) -> Result<Vec<u8>, AgentError> {
    let bytes = if what == "PRIVATE KEY" {
        crate::untrusted::read_private_bytes(path, "a private key")
    } else {
        crate::untrusted::read_bytes(path, crate::untrusted::Bound::Secret, "a PEM file")
    }
    .map_err(|source| AgentError::PemFile { flag, source })?;
    let text = String::from_utf8_lossy(&bytes);
    if !text.contains("-----BEGIN ") || !text.contains(what) {
        return Err(AgentError::NotPem {
            flag,
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(bytes)
}

/// The agent's side: its certificate chain and private key.
pub fn server(cert: &Path, key: &Path) -> Result<ServerTlsConfig, AgentError> {
    let cert = pem(cert, "--tls-cert", "CERTIFICATE")?;
    let key = pem(key, "--tls-key", "PRIVATE KEY")?;
    Ok(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))
}

/// The master's side: the certificate (a CA's, or the agents' own) that
/// agents' certificates must chain to, and the name they must carry.
#[derive(Clone)]
pub struct ClientTls {
    ca: Certificate,
    domain: Option<String>,
}

impl ClientTls {
    pub fn read(ca: &Path, domain: Option<String>) -> Result<Self, AgentError> {
        Ok(ClientTls {
            ca: Certificate::from_pem(pem(ca, "--agent-tls-ca", "CERTIFICATE")?),
            domain,
        })
    }

    /// The configuration for the agent at `addr` (HOST:PORT): the name
    /// checked is `--agent-tls-domain`, else HOST.
    pub fn config(&self, addr: &str) -> ClientTlsConfig {
        let host = addr
            .rsplit_once(':')
            .map_or(addr, |(h, _)| h)
            .trim_start_matches('[')
            .trim_end_matches(']');
        ClientTlsConfig::new()
            .ca_certificate(self.ca.clone())
            .domain_name(self.domain.clone().unwrap_or_else(|| host.to_string()))
    }
}
