//! `mcbench search`'s choice of the next rate: bracket by doubling from the
//! lowest rate until a probe fails, bisect the bracket to the precision,
//! then probe the best passing rate once more. Each probe is decided by
//! the 95 % interval of the SLO's percentile: a pass lies wholly under the
//! bound, a fail wholly over it, and a probe whose interval straddles it
//! is undecided. The answer is a range: the highest rate that passed
//! (twice) and the lowest that failed, with only undecided rates between.
//! Noise is dealt with on the safe side: a repeat that does not pass
//! takes the rate out of the passes.

use crate::result::Verdict;

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a probe at this rate; `repeat` when it checks an earlier pass.
    Probe { rate: f64, repeat: bool },
    /// The highest rate that met the bound, twice, and the lowest that
    /// missed it.
    Found { best: f64, failed: f64 },
    /// Every rate up to the ceiling met the bound (the answer is at least
    /// this).
    Ceiling(f64),
    /// The lowest rate did not meet the bound.
    Unmet(f64),
    /// The lowest rate could not be decided within the probe's length.
    Undecided(f64),
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
    /// Rates whose interval straddled the bound.
    undecided: Vec<f64>,
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
            undecided: Vec::new(),
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
        let highest_undecided = self.undecided.iter().copied().reduce(f64::max);
        match (self.best(), self.failed) {
            (None, Some(low)) => Next::Unmet(low),
            (None, None) if highest_undecided.is_some() => Next::Undecided(self.min),
            (None, None) => probe(self.min),
            (Some(lo), None) => {
                let from = highest_undecided.map_or(lo, |u| u.max(lo));
                match self.max {
                    Some(max) if lo >= max => confirm(lo, Next::Ceiling(lo)),
                    Some(max) if from >= max => confirm(lo, Next::Ceiling(lo)),
                    Some(max) => probe((2.0 * from).min(max)),
                    None => probe(2.0 * from),
                }
            }
            (Some(lo), Some(hi)) => match self.widest_gap(lo, hi) {
                Some((a, b)) if (b - a) / lo > self.precision => probe((a + b) / 2.0),
                _ => confirm(
                    lo,
                    Next::Found {
                        best: lo,
                        failed: hi,
                    },
                ),
            },
        }
    }

    /// The widest stretch between the rates probed from `lo` to `hi`.
    fn widest_gap(&self, lo: f64, hi: f64) -> Option<(f64, f64)> {
        let mut at: Vec<f64> = self
            .undecided
            .iter()
            .copied()
            .filter(|u| *u > lo && *u < hi)
            .collect();
        at.push(lo);
        at.push(hi);
        at.sort_by(f64::total_cmp);
        at.windows(2)
            .map(|w| (w[0], w[1]))
            .max_by(|x, y| (x.1 - x.0).total_cmp(&(y.1 - y.0)))
    }

    /// The verdict of a probe at `rate` (pass, fail or undecided).
    pub fn record(&mut self, rate: f64, verdict: Verdict, repeat: bool) {
        match verdict {
            Verdict::Pass => {
                self.passed.push(rate);
                if repeat {
                    self.confirmed.push(rate);
                }
            }
            Verdict::Fail | Verdict::ClientBound => {
                self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
                // A pass at or above a failure was noise: the failure wins.
                self.passed.retain(|p| *p < rate);
                self.confirmed.retain(|p| *p < rate);
                self.undecided.retain(|p| *p < rate);
            }
            Verdict::Undecided => {
                self.undecided.push(rate);
                // A pass its repeat cannot confirm is no answer.
                self.passed.retain(|p| *p != rate);
                self.confirmed.retain(|p| *p != rate);
            }
        }
    }
}

/// How a driven search ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// Its own end: `Found`, `Ceiling`, `Unmet` or `Undecided`.
    Decided(Next),
    /// The client was late on this rate twice in a row (its ceiling).
    ClientBound(f64),
    /// `--max-probes` were run, and the search had not ended.
    OutOfProbes,
    /// A signal cut a probe short.
    Stopped,
}

/// What one probe at (rate, repeat) gave: its verdict (`None`: none, as
/// undecided), or `None` at the outer level when a signal cut it short.
pub type ProbeOutcome = Option<Option<Verdict>>;

impl Search {
    /// Runs the search to its end, `probe` running each probe (the *how*:
    /// a real run, or a script in tests), at most `max_probes` of them. A
    /// probe the client was late on is run once more, since a late client
    /// is often a passing hiccup of a shared machine; late twice, it ends
    /// the search.
    pub fn drive<E>(
        &mut self,
        max_probes: usize,
        mut probe: impl FnMut(f64, bool) -> Result<ProbeOutcome, E>,
    ) -> Result<End, E> {
        let mut run = 0;
        loop {
            let (rate, repeat) = match self.next() {
                Next::Probe { rate, repeat } => (rate, repeat),
                end => return Ok(End::Decided(end)),
            };
            let mut verdict = None;
            for _ in 0..2 {
                if run >= max_probes {
                    return Ok(End::OutOfProbes);
                }
                run += 1;
                let Some(v) = probe(rate, repeat)? else {
                    return Ok(End::Stopped);
                };
                verdict = v;
                if verdict != Some(Verdict::ClientBound) {
                    break;
                }
            }
            if verdict == Some(Verdict::ClientBound) {
                return Ok(End::ClientBound(rate));
            }
            self.record(rate, verdict.unwrap_or(Verdict::Undecided), repeat);
        }
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
                    let verdict = if pass { Verdict::Pass } else { Verdict::Fail };
                    s.record(rate, verdict, repeat);
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
        let Next::Found { best: rate, failed } = end else {
            panic!("{end:?}")
        };
        assert!((45_000.0 / 1.02..=45_000.0).contains(&rate), "{rate}");
        assert!(
            failed > 45_000.0 && (failed - rate) / rate <= 0.02,
            "{failed}"
        );
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
        let Next::Found { best: rate, .. } = end else {
            panic!("{end:?}")
        };
        let noisy = flipped.expect("a confirmation ran");
        assert!(
            rate < noisy && rate > 40_000.0,
            "{rate} after {noisy} failed"
        );
    }

    /// A server whose latency at `rate` is exponential with rate μ − λ
    /// (M/M/1's time in system), μ = 10,000/s: its p99 is ln(100)/(μ − λ),
    /// so p99 ≤ 2 ms holds exactly up to λ* = μ − ln(100)/2 ms. Each probe
    /// records λ·2 s samples in the project's histogram and is decided by
    /// p99's 95 % interval; the search's range must hold λ* in 19 of 20.
    #[test]
    fn the_noise_aware_search_holds_the_true_knee_in_its_range_19_times_in_20() {
        use crate::precision::{estimate, Samples};
        use rand::SeedableRng;
        use rand_distr::{Distribution, Exp};
        let (mu, bound_us) = (10_000.0f64, 2_000.0);
        let knee = mu - 100f64.ln() / (bound_us / 1e6);
        let mut inside = 0;
        for seed in 0..20u64 {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let mut s = Search::new(1000.0, None, 0.02);
            let end = loop {
                let (rate, repeat) = match s.next() {
                    Next::Probe { rate, repeat } => (rate, repeat),
                    end => break end,
                };
                let mut h = crate::stats::new_histogram();
                if rate < mu {
                    let exp = Exp::new(mu - rate).unwrap();
                    for _ in 0..(rate * 2.0) as u64 {
                        h.saturating_record((exp.sample(&mut rng) * 1e9) as u64);
                    }
                } else {
                    // Overloaded: the queue only grows.
                    h.record_n(1_000_000_000, (rate * 2.0) as u64).unwrap();
                }
                let samples = Samples::alone(&h);
                let e = estimate(&samples, 99.0);
                let verdict = crate::result::decide(e.lower_us, e.upper_us, bound_us);
                s.record(rate, verdict, repeat);
            };
            let Next::Found { best, failed } = end else {
                panic!("seed {seed}: {end:?}")
            };
            inside += usize::from(best <= knee && knee <= failed);
        }
        assert!(
            inside >= 19,
            "the knee {knee:.0} was in the range {inside} times of 20"
        );
    }

    #[test]
    fn an_undecided_probe_stays_inside_the_range() {
        let mut s = Search::new(1000.0, None, 0.02);
        // Decided far from 45k, undecided within 3 % of it.
        for _ in 0..100 {
            let Next::Probe { rate, repeat } = s.next() else {
                break;
            };
            let verdict = if (rate - 45_000.0).abs() / 45_000.0 < 0.03 {
                Verdict::Undecided
            } else if rate < 45_000.0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            s.record(rate, verdict, repeat);
        }
        let Next::Found { best, failed } = s.next() else {
            panic!("{:?}", s.next())
        };
        assert!(
            best < 45_000.0 * 0.97 && failed > 45_000.0 * 1.03,
            "[{best}, {failed}]"
        );
        assert!(best > 40_000.0 && failed < 50_000.0, "[{best}, {failed}]");
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

    /// The verdict at `rate` of a server that serves 4,500 ops/s.
    fn knee(rate: f64) -> Verdict {
        if rate <= 4_500.0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    /// A probe at `rate` against that server: client-bound when the
    /// client was `late`, else the server's verdict.
    fn probed(rate: f64, late: bool) -> Result<ProbeOutcome, ()> {
        Ok(Some(Some(if late {
            Verdict::ClientBound
        } else {
            knee(rate)
        })))
    }

    #[test]
    fn a_probe_the_client_was_late_on_is_run_once_more() {
        let mut s = Search::new(2000.0, None, 0.02);
        let mut log = Vec::new();
        let end = s.drive(100, |rate, _| {
            log.push(rate);
            probed(
                rate,
                rate == 4000.0 && log.iter().filter(|r| **r == rate).count() == 1,
            )
        });
        let Ok(End::Decided(Next::Found { best, failed })) = end else {
            panic!("{end:?}")
        };
        assert!((4_500.0 / 1.02..=4_500.0).contains(&best), "{best}");
        assert!(
            failed > 4_500.0 && (failed - best) / best <= 0.02,
            "{failed}"
        );
        assert_eq!(log[..4], [2000.0, 4000.0, 4000.0, 8000.0]);
    }

    #[test]
    fn a_client_late_twice_ends_the_search_at_that_rate() {
        let mut s = Search::new(2000.0, None, 0.02);
        let mut log = Vec::new();
        let end = s.drive(100, |rate, _| {
            log.push(rate);
            probed(rate, rate >= 8000.0)
        });
        assert_eq!(end, Ok(End::ClientBound(8000.0)));
        assert_eq!(log, [2000.0, 4000.0, 8000.0, 8000.0]);
        assert_eq!(s.best(), Some(4000.0));
    }

    #[test]
    fn a_signal_ends_it_at_the_probe_it_cut() {
        let mut s = Search::new(2000.0, None, 0.02);
        let mut calls = 0;
        let end = s.drive(100, |rate, _| {
            calls += 1;
            Ok::<_, ()>((calls < 3).then_some(Some(knee(rate))))
        });
        assert_eq!((end, calls), (Ok(End::Stopped), 3));
    }

    #[test]
    fn max_probes_counts_every_run_retries_too() {
        let mut s = Search::new(2000.0, None, 0.02);
        let mut log = Vec::new();
        let end = s.drive(2, |rate, _| {
            log.push(rate);
            probed(rate, rate == 4000.0)
        });
        assert_eq!(end, Ok(End::OutOfProbes));
        assert_eq!(log, [2000.0, 4000.0]);
    }

    #[test]
    fn no_verdict_is_undecided_and_a_failed_probe_is_the_error() {
        let mut s = Search::new(2000.0, None, 0.02);
        let end = s.drive(100, |_, _| Ok::<_, ()>(Some(None)));
        assert_eq!(end, Ok(End::Decided(Next::Undecided(2000.0))));
        let mut s = Search::new(2000.0, None, 0.02);
        assert_eq!(
            s.drive(100, |_, _| Err::<ProbeOutcome, _>("down")),
            Err("down")
        );
    }
}
