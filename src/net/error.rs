//! Why a connection could not be had (the connect, its TLS handshake, the
//! authentication), why a blocking exchange on one failed, and why the
//! run's TLS configuration cannot be made. The caller picks the exit code:
//! a server that cannot be reached is a failed run, a TLS file that cannot
//! be used a usage error.

use super::blocking::Broken;
use super::connect::{describe, STOPPED};
use crate::untrusted::FileError;
use std::io;
use std::path::PathBuf;

/// A connection that could not be opened, or the run's connections that
/// could not all be.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A signal came while connecting.
    #[error("{}", STOPPED)]
    Stopped,
    /// The TCP connect to a run's server failed: it could not be reached.
    #[error("cannot connect to the server at {addr}: {}", describe(.source))]
    Unreachable {
        addr: String,
        #[source]
        source: io::Error,
    },
    /// The stats tools' connect failed.
    #[error("cannot connect to {addr}: {}", describe(.source))]
    Connect {
        addr: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}: a TCP or unix socket is needed")]
    NotStream(String),
    /// What went wrong on the connection to `addr` once connected.
    #[error("{addr}: {source}")]
    At {
        addr: String,
        #[source]
        source: Box<NetError>,
    },
    /// The server refused to resume a TLS session (worth a new try).
    #[error("the server refused resumed TLS handshakes")]
    Resumption,
    #[error("the TLS handshake did not finish within the connect timeout")]
    HandshakeTimeout,
    /// A socket or TLS error, as the OS or rustls words it.
    #[error("{0}")]
    Io(#[source] io::Error),
    /// The handshake's wait broken otherwise (as [`Broken`] words it).
    #[error("{0}")]
    Wait(#[source] Broken),
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// A connection of the run's that failed after `open` others opened.
    #[error("{source} (after {open} open)")]
    After {
        open: usize,
        #[source]
        source: Box<NetError>,
    },
    /// Every server down at the start; why the first is.
    #[error("every server is down: {0}")]
    AllDown(String),
}

impl NetError {
    /// This error, on the connection to `addr`.
    pub fn at(self, addr: impl ToString) -> NetError {
        NetError::At {
            addr: addr.to_string(),
            source: Box::new(self),
        }
    }
}

/// Why the authentication was refused or could not be done.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("sending the credentials: {0}")]
    Send(#[source] Broken),
    /// The codec's words for what is wrong with the reply.
    #[error("malformed authentication reply: {0}")]
    Malformed(String),
    #[error("authentication reply too long")]
    TooLong,
    #[error("the server closed the connection during authentication")]
    Closed,
    #[error("no authentication reply within --timeout")]
    TimedOut,
    #[error("stopped during authentication")]
    Stopped,
    #[error("reading the authentication reply: {0}")]
    Read(String),
    #[error("authentication failed (SASL PLAIN refused)")]
    Refused,
    #[error("the server asked for another SASL step; only PLAIN is supported")]
    AnotherStep,
    #[error("authentication failed: binary status {0:#06x} (is the server started with -S?)")]
    Status(u16),
    #[error("authentication failed: the server replied '{0}'")]
    Declined(String),
}

/// A blocking exchange (a request and its reply) that failed.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    #[error(transparent)]
    Broken(#[from] Broken),
    /// What the caller's check found wrong with the reply.
    #[error("{0}")]
    Reply(String),
    #[error("a reply longer than {0} bytes")]
    TooLong(usize),
}

/// The run's TLS configuration that cannot be made: a file named by a
/// `--tls-*` flag that cannot be used. Usage errors.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("--tls: {0}")]
    Protocols(#[source] rustls::Error),
    #[error("--tls-key: {0}")]
    KeyFile(#[source] FileError),
    #[error("--tls-key {path}: no private key: {source}")]
    NoKey {
        path: PathBuf,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("--tls-cert/--tls-key: {0}")]
    ClientAuth(#[source] rustls::Error),
    #[error("'{0}' is no name a certificate can carry (--tls-server-name)")]
    ServerName(String),
    #[error("--tls-ca {path}: {source}")]
    Trust {
        path: PathBuf,
        #[source]
        source: rustls::Error,
    },
    #[error(
        "--tls: no trusted certificates found on this system; give --tls-ca FILE (or --tls-insecure)"
    )]
    NoRoots,
    /// `flag`'s PEM file, which does not parse.
    #[error("{flag} {path}: {source}")]
    Pem {
        flag: &'static str,
        path: PathBuf,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("{flag} {path}: not a PEM file holding a CERTIFICATE")]
    NoCertificate { flag: &'static str, path: PathBuf },
    #[error("{flag}: {source}")]
    PemFile {
        flag: &'static str,
        #[source]
        source: FileError,
    },
}
