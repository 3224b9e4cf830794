//! The server list as written: `HOST:PORT:WEIGHT` weights (libmemcached's
//! and memaslap's), memcache-perf's `HOST:PORT-END_PORT` ranges, what key
//! placement needs of each server, and what `--server-stats` needs.

use super::SpecError;

use super::{Address, RunSpec, ServerAddr};
use crate::placement::{Router, Scheme, Server};

/// The most servers one port range may name.
const MAX_RANGE: u32 = 1024;

/// Expands `written` into addresses and their weights (1 unless given).
/// A weight is a third field after a port (`10.0.0.1:11211:3`,
/// `[::1]:11211:3`); a port range gives one server per port, each with
/// the range's weight.
pub fn expand(written: &[String]) -> Result<(Vec<ServerAddr>, Vec<u32>), SpecError> {
    let mut addrs = Vec::new();
    let mut weights = Vec::new();
    for text in written {
        let text = text.trim();
        let (address, weight) = split_weight(text)?;
        for a in expand_range(&address)? {
            addrs.push(ServerAddr::parse(&a)?);
            weights.push(weight);
        }
    }
    Ok((addrs, weights))
}

/// `HOST:PORT:WEIGHT` → (`HOST:PORT`, WEIGHT); anything else unchanged
/// with weight 1. A bare IPv6 address (many colons, no brackets) has no
/// weight.
fn split_weight(text: &str) -> Result<(String, u32), SpecError> {
    if text.starts_with("unix:") {
        return Ok((text.to_string(), 1));
    }
    let (prefix, rest) = match text.split_once(':') {
        Some((p @ ("udp" | "tcp"), rest)) => (format!("{p}:"), rest),
        _ => (String::new(), text),
    };
    // HOST:PORT:WEIGHT with a host and a port (or range): "::1" and
    // "fe80::1" are bare IPv6 addresses.
    let is_port = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    let weighted = if let Some((_, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']'))
    {
        let parts: Vec<&str> = after.split(':').collect();
        parts.len() == 3 && parts[0].is_empty() && is_port(parts[1])
    } else {
        let parts: Vec<&str> = rest.split(':').collect();
        parts.len() == 3 && !parts[0].is_empty() && is_port(parts[1])
    };
    if !weighted {
        return Ok((text.to_string(), 1));
    }
    let (address, weight) = rest.rsplit_once(':').expect("two colons");
    let weight = weight
        .parse::<u32>()
        .ok()
        .filter(|w| *w > 0)
        .ok_or_else(|| {
            SpecError::Invalid(format!("server '{text}': the weight after HOST:PORT must be a whole number from 1, got '{weight}'"))
        })?;
    Ok((format!("{prefix}{address}"), weight))
}

/// `HOST:P1-P2` → one address per port; anything else unchanged.
fn expand_range(text: &str) -> Result<Vec<String>, SpecError> {
    let bare = ["udp:", "tcp:"]
        .iter()
        .find_map(|p| text.strip_prefix(p))
        .unwrap_or(text);
    if !bare.contains(':') {
        return Ok(vec![text.to_string()]);
    }
    let Some((head, ports)) = text.rsplit_once(':') else {
        return Ok(vec![text.to_string()]);
    };
    let Some((from, to)) = ports.split_once('-') else {
        return Ok(vec![text.to_string()]);
    };
    if text.starts_with("unix:") {
        return Ok(vec![text.to_string()]);
    }
    let bad = || {
        SpecError::Invalid(format!(
            "server '{text}': a port range is HOST:FIRST-LAST with FIRST <= LAST"
        ))
    };
    let from: u16 = from.parse().map_err(|_| bad())?;
    let to: u16 = to.parse().map_err(|_| bad())?;
    if from > to {
        return Err(bad());
    }
    if u32::from(to - from) >= MAX_RANGE {
        return Err(SpecError::Invalid(format!(
            "server '{text}' names {} servers; a range names at most {MAX_RANGE}",
            u32::from(to - from) + 1
        )));
    }
    Ok((from..=to).map(|p| format!("{head}:{p}")).collect())
}

impl RunSpec {
    /// Whether keys are placed on the run's `nservers` servers: then each
    /// connection is a client with a socket to every server.
    pub fn places_keys(&self, nservers: usize) -> bool {
        nservers > 1 && self.target.distribution.places_keys()
    }

    /// Sockets per closed-loop unit: a client's sockets to every server
    /// when keys are placed, else one connection's (`--facebook` groups).
    pub fn sockets_per_unit(&self, nservers: usize) -> usize {
        if self.places_keys(nservers) {
            nservers * self.sockets_per_connection()
        } else {
            self.sockets_per_connection()
        }
    }

    /// Where the run's keys live.
    pub fn router(&self) -> Router {
        let all = placement_list(&self.target.servers, &self.target.weights);
        // A replication run places keys on its writers only.
        let placed = self
            .server
            .replication
            .as_ref()
            .map_or(all.len(), |r| r.writers.min(all.len()));
        Router::new(self.target.distribution, &all[..placed])
    }

    /// Placement's checks: weights only where a scheme reads them;
    /// `--roundrobin` with a connection for each thread of a server; the
    /// modes that bind each connection to one server (`--roundrobin`,
    /// `--num-conns`, `--facebook`) with `--distribution none` only.
    pub(super) fn validate_placement(&self) -> Result<(), SpecError> {
        let n = self.target.servers.len();
        if n > crate::workload::MAX_SERVERS {
            return Err(SpecError::Invalid(format!(
                "{n} servers; a run places keys on at most {}",
                crate::workload::MAX_SERVERS
            )));
        }
        if self.target.weights.len() > n {
            return Err(SpecError::Refused("more weights than servers"));
        }
        check_weights(&self.target.weights, self.target.distribution)?;
        if self.target.roundrobin {
            self.validate_roundrobin(n)?;
        }
        if !self.places_keys(n) {
            return Ok(());
        }
        let bound = if self.target.roundrobin {
            Some("--roundrobin assigns each thread's connections to one server")
        } else if self.churn().is_some() {
            Some("--num-conns opens each connection to one server, as twemperf does")
        } else if self.conns.facebook {
            Some("--facebook groups each connection's sockets on one server, as memaslap does")
        } else {
            None
        };
        if let Some(why) = bound {
            return Err(SpecError::Invalid(format!(
                "{why}: with several servers it needs --distribution none (each server gets any key), not {}",
                self.target.distribution
            )));
        }
        if self.load.connections < self.load.threads {
            return Err(SpecError::Invalid(format!(
                "--threads {} needs as many connections: with keys placed on {n} servers each connection is a client with a socket to every server (-c {})",
                self.load.threads, self.load.connections
            )));
        }
        Ok(())
    }

    /// `--roundrobin`: held connections only, and one for every thread
    /// that serves a server.
    fn validate_roundrobin(&self, n: usize) -> Result<(), SpecError> {
        if self.churn().is_some() {
            return Err(SpecError::Refused("--roundrobin assigns held connections to threads; --num-conns opens its own, spread over the servers"));
        }
        let per_server = self.load.threads.div_ceil(n.max(1));
        if self.load.threads > n && self.load.connections < per_server {
            return Err(SpecError::Invalid(format!(
                "--roundrobin gives each of the {n} servers up to {per_server} threads, each needing a connection to it: use -c {per_server} or more"
            )));
        }
        Ok(())
    }
}

impl RunSpec {
    /// `--server-stats` reads memcached's text `stats` on connections of
    /// its own: not over UDP, not from redis, and not after a binary SASL
    /// handshake (which binds the connection to the binary protocol).
    pub(super) fn validate_server_stats(&self) -> Result<(), SpecError> {
        if !self.server.server_stats {
            return Ok(());
        }
        if self.target.protocol == mcbench_proto::Protocol::Resp {
            return Err(SpecError::Refused("--server-stats reads memcached's `stats`; redis answers INFO, which it does not read"));
        }
        if self.target.user.is_some() && self.target.protocol == mcbench_proto::Protocol::Binary {
            return Err(SpecError::Refused("--server-stats asks `stats` in the text protocol; with --user over --protocol binary the connection would be bound to binary by its SASL handshake: use --protocol ascii or meta"));
        }
        if let Some(s) = ServerAddr::first_udp(&self.target.servers) {
            return Err(SpecError::Invalid(format!(
                "--server-stats reads stats over TCP or a unix socket, not UDP ('{s}')"
            )));
        }
        Ok(())
    }
}

impl RunSpec {
    /// `--each`: the same run against each server alone, in turn; one spec
    /// per server. Modes that need the servers together are refused.
    pub fn each(&self) -> Result<Vec<RunSpec>, SpecError> {
        if self.target.servers.len() < 2 {
            return Err(SpecError::Refused("--each runs the workload against each server in turn: give at least two (-s A -s B)"));
        }
        if self.server.replication.is_some() {
            return Err(SpecError::Refused(
                "--each runs one server at a time; --rep-write needs them together",
            ));
        }
        if self.target.roundrobin {
            return Err(SpecError::Refused(
                "--each runs one server at a time; --roundrobin spreads threads over several",
            ));
        }
        if self.recording.save_rate.is_some() {
            return Err(SpecError::Refused(
                "--save keeps one run's requests; --each makes one run per server",
            ));
        }
        self.target
            .servers
            .iter()
            .map(|server| {
                // A label names the set; each run adds its server to it,
                // whole (the label gives way to it).
                let label = self.recording.label.as_ref().map(|l| {
                    let room =
                        super::MAX_LABEL.saturating_sub(server.to_string().chars().count() + 3);
                    let l: String = l.chars().take(room.max(1)).collect();
                    format!("{l} · {server}")
                });
                let mut one = self.clone();
                one.recording.label = label;
                one.target.servers = vec![server.clone()];
                one.target.weights = Vec::new();
                one.validate().map(|()| one)
            })
            .collect()
    }
}

/// Weights are read by ketama only: refused elsewhere rather than ignored.
pub fn check_weights(weights: &[u32], scheme: Scheme) -> Result<(), SpecError> {
    if weights.iter().any(|&w| w != 1) && !scheme.weighted() {
        return Err(SpecError::Invalid(format!(
            "server weights (HOST:PORT:WEIGHT) apply to --distribution ketama or ketama-spy, not {scheme}"
        )));
    }
    Ok(())
}

/// The servers at `addrs` (as written) as key distributions name them,
/// with their weights (1 where none is given).
pub fn placement_list(addrs: &[ServerAddr], weights: &[u32]) -> Vec<Server> {
    addrs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            // Every address was checked; one that is not a name keeps its
            // place in the list (indexes are servers) under its text.
            let mut s = Address::name_of(text.as_str()).unwrap_or_else(|_| Server {
                host: text.to_string(),
                port: 0,
                weight: 1,
            });
            s.weight = weights.get(i).copied().unwrap_or(1);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(list: &[&str]) -> Result<(Vec<String>, Vec<u32>), SpecError> {
        let (addrs, weights) = expand(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
        Ok((addrs.iter().map(ToString::to_string).collect(), weights))
    }

    #[test]
    fn weights_and_ranges_expand() {
        let (a, w) = ex(&[
            "10.0.0.1:11211:3",
            "h:7000-7002",
            "udp:h:9:2",
            "[::1]:5:4",
            "::1",
        ])
        .unwrap();
        assert_eq!(
            a,
            [
                "10.0.0.1:11211",
                "h:7000",
                "h:7001",
                "h:7002",
                "udp:h:9",
                "[::1]:5",
                "::1"
            ]
        );
        assert_eq!(w, [3, 1, 1, 1, 2, 4, 1]);
        for bad in ["h:1:0", "h:1:x", "h:9-7", "h:1-x", "h:1-2000"] {
            assert!(ex(&[bad]).is_err(), "{bad}");
        }
        assert_eq!(ex(&["unix:/tmp/a-b:1-2"]).unwrap().0, ["unix:/tmp/a-b:1-2"]);
        assert_eq!(
            ex(&["udp:my-host", "my-host"]).unwrap().0,
            ["udp:my-host", "my-host"]
        );
    }

    #[test]
    fn names_are_host_and_port_as_written() {
        let s = Address::name_of("udp:cache-1:11311").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("cache-1", 11311));
        let s = Address::name_of("[::1]:5").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("::1", 5));
        let s = Address::name_of("10.0.0.1").unwrap();
        assert_eq!(s.port, 11211);
        assert_eq!(Address::name_of("unix:/run/mc").unwrap().port, 0);
    }
}
