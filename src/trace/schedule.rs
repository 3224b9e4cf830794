//! Whether a trace's timestamps make a schedule worth replaying: one
//! timestamp years after the others would make a replay wait for them
//! without a word.
//!
//! The judge sees each record's timestamp (whole seconds, as the feed
//! reads them: a step back counts as no step) and keeps the span and the
//! widest gap. Judged in replay time (divided by `--trace-speed`):
//! - a gap over [`MAX_GAP_S`] is refused unless `--time-limit` bounds the
//!   run;
//! - a gap of an hour or more that is most of the span, or a span of a
//!   day or more, is worth a warning.

use std::time::Duration;

/// The widest gap replayed without `--time-limit`, s of replay time.
pub const MAX_GAP_S: f64 = 86_400.0;
/// A gap this long (s of replay time) that is most of the span is out of
/// proportion to the rest of the trace.
const LONG_GAP_S: f64 = 3_600.0;

/// One step between consecutive timestamps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gap {
    /// Its length, s of trace time.
    pub s: u64,
    /// The record (1-based) it ends at.
    pub at_record: u64,
}

/// The timestamps seen so far.
#[derive(Debug, Clone, Default)]
pub struct ScheduleJudge {
    first_s: Option<u64>,
    last_s: u64,
    records: u64,
    widest: Gap,
}

/// What the judge makes of the timestamps.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Fine,
    /// Worth a warning at start; the replay goes on.
    Warn(String),
    /// Not replayed without `--time-limit`.
    Refuse(String),
}

impl ScheduleJudge {
    /// The next record's timestamp; returns the gap it ends, if it is the
    /// widest yet.
    pub fn see(&mut self, time_s: u64) -> Option<Gap> {
        self.records += 1;
        let Some(_) = self.first_s else {
            self.first_s = Some(time_s);
            self.last_s = time_s;
            return None;
        };
        let t = time_s.max(self.last_s);
        let gap = Gap {
            s: t - self.last_s,
            at_record: self.records,
        };
        self.last_s = t;
        (gap.s > self.widest.s).then(|| {
            self.widest = gap;
            gap
        })
    }

    /// The last timestamp minus the first, s.
    pub fn span_s(&self) -> u64 {
        self.first_s.map_or(0, |first| self.last_s - first)
    }

    /// Whether `gap`, replayed at `speed`, is refused under `time_limit`.
    pub fn refuses(gap: Gap, speed: f64, time_limit: Option<Duration>) -> Option<String> {
        let replay_s = gap.s as f64 / speed;
        (replay_s > MAX_GAP_S && time_limit.is_none()).then(|| {
            format!(
                "the trace waits {} between records {} and {} (replayed at {speed}x): a replay would sit idle for it; give --time-limit to bound the run, or --trace-timing ignore",
                human(replay_s),
                gap.at_record - 1,
                gap.at_record
            )
        })
    }

    /// The verdict on every timestamp seen, replayed at `speed`.
    pub fn verdict(&self, speed: f64, time_limit: Option<Duration>) -> Verdict {
        if let Some(why) = Self::refuses(self.widest, speed, time_limit) {
            return Verdict::Refuse(why);
        }
        let (span, gap) = (self.span_s() as f64 / speed, self.widest.s as f64 / speed);
        if gap >= LONG_GAP_S && gap * 2.0 > span {
            return Verdict::Warn(format!(
                "one gap of the trace, {} between records {} and {}, is {:.0} % of its {} (replayed at {speed}x): most of the replay would be idle",
                human(gap),
                self.widest.at_record - 1,
                self.widest.at_record,
                100.0 * gap / span,
                human(span)
            ));
        }
        if span >= MAX_GAP_S {
            return Verdict::Warn(format!(
                "the trace spans {} at {speed}x: the replay takes that long unless -t, -x or --time-limit cut it",
                human(span)
            ));
        }
        Verdict::Fine
    }
}

/// A duration in s as a person reads it.
fn human(s: f64) -> String {
    match s {
        s if s >= 2.0 * 365.25 * 86_400.0 => format!("{:.0} years", s / (365.25 * 86_400.0)),
        s if s >= 2.0 * 86_400.0 => format!("{:.1} days", s / 86_400.0),
        s if s >= 2.0 * 3_600.0 => format!("{:.1} hours", s / 3_600.0),
        s => format!("{s:.0} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(times: &[u64]) -> ScheduleJudge {
        let mut j = ScheduleJudge::default();
        for &t in times {
            j.see(t);
        }
        j
    }

    #[test]
    fn an_even_trace_is_fine_and_a_step_back_is_no_step() {
        let j = judge(&[100, 100, 101, 99, 103, 110]);
        assert_eq!(j.span_s(), 10);
        assert_eq!(j.widest, Gap { s: 7, at_record: 6 });
        assert_eq!(j.verdict(1.0, None), Verdict::Fine);
    }

    #[test]
    fn a_gap_of_years_is_refused_without_a_time_limit() {
        let j = judge(&[1, 2, 3, 4_000_000_003]);
        let Verdict::Refuse(why) = j.verdict(1.0, None) else {
            panic!("{:?}", j.verdict(1.0, None));
        };
        assert!(why.contains("127 years between records 3 and 4"), "{why}");
        // With a time limit it is replayed, with a warning.
        let limit = Some(Duration::from_secs(60));
        assert!(matches!(j.verdict(1.0, limit), Verdict::Warn(_)));
        // Fast enough, the same gap is under a day.
        assert!(matches!(j.verdict(1e6, None), Verdict::Warn(_)));
    }

    #[test]
    fn an_hour_that_is_most_of_the_span_warns_but_a_busy_day_does_not_refuse() {
        let j = judge(&[0, 1, 2, 7_200, 7_201]);
        assert!(matches!(j.verdict(1.0, None), Verdict::Warn(w) if w.contains("2.0 hours")));
        let busy: Vec<u64> = (0..=1_000).map(|i| i * 100).collect();
        let j = judge(&busy);
        let Verdict::Warn(w) = j.verdict(1.0, None) else {
            panic!()
        };
        assert!(w.contains("spans 27.8 hours"), "{w}");
        assert_eq!(j.verdict(2.0, None), Verdict::Fine);
    }
}
