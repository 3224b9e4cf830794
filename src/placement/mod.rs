//! Which server holds a key: the distributions of memcached clients and
//! proxies, computed exactly as they compute them, so that a run puts each
//! key where the application's own client would.
//!
//! - `modula`: libmemcached's default, `hash(key) % servers`, with any of
//!   libhashkit's hashes (`--hash`, one-at-a-time by default);
//! - `ketama`: libmemcached `KETAMA_WEIGHTED` (and twemproxy's `ketama`
//!   with `hash: md5`), weights honoured;
//! - `ketama-spy`: libmemcached `KETAMA_SPY`, spymemcached's point names;
//! - `ch3`: mcrouter's furc hash;
//! - `none`: no placement: each connection's server takes any key, as
//!   mutilate and memcache-perf do (every server holds the whole space).
//!
//! - `Replicas`: memaslap's replication test, where writes and reads of a
//!   key go to different servers.
//!
//! Not here: which connection a request takes (the engine), or key bytes
//! (the workload's `KeySpace`).

mod ch3;
mod error;
mod hashes;
mod ketama;
mod replicas;

pub use ch3::furc_hash;
pub use error::PlacementError;
pub use hashes::KeyHash;
pub use ketama::Naming;
pub use replicas::Replicas;

use std::fmt;

/// The `--distribution` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Modula(KeyHash),
    Ketama,
    KetamaSpy,
    Ch3,
    None,
}

impl Scheme {
    /// Whether keys are placed on servers (anything but `none`).
    pub fn places_keys(self) -> bool {
        self != Scheme::None
    }

    /// Whether the scheme reads server weights.
    pub fn weighted(self) -> bool {
        matches!(self, Scheme::Ketama | Scheme::KetamaSpy)
    }

    /// Parses `--distribution NAME` with `--hash` (modula's key hash).
    pub fn parse(name: &str, hash: Option<KeyHash>) -> Result<Self, PlacementError> {
        let scheme = match name.trim().to_ascii_lowercase().as_str() {
            "modula" => Scheme::Modula(hash.unwrap_or(KeyHash::OneAtATime)),
            "ketama" | "ketama-weighted" | "ketama_weighted" | "consistent" => Scheme::Ketama,
            "ketama-spy" | "ketama_spy" => Scheme::KetamaSpy,
            "ch3" | "furc" => Scheme::Ch3,
            "none" => Scheme::None,
            _ => return Err(PlacementError::UnknownScheme(name.to_string())),
        };
        if let (Some(hash), false) = (hash, matches!(scheme, Scheme::Modula(_))) {
            return Err(PlacementError::HashNotModula { hash, scheme });
        }
        Ok(scheme)
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scheme::Modula(h) => write!(f, "modula/{h}"),
            Scheme::Ketama => f.write_str("ketama"),
            Scheme::KetamaSpy => f.write_str("ketama-spy"),
            Scheme::Ch3 => f.write_str("ch3"),
            Scheme::None => f.write_str("none"),
        }
    }
}

impl std::str::FromStr for Scheme {
    type Err = PlacementError;

    /// The form `Display` writes (`modula/md5`, `ketama`, ...).
    fn from_str(text: &str) -> Result<Self, PlacementError> {
        match text.split_once('/') {
            Some((name, hash)) => Scheme::parse(name, Some(hash.parse()?)),
            None => Scheme::parse(text, None),
        }
    }
}

impl serde::Serialize for Scheme {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Scheme {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A server as the distributions name it: the host as written (no
/// brackets), its port (0 for a unix socket, whose path is the host), and
/// its weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub host: String,
    pub port: u16,
    pub weight: u32,
}

/// A scheme bound to its servers: maps key bytes to a server index.
#[derive(Debug, Clone)]
pub enum Router {
    /// One server, or no placement: every key goes to index 0.
    Single,
    Modula(KeyHash, u32),
    Continuum(ketama::Continuum),
    Ch3(u64),
}

impl Router {
    /// The router of `scheme` over `servers` (in their given order, which
    /// is the index order a client's server list has).
    pub fn new(scheme: Scheme, servers: &[Server]) -> Self {
        if servers.len() <= 1 || !scheme.places_keys() {
            return Router::Single;
        }
        match scheme {
            Scheme::Modula(h) => Router::Modula(h, servers.len() as u32),
            Scheme::Ketama => {
                Router::Continuum(ketama::Continuum::new(servers, Naming::Libmemcached))
            }
            Scheme::KetamaSpy => Router::Continuum(ketama::Continuum::new(servers, Naming::Spy)),
            Scheme::Ch3 => Router::Ch3(servers.len() as u64),
            Scheme::None => Router::Single,
        }
    }

    /// The index of the server that holds `key`.
    #[inline]
    pub fn server_of(&self, key: &[u8]) -> usize {
        match self {
            Router::Single => 0,
            Router::Modula(h, n) => (h.digest(key) % n) as usize,
            Router::Continuum(c) => c.server_of(key),
            Router::Ch3(n) => furc_hash(key, *n) as usize,
        }
    }

    /// Points on a ketama continuum (0 for other schemes).
    pub fn points(&self) -> usize {
        match self {
            Router::Continuum(c) => c.len(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests;
