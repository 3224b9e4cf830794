//! One latency histogram as Prometheus reads it: cumulative over the run,
//! both as classic buckets (`le` bounds, any Prometheus) and as a native
//! histogram (exponential buckets at `SCHEMA`, Prometheus ≥ 2.40 with
//! native histograms on).

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The native histogram's schema: each power of two cut into 2^5 = 32
/// buckets, so a bucket's upper bound is at most 2.2 % above its lower
/// (`BASE`), the resolution of a quantile read from it.
pub const SCHEMA: i32 = 5;

/// Values at or below this many seconds count in the zero bucket (the
/// threshold client_golang uses): a latency of 0 ns lands there.
pub const ZERO_THRESHOLD: f64 = 2.938_735_877_055_719e-39; // 2^-128

/// The default classic bounds, seconds: five per decade, log-spaced, from
/// 1 µs to 10 s (1, 1.58, 2.51, 3.98, 6.31 × 10^k), so that
/// `histogram_quantile` reads a cache's latencies on any Prometheus.
pub fn default_bounds() -> Vec<f64> {
    (0..=35)
        .map(|k| {
            let v = 10f64.powf(k as f64 / 5.0 - 6.0);
            // Three significant digits: bounds a reader can type.
            let scale = 10f64.powi(2 - v.log10().floor() as i32);
            (v * scale).round() / scale
        })
        .collect()
}

/// A histogram of seconds, added to once per interval.
#[derive(Debug, Clone)]
pub struct Buckets {
    /// Requests at or below each classic bound (not cumulative: each
    /// bucket's own), then those above the last (`+Inf`'s own).
    classic: Vec<u64>,
    /// Native bucket index → count: index `i` holds (BASE^(i-1), BASE^i].
    native: BTreeMap<i32, u64>,
    zero: u64,
    count: u64,
    /// Sum of the values, seconds.
    sum: f64,
}

impl Buckets {
    pub fn new(bounds: usize) -> Self {
        Buckets {
            classic: vec![0; bounds + 1],
            native: BTreeMap::new(),
            zero: 0,
            count: 0,
            sum: 0.0,
        }
    }

    /// Adds a histogram of ns. Each HdrHistogram bucket counts at its
    /// highest equivalent value, the value the report's percentiles read,
    /// so a quantile from these buckets brackets the report's.
    pub fn add_ns(&mut self, h: &Histogram<u64>, bounds: &[f64]) {
        for v in h.iter_recorded() {
            let n = v.count_at_value();
            // Divided, not multiplied by 1e-9: 1,000 ns is then exactly 1e-6.
            let secs = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e9;
            let classic = bounds.partition_point(|b| *b < secs);
            self.classic[classic] += n;
            if secs <= ZERO_THRESHOLD {
                self.zero += n;
            } else {
                *self.native.entry(native_index(secs)).or_default() += n;
            }
            self.count += n;
            self.sum += secs * n as f64;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Each classic bound's cumulative count, in the bounds' order; the
    /// `+Inf` bucket is `count()`.
    pub fn cumulative(&self) -> impl Iterator<Item = u64> + '_ {
        let last = self.classic.len() - 1;
        self.classic[..last].iter().scan(0, |acc, n| {
            *acc += n;
            Some(*acc)
        })
    }

    pub fn zero_count(&self) -> u64 {
        self.zero
    }

    /// The native buckets as spans and deltas, as the protobuf carries
    /// them: `(offset, length)` per run of adjacent buckets (the first
    /// offset the first index, each next one the gap since the last
    /// span), and each bucket's count less the one before it.
    pub fn native_spans(&self) -> (Vec<(i32, u32)>, Vec<i64>) {
        let (mut spans, mut deltas) = (Vec::<(i32, u32)>::new(), Vec::new());
        let (mut last_index, mut last_count) = (None::<i32>, 0i64);
        for (&i, &n) in &self.native {
            match last_index {
                Some(l) if i == l + 1 => spans.last_mut().expect("a span").1 += 1,
                Some(l) => spans.push((i - l - 1, 1)),
                None => spans.push((i, 1)),
            }
            deltas.push(n as i64 - last_count);
            (last_index, last_count) = (Some(i), n as i64);
        }
        (spans, deltas)
    }
}

/// The native bucket holding `secs` (> 0): the `i` with
/// BASE^(i-1) < secs ≤ BASE^i.
fn native_index(secs: f64) -> i32 {
    let scaled = secs.log2() * f64::from(1 << SCHEMA);
    let i = scaled.ceil() as i32;
    // log2's rounding may put a value a hair past a bound: put it where
    // the bound's own arithmetic says.
    let upper = |i: i32| 2f64.powf(f64::from(i) / f64::from(1 << SCHEMA));
    if secs > upper(i) {
        i + 1
    } else if secs <= upper(i - 1) {
        i - 1
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio of a native bucket's upper bound to its lower.
    fn base() -> f64 {
        2f64.powf(2f64.powi(-SCHEMA))
    }

    fn hist(values_ns: &[u64]) -> Histogram<u64> {
        let mut h = crate::stats::new_histogram();
        for v in values_ns {
            h.record(*v).unwrap();
        }
        h
    }

    #[test]
    fn default_bounds_run_from_a_microsecond_to_ten_seconds() {
        let b = default_bounds();
        assert_eq!(b.len(), 36);
        assert_eq!(
            (b[0], b[1], b[2], b[5], b[35]),
            (1e-6, 1.58e-6, 2.51e-6, 1e-5, 10.0)
        );
        assert!(b.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_native_bucket_holds_its_upper_bound_but_not_its_lower() {
        assert_eq!(native_index(1.0), 0);
        assert_eq!(native_index(2.0), 32);
        assert_eq!(native_index(0.5), -32);
        assert_eq!(native_index(1.0000001), 1);
        assert_eq!(native_index(base()), 1);
    }

    #[test]
    fn classic_and_native_buckets_count_each_value_once() {
        let bounds = [1e-6, 1e-5, 1e-4];
        let mut b = Buckets::new(bounds.len());
        b.add_ns(&hist(&[500, 1000, 5_000, 50_000, 5_000_000]), &bounds);
        assert_eq!(b.count(), 5);
        // 500 ns and 1 µs at or below 1 µs; 5 µs below 10 µs; 50 µs below
        // 100 µs; 5 ms only under +Inf.
        assert_eq!(b.cumulative().collect::<Vec<_>>(), [2, 3, 4]);
        let (spans, deltas) = b.native_spans();
        let total: i64 = deltas
            .iter()
            .scan(0, |acc, d| {
                *acc += d;
                Some(*acc)
            })
            .sum();
        assert_eq!(total, 5);
        assert_eq!(
            spans.iter().map(|s| s.1).sum::<u32>() as usize,
            deltas.len()
        );
        assert_eq!(spans[0].0, native_index(500e-9));
    }

    #[test]
    fn adjacent_native_buckets_share_a_span() {
        let mut b = Buckets::new(0);
        // 1.005 s and 1.03 s: buckets 1 and 2 (BASE = 1.0219), one span;
        // 2.1 s: bucket 35 (log2 2.1 × 32 = 34.3), a gap of 32 after 2.
        b.add_ns(&hist(&[1_005_000_000, 1_030_000_000, 2_100_000_000]), &[]);
        let (spans, deltas) = b.native_spans();
        assert_eq!(spans, [(1, 2), (32, 1)]);
        assert_eq!(deltas, [1, 0, 0]);
    }
}
