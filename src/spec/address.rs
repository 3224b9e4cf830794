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

/// An address as written, checked but not yet resolved.
enum Written<'a> {
    Unix(&'a str),
    Udp(&'a str, u16),
    Tcp(&'a str, u16),
}

impl Address {
    /// Whether `text`, as written, names a server over UDP.
    pub fn names_udp(text: &str) -> bool {
        text.trim().starts_with("udp:")
    }

    /// Whether `text`, as written, names a server over TCP.
    pub fn names_tcp(text: &str) -> bool {
        matches!(Address::parse(text), Ok(Written::Tcp(..)))
    }

    /// The first of `servers` (as written) over UDP.
    pub fn first_udp(servers: &[String]) -> Option<&String> {
        servers.iter().find(|s| Address::names_udp(s))
    }

    /// Checks the form of `text` without resolving it (usage errors, found
    /// before anything starts).
    pub fn check(text: &str) -> Result<(), String> {
        Address::parse(text).map(|_| ())
    }

    fn parse(text: &str) -> Result<Written<'_>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty server address (-s '' or MEMCACHED_SERVERS='')".into());
        }
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!(
                    "'{text}' names no socket path (unix:/path/to/socket)"
                ));
            }
            return Ok(Written::Unix(path));
        }
        if let Some(host) = text.strip_prefix("udp:") {
            let (h, p) = host_port(host)?;
            return Ok(Written::Udp(h, p));
        }
        let (h, p) = host_port(text.strip_prefix("tcp:").unwrap_or(text))?;
        Ok(Written::Tcp(h, p))
    }

    /// Parses and resolves `text`; a host without a port gets memcached's
    /// 11211. A name that does not resolve is a failed run (the network's
    /// answer), not a usage error: `check` has judged the form already.
    pub fn resolve(text: &str) -> Result<Address, String> {
        match Address::parse(text)? {
            Written::Unix(path) => Ok(Address::Unix(PathBuf::from(path))),
            Written::Udp(h, p) => resolve_inet(h, p).map(Address::Udp),
            Written::Tcp(h, p) => resolve_inet(h, p).map(Address::Tcp),
        }
    }

    /// The host as written and the port, as key distributions name a
    /// server: a unix socket is its path with port 0 (libmemcached's).
    pub fn name_of(text: &str) -> Result<crate::placement::Server, String> {
        let (host, port) = match Address::parse(text)? {
            Written::Unix(path) => (path, 0),
            Written::Udp(h, p) | Written::Tcp(h, p) => (h, p),
        };
        Ok(crate::placement::Server {
            host: host.to_string(),
            port,
            weight: 1,
        })
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

/// `HOST:PORT` from a server the tools name `host`, `host:port`, `[v6]`,
/// `[v6]:port` or a bare IPv6 address, with `default_port` when it has none.
pub fn with_default_port(server: &str, default_port: u16) -> String {
    let s = server.trim();
    match s.rsplit_once(':') {
        // `[v6]:port`, or `host:port` (one colon).
        Some((host, _)) if host.ends_with(']') || !host.contains(':') => s.to_string(),
        // A bare IPv6 address.
        Some(_) if !s.starts_with('[') => format!("[{s}]:{default_port}"),
        // `[v6]` or a host name.
        _ => format!("{s}:{default_port}"),
    }
}

/// `host:port`, `[v6]:port`, a bare host or a bare IPv6 address.
fn host_port(text: &str) -> Result<(&str, u16), String> {
    let bad =
        || format!("'{text}' is no server address (HOST:PORT, [IPv6]:PORT, udp:..., unix:/path)");
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else if text.matches(':').count() == 1 {
        let (h, p) = text.split_once(':').ok_or_else(bad)?;
        (h, Some(p))
    } else {
        (text, None)
    };
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(bad());
    }
    let port = match port {
        None => 11211,
        Some(p) => p.parse::<u16>().map_err(|_| bad())?,
    };
    Ok((host, port))
}

fn resolve_inet(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve server '{host}': {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve server '{host}': no address"))
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
        for bad in ["", " ", ":11211", "a b:1", "[::1", "[::1]x", "h:70000"] {
            assert!(Address::check(bad).is_err(), "{bad:?}");
        }
        assert_eq!(port("::1"), 11211);
        // Well formed, unknown: refused only when resolved.
        assert!(Address::check("no-such-host.invalid:1").is_ok());
        assert!(Address::resolve("no-such-host.invalid:1").is_err());
    }
}
