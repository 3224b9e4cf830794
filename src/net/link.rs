//! What a connection is made of: a server to reach (with, over `--tls`,
//! the session configuration and the name checked), and once connected,
//! the socket with its TLS session.

use super::tls::{Client, Session};
use crate::spec::Address;
use rustls::pki_types::ServerName;
use std::fmt;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// A server as the run reaches it: its address, and over `--tls` the
/// run's TLS client and the name its certificate must carry.
#[derive(Clone)]
pub struct Target {
    pub addr: Address,
    pub tls: Option<(Arc<Client>, ServerName<'static>)>,
}

impl Target {
    /// A server reached in clear.
    pub fn plain(addr: Address) -> Target {
        Target { addr, tls: None }
    }

    /// A new TLS session to this server, if it is reached over TLS.
    pub fn session(&self) -> std::io::Result<Option<Box<Session>>> {
        match &self.tls {
            Some((client, name)) => Ok(Some(Box::new(client.session(name)?))),
            None => Ok(None),
        }
    }
}

impl std::ops::Deref for Target {
    type Target = Address;
    fn deref(&self) -> &Address {
        &self.addr
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tls {
            Some(_) => write!(f, "tls:{}", self.addr),
            None => write!(f, "{}", self.addr),
        }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A connected socket and, over TLS, its session (handshake done for a
/// blocking link; under way, or not begun, for a worker's).
pub struct Link {
    pub socket: OwnedFd,
    pub tls: Option<Box<Session>>,
    /// How long its TLS handshake took, ns (0: none, or not yet done).
    pub handshake_ns: u64,
}

impl Link {
    pub fn plain(socket: OwnedFd) -> Link {
        Link {
            socket,
            tls: None,
            handshake_ns: 0,
        }
    }
}
