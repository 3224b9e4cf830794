//! TLS to the cache (`--tls`): the run's client configuration, made once
//! (so that sessions resume across its connections), and the record layer
//! of one connection, driven over the caller's own socket: the workers'
//! non-blocking ones under epoll, or a side thread's blocking one.
//!
//! rustls seals and opens records in memory; every byte still goes
//! through the engine's own `send` and `recvmsg`, so kernel receive
//! stamps, late reads and pipelining work as over plain TCP: an answer is
//! stamped by the segment whose read completed its record. The record
//! layer is this one type (`Session`): kernel TLS offload, where a kernel
//! has it, would replace it behind the same calls.
//!
//! Not the agents' control plane (that is `agent::tls`, through tonic).

use super::TlsError;
use crate::spec::TlsSpec;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

mod insecure;
mod names;
mod sessions;

use insecure::NoCheck;
use names::version_name;
pub use names::{alert_name, describe};

/// The run's TLS client: one configuration (and session cache) for every
/// connection, and what their handshakes came to.
#[derive(Debug)]
pub struct Client {
    config: Arc<ClientConfig>,
    /// The same without resumption: every session once the server has
    /// refused a resumed handshake.
    fresh: Arc<ClientConfig>,
    spec: TlsSpec,
    handshakes: AtomicU64,
    resumed: AtomicU64,
    failed: AtomicU64,
    /// Thread CPU time spent in handshakes, ns.
    cpu_ns: AtomicU64,
    negotiated: OnceLock<(String, String)>,
    /// Why the first failed handshake failed.
    first_failure: OnceLock<String>,
    /// The alert with which the server refused a resumed handshake.
    resumption_refused: OnceLock<String>,
}

/// What the run's TLS came to, for the report's header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TlsReport {
    /// The protocol version of the first handshake (`TLSv1.3`).
    pub version: Option<String>,
    /// Its cipher suite (`TLS13_AES_256_GCM_SHA384`).
    pub cipher_suite: Option<String>,
    /// Handshakes completed, of them resumed, and failed.
    pub handshakes: u64,
    pub resumed: u64,
    pub failed: u64,
    /// Why the first failed handshake failed (the alert, the certificate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
    /// The alert with which the server refused a resumed handshake, after
    /// which every handshake was a full one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumption_refused: Option<String>,
    /// Client CPU per completed handshake, µs (thread time in rustls).
    pub cpu_per_handshake_us: f64,
    /// `--tls-resume`.
    pub resumption: bool,
    /// The server's certificate was checked (not `--tls-insecure`).
    pub verified: bool,
}

impl TlsReport {
    /// Runs side by side (`report --merge`): counts add, the CPU per
    /// handshake is weighted by handshakes, the first run names the rest.
    pub fn merge<'a>(parts: impl Iterator<Item = &'a TlsReport>) -> Option<TlsReport> {
        let parts: Vec<&TlsReport> = parts.collect();
        let first = (*parts.first()?).clone();
        let sum = |f: fn(&TlsReport) -> u64| parts.iter().map(|t| f(t)).sum::<u64>();
        let handshakes = sum(|t| t.handshakes);
        let cpu: f64 = parts
            .iter()
            .map(|t| t.cpu_per_handshake_us * t.handshakes as f64)
            .sum();
        Some(TlsReport {
            handshakes,
            resumed: sum(|t| t.resumed),
            failed: sum(|t| t.failed),
            first_failure: parts.iter().find_map(|t| t.first_failure.clone()),
            resumption_refused: parts.iter().find_map(|t| t.resumption_refused.clone()),
            cpu_per_handshake_us: cpu / handshakes.max(1) as f64,
            verified: parts.iter().all(|t| t.verified),
            ..first
        })
    }
}

impl Client {
    /// Reads the files `spec` names and makes the configuration; a file
    /// that cannot be used is a usage error.
    pub fn new(spec: &TlsSpec) -> Result<Arc<Client>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Protocols)?;
        let builder = if spec.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoCheck(provider)))
        } else {
            builder.with_root_certificates(roots(spec)?)
        };
        let mut config = match (&spec.cert, &spec.key) {
            (Some(cert), Some(key)) => {
                let chain = certificates(cert, "--tls-cert")?;
                let bytes = crate::untrusted::read_private_bytes(key, "a private key")
                    .map_err(TlsError::KeyFile)?;
                let key =
                    PrivateKeyDer::from_pem_slice(&bytes).map_err(|source| TlsError::NoKey {
                        path: key.clone(),
                        source,
                    })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(TlsError::ClientAuth)?
            }
            _ => builder.with_no_client_auth(),
        };
        let mut fresh = config.clone();
        fresh.resumption = rustls::client::Resumption::disabled();
        config.resumption = match spec.resume {
            true => rustls::client::Resumption::store(Arc::new(sessions::Sessions::default())),
            false => rustls::client::Resumption::disabled(),
        };
        Ok(Arc::new(Client {
            config: Arc::new(config),
            fresh: Arc::new(fresh),
            spec: spec.clone(),
            handshakes: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            cpu_ns: AtomicU64::new(0),
            negotiated: OnceLock::new(),
            first_failure: OnceLock::new(),
            resumption_refused: OnceLock::new(),
        }))
    }

    /// The name a server written as `host` is checked against.
    pub fn name_for(&self, host: &str) -> Result<ServerName<'static>, TlsError> {
        let name = self.spec.server_name.as_deref().unwrap_or(host);
        ServerName::try_from(name.to_string()).map_err(|_| TlsError::ServerName(name.to_string()))
    }

    /// Counts a failed handshake, and keeps why if it is the first.
    fn failed(&self, why: &str) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let _ = self.first_failure.get_or_init(|| why.to_string());
    }

    /// A session to the server checked as `name`, its handshake not begun
    /// (its ClientHello made: a session to resume offered or not).
    pub fn session(self: &Arc<Self>, name: &ServerName<'static>) -> io::Result<Session> {
        let config = match self.resumption_refused.get() {
            Some(_) => &self.fresh,
            None => &self.config,
        };
        let (conn, offered_resumption) =
            sessions::offered(|| ClientConnection::new(config.clone(), name.clone()));
        let conn = conn.map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Session {
            conn,
            offered_resumption,
            client: self.clone(),
            sealed: Vec::new(),
            sealed_pos: 0,
            sealed_total: 0,
            pushed: 0,
            marks: VecDeque::new(),
            plain_sent: 0,
            handshake_cpu_ns: 0,
        })
    }

    /// What the handshakes so far came to.
    pub fn report(&self) -> TlsReport {
        let handshakes = self.handshakes.load(Ordering::Relaxed);
        let negotiated = self.negotiated.get();
        TlsReport {
            version: negotiated.map(|n| n.0.clone()),
            cipher_suite: negotiated.map(|n| n.1.clone()),
            handshakes,
            resumed: self.resumed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            first_failure: self.first_failure.get().cloned(),
            resumption_refused: self.resumption_refused.get().cloned(),
            cpu_per_handshake_us: self.cpu_ns.load(Ordering::Relaxed) as f64
                / 1e3
                / handshakes.max(1) as f64,
            resumption: self.spec.resume,
            verified: !self.spec.insecure,
        }
    }
}

/// The certificates to trust: `--tls-ca`'s, else the system's.
fn roots(spec: &TlsSpec) -> Result<rustls::RootCertStore, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    match &spec.ca {
        Some(path) => {
            for cert in certificates(path, "--tls-ca")? {
                roots.add(cert).map_err(|source| TlsError::Trust {
                    path: path.clone(),
                    source,
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(TlsError::NoRoots);
            }
        }
    }
    Ok(roots)
}

/// Every certificate of a PEM file; at least one.
fn certificates(
    path: &std::path::Path,
    flag: &'static str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = pem_file(path, flag)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            flag,
            path: path.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            flag,
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

/// A PEM file, bounded and regular.
fn pem_file(path: &std::path::Path, flag: &'static str) -> Result<Vec<u8>, TlsError> {
    crate::untrusted::read_bytes(path, crate::untrusted::Bound::Secret, "a PEM file")
        .map_err(|source| TlsError::PemFile { flag, source })
}

/// One connection's record layer. Plaintext goes in with `push` and out
/// with `send`; ciphertext read from the socket goes in with `open`.
pub struct Session {
    conn: ClientConnection,
    /// Its ClientHello offered a session to resume.
    offered_resumption: bool,
    client: Arc<Client>,
    /// Sealed records not yet handed to the kernel, from `sealed_pos`.
    sealed: Vec<u8>,
    sealed_pos: usize,
    /// Ciphertext bytes sealed so far; plaintext bytes pushed so far.
    sealed_total: u64,
    pushed: u64,
    /// (ciphertext end, plaintext end) of each push: the plaintext up to
    /// the second was sent once the ciphertext up to the first was.
    marks: VecDeque<(u64, u64)>,
    plain_sent: u64,
    handshake_cpu_ns: u64,
}

impl Session {
    /// Seals `plain` into records (all of it: the records wait in memory
    /// until the kernel takes them).
    pub fn push(&mut self, plain: &[u8]) -> io::Result<()> {
        let mut rest = plain;
        while !rest.is_empty() {
            let n = self.conn.writer().write(rest)?;
            rest = &rest[n..];
            self.seal()?;
            if n == 0 {
                return Err(io::Error::other("the TLS session takes no more data"));
            }
        }
        self.pushed += plain.len() as u64;
        self.marks.push_back((self.sealed_total, self.pushed));
        Ok(())
    }

    /// Moves what rustls has sealed into `sealed`.
    fn seal(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            let n = self.conn.write_tls(&mut self.sealed)?;
            self.sealed_total += n as u64;
        }
        Ok(())
    }

    /// Hands sealed records to the kernel until it takes no more.
    pub fn send(&mut self, socket: &OwnedFd) -> io::Result<()> {
        self.seal()?;
        while self.sealed_pos < self.sealed.len() {
            match super::send_raw(socket, &self.sealed[self.sealed_pos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sealed_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let unsent = (self.sealed.len() - self.sealed_pos) as u64;
        let on_wire = self.sealed_total - unsent;
        while let Some(&(cipher_end, plain_end)) = self.marks.front() {
            if cipher_end > on_wire {
                break;
            }
            self.plain_sent = plain_end;
            self.marks.pop_front();
        }
        if self.sealed_pos == self.sealed.len() {
            self.sealed.clear();
            self.sealed_pos = 0;
        }
        Ok(())
    }

    /// Plaintext bytes sealed so far (sent or waiting in `sealed`).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Plaintext bytes whose records the kernel has taken.
    pub fn plain_sent(&self) -> u64 {
        self.plain_sent
    }

    /// Records wait to be sent.
    pub fn has_output(&self) -> bool {
        self.sealed_pos < self.sealed.len() || self.conn.wants_write()
    }

    /// Opens the records in `cipher` (bytes just read), appending their
    /// plaintext to `plain`; how many bytes it appended. A record that
    /// does not open, or an alert, is an `InvalidData` error naming it.
    pub fn open(&mut self, mut cipher: &[u8], plain: &mut Vec<u8>) -> io::Result<usize> {
        let before = plain.len();
        while !cipher.is_empty() {
            if self.conn.read_tls(&mut cipher)? == 0 {
                break;
            }
            self.process()?;
            self.drain(plain)?;
        }
        Ok(plain.len() - before)
    }

    fn process(&mut self) -> io::Result<()> {
        match self.conn.process_new_packets() {
            Ok(_) => Ok(()),
            Err(e) => {
                // The alert that says why goes out (best effort).
                let _ = self.seal();
                let why = match &e {
                    rustls::Error::AlertReceived(alert)
                        if self.offered_resumption && self.conn.is_handshaking() =>
                    {
                        self.refuse_resumption(alert)
                    }
                    _ => describe(&e, self.client.spec.cert.is_some()),
                };
                if self.conn.is_handshaking() {
                    self.client.failed(&why);
                }
                Err(io::Error::new(io::ErrorKind::InvalidData, why))
            }
        }
    }

    /// The server refused this resumed handshake with `alert` (memcached
    /// does under `ssl_verify_mode=2`: OpenSSL has no session context to
    /// resume in): later sessions to every server make full handshakes.
    fn refuse_resumption(&self, alert: &rustls::AlertDescription) -> String {
        let alert = alert_name(alert);
        let _ = self.client.resumption_refused.get_or_init(|| alert.clone());
        format!(
            "the server refused a resumed TLS handshake with the alert {alert} \
             (full handshakes from then on; --tls-resume off makes them so from the start)"
        )
    }

    /// Whether the server refused this session's offer to resume, so
    /// that a new connection, with a full handshake, may be tried.
    pub fn resumption_refused(&self) -> bool {
        self.offered_resumption && self.client.resumption_refused.get().is_some()
    }

    /// Every byte of plaintext rustls holds, into `plain`.
    fn drain(&mut self, plain: &mut Vec<u8>) -> io::Result<()> {
        let mut reader = self.conn.reader();
        loop {
            let chunk = match reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok(());
            }
            let n = chunk.len();
            plain.extend_from_slice(chunk);
            reader.consume(n);
        }
    }

    /// Over TLS 1.3 the server judges the client's certificate (or its
    /// lack of one) after the client's handshake is done: a refusal comes
    /// as an alert after. Reads what came within `wait` (the server's
    /// tickets, or that alert), so that a refusal is a failed handshake,
    /// not a connection lost later. (rustls does not say whether the
    /// server asked for a certificate, so every TLS 1.3 connect looks.)
    pub fn confirm(&mut self, socket: &OwnedFd, wait: std::time::Duration) -> io::Result<()> {
        let tls13 = self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3);
        if !tls13 {
            return Ok(());
        }
        let wait = super::blocking::Wait {
            timeout: wait,
            stop: None,
        };
        if super::blocking::ready(socket, rustix::event::PollFlags::IN, wait).is_err() {
            return Ok(());
        }
        let mut scratch = [0u8; 4096];
        let mut none = Vec::new();
        match super::recv_raw(socket, &mut scratch) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection after the TLS handshake (did it refuse the client certificate?)",
            )),
            Ok(n) => {
                let refused = self.open(&scratch[..n], &mut none);
                if let Err(e) = &refused {
                    self.client.failed(&e.to_string());
                }
                refused.map(|_| ())
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Whether the handshake is still under way.
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Takes the handshake as far as the socket allows without waiting:
    /// `Ok(true)` once it is done (its last records maybe still queued
    /// for `send`). `scratch` takes the ciphertext read.
    pub fn handshake(&mut self, socket: &OwnedFd, scratch: &mut [u8]) -> io::Result<bool> {
        let began = crate::stats::cpu::thread_cpu_ns();
        let step = self.handshake_step(socket, scratch);
        self.handshake_cpu_ns += crate::stats::cpu::thread_cpu_ns().saturating_sub(began);
        if matches!(step, Ok(true)) {
            self.done();
        }
        step
    }

    fn handshake_step(&mut self, socket: &OwnedFd, scratch: &mut [u8]) -> io::Result<bool> {
        let mut ignored = Vec::new();
        loop {
            self.send(socket)?;
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            let n = match super::recv_raw(socket, scratch) {
                Ok(0) => {
                    let why = "the server closed the connection during the TLS handshake (is it serving TLS on this port?)";
                    self.client.failed(why);
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, why));
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // Data before the handshake's end is none of ours.
            self.open(&scratch[..n], &mut ignored)?;
        }
    }

    /// A handshake completed: counted, with its kind and CPU.
    fn done(&mut self) {
        let c = &self.client;
        c.handshakes.fetch_add(1, Ordering::Relaxed);
        c.cpu_ns.fetch_add(self.handshake_cpu_ns, Ordering::Relaxed);
        if self.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
            c.resumed.fetch_add(1, Ordering::Relaxed);
        }
        let _ = c.negotiated.get_or_init(|| {
            let version = self
                .conn
                .protocol_version()
                .map_or("?".into(), version_name);
            let suite = self
                .conn
                .negotiated_cipher_suite()
                .map_or("?".into(), |s| format!("{:?}", s.suite()));
            (version, suite)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_reports_add_their_counts() {
        let one = TlsReport {
            version: Some("TLSv1.3".into()),
            handshakes: 10,
            resumed: 4,
            cpu_per_handshake_us: 100.0,
            verified: true,
            ..TlsReport::default()
        };
        let two = TlsReport {
            handshakes: 30,
            failed: 1,
            cpu_per_handshake_us: 60.0,
            verified: false,
            ..TlsReport::default()
        };
        let m = TlsReport::merge([&one, &two].into_iter()).unwrap();
        assert_eq!((m.handshakes, m.resumed, m.failed), (40, 4, 1));
        assert!((m.cpu_per_handshake_us - 70.0).abs() < 1e-9);
        assert!(!m.verified);
        assert_eq!(m.version.as_deref(), Some("TLSv1.3"));
        assert!(TlsReport::merge(std::iter::empty()).is_none());
    }

    #[test]
    fn alerts_are_named_as_the_rfc_names_them() {
        assert_eq!(
            alert_name(&rustls::AlertDescription::CertificateRequired),
            "certificate_required"
        );
        assert_eq!(
            alert_name(&rustls::AlertDescription::HandshakeFailure),
            "handshake_failure"
        );
        assert_eq!(
            alert_name(&rustls::AlertDescription::UnknownCA),
            "unknown_ca"
        );
        assert_eq!(version_name(rustls::ProtocolVersion::TLSv1_3), "TLSv1.3");
    }
}
