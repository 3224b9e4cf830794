//! What the connections did: how many opened and closed, how long a
//! connect and a connection's life took, why connections failed (in
//! twemperf's classes), and the sizes of requests and responses.

use hdrhistogram::Histogram;
use std::io;

/// Connect times and lifetimes to 2 significant digits (1 ns .. 1 hour):
/// a 40 KB histogram rather than the 270 KB of a latency one, in every
/// recorder of the run, and percentiles within 1 %.
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("static histogram bounds are valid")
}

/// Why a connection failed, in twemperf's classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnError {
    /// The connect took longer than `--timeout`.
    SocketTimo,
    /// ECONNREFUSED: nothing listens there.
    ConnRefused,
    /// ECONNRESET or EPIPE, or the server closed a connection with calls
    /// left to make.
    ConnReset,
    /// EMFILE: this process's descriptor limit.
    FdUnavail,
    /// ENFILE: the system's file table is full.
    FtabFull,
    /// EADDRNOTAVAIL: no local port left for this destination (ports in
    /// TIME_WAIT; see `--linger 0` and `--source-addrs`).
    AddrUnavail,
    /// The TLS handshake failed: the server's alert, or its certificate
    /// refused (named in the run's warnings).
    TlsHandshake,
    Other,
}

impl ConnError {
    pub const ALL: [ConnError; 8] = [
        ConnError::SocketTimo,
        ConnError::ConnRefused,
        ConnError::ConnReset,
        ConnError::FdUnavail,
        ConnError::FtabFull,
        ConnError::AddrUnavail,
        ConnError::TlsHandshake,
        ConnError::Other,
    ];

    /// twemperf's name, with `_` for `-` (JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            ConnError::SocketTimo => "socket_timo",
            ConnError::ConnRefused => "connrefused",
            ConnError::ConnReset => "connreset",
            ConnError::FdUnavail => "fd_unavail",
            ConnError::FtabFull => "ftab_full",
            ConnError::AddrUnavail => "addrunavail",
            ConnError::TlsHandshake => "tls_handshake",
            ConnError::Other => "other",
        }
    }

    /// The class of a failed socket, connect or I/O call.
    pub fn of(e: &io::Error) -> ConnError {
        match e.raw_os_error() {
            Some(libc::ETIMEDOUT) => ConnError::SocketTimo,
            Some(libc::ECONNREFUSED) => ConnError::ConnRefused,
            Some(libc::ECONNRESET | libc::EPIPE) => ConnError::ConnReset,
            Some(libc::EMFILE) => ConnError::FdUnavail,
            Some(libc::ENFILE) => ConnError::FtabFull,
            Some(libc::EADDRNOTAVAIL) => ConnError::AddrUnavail,
            _ => ConnError::Other,
        }
    }
}

/// Count, mean, spread and range of sizes, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sizes {
    pub count: u64,
    sum: u64,
    /// Sum of squares, as f64: u64 would overflow at ~4 GB requests.
    sum_sq: f64,
    pub min: u64,
    pub max: u64,
}

impl Sizes {
    #[inline]
    pub fn record(&mut self, bytes: u64) {
        self.min = if self.count == 0 {
            bytes
        } else {
            self.min.min(bytes)
        };
        self.max = self.max.max(bytes);
        self.count += 1;
        self.sum += bytes;
        self.sum_sq += (bytes as f64) * (bytes as f64);
    }

    pub fn merge(&mut self, other: &Sizes) {
        if other.count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            other.min
        } else {
            self.min.min(other.min)
        };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    pub fn mean(&self) -> f64 {
        self.sum as f64 / self.count.max(1) as f64
    }

    /// Population standard deviation.
    pub fn stdev(&self) -> f64 {
        let n = self.count.max(1) as f64;
        let mean = self.mean();
        (self.sum_sq / n - mean * mean).max(0.0).sqrt()
    }
}

/// Per worker and interval, like the rest of a `Recorder`.
#[derive(Debug, Clone)]
pub struct ConnStats {
    /// Connections established (connect completed), the run's first ones
    /// included.
    pub opened: u64,
    /// Connections of `--num-conns` that made their calls and closed.
    pub closed: u64,
    /// Connections closed because a request went unanswered for
    /// `--timeout` (twemperf's client-timo: one per connection).
    pub client_timo: u64,
    /// Connections that failed, by class.
    pub errors: [u64; ConnError::ALL.len()],
    /// connect() → connected, ns (the TCP connect alone).
    pub connect_time: Histogram<u64>,
    /// Connected → TLS handshake done, ns (`--tls`).
    pub handshake_time: Histogram<u64>,
    /// Connected → closed, ns (`--num-conns` connections).
    pub lifetime: Histogram<u64>,
    pub request_size: Sizes,
    pub response_size: Sizes,
}

impl Default for ConnStats {
    fn default() -> Self {
        ConnStats {
            opened: 0,
            closed: 0,
            client_timo: 0,
            errors: [0; ConnError::ALL.len()],
            connect_time: new_histogram(),
            handshake_time: new_histogram(),
            lifetime: new_histogram(),
            request_size: Sizes::default(),
            response_size: Sizes::default(),
        }
    }
}

impl ConnStats {
    pub fn error(&mut self, class: ConnError) {
        self.errors[class as usize] += 1;
    }

    pub fn error_count(&self, class: ConnError) -> u64 {
        self.errors[class as usize]
    }

    /// Every connection failure, client-timo included (twemperf's total).
    pub fn failures(&self) -> u64 {
        self.errors.iter().sum::<u64>() + self.client_timo
    }

    pub fn record_connect(&mut self, ns: u64) {
        self.opened += 1;
        self.connect_time.saturating_record(ns.max(1));
    }

    pub fn record_handshake(&mut self, ns: u64) {
        self.handshake_time.saturating_record(ns.max(1));
    }

    pub fn record_close(&mut self, lifetime_ns: u64) {
        self.closed += 1;
        self.lifetime.saturating_record(lifetime_ns.max(1));
    }

    pub fn reset(&mut self) {
        self.opened = 0;
        self.closed = 0;
        self.client_timo = 0;
        self.errors = [0; ConnError::ALL.len()];
        self.connect_time.reset();
        self.handshake_time.reset();
        self.lifetime.reset();
        self.request_size = Sizes::default();
        self.response_size = Sizes::default();
    }

    pub fn merge(&mut self, other: &ConnStats) {
        self.opened += other.opened;
        self.closed += other.closed;
        self.client_timo += other.client_timo;
        for (a, b) in self.errors.iter_mut().zip(&other.errors) {
            *a += b;
        }
        self.connect_time
            .add(&other.connect_time)
            .expect("same bounds");
        self.handshake_time
            .add(&other.handshake_time)
            .expect("same bounds");
        self.lifetime.add(&other.lifetime).expect("same bounds");
        self.request_size.merge(&other.request_size);
        self.response_size.merge(&other.response_size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_merge_as_if_recorded_together() {
        let (mut a, mut b, mut both) = (Sizes::default(), Sizes::default(), Sizes::default());
        for n in [28u64, 44, 30] {
            a.record(n);
            both.record(n);
        }
        for n in [8u64, 100] {
            b.record(n);
            both.record(n);
        }
        a.merge(&b);
        assert_eq!(a, both);
        assert_eq!((a.min, a.max, a.count), (8, 100, 5));
        assert!((a.mean() - 42.0).abs() < 1e-9);
        // Population stdev of 28, 44, 30, 8, 100.
        let var = [28.0f64, 44.0, 30.0, 8.0, 100.0]
            .iter()
            .map(|x| (x - 42.0) * (x - 42.0))
            .sum::<f64>()
            / 5.0;
        assert!((a.stdev() - var.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn errno_maps_to_twemperf_classes() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(
            ConnError::of(&e(libc::EADDRNOTAVAIL)),
            ConnError::AddrUnavail
        );
        assert_eq!(ConnError::of(&e(libc::EMFILE)), ConnError::FdUnavail);
        assert_eq!(ConnError::of(&e(libc::ENFILE)), ConnError::FtabFull);
        assert_eq!(ConnError::of(&e(libc::EPIPE)), ConnError::ConnReset);
        assert_eq!(ConnError::of(&e(libc::EACCES)), ConnError::Other);
    }
}
