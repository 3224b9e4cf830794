//! twemperf's connection generator as data: how many connections a run
//! opens and closes, at what rate, with how many calls each; and the
//! socket options every connection is opened with.
//!
//! Not the engine's schedule itself (that is `engine::worker::churn`); only
//! what the user asked for, parsed and checked.

use super::SpecError;

use super::units::{self, parse_count};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// The shortest gap, s: the schedule's clock counts ns.
const MIN_INTERVAL_S: f64 = 1e-9;

/// Gaps between connections or between calls, in twemperf's `[D]R1[,R2]`
/// syntax: a bare number is a rate per second (0: the next after the
/// previous one completes); with a letter, the numbers are intervals in
/// seconds (or durations such as `1ms`): `d` fixed, `e` exponential with
/// that mean, `u` uniform over `[R1, R2)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Gaps {
    /// The next starts when the previous one completes (twemperf's `0`).
    AfterPrevious,
    /// A fixed interval, s.
    Fixed { interval_s: f64 },
    /// Exponential intervals of this mean, s (Poisson arrivals).
    Exponential { mean_s: f64 },
    /// Uniform intervals over `[min_s, max_s)`.
    Uniform { min_s: f64, max_s: f64 },
}

impl Gaps {
    /// Parses twemperf's rate syntax (see the type's doc).
    pub fn parse(text: &str) -> Result<Gaps, SpecError> {
        let t = text.trim();
        let bad = |why| SpecError::Gaps {
            text: text.into(),
            why,
        };
        let interval = |s: &str| -> Result<f64, SpecError> {
            let secs = units::parse_duration(s).map_err(|_| bad("not an interval"))?;
            let secs = secs.as_secs_f64();
            if secs >= MIN_INTERVAL_S {
                Ok(secs)
            } else {
                Err(bad("an interval must be at least 1 ns"))
            }
        };
        let mut chars = t.chars();
        match chars.next() {
            Some('d') => Ok(Gaps::Fixed {
                interval_s: interval(chars.as_str())?,
            }),
            Some('e') => Ok(Gaps::Exponential {
                mean_s: interval(chars.as_str())?,
            }),
            Some('u') => {
                let (lo, hi) = chars
                    .as_str()
                    .split_once(',')
                    .ok_or_else(|| bad("uniform needs two intervals, uT1,T2"))?;
                let (min_s, max_s) = (interval(lo)?, interval(hi)?);
                if max_s < min_s {
                    return Err(bad(
                        "the second interval must not be shorter than the first",
                    ));
                }
                Ok(Gaps::Uniform { min_s, max_s })
            }
            _ => {
                let rate = units::parse_rate(t)
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .ok_or_else(|| bad("not a rate"))?;
                if rate > 1.0 / MIN_INTERVAL_S {
                    return Err(bad("at most 10^9 per second"));
                }
                Ok(if rate == 0.0 {
                    Gaps::AfterPrevious
                } else {
                    Gaps::Fixed {
                        interval_s: 1.0 / rate,
                    }
                })
            }
        }
    }

    /// The same gaps for one of `n` workers sharing the rate: each worker's
    /// intervals are `n` times longer. One after another stays so (each
    /// worker keeps its own sequence).
    pub fn shared_by(self, n: usize) -> Gaps {
        let k = n.max(1) as f64;
        match self {
            Gaps::AfterPrevious => Gaps::AfterPrevious,
            Gaps::Fixed { interval_s } => Gaps::Fixed {
                interval_s: interval_s * k,
            },
            Gaps::Exponential { mean_s } => Gaps::Exponential { mean_s: mean_s * k },
            Gaps::Uniform { min_s, max_s } => Gaps::Uniform {
                min_s: min_s * k,
                max_s: max_s * k,
            },
        }
    }

    /// The next interval, ns; `None` for one after another.
    pub fn next_ns(self, rng: &mut impl rand::Rng) -> Option<u64> {
        let secs = match self {
            Gaps::AfterPrevious => return None,
            Gaps::Fixed { interval_s } => interval_s,
            Gaps::Exponential { mean_s } => {
                // 1 - u is in (0, 1]: the log is finite.
                -mean_s * (1.0 - rng.gen::<f64>()).ln()
            }
            Gaps::Uniform { min_s, max_s } => min_s + (max_s - min_s) * rng.gen::<f64>(),
        };
        Some((secs * 1e9) as u64)
    }

    /// The mean rate, per second; `None` for one after another.
    pub fn rate(self) -> Option<f64> {
        match self {
            Gaps::AfterPrevious => None,
            Gaps::Fixed { interval_s } => Some(1.0 / interval_s),
            Gaps::Exponential { mean_s } => Some(1.0 / mean_s),
            Gaps::Uniform { min_s, max_s } => Some(2.0 / (min_s + max_s)),
        }
    }
}

impl fmt::Display for Gaps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gaps::AfterPrevious => write!(f, "one after another"),
            Gaps::Fixed { interval_s } => write!(f, "{:.1}/s fixed", 1.0 / interval_s),
            Gaps::Exponential { mean_s } => write!(f, "{:.1}/s Poisson", 1.0 / mean_s),
            Gaps::Uniform { min_s, max_s } => {
                write!(f, "uniform gaps {min_s}..{max_s} s")
            }
        }
    }
}

/// `--num-conns`: connections opened and closed over the run instead of
/// held open (twemperf's connection and call generators).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Churn {
    /// Connections the run opens in all (`--num-conns`).
    pub conns: u64,
    /// Gaps between connection openings (`--conn-rate`).
    pub conn_gaps: Gaps,
    /// Requests each connection sends before it closes (`--num-calls`).
    pub calls: u64,
    /// Gaps between a connection's requests (`--call-rate`).
    pub call_gaps: Gaps,
}

/// Options every TCP connection is opened with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketOptions {
    /// SO_LINGER on close, s: 0 resets the connection (no TIME_WAIT);
    /// `None` closes normally.
    pub linger_s: Option<u32>,
    /// SO_SNDBUF, bytes; `None` keeps the kernel's.
    pub send_buffer: Option<usize>,
    /// SO_RCVBUF, bytes; `None` keeps the kernel's.
    pub recv_buffer: Option<usize>,
    /// Leave Nagle's algorithm on (twemperf's `-D`).
    pub no_nodelay: bool,
    /// Local addresses to bind before connecting, taken in turn: each has
    /// its own ephemeral ports (`--source-addrs`).
    pub source_addrs: Vec<IpAddr>,
}

/// Parses a socket buffer size: a count with an optional k/M suffix
/// (`16384`, `16k`).
pub fn parse_buffer(text: &str) -> Result<usize, SpecError> {
    let n = parse_count(text)?;
    if n == 0 || n > 1 << 30 {
        return Err(SpecError::Buffer(text.into()));
    }
    Ok(n as usize)
}

/// Parses `--source-addrs 127.0.0.2,127.0.0.3`.
pub fn parse_source_addrs(text: &str) -> Result<Vec<IpAddr>, SpecError> {
    text.split(',')
        .map(|a| {
            a.trim()
                .parse::<IpAddr>()
                .map_err(|_| SpecError::SourceAddrText(a.into()))
        })
        .collect()
}

impl super::RunSpec {
    /// Whether requests or connections follow a schedule in time (open
    /// loop, paced calls or paced connections): then being late to it is
    /// the send lag.
    pub fn has_schedule(&self) -> bool {
        self.open_loop()
            || self.churn().is_some_and(|c| {
                c.conn_gaps != Gaps::AfterPrevious || c.call_gaps != Gaps::AfterPrevious
            })
    }

    /// `--num-conns` and the socket options: what a connection schedule
    /// can be combined with.
    pub(super) fn validate_churn(&self) -> Result<(), SpecError> {
        self.validate_socket()?;
        let Some(churn) = self.churn() else {
            if self.load.stop == super::StopAfter::Schedule {
                return Err(SpecError::Refused(
                    "a run that ends with its connection schedule needs --num-conns",
                ));
            }
            return Ok(());
        };
        if churn.conns == 0 || churn.calls == 0 {
            return Err(SpecError::AtLeastOne("--num-conns and --num-calls"));
        }
        let refuse = |flag, why| Err(SpecError::WithChurn { flag, why });
        if self.load.depth > 1 {
            return refuse(
                "--depth",
                "--call-rate sets how a connection's requests follow each other",
            );
        }
        if matches!(self.load.stop, super::StopAfter::Ops(_)) {
            return refuse("--ops", "--num-conns × --num-calls sets the requests");
        }
        if self.key_space.window.is_some() {
            return refuse(
                "--window",
                "a connection's window would last only its calls",
            );
        }
        if self.target.user.is_some() {
            return refuse("--user", "churned connections are not authenticated");
        }
        if self.conns.reconnect {
            return refuse(
                "--reconnect",
                "a connection that fails is done; the schedule opens the next",
            );
        }
        if self.key_space.preload == super::LoadMode::LoadOnly {
            return refuse("--load-only", "it measures no connection of the schedule");
        }
        if crate::spec::ServerAddr::first_udp(&self.target.servers).is_some() {
            return refuse("a UDP server", "UDP has no connections to open and close");
        }
        if (self.load.threads as u64) > churn.conns {
            return Err(SpecError::Invalid(format!(
                "--threads {} needs at least as many connections, but --num-conns is {}",
                self.load.threads, churn.conns
            )));
        }
        Ok(())
    }

    fn validate_socket(&self) -> Result<(), SpecError> {
        if !self.conns.socket.source_addrs.is_empty() {
            if self.target.servers.is_empty() {
                // The embedded memcached listens on 127.0.0.1: any
                // loopback address reaches it.
                if let Some(a) = self
                    .conns
                    .socket
                    .source_addrs
                    .iter()
                    .find(|a| !a.is_loopback())
                {
                    return Err(SpecError::Invalid(format!(
                        "--source-addrs {a}: the memcached started for the run listens on \
                         loopback; give loopback addresses (127.0.0.2, ...)"
                    )));
                }
            }
            if self.conns.facebook {
                return Err(SpecError::Refused(
                    "--source-addrs binds TCP connections; --facebook also opens UDP sockets",
                ));
            }
            for ip in &self.conns.socket.source_addrs {
                // Binding port 0 sends nothing: it only asks the kernel
                // whether the address is this host's.
                if let Err(e) = std::net::UdpSocket::bind((*ip, 0)) {
                    return Err(SpecError::SourceAddr { ip: *ip, source: e });
                }
            }
        }
        let tcp_only = self.conns.socket.linger_s.is_some()
            || self.conns.socket.send_buffer.is_some()
            || self.conns.socket.recv_buffer.is_some()
            || self.conns.socket.no_nodelay
            || !self.conns.socket.source_addrs.is_empty();
        if let Some(s) = self
            .target
            .servers
            .iter()
            .find(|s| !s.is_tcp())
            .filter(|_| tcp_only)
        {
            return Err(SpecError::Invalid(format!(
                "--linger, --send-buffer, --recv-buffer, --no-nodelay and --source-addrs set TCP \
                 connections; '{s}' is not a TCP server"
            )));
        }
        if self.conns.facebook
            && (self.conns.socket.send_buffer.is_some() || self.conns.socket.recv_buffer.is_some())
        {
            return Err(SpecError::Refused(
                "--send-buffer and --recv-buffer set TCP connections; --facebook also reads over \
                 a UDP socket, whose buffers they would not set",
            ));
        }
        if let Some(s) = self.conns.socket.linger_s.filter(|s| *s > 65_535) {
            return Err(SpecError::at_most("--linger", "65535 s", s));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twemperf_rates_parse_as_twemperf_reads_them() {
        assert_eq!(Gaps::parse("0"), Ok(Gaps::AfterPrevious));
        assert_eq!(Gaps::parse("1000"), Ok(Gaps::Fixed { interval_s: 0.001 }));
        assert_eq!(Gaps::parse("2k").unwrap().rate(), Some(2000.0));
        // With a letter the numbers are intervals, as in twemperf.
        assert_eq!(Gaps::parse("d0.5"), Ok(Gaps::Fixed { interval_s: 0.5 }));
        assert_eq!(
            Gaps::parse("e0.001"),
            Ok(Gaps::Exponential { mean_s: 0.001 })
        );
        assert_eq!(Gaps::parse("e1ms"), Gaps::parse("e0.001"));
        assert_eq!(
            Gaps::parse("u0.001,0.003"),
            Ok(Gaps::Uniform {
                min_s: 0.001,
                max_s: 0.003
            })
        );
        for bad in ["", "x", "-5", "d0", "e", "u1", "u3,1", "dfoo"] {
            assert!(Gaps::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gaps_have_their_mean() {
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(3);
        for gaps in [
            Gaps::Exponential { mean_s: 0.002 },
            Gaps::Uniform {
                min_s: 0.001,
                max_s: 0.003,
            },
        ] {
            let n = 100_000;
            let sum: u64 = (0..n).map(|_| gaps.next_ns(&mut rng).unwrap()).sum();
            let mean_s = sum as f64 / n as f64 / 1e9;
            assert!((mean_s - 0.002).abs() < 0.00004, "{gaps:?}: {mean_s}");
        }
        assert_eq!(
            Gaps::Fixed { interval_s: 0.001 }.shared_by(4).rate(),
            Some(250.0)
        );
        assert_eq!(Gaps::AfterPrevious.next_ns(&mut rng), None);
    }
}
