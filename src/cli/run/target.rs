//! `mcbench run`'s flags under "Target".

use super::parse_on_off;
use crate::cli::CliError;
use crate::placement::{PlacementError, Scheme};
use crate::spec::{ServerAddr, TlsSpec};
use clap::Args;
use std::path::PathBuf;

/// Where the load goes: the servers, how keys are placed on them, and how each is reached (wire protocol, transport, SASL, TLS).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Target")]
pub struct TargetArgs {
    /// Servers: HOST:PORT, udp:HOST:PORT or unix:/path; none starts a
    /// memcached.
    ///
    /// `HOST:PORT` (TCP), `udp:HOST:PORT` or `unix:/path`; repeatable,
    /// comma-separated; `MEMCACHED_SERVERS` as fallback. None: a `memcached`
    /// from PATH is started on a free 127.0.0.1 port for the run.
    /// `HOST:PORT:WEIGHT` weighs a server (ketama); `HOST:FIRST-LAST` names one
    /// server per port (memcache-perf's ranges)
    #[arg(
        value_name = "ADDR",
        short = 's',
        long = "server",
        env = "MEMCACHED_SERVERS",
        value_delimiter = ','
    )]
    pub servers: Vec<String>,

    /// Where keys live among several servers: modula, ketama, ketama-spy, ch3
    /// or none.
    ///
    /// Where keys live among several servers, computed as the application's
    /// client computes it: `modula` (libmemcached's default; `--hash`
    /// one_at_a_time (default), md5, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32,
    /// jenkins), `ketama` (libmemcached `KETAMA_WEIGHTED`, and twemproxy's
    /// `distribution: ketama` with `hash: md5`: MD5, 160 points per server by
    /// weight, `:11211` dropped from the point names), `ketama-spy`
    /// (spymemcached's names), `ch3` (mcrouter's furc hash), or `none` (each
    /// connection's server takes any key, as mutilate and memcache-perf do;
    /// every server is preloaded with every key). A key is drawn from the whole
    /// key space by its popularity first, then sent to its server: hot keys
    /// make a hot server. With several servers each connection is a client with
    /// a socket to every server, keeping `depth` × servers requests in flight,
    /// each on its key's socket; the report adds a row per server. `mcbench
    /// route -s ... KEY...` prints where keys go.
    #[arg(long, value_name = "NAME")]
    pub distribution: Option<String>,

    /// modula's key hash: one_at_a_time (default), md5, crc, fnv1_64, ..., jenkins.
    ///
    /// modula's key hash: one_at_a_time (libmemcached's default), md5,
    /// crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, jenkins.
    #[arg(long, value_name = "NAME")]
    pub hash: Option<crate::placement::KeyHash>,

    /// Thread t connects to server t mod servers only (mutilate's and memcache-
    /// perf's -R); each server then gets any key.
    ///
    /// mutilate's and memcache-perf's `-R`: thread t connects to server t mod
    /// servers only (with fewer threads than servers, server s to thread s mod
    /// threads); implies `--distribution none`.
    #[arg(hide_short_help = true, long)]
    pub roundrobin: bool,

    /// Run the same workload against each server in turn, each from its own
    /// preload, then compare them (the repcached guide's comparison).
    ///
    /// The repcached guide's comparison in one command: the same workload
    /// against each `-s` server alone, in turn, each from its own preload; each
    /// run's report prints as it ends, then the `compare` table with each run's
    /// ratio to the first (and the servers' own figures with `--server-stats`:
    /// commands/s, hit ratio, evictions, items, MB/s, CPU per command).
    /// `--json`, `--csv`, `--hdr-log` get a file per server (`r.json` →
    /// `r.1.json`, `r.2.json`, ...); `--html` overlays the runs. Not with
    /// `--rep-write`, `--roundrobin`, `--save` or outputs to `-`.
    #[arg(hide_short_help = true, long)]
    pub each: bool,

    /// Wire protocol: ascii, meta, binary or resp (Redis).
    ///
    /// `ascii` (default), `meta` (memcached 1.6 `mg`/`ms`/`md`/`ma`/`mn`),
    /// `binary` (also `-B`), `resp` (Redis: GET, SET, MGET, DEL, INCRBY/DECRBY,
    /// APPEND). A command the protocol lacks is refused before any traffic.
    #[arg(value_name = "P", long, default_value = "ascii")]
    pub protocol: mcbench_proto::Protocol,

    /// memaslap's --udp: reach every HOST:PORT server over UDP.
    ///
    /// memaslap's: plain `HOST:PORT` servers over UDP. A request must fit one
    /// 1400-byte datagram; a request unanswered after 1 s counts as
    /// `udp_timeout`, never as a latency.
    #[arg(long, requires = "servers")]
    pub udp: bool,

    /// memaslap's -B: the binary protocol (same as --protocol binary).
    #[arg(hide_short_help = true, short = 'B', long, conflicts_with = "protocol")]
    pub binary: bool,

    /// User to authenticate as: SASL PLAIN, memcached -Y text auth, or Redis
    /// AUTH.
    ///
    /// Authenticate every connection before the run: SASL PLAIN (binary,
    /// memcached `-S`), text authentication (ascii and meta, memcached `-Y`),
    /// `AUTH` (resp). A refusal exits 1. `MCBENCH_PASSWORD` keeps the password
    /// out of `ps`; it is never written to reports.
    #[arg(
        value_name = "USER",
        long,
        short = 'U',
        alias = "username",
        env = "MCBENCH_USER"
    )]
    pub user: Option<String>,

    /// Password for --user (mutilate's -P; MCBENCH_PASSWORD keeps it out
    /// of ps).
    #[arg(
        value_name = "PASS",
        long,
        short = 'P',
        env = "MCBENCH_PASSWORD",
        hide_env_values = true
    )]
    pub password: Option<String>,

    /// Speak TLS to every server (or name them tls:HOST:PORT)
    ///
    /// Every connection speaks TLS (rustls, in the engine's own event loop:
    /// kernel receive stamps and pipelining work as over TCP). The server's
    /// certificate is checked against --tls-ca (else the system's roots) and
    /// the server's host as written (else --tls-server-name). TCP only.
    #[arg(long)]
    pub tls: bool,

    /// Trust the certificates in this PEM file for --tls (default: the
    /// system's roots).
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,

    /// A client certificate chain (PEM) for a server that asks for one
    /// (memcached's ssl_verify_mode); with --tls-key.
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert.
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,

    /// The name sent (SNI) and checked in the server's certificate
    /// (default: each server's host as written).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub tls_server_name: Option<String>,

    /// Check no certificate at all (the report says so, loudly).
    #[arg(hide_short_help = true, long)]
    pub tls_insecure: bool,

    /// Resume TLS sessions on later connections (on), or make every
    /// handshake a full one (off), to measure both. A server that refuses
    /// a resumed handshake (memcached under ssl_verify_mode=2) gets full
    /// ones from then on, and the report says so.
    #[arg(hide_short_help = true, long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub tls_resume: bool,
}

/// The servers, their weights and their TLS.
type Servers = (Vec<ServerAddr>, Vec<u32>, Option<TlsSpec>);

impl TargetArgs {
    /// The servers as written (`--udp` applied), each port range expanded,
    /// with their ketama weights and the TLS they are reached over.
    pub(super) fn servers(&self) -> Result<Servers, CliError> {
        let written: Vec<String> = self
            .servers
            .iter()
            .map(|s| self.with_transport(s))
            .collect();
        let (servers, weights) = crate::spec::servers::expand(&written)?;
        let tls = self.tls_spec(&servers)?;
        Ok((servers, weights, tls))
    }

    /// `--udp` puts plain `HOST:PORT` servers on UDP.
    fn with_transport(&self, server: &str) -> String {
        let server = server.trim();
        let plain = !["udp:", "unix:", "tcp:"]
            .iter()
            .any(|t| server.starts_with(t));
        if self.udp && plain {
            format!("udp:{server}")
        } else {
            server.to_string()
        }
    }

    /// `--distribution` with `--hash`; `--roundrobin` means `none`.
    pub(super) fn distribution(&self) -> Result<Scheme, PlacementError> {
        match (&self.distribution, self.roundrobin) {
            (None, true) if self.hash.is_none() => Ok(Scheme::None),
            (None, _) => Scheme::parse("modula", self.hash),
            (Some(name), _) => Scheme::parse(name, self.hash),
        }
    }

    /// The wire protocol: `-B` is memaslap's binary.
    pub(super) fn wire_protocol(&self) -> mcbench_proto::Protocol {
        if self.binary {
            mcbench_proto::Protocol::Binary
        } else {
            self.protocol
        }
    }

    /// `--tls` and its flags, or servers named `tls:`; the TLS flags
    /// without either are refused.
    fn tls_spec(&self, servers: &[ServerAddr]) -> Result<Option<TlsSpec>, CliError> {
        let prefixed = servers.iter().any(|s| s.has_tls_prefix());
        if !self.tls && !prefixed {
            let given = [
                ("--tls-ca", self.tls_ca.is_some()),
                ("--tls-cert", self.tls_cert.is_some()),
                ("--tls-key", self.tls_key.is_some()),
                ("--tls-server-name", self.tls_server_name.is_some()),
                ("--tls-insecure", self.tls_insecure),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
                return Err(CliError::TlsFlag(flag));
            }
            return Ok(None);
        }
        Ok(Some(TlsSpec {
            ca: self.tls_ca.clone(),
            cert: self.tls_cert.clone(),
            key: self.tls_key.clone(),
            server_name: self.tls_server_name.clone(),
            insecure: self.tls_insecure,
            resume: self.tls_resume,
        }))
    }
}
