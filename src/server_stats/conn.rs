//! A kept connection to one server for its `stats`: connected once (the
//! connect timed apart), asked as often as wanted, each round trip timed.

use super::{Stats, StatsQueryError};
use crate::net::blocking;
use crate::spec::Address;
use mcbench_proto::stats::{self as wire, Reply};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest `stats` reply read (`stats conns` of a busy server, or
/// `stats items` with every slab class, stay far below it).
const MAX_REPLY: usize = 64 << 20;

/// How an answer that refuses a group begins.
pub const REFUSED: &str = "the server refused";

pub struct StatsConn {
    socket: crate::net::Link,
    reply: Vec<u8>,
    /// How long the connect (and any authentication) took.
    pub connect_time: Duration,
    /// How long a reply is waited for.
    timeout: Duration,
    /// A run's signal flag: once set, a reply is waited for a moment more.
    stop: Option<Arc<AtomicUsize>>,
}

impl StatsConn {
    /// Connects to `addr` (TCP or unix) with `timeout` on the connect and
    /// on every later exchange; a signal (`stop` set) cuts every wait short.
    pub fn connect(
        addr: &Address,
        timeout: Duration,
        stop: Option<Arc<AtomicUsize>>,
    ) -> Result<Self, StatsQueryError> {
        let began = Instant::now();
        let socket = crate::net::connect_plain(addr, timeout, stop.as_deref())?;
        let link = crate::net::Link::plain(socket);
        Ok(StatsConn::over(link, began.elapsed(), timeout, stop))
    }

    /// A connection already open (and authenticated), which took
    /// `connect_time` to open; replies are waited for `timeout`, cut short
    /// after `stop` is set.
    pub fn over(
        socket: crate::net::Link,
        connect_time: Duration,
        timeout: Duration,
        stop: Option<Arc<AtomicUsize>>,
    ) -> Self {
        StatsConn {
            socket,
            reply: Vec::new(),
            connect_time,
            timeout,
            stop,
        }
    }

    /// `stats` (`group` `None`) or `stats GROUP`, and how long it took.
    /// A server that has no such group answers an error line: `Err`.
    pub fn query(&mut self, group: Option<&str>) -> Result<(Stats, Duration), StatsQueryError> {
        let mut request = Vec::new();
        wire::encode(&mut request, group);
        let began = Instant::now();
        let mut refused = None;
        let mut checked = 0;
        let wait = blocking::Wait {
            timeout: self.timeout,
            stop: self.stop.as_deref(),
        };
        let reply = &mut self.reply;
        let len = blocking::exchange(&mut self.socket, &request, reply, MAX_REPLY, wait, |buf| {
            match wire::parse_from(buf, &mut checked) {
                Ok(Some(Reply::Stats(len))) => Ok(Some(len)),
                Ok(Some(Reply::Refused(class, len))) => {
                    refused = Some(class);
                    Ok(Some(len))
                }
                Ok(None) => Ok(None),
                Err(e) => Err(format!("a stats reply that does not parse: {e}")),
            }
        })?;
        let took = began.elapsed();
        let what = group.map_or("stats".to_string(), |g| format!("stats {g}"));
        if let Some(class) = refused {
            return Err(StatsQueryError::Refused {
                what,
                class: class.name(),
            });
        }
        // A server's names and values reach a terminal: escaped.
        let stats = wire::pairs(&self.reply[..len])
            .map(|(k, v)| {
                (
                    crate::untrusted::shown(&String::from_utf8_lossy(k)),
                    crate::untrusted::shown(&String::from_utf8_lossy(v)),
                )
            })
            .collect();
        Ok((stats, took))
    }
}
