//! Server addresses: the transport is part of the address, as in
//! `HOST:PORT` (TCP), `udp:HOST:PORT` and `unix:/path`.

use super::SpecError;

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
    fn parse(text: &str) -> Result<Written<'_>, SpecError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpecError::EmptyAddress);
        }
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(SpecError::NoSocketPath(text.into()));
            }
            return Ok(Written::Unix(path));
        }
        if let Some(host) = text.strip_prefix("udp:") {
            let (h, p) = host_port(host)?;
            return Ok(Written::Udp(h, p));
        }
        let tcp = text
            .strip_prefix("tcp:")
            .or_else(|| text.strip_prefix("tls:"));
        let (h, p) = host_port(tcp.unwrap_or(text))?;
        Ok(Written::Tcp(h, p))
    }

    /// Parses and resolves `text`; a host without a port gets memcached's
    /// 11211. A name that does not resolve is a failed run (the network's
    /// answer), not a usage error: `check` has judged the form already.
    pub fn resolve(text: &str) -> Result<Address, SpecError> {
        match Address::parse(text)? {
            Written::Unix(path) => Ok(Address::Unix(PathBuf::from(path))),
            Written::Udp(h, p) => resolve_inet(h, p).map(Address::Udp),
            Written::Tcp(h, p) => resolve_inet(h, p).map(Address::Tcp),
        }
    }

    /// The host as written and the port, as key distributions name a
    /// server: a unix socket is its path with port 0 (libmemcached's).
    pub fn name_of(text: &str) -> Result<crate::placement::Server, SpecError> {
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

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
    Unix,
}

/// A server address as written (`HOST:PORT`, `udp:HOST:PORT`,
/// `unix:/path`), its form checked once when it is read: the transport is
/// this type's to say, nowhere else's. Resolved only when the run
/// connects (`resolve`). Saved and sent as the text written, and checked
/// again when read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddr {
    text: String,
    transport: Transport,
}

impl ServerAddr {
    /// Checks the form of `text` without resolving it (usage errors,
    /// found before anything starts).
    pub fn parse(text: &str) -> Result<ServerAddr, SpecError> {
        let transport = match Address::parse(text)? {
            Written::Tcp(..) => Transport::Tcp,
            Written::Udp(..) => Transport::Udp,
            Written::Unix(_) => Transport::Unix,
        };
        Ok(ServerAddr {
            text: text.trim().to_string(),
            transport,
        })
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    pub fn is_udp(&self) -> bool {
        self.transport == Transport::Udp
    }

    pub fn is_tcp(&self) -> bool {
        self.transport == Transport::Tcp
    }

    pub fn is_unix(&self) -> bool {
        self.transport == Transport::Unix
    }

    /// Written `tls:HOST:PORT`: the run goes over TLS.
    pub fn has_tls_prefix(&self) -> bool {
        self.text.starts_with("tls:")
    }

    /// The host as written (a name or an IP address): what TLS checks
    /// the server's certificate against unless told another name.
    pub fn host(&self) -> String {
        Address::name_of(&self.text).map_or_else(|_| self.text.clone(), |s| s.host)
    }

    /// The address as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Resolves the address (a host name that does not resolve is a failed
    /// run, not a usage error).
    pub fn resolve(&self) -> Result<Address, SpecError> {
        Address::resolve(&self.text)
    }

    /// The first of `servers` over UDP.
    pub fn first_udp(servers: &[ServerAddr]) -> Option<&ServerAddr> {
        servers.iter().find(|s| s.is_udp())
    }
}

impl fmt::Display for ServerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for ServerAddr {
    type Err = SpecError;
    fn from_str(text: &str) -> Result<Self, SpecError> {
        ServerAddr::parse(text)
    }
}

impl serde::Serialize for ServerAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for ServerAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ServerAddr::parse(&text).map_err(serde::de::Error::custom)
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
fn host_port(text: &str) -> Result<(&str, u16), SpecError> {
    let bad = || SpecError::NotAnAddress(text.into());
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

fn resolve_inet(host: &str, port: u16) -> Result<SocketAddr, SpecError> {
    (host, port)
        .to_socket_addrs()
        .map_err(|source| SpecError::Resolve {
            host: host.into(),
            source,
        })?
        .next()
        .ok_or_else(|| SpecError::NoAddress { host: host.into() })
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
            assert!(ServerAddr::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(port("::1"), 11211);
        // Well formed, unknown: refused only when resolved.
        assert!(ServerAddr::parse("no-such-host.invalid:1").is_ok());
        assert!(Address::resolve("no-such-host.invalid:1").is_err());
    }

    #[test]
    fn a_server_address_knows_its_transport_and_is_read_back_checked() {
        let kinds: Vec<Transport> = ["10.0.0.1:5", " udp:h:7 ", "unix:/run/mc", "tcp:h"]
            .iter()
            .map(|t| ServerAddr::parse(t).unwrap().transport())
            .collect();
        use Transport::*;
        assert_eq!(kinds, [Tcp, Udp, Unix, Tcp]);
        let udp = ServerAddr::parse(" udp:h:7 ").unwrap();
        assert_eq!(udp.to_string(), "udp:h:7");
        let json = serde_json::to_string(&vec![udp.clone()]).unwrap();
        assert_eq!(json, r#"["udp:h:7"]"#);
        let back: Vec<ServerAddr> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, [udp]);
        // A saved or sent spec is checked as a typed one is.
        assert!(serde_json::from_str::<ServerAddr>(r#""h:70000""#).is_err());
        assert!(serde_json::from_str::<ServerAddr>(r#""unix:""#).is_err());
    }
}
