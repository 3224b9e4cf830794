//! The `/metrics` endpoint: a thread that accepts, and at most
//! `MAX_CLIENTS` short-lived threads that each answer one request.
//!
//! Hand-written over `httparse` rather than an HTTP server crate: it
//! answers one GET per connection and must keep its own bounds (clients,
//! bytes, time) whatever the scraper does, and a runtime in every run's
//! process would buy nothing else. A client that connects and never sends,
//! or never reads, holds one of the slots for `IO_TIMEOUT` to send its
//! request and `IO_TIMEOUT` to read the answer at most; beyond
//! `MAX_CLIENTS` a connection is closed at once.

use super::text::{self, Dialect};
use super::{proto, Exported, TelemetryError};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections answered at once.
const MAX_CLIENTS: usize = 8;
/// How long a client may take to send its request, or to read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;

/// A listening endpoint; it stops serving when dropped.
pub struct Endpoint {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    exported: Arc<Mutex<Exported>>,
    stop: AtomicBool,
    clients: AtomicUsize,
    /// The newest generation a complete answer carried.
    served: AtomicU64,
}

impl Endpoint {
    /// Binds `addr` (before any traffic: a port in use is a usage error)
    /// and serves `exported` from a thread of its own.
    pub fn bind(
        addr: SocketAddr,
        exported: Arc<Mutex<Exported>>,
    ) -> Result<Endpoint, TelemetryError> {
        let listener =
            TcpListener::bind(addr).map_err(|source| TelemetryError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TelemetryError::Bind { addr, source })?;
        let shared = Arc::new(Shared {
            exported,
            stop: AtomicBool::new(false),
            clients: AtomicUsize::new(0),
            served: AtomicU64::new(0),
        });
        let s = shared.clone();
        std::thread::Builder::new()
            .name("mcbench-metrics".into())
            .spawn(move || accept(&listener, &s))
            .map_err(TelemetryError::Thread)?;
        Ok(Endpoint { addr, shared })
    }

    /// The address bound (port 0 resolved).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether a scrape has read generation `g` or a later one.
    pub fn served(&self, g: u64) -> bool {
        self.shared.served.load(Ordering::Acquire) >= g
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Wake the accept call; its thread then sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(100));
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(conn) = conn else { continue };
        if shared.clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
            shared.clients.fetch_sub(1, Ordering::AcqRel);
            continue; // dropped: closed at once
        }
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("mcbench-scrape".into())
            .spawn(move || {
                let _ = answer(conn, &s);
                s.clients.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.clients.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Reads one request head within `IO_TIMEOUT` and `MAX_REQUEST` bytes and
/// answers it.
fn answer(mut conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let request = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || head.len() >= MAX_REQUEST {
            return Ok(());
        }
        conn.set_read_timeout(Some(left))?;
        let n = conn.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&head) {
            Ok(httparse::Status::Complete(_)) => break Request::of(&req),
            Ok(httparse::Status::Partial) => continue,
            Err(_) => break Request::Bad,
        }
    };
    respond(&mut conn, request, shared)
}

/// What was asked.
enum Request {
    /// `GET /metrics`, in the format the `Accept` header prefers.
    Metrics(Format),
    NotFound,
    NotGet,
    Bad,
}

impl Request {
    fn of(req: &httparse::Request) -> Request {
        if req.method != Some("GET") {
            return Request::NotGet;
        }
        let path = req.path.unwrap_or("").split('?').next().unwrap_or("");
        if path != "/metrics" {
            return Request::NotFound;
        }
        let accept = req
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("accept"))
            .filter_map(|h| std::str::from_utf8(h.value).ok())
            .collect::<Vec<_>>()
            .join(",");
        Request::Metrics(Format::accepted(&accept))
    }
}

/// The formats served, the one that carries native histograms first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// The delimited `MetricFamily` protobuf.
    Protobuf,
    Text(Dialect),
}

impl Format {
    /// The format an `Accept` header weighs highest (RFC 9110 `q`, 1 when
    /// not given, 0 refuses); between equal weights the protobuf, then
    /// OpenMetrics, then text 0.0.4. Text 0.0.4 also for `text/plain`,
    /// `*/*`, anything unknown and an empty header.
    fn accepted(accept: &str) -> Format {
        let mut best = (0.0, Format::Text(Dialect::Prometheus));
        for media in accept.split(',').map(str::to_ascii_lowercase) {
            let (Some(format), q) = (Format::of_media(&media), weight(&media)) else {
                continue;
            };
            let better = q > best.0 || (q == best.0 && format.rank() < best.1.rank());
            if q > 0.0 && better {
                best = (q, format);
            }
        }
        best.1
    }

    /// The format one media range names, if it is one served.
    fn of_media(media: &str) -> Option<Format> {
        let kind = media.split(';').next().unwrap_or("").trim();
        match kind {
            "application/vnd.google.protobuf"
                if media.contains("proto=io.prometheus.client.metricfamily")
                    && media.contains("encoding=delimited") =>
            {
                Some(Format::Protobuf)
            }
            "application/openmetrics-text" => Some(Format::Text(Dialect::OpenMetrics)),
            "text/plain" | "text/*" | "*/*" => Some(Format::Text(Dialect::Prometheus)),
            _ => None,
        }
    }

    /// Preference between equal weights: lower first.
    fn rank(self) -> u8 {
        match self {
            Format::Protobuf => 0,
            Format::Text(Dialect::OpenMetrics) => 1,
            Format::Text(Dialect::Prometheus) => 2,
        }
    }
}

/// A media range's `q` (1 when not given, 0 when unreadable): 0 refuses it.
fn weight(media: &str) -> f64 {
    media
        .split(';')
        .skip(1)
        .filter_map(|p| p.trim().strip_prefix("q="))
        .map(|q| {
            q.trim()
                .parse::<f64>()
                .ok()
                .filter(|q| (0.0..=1.0).contains(q))
        })
        .next()
        .map_or(1.0, |q| q.unwrap_or(0.0))
}

fn respond(conn: &mut TcpStream, request: Request, shared: &Shared) -> std::io::Result<()> {
    let (status, content_type, body, generation) = match request {
        Request::Metrics(format) => {
            let exported = shared.exported.lock().unwrap_or_else(|p| p.into_inner());
            let families = exported.families();
            let (ct, body) = match format {
                Format::Protobuf => (proto::CONTENT_TYPE, proto::render(&families)),
                Format::Text(d) => (d.content_type(), text::render(&families, d).into_bytes()),
            };
            ("200 OK", ct, body, Some(exported.generation()))
        }
        Request::NotFound => (
            "404 Not Found",
            "text/plain",
            b"mcbench serves /metrics\n".to_vec(),
            None,
        ),
        Request::NotGet => (
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n".to_vec(),
            None,
        ),
        Request::Bad => (
            "400 Bad Request",
            "text/plain",
            b"not an HTTP request\n".to_vec(),
            None,
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let deadline = Instant::now() + IO_TIMEOUT;
    write_by(conn, head.as_bytes(), deadline)?;
    write_by(conn, &body, deadline)?;
    if let Some(g) = generation {
        shared.served.fetch_max(g, Ordering::AcqRel);
    }
    Ok(())
}

/// Writes all of `bytes` before `deadline`, or gives up: a client that
/// reads a byte at a time cannot hold its slot longer than one that
/// reads nothing.
fn write_by(conn: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        conn.set_write_timeout(Some(left))?;
        match conn.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_s_accept_header_picks_the_format() {
        // What Prometheus 2.42 sends with native histograms on, and off.
        let on = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        let off = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::accepted(on), Format::Protobuf);
        assert_eq!(Format::accepted(off), Format::Text(Dialect::OpenMetrics));
        let refused = "application/openmetrics-text; q=0, text/plain";
        assert_eq!(Format::accepted(refused), Format::Text(Dialect::Prometheus));
        assert_eq!(Format::accepted(""), Format::Text(Dialect::Prometheus));
    }

    #[test]
    fn the_heaviest_weight_wins_and_ties_go_to_the_richer_format() {
        let text_first =
            "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5";
        assert_eq!(
            Format::accepted(text_first),
            Format::Text(Dialect::Prometheus)
        );
        let tie = "text/plain;q=0.5,application/openmetrics-text;q=0.5";
        assert_eq!(Format::accepted(tie), Format::Text(Dialect::OpenMetrics));
        let proto_low = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.2,application/openmetrics-text;q=0.3";
        assert_eq!(
            Format::accepted(proto_low),
            Format::Text(Dialect::OpenMetrics)
        );
        // A protobuf of another message, or an unreadable weight, is not taken.
        let other = "application/vnd.google.protobuf;proto=foo;encoding=delimited";
        assert_eq!(Format::accepted(other), Format::Text(Dialect::Prometheus));
        let unreadable = "application/openmetrics-text;q=high";
        assert_eq!(
            Format::accepted(unreadable),
            Format::Text(Dialect::Prometheus)
        );
    }
}
