//! A run's latencies in short batches, for the precision of its
//! percentiles (`precision::dispersion`): each interval is cut into
//! `SLOTS` slots by answer time, each slot a coarse histogram (2
//! significant digits) of latency and of service time. The run keeps its
//! slots in time order as a `BatchSeries`, neighbours merged in pairs
//! whenever it reaches `MAX_BATCHES`, so that an hour's run holds as many
//! batches as a minute's, each longer.
//!
//! Where they go: the worker records into its interval's `Slots`; the
//! collector encodes them into the interval (`SlotHdrs`, kept in memory
//! and sent by agents, never written) and appends them to the run's
//! series (written with each op, in JSON).

use super::recorder::HIGHEST_NS;
use super::{Hdr, StatsError};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Slots per interval: 100 ms batches at the default 1 s interval, 20 of
/// them in a 2 s run.
pub const SLOTS: usize = 10;

/// A series merges neighbours in pairs when it reaches this many batches.
pub const MAX_BATCHES: usize = 512;

/// A slot's histogram: 1 ns to an hour at 2 significant digits (0.4-0.8 %
/// buckets), an eighth of a latency histogram's. A batch's count beyond a
/// percentile takes the share of the bucket that straddles it from the
/// run's finer histogram.
pub fn new_batch_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("static histogram bounds are valid")
}

/// Which slot of its interval an answer falls in, by when it came: slot
/// i is [start + i·step, start + (i + 1)·step), the last open-ended (an
/// answer read after the interval ended, before its recorder was handed
/// over). Unset, every answer goes to slot 0.
#[derive(Debug, Clone, Copy)]
pub struct SlotClock {
    slot: usize,
    next_at: u64,
    step: u64,
}

impl Default for SlotClock {
    fn default() -> Self {
        SlotClock {
            slot: 0,
            next_at: u64::MAX,
            step: 0,
        }
    }
}

impl SlotClock {
    /// The slots of an interval of `length` ns starting at `start` (ns on
    /// the worker clock).
    pub fn starting(start: u64, length: u64) -> SlotClock {
        let step = (length / SLOTS as u64).max(1);
        SlotClock {
            slot: 0,
            next_at: start.saturating_add(step),
            step,
        }
    }

    /// The slot of an answer at `now` (answers come in time order).
    #[inline]
    pub fn at(&mut self, now: u64) -> usize {
        while now >= self.next_at && self.slot + 1 < SLOTS {
            self.slot += 1;
            self.next_at = self.next_at.saturating_add(self.step);
        }
        self.slot
    }

    pub fn slot(&self) -> usize {
        self.slot
    }
}

/// One op type's slots over one interval.
#[derive(Debug, Clone)]
pub struct Slots {
    pub latency: Vec<Histogram<u64>>,
    pub service: Vec<Histogram<u64>>,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            latency: (0..SLOTS).map(|_| new_batch_histogram()).collect(),
            service: (0..SLOTS).map(|_| new_batch_histogram()).collect(),
        }
    }
}

impl Slots {
    #[inline]
    pub fn record(&mut self, slot: usize, latency_ns: u64, service_ns: u64) {
        self.latency[slot].saturating_record(latency_ns.max(1));
        self.service[slot].saturating_record(service_ns.max(1));
    }

    pub fn reset(&mut self) {
        self.latency.iter_mut().for_each(Histogram::reset);
        self.service.iter_mut().for_each(Histogram::reset);
    }

    pub fn merge(&mut self, other: &Slots) {
        for (a, b) in self.latency.iter_mut().zip(&other.latency) {
            a.add(b).expect("same bounds");
        }
        for (a, b) in self.service.iter_mut().zip(&other.service) {
            a.add(b).expect("same bounds");
        }
    }

    pub fn encode(&self) -> SlotHdrs {
        SlotHdrs {
            latency: self.latency.iter().map(Hdr::encode).collect(),
            service: self.service.iter().map(Hdr::encode).collect(),
        }
    }
}

/// One interval's slots, encoded: `SLOTS` histograms of latency and as
/// many of service time.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotHdrs {
    pub latency: Vec<Hdr>,
    pub service: Vec<Hdr>,
}

impl SlotHdrs {
    /// Refuses slots that cannot be an interval's (from an agent): not
    /// `SLOTS` of each, or not adding up to `count` requests.
    pub fn check(&self, count: u64) -> Result<(), StatsError> {
        if self.latency.len() != SLOTS || self.service.len() != SLOTS {
            return Err(StatsError::SlotCount {
                latency: self.latency.len(),
                service: self.service.len(),
            });
        }
        for (what, hdrs) in [("latency", &self.latency), ("service time", &self.service)] {
            let sum = sum_counts(hdrs)?;
            if sum != count {
                return Err(StatsError::SlotSum { what, sum, count });
            }
        }
        Ok(())
    }

    /// The slots of several processes' same interval, added slot by slot.
    pub fn add(parts: &[&SlotHdrs]) -> Result<SlotHdrs, StatsError> {
        let sum = |pick: fn(&SlotHdrs) -> &Vec<Hdr>| -> Result<Vec<Hdr>, StatsError> {
            (0..SLOTS)
                .map(|i| {
                    let mut h = new_batch_histogram();
                    for p in parts {
                        let slot = pick(p).get(i).ok_or(StatsError::ShortOfSlots)?;
                        h.add(slot.decode_batch()?).expect("same bounds");
                    }
                    Ok(Hdr::encode(&h))
                })
                .collect()
        };
        Ok(SlotHdrs {
            latency: sum(|s| &s.latency)?,
            service: sum(|s| &s.service)?,
        })
    }
}

/// The requests `hdrs` hold, summed without overflow.
fn sum_counts(hdrs: &[Hdr]) -> Result<u64, StatsError> {
    hdrs.iter().try_fold(0u64, |sum, h| {
        sum.checked_add(h.decode_batch()?.len())
            .ok_or(StatsError::CountOverflow)
    })
}

/// One op type's batches over the run, in time order from the start of
/// measurement: batch j holds slots [j·per, (j + 1)·per) of the run (the
/// last may hold fewer), `per` a power of two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchSeries {
    /// Each batch's length, s.
    pub batch_s: f64,
    /// Slots per batch.
    pub slots_per_batch: u32,
    pub latency: Vec<Hdr>,
    pub service_time: Vec<Hdr>,
    /// Slots added to the last batch so far (< `slots_per_batch` while it
    /// is open).
    #[serde(skip)]
    open: u32,
}

impl BatchSeries {
    /// An empty series of slots `slot_s` long.
    pub fn new(slot_s: f64) -> BatchSeries {
        BatchSeries {
            batch_s: slot_s,
            slots_per_batch: 1,
            latency: Vec::new(),
            service_time: Vec::new(),
            open: 0,
        }
    }

    /// The batches there are.
    pub fn len(&self) -> usize {
        self.latency.len()
    }

    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
    }

    /// Appends one interval's slots (None: the op had no answer in it).
    pub fn push(&mut self, slots: Option<&SlotHdrs>) -> Result<(), StatsError> {
        for i in 0..SLOTS {
            match slots {
                Some(s) => self.push_slot(&s.latency[i], &s.service[i])?,
                None => self.push_slot(&Hdr::empty_batch(), &Hdr::empty_batch())?,
            }
        }
        Ok(())
    }

    fn push_slot(&mut self, latency: &Hdr, service: &Hdr) -> Result<(), StatsError> {
        if self.open == 0 {
            self.latency.push(latency.clone());
            self.service_time.push(service.clone());
        } else {
            let last = self.latency.len() - 1;
            self.latency[last] = add_hdrs(&self.latency[last], latency)?;
            self.service_time[last] = add_hdrs(&self.service_time[last], service)?;
        }
        self.open += 1;
        if self.open == self.slots_per_batch {
            self.open = 0;
            if self.latency.len() >= MAX_BATCHES {
                self.halve()?;
            }
        }
        Ok(())
    }

    /// Neighbours merged in pairs: half as many batches, twice as long.
    /// Only with every batch full (`open` 0), so that batch j still holds
    /// slots [j·per, (j + 1)·per).
    fn halve(&mut self) -> Result<(), StatsError> {
        self.latency = pairs(&self.latency)?;
        self.service_time = pairs(&self.service_time)?;
        self.slots_per_batch *= 2;
        self.batch_s *= 2.0;
        Ok(())
    }

    /// The latency batches, decoded.
    pub fn latency_hists(&self) -> Result<Vec<Histogram<u64>>, StatsError> {
        self.latency.iter().map(Hdr::decode_batch).collect()
    }

    pub fn service_hists(&self) -> Result<Vec<Histogram<u64>>, StatsError> {
        self.service_time.iter().map(Hdr::decode_batch).collect()
    }

    /// Series of processes that ran at the same time (agents, `--merge`),
    /// added batch by batch, each first merged to the longest batches
    /// among them.
    pub fn merge(parts: &[&BatchSeries]) -> Result<Option<BatchSeries>, StatsError> {
        let Some(per) = parts.iter().map(|p| p.slots_per_batch).max() else {
            return Ok(None);
        };
        let mut out: Option<BatchSeries> = None;
        for p in parts {
            let mut p = (*p).clone();
            while p.slots_per_batch < per {
                p.halve()?;
            }
            out = Some(match out {
                None => p,
                Some(mut have) => {
                    have.add(&p)?;
                    have
                }
            });
        }
        Ok(out)
    }

    /// Adds `other` (batches as long) batch by batch.
    fn add(&mut self, other: &BatchSeries) -> Result<(), StatsError> {
        for (mine, theirs) in [
            (&mut self.latency, &other.latency),
            (&mut self.service_time, &other.service_time),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), Hdr::empty_batch());
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a = add_hdrs(a, b)?;
            }
        }
        self.batch_s = self.batch_s.max(other.batch_s);
        Ok(())
    }

    /// Refuses a series that cannot be this op's (a saved result is
    /// untrusted): lengths that disagree, more batches than a series
    /// keeps, a batch length that is not positive, or batches that do
    /// not add up to the op's `count` requests.
    pub fn check(&self, count: u64) -> Result<(), StatsError> {
        if self.latency.len() != self.service_time.len() {
            return Err(StatsError::BatchLengths {
                latency: self.latency.len(),
                service: self.service_time.len(),
            });
        }
        if self.latency.len() > MAX_BATCHES + 1 {
            return Err(StatsError::TooManyBatches {
                batches: self.latency.len(),
                max: MAX_BATCHES,
            });
        }
        if !(self.batch_s.is_finite() && self.batch_s > 0.0) || self.slots_per_batch == 0 {
            return Err(StatsError::BatchLength(self.batch_s));
        }
        for (what, hdrs) in [
            ("latency", &self.latency),
            ("service time", &self.service_time),
        ] {
            let sum = sum_counts(hdrs)?;
            if sum != count {
                return Err(StatsError::BatchSum { what, sum, count });
            }
        }
        Ok(())
    }
}

fn add_hdrs(a: &Hdr, b: &Hdr) -> Result<Hdr, StatsError> {
    let mut h = a.decode_batch()?;
    h.add(b.decode_batch()?).expect("same bounds");
    Ok(Hdr::encode(&h))
}

fn pairs(hdrs: &[Hdr]) -> Result<Vec<Hdr>, StatsError> {
    hdrs.chunks(2)
        .map(|pair| match pair {
            [a, b] => add_hdrs(a, b),
            [a] => Ok(a.clone()),
            _ => unreachable!("chunks of two"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(n: u64, at: u64) -> SlotHdrs {
        let mut s = Slots::default();
        for slot in 0..SLOTS {
            for _ in 0..n {
                s.record(slot, at, at / 2);
            }
        }
        s.encode()
    }

    #[test]
    fn a_slot_clock_cuts_an_interval_by_answer_time() {
        let mut c = SlotClock::starting(1_000, 1_000_000);
        assert_eq!(c.at(1_000), 0);
        assert_eq!(c.at(100_999), 0);
        assert_eq!(c.at(101_000), 1);
        assert_eq!(c.at(950_000), 9);
        // Past the interval's end: the last slot.
        assert_eq!(c.at(5_000_000), SLOTS - 1);
        assert_eq!(SlotClock::default().at(u64::MAX - 1), 0);
    }

    #[test]
    fn a_series_halves_at_its_bound_and_keeps_every_request() {
        let mut s = BatchSeries::new(0.1);
        let intervals = MAX_BATCHES / SLOTS + 10;
        for i in 0..intervals {
            s.push(Some(&interval(3, 1_000 + i as u64))).unwrap();
        }
        assert_eq!(s.slots_per_batch, 2);
        assert!((s.batch_s - 0.2).abs() < 1e-12);
        assert_eq!(s.len(), (intervals * SLOTS).div_ceil(2));
        s.check(3 * (intervals * SLOTS) as u64).unwrap();
        // One request too many claimed: refused.
        assert!(s.check(3 * (intervals * SLOTS) as u64 + 1).is_err());
    }

    #[test]
    fn series_of_different_lengths_merge_at_the_longer_batches() {
        let mut short = BatchSeries::new(0.1);
        let mut long = BatchSeries::new(0.1);
        for _ in 0..3 {
            short.push(Some(&interval(1, 5_000))).unwrap();
        }
        for _ in 0..(MAX_BATCHES / SLOTS + 1) {
            long.push(Some(&interval(2, 5_000))).unwrap();
        }
        let m = BatchSeries::merge(&[&short, &long]).unwrap().unwrap();
        assert_eq!(m.slots_per_batch, 2);
        m.check(30 + 2 * 10 * (MAX_BATCHES / SLOTS + 1) as u64)
            .unwrap();
        // The first batch: two slots of each.
        assert_eq!(m.latency[0].decode_batch().unwrap().len(), 2 + 4);
    }

    #[test]
    fn slots_that_do_not_add_up_are_refused() {
        let s = interval(4, 7_000);
        s.check(40).unwrap();
        assert!(s.check(41).unwrap_err().to_string().contains("40 requests"));
        let mut short = s.clone();
        short.latency.pop();
        assert!(short.check(40).is_err());
    }
}
