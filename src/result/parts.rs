//! The latency's parts as a result keeps them (`latency_parts` of each op
//! in the JSON): quantiles and histogram per part, what the requests at
//! p50, p90, p99 and p99.9 were made of, and the bands those come from,
//! so that saved runs and agents' runs merge exactly.

use super::{quantiles, Quantiles};
use crate::stats::parts::{band_bounds, band_of, Band, PartsRecorder, BANDS, PART_NAMES};
use crate::stats::Hdr;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyParts {
    /// Requests the kernel's stamps took apart (of the op's `count`).
    pub requests: u64,
    /// One per part, in order: client_queue, send_path, network_server,
    /// client_receive.
    pub parts: Vec<PartSummary>,
    /// What the stamped requests whose latency fell in each of the run's
    /// percentiles' band (an eighth of an octave) were made of. Filled
    /// with the 95 % intervals (`at_percentiles`), and again by `report`.
    pub at: Vec<PartsAt>,
    /// Per latency band (8 per octave): requests and each part's sum, ns.
    pub bands: Vec<BandRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartSummary {
    pub part: String,
    pub us: Quantiles,
    pub hdr: Hdr,
}

/// Each part's mean, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PartValues {
    pub client_queue: f64,
    pub send_path: f64,
    pub network_server: f64,
    pub client_receive: f64,
}

impl PartValues {
    pub fn of(v: [f64; 4]) -> Self {
        PartValues {
            client_queue: v[0],
            send_path: v[1],
            network_server: v[2],
            client_receive: v[3],
        }
    }

    pub fn values(&self) -> [f64; 4] {
        [
            self.client_queue,
            self.send_path,
            self.network_server,
            self.client_receive,
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartsAt {
    pub percentile: f64,
    /// The percentile of the op's latency, µs.
    pub latency_us: f64,
    /// The stamped requests in its band, and their parts' means.
    pub requests: u64,
    pub mean_us: PartValues,
    /// Of `mean_us.client_queue`, the mean wait for a free connection
    /// (every connection was at its depth: the server's pace, not the
    /// client's lateness).
    #[serde(default)]
    pub waited_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BandRow {
    pub band: u32,
    pub requests: u64,
    pub sums_ns: [u64; 4],
    #[serde(default)]
    pub waited_ns: u64,
}

impl LatencyParts {
    /// The summary of `parts` (`at` left to `at_percentiles`); `None`
    /// when no request was stamped.
    pub fn of(parts: &PartsRecorder) -> Option<LatencyParts> {
        let requests = parts.requests();
        if requests == 0 {
            return None;
        }
        let at = Vec::new();
        Some(LatencyParts {
            requests,
            parts: PART_NAMES
                .iter()
                .zip(&parts.hists)
                .map(|(name, h)| PartSummary {
                    part: name.to_string(),
                    us: quantiles(h),
                    hdr: Hdr::encode(h),
                })
                .collect(),
            at,
            bands: (parts.bands.iter().enumerate())
                .filter(|(_, b)| b.requests > 0)
                .map(|(i, b)| BandRow {
                    band: i as u32,
                    requests: b.requests,
                    sums_ns: b.sums_ns,
                    waited_ns: b.waited_ns,
                })
                .collect(),
        })
    }

    /// What the requests at each of `percentiles` of `latency` were made
    /// of, read from the bands; none where no stamped request fell in the
    /// percentile's band.
    pub fn at_percentiles(&self, latency: &Histogram<u64>, percentiles: &[f64]) -> Vec<PartsAt> {
        if latency.is_empty() {
            return Vec::new();
        }
        percentiles
            .iter()
            .filter_map(|&p| {
                let value = latency.value_at_quantile(p / 100.0);
                let band = band_of(value) as u32;
                let row = self
                    .bands
                    .iter()
                    .find(|b| b.band == band && b.requests > 0)?;
                let n = row.requests as f64;
                Some(PartsAt {
                    percentile: p,
                    latency_us: value as f64 / 1e3,
                    requests: row.requests,
                    mean_us: PartValues::of(row.sums_ns.map(|s| s as f64 / n / 1e3)),
                    waited_us: row.waited_ns as f64 / n / 1e3,
                })
            })
            .collect()
    }

    /// Back to a recorder, checked as anything read from a file or an
    /// agent: four named parts of `requests` each, at most `count`, and
    /// bands within range that hold no more requests than that, each
    /// band's sums within its latencies.
    pub fn recorder(&self, count: u64) -> Result<PartsRecorder, super::ResultError> {
        let names: Vec<&str> = self.parts.iter().map(|p| p.part.as_str()).collect();
        if names != PART_NAMES {
            return Err(super::ResultError::PartNames {
                names: names.into_iter().map(String::from).collect(),
            });
        }
        let hdrs: Vec<Hdr> = self.parts.iter().map(|p| p.hdr.clone()).collect();
        let mut r = PartsRecorder::of_hdrs(&hdrs, count)?;
        if r.requests() != self.requests {
            return Err(super::ResultError::PartRequests {
                requests: self.requests,
                held: r.requests(),
            });
        }
        let mut banded = 0u64;
        for row in &self.bands {
            let band = row.band as usize;
            let sum = row.sums_ns.iter().fold(0u64, |a, &b| a.saturating_add(b));
            let ok =
                band < BANDS && r.bands[band].requests == 0 && within_band(band, row.requests, sum);
            if !ok {
                return Err(super::ResultError::Band(row.band));
            }
            banded = banded.saturating_add(row.requests);
            r.bands[band] = Band {
                requests: row.requests,
                sums_ns: row.sums_ns,
                waited_ns: row.waited_ns,
            };
        }
        if banded > self.requests {
            return Err(super::ResultError::Banded {
                banded,
                requests: self.requests,
            });
        }
        Ok(r)
    }
}

/// Whether `requests` latencies summing to `sum` ns all fit in `band`.
fn within_band(band: usize, requests: u64, sum: u64) -> bool {
    let (lo, hi) = band_bounds(band);
    let low = u128::from(lo) * u128::from(requests);
    let high = u128::from(hi.max(lo + 1)) * u128::from(requests);
    requests > 0 && (low..=high).contains(&u128::from(sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn parts_survive_a_round_trip_and_refuse_what_cannot_be() {
        let mut p = PartsRecorder::default();
        let mut latency = new_histogram();
        for i in 1..=1000u64 {
            let parts = [i, 10, 1_000 * i, 5];
            p.record(parts, 0);
            latency.record(parts.iter().sum()).unwrap();
        }
        let mut kept = LatencyParts::of(&p).unwrap();
        assert_eq!(kept.requests, 1000);
        kept.at = kept.at_percentiles(&latency, &[50.0, 99.0]);
        assert_eq!(kept.at.len(), 2);
        let p99 = &kept.at[1];
        // At p99 the network and server is ~99 % of the latency.
        let share = p99.mean_us.network_server / p99.latency_us;
        assert!((0.95..1.05).contains(&share), "{p99:?}");
        let back = kept.recorder(1000).unwrap();
        assert_eq!(back.requests(), 1000);
        assert_eq!(back.bands[..], p.bands[..]);

        assert!(kept.recorder(999).is_err());
        let mut bad = kept.clone();
        bad.bands[0].sums_ns[0] = u64::MAX / 2;
        assert!(bad.recorder(1000).is_err());
        let mut bad = kept.clone();
        bad.bands.push(BandRow {
            band: BANDS as u32,
            requests: 1,
            sums_ns: [1; 4],
            waited_ns: 0,
        });
        assert!(bad.recorder(1000).is_err());
        let mut bad = kept.clone();
        bad.parts.swap(0, 1);
        assert!(bad.recorder(1000).is_err());
        let mut bad = kept;
        bad.requests = 7;
        assert!(bad.recorder(1000).is_err());
    }
}
