//! Server addresses: the transport is part of the address, as in
//! `HOST:PORT` (TCP), `udp:HOST:PORT` and `unix:/path`.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// Where one server listens, and over which transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Tcp(SocketAddr),
    Udp(SocketAddr),
    Unix(PathBuf),
}

impl Address {
    /// Parses and resolves `text`; a host without a port gets memcached's
    /// 11211.
    pub fn resolve(text: &str) -> Result<Address, String> {
        let text = text.trim();
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!(
                    "'{text}' names no socket path (unix:/path/to/socket)"
                ));
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        if let Some(host) = text.strip_prefix("udp:") {
            return resolve_inet(host).map(Address::Udp);
        }
        resolve_inet(text.strip_prefix("tcp:").unwrap_or(text)).map(Address::Tcp)
    }

    pub fn is_udp(&self) -> bool {
        matches!(self, Address::Udp(_))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "{a}"),
            Address::Udp(a) => write!(f, "udp:{a}"),
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

fn resolve_inet(text: &str) -> Result<SocketAddr, String> {
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

    fn port(text: &str) -> u16 {
        match Address::resolve(text).unwrap() {
            Address::Tcp(a) | Address::Udp(a) => a.port(),
            Address::Unix(_) => 0,
        }
    }

    #[test]
    fn transports_and_default_port() {
        assert_eq!(port("127.0.0.1:5"), 5);
        assert_eq!(port("127.0.0.1"), 11211);
        assert_eq!(port("[::1]:7"), 7);
        assert_eq!(port("tcp:127.0.0.1:8"), 8);
        assert!(Address::resolve("udp:127.0.0.1:9").unwrap().is_udp());
        assert_eq!(
            Address::resolve("unix:/tmp/mc.sock").unwrap(),
            Address::Unix("/tmp/mc.sock".into())
        );
        assert_eq!(
            Address::resolve("udp:127.0.0.1:9").unwrap().to_string(),
            "udp:127.0.0.1:9"
        );
        assert!(Address::resolve("127.0.0.1:notaport").is_err());
        assert!(Address::resolve("unix:").is_err());
    }
}
