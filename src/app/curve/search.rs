//! `mcbench search`'s choice of the next rate: bracket by doubling from the
//! lowest rate until a probe fails, bisect the bracket to the precision,
//! then probe the best passing rate once more. Noise is dealt with on the
//! safe side: an answer must pass twice, and a repeat that fails becomes
//! the bracket's new top.

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a probe at this rate; `repeat` when it checks an earlier pass.
    Probe { rate: f64, repeat: bool },
    /// The highest rate that met the bound, twice.
    Found(f64),
    /// Every rate up to the ceiling met the bound (the answer is at least
    /// this).
    Ceiling(f64),
    /// The lowest rate did not meet the bound.
    Unmet(f64),
}

/// The bracket so far.
#[derive(Debug, Clone)]
pub struct Search {
    min: f64,
    max: Option<f64>,
    precision: f64,
    /// Rates that passed, and those of them that passed a repeat.
    passed: Vec<f64>,
    confirmed: Vec<f64>,
    /// The lowest rate that failed.
    failed: Option<f64>,
}

impl Search {
    /// A search from `min` ops/s, doubling up to `max`, to `precision`
    /// (0.02: the bracket's top is within 2 % of its bottom).
    pub fn new(min: f64, max: Option<f64>, precision: f64) -> Self {
        Search {
            min,
            max,
            precision,
            passed: Vec::new(),
            confirmed: Vec::new(),
            failed: None,
        }
    }

    /// The highest rate that passed (and is below every failure).
    pub fn best(&self) -> Option<f64> {
        self.passed.iter().copied().reduce(f64::max)
    }

    pub fn next(&self) -> Next {
        let probe = |rate| Next::Probe {
            rate,
            repeat: false,
        };
        let confirm = |rate, done| {
            if self.confirmed.contains(&rate) {
                done
            } else {
                Next::Probe { rate, repeat: true }
            }
        };
        match (self.best(), self.failed) {
            (None, None) => probe(self.min),
            (None, Some(low)) => Next::Unmet(low),
            (Some(lo), None) => match self.max {
                Some(max) if lo >= max => confirm(lo, Next::Ceiling(lo)),
                Some(max) => probe((2.0 * lo).min(max)),
                None => probe(2.0 * lo),
            },
            (Some(lo), Some(hi)) if (hi - lo) / lo > self.precision => probe((lo + hi) / 2.0),
            (Some(lo), Some(_)) => confirm(lo, Next::Found(lo)),
        }
    }

    /// The verdict of a probe at `rate`.
    pub fn record(&mut self, rate: f64, pass: bool, repeat: bool) {
        if pass {
            self.passed.push(rate);
            if repeat {
                self.confirmed.push(rate);
            }
            return;
        }
        self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
        // A pass at or above a failure was noise: the failure wins.
        self.passed.retain(|p| *p < rate);
        self.confirmed.retain(|p| *p < rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a server whose true limit is `knee`, with
    /// `noisy` deciding a wrong verdict now and then; returns the probes
    /// and the end.
    fn against(
        knee: f64,
        mut noisy: impl FnMut(f64, bool) -> bool,
        s: &mut Search,
    ) -> (usize, Next) {
        for probes in 0..100 {
            match s.next() {
                Next::Probe { rate, repeat } => {
                    let pass = (rate <= knee) != noisy(rate, repeat);
                    s.record(rate, pass, repeat);
                }
                end => return (probes, end),
            }
        }
        panic!("the search did not end");
    }

    #[test]
    fn brackets_then_bisects_to_the_precision_then_confirms() {
        let mut s = Search::new(1000.0, None, 0.02);
        let (probes, end) = against(45_000.0, |_, _| false, &mut s);
        let Next::Found(rate) = end else {
            panic!("{end:?}")
        };
        assert!((45_000.0 / 1.02..=45_000.0).contains(&rate), "{rate}");
        // 1k..64k doubling (7), 5 or 6 bisections of 32k..64k, 1 repeat.
        assert!(probes <= 15, "{probes}");
    }

    #[test]
    fn a_pass_that_fails_its_repeat_lowers_the_answer() {
        let mut s = Search::new(1000.0, None, 0.02);
        let mut flipped = None;
        // The first confirmation fails: the rate it checks passed by noise.
        let (_, end) = against(
            45_000.0,
            |rate, repeat| {
                let flip = repeat && flipped.is_none();
                if flip {
                    flipped = Some(rate);
                }
                flip
            },
            &mut s,
        );
        let Next::Found(rate) = end else {
            panic!("{end:?}")
        };
        let noisy = flipped.expect("a confirmation ran");
        assert!(
            rate < noisy && rate > 40_000.0,
            "{rate} after {noisy} failed"
        );
    }

    #[test]
    fn a_bound_missed_at_the_lowest_rate_is_unmet() {
        let mut s = Search::new(1000.0, None, 0.02);
        assert_eq!(against(500.0, |_, _| false, &mut s).1, Next::Unmet(1000.0));
    }

    #[test]
    fn a_ceiling_stops_the_doubling() {
        let mut s = Search::new(1000.0, Some(5000.0), 0.02);
        assert_eq!(against(1e9, |_, _| false, &mut s).1, Next::Ceiling(5000.0));
    }
}
