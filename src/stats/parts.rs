//! A latency taken apart by the kernel's stamps: the four stretches a
//! request's time falls into, recorded per op type beside its latency.
//!
//! - *client queue*: intended send → the send call (the schedule's own
//!   wait, a wait for a free connection);
//! - *send path*: the send call → the kernel's transmit stamp (the socket
//!   layer, and a full window or buffer);
//! - *network and server*: transmit stamp → the receive stamp of the
//!   answer's last byte;
//! - *client receive*: receive stamp → when the answer counts as answered
//!   (parsed; nothing where answers are timed by their stamp).
//!
//! The four add up to the latency exactly: each instant is clamped
//! between its neighbours (`split`). Beside a histogram per part, each
//! latency band (8 per octave) keeps the sum of each part, so that what
//! a percentile is made of can be read back (`PartsRecorder::at`).

use super::recorder::HIGHEST_NS;
use hdrhistogram::Histogram;

/// The parts in order, as named in every output.
pub const PART_NAMES: [&str; 4] = [
    "client_queue",
    "send_path",
    "network_server",
    "client_receive",
];

/// The parts as a reader sees them.
pub const PART_LABELS: [&str; 4] = [
    "client queue",
    "send path",
    "network + server",
    "client receive",
];

/// Latency bands: 8 per octave from 1 ns to `HIGHEST_NS` (2^41.7).
pub const BANDS_PER_OCTAVE: u32 = 8;
pub const BANDS: usize = 42 * BANDS_PER_OCTAVE as usize;

/// When one request passed each point, ns on the worker clock.
#[derive(Debug, Clone, Copy)]
pub struct Moments {
    pub intended: u64,
    pub send_call: u64,
    /// The kernel's transmit stamp of the request's last byte.
    pub tx: u64,
    /// The kernel's receive stamp of the answer's last byte.
    pub rx: u64,
    /// When the answer counts as answered: the end of its latency.
    pub answered: u64,
}

/// The four parts of `m`, ns. Each instant is held between the one before
/// it and the answer (a stamp of a reordered segment may be early, a
/// clock read late), so the parts are never negative and add up to
/// `answered - intended`.
pub fn split(m: Moments) -> [u64; 4] {
    let end = m.answered.max(m.intended);
    let send_call = m.send_call.clamp(m.intended, end);
    let tx = m.tx.clamp(send_call, end);
    let rx = m.rx.clamp(tx, end);
    [send_call - m.intended, tx - send_call, rx - tx, end - rx]
}

/// The band a latency falls in: 8 linear steps per power of two.
pub fn band_of(latency_ns: u64) -> usize {
    let ns = latency_ns.clamp(1, HIGHEST_NS);
    let octave = 63 - ns.leading_zeros();
    let step = if octave >= 3 {
        (ns >> (octave - 3)) & 7
    } else {
        (ns << (3 - octave)) & 7
    };
    (octave * BANDS_PER_OCTAVE) as usize + step as usize
}

/// The latencies a band holds, ns: `[low, high)`.
pub fn band_bounds(band: usize) -> (u64, u64) {
    let octave = band as u32 / BANDS_PER_OCTAVE;
    let step = band as u64 % 8;
    let at = |s: u64| -> u64 {
        if octave >= 3 {
            (8 + s) << (octave - 3)
        } else {
            (8 + s) >> (3 - octave)
        }
    };
    (at(step), at(step + 1))
}

/// One band's requests and each part's sum over them, ns; and of the
/// client queue, the time requests waited for a free connection (a wait
/// a slow server causes, not the client's own lateness).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Band {
    pub requests: u64,
    pub sums_ns: [u64; 4],
    pub waited_ns: u64,
}

/// One op type's parts: a histogram per part, and the bands.
#[derive(Debug, Clone)]
pub struct PartsRecorder {
    pub hists: [Histogram<u64>; 4],
    pub bands: Box<[Band; BANDS]>,
}

/// A part's histogram: 1 ns to an hour at 2 significant digits (1 %),
/// an eighth of a latency histogram's buckets. Four per op type are
/// merged and encoded every interval, on the CPU the workers use.
fn new_part_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("static histogram bounds are valid")
}

impl Default for PartsRecorder {
    fn default() -> Self {
        PartsRecorder {
            hists: std::array::from_fn(|_| new_part_histogram()),
            bands: Box::new([Band::default(); BANDS]),
        }
    }
}

/// What the requests at one percentile were made of.
#[derive(Debug, Clone, PartialEq)]
pub struct PartsAt {
    /// The stamped requests in the percentile's band.
    pub requests: u64,
    /// Each part's mean over them, ns.
    pub mean_ns: [f64; 4],
    /// Of the client queue, the mean wait for a free connection, ns.
    pub waited_ns: f64,
}

impl PartsRecorder {
    /// Requests whose parts were recorded.
    pub fn requests(&self) -> u64 {
        self.hists[0].len()
    }

    /// One request's parts, of whose client queue it `waited` ns for a
    /// free connection.
    pub fn record(&mut self, parts: [u64; 4], waited: u64) {
        for (h, &v) in self.hists.iter_mut().zip(&parts) {
            h.saturating_record(v.max(1));
        }
        let band = &mut self.bands[band_of(parts.iter().sum())];
        band.requests += 1;
        for (s, v) in band.sums_ns.iter_mut().zip(parts) {
            *s = s.saturating_add(v);
        }
        band.waited_ns = band.waited_ns.saturating_add(waited.min(parts[0]));
    }

    pub fn merge(&mut self, other: &PartsRecorder) {
        for (a, b) in self.hists.iter_mut().zip(&other.hists) {
            a.add(b).expect("same bounds");
        }
        for (a, b) in self.bands.iter_mut().zip(other.bands.iter()) {
            add_band(a, b);
        }
    }

    pub fn reset(&mut self) {
        self.hists.iter_mut().for_each(Histogram::reset);
        self.bands.fill(Band::default());
    }

    /// The parts of the stamped requests whose latency falls in the band
    /// of `latency_ns` (a percentile's value): what that percentile is
    /// made of. `None` when no stamped request fell there.
    pub fn at(&self, latency_ns: u64) -> Option<PartsAt> {
        let band = &self.bands[band_of(latency_ns)];
        (band.requests > 0).then(|| PartsAt {
            requests: band.requests,
            mean_ns: band.sums_ns.map(|s| s as f64 / band.requests as f64),
            waited_ns: band.waited_ns as f64 / band.requests as f64,
        })
    }
}

impl PartsRecorder {
    /// Histograms kept elsewhere (an interval, a saved result, an agent),
    /// checked: one per part, each of as many requests, at most `count`
    /// (the op's requests).
    pub fn of_hdrs(hdrs: &[super::Hdr], count: u64) -> Result<PartsRecorder, super::StatsError> {
        if hdrs.len() != PART_NAMES.len() {
            return Err(super::StatsError::PartCount {
                got: hdrs.len(),
                parts: PART_NAMES.len(),
            });
        }
        let mut r = PartsRecorder::default();
        for (h, hdr) in r.hists.iter_mut().zip(hdrs) {
            *h = hdr.decode()?;
        }
        let n = r.requests();
        if r.hists.iter().any(|h| h.len() != n) || n > count {
            return Err(super::StatsError::PartRequests {
                counts: r.hists.iter().map(Histogram::len).collect(),
                count,
            });
        }
        Ok(r)
    }
}

/// Adds band `b` into `a`.
pub fn add_band(a: &mut Band, b: &Band) {
    a.requests += b.requests;
    for (x, y) in a.sums_ns.iter_mut().zip(b.sums_ns) {
        *x = x.saturating_add(y);
    }
    a.waited_ns = a.waited_ns.saturating_add(b.waited_ns);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_to_the_latency_whatever_the_stamps() {
        let m = Moments {
            intended: 1_000,
            send_call: 1_500,
            tx: 1_700,
            rx: 9_000,
            answered: 9_400,
        };
        assert_eq!(split(m), [500, 200, 7_300, 400]);
        // A receive stamp before the transmit one (reordered), a transmit
        // stamp after the answer (read late), a send before its intent.
        let odd = Moments {
            intended: 1_000,
            send_call: 900,
            tx: 20_000,
            rx: 500,
            answered: 10_000,
        };
        let parts = split(odd);
        assert_eq!(parts, [0, 9_000, 0, 0]);
        assert_eq!(parts.iter().sum::<u64>(), 9_000);
        // Answers timed by their stamp: nothing after it.
        let stamped = Moments {
            rx: 9_000,
            answered: 9_000,
            ..m
        };
        assert_eq!(split(stamped)[3], 0);
    }

    #[test]
    fn bands_are_eighths_of_an_octave_and_hold_their_bounds() {
        for ns in [1u64, 2, 7, 8, 9, 100, 1_000, 65_535, 1 << 30, HIGHEST_NS] {
            let b = band_of(ns);
            assert!(b < BANDS, "{ns}");
            let (lo, hi) = band_bounds(b);
            assert!(lo <= ns && ns < hi.max(lo + 1), "{ns} in {b}: [{lo}, {hi})");
        }
        assert_eq!(band_bounds(band_of(1_000)), (960, 1_024));
        assert_eq!(band_of(u64::MAX), band_of(HIGHEST_NS));
    }

    #[test]
    fn a_percentile_is_read_back_from_its_band() {
        let mut r = PartsRecorder::default();
        for _ in 0..99 {
            r.record([10, 10, 1_000, 10], 0);
        }
        r.record([50_000, 10, 1_000, 10], 60_000);
        assert_eq!(r.requests(), 100);
        let fast = r.at(1_030).unwrap();
        assert_eq!(fast.requests, 99);
        assert_eq!(fast.mean_ns, [10.0, 10.0, 1_000.0, 10.0]);
        let slow = r.at(51_020).unwrap();
        assert_eq!(slow.mean_ns[0], 50_000.0);
        // A wait is never more than the queue it is part of.
        assert_eq!(slow.waited_ns, 50_000.0);
        assert_eq!(r.at(5_000_000), None);
        let mut both = r.clone();
        both.merge(&r);
        assert_eq!(both.at(1_030).unwrap().requests, 198);
        assert_eq!(both.requests(), 200);
        both.reset();
        assert_eq!((both.requests(), both.at(1_030)), (0, None));
    }
}
