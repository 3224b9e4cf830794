//! Repeated runs of one configuration (`run --repeat`, `mcbench ab`):
//! every run kept whole, the spread between them, and the change from one
//! set to another with a bootstrap interval against the noise floor the
//! baseline shows against itself (A/A).

use super::{percentile_label, ResultError, RunResult};
use crate::precision::bootstrap::{self, Change};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const RUN_SET_SCHEMA: &str = "mcbench.runs/1";

/// The runs of one configuration, in the order they ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSet {
    pub schema: String,
    /// What the runs were (a run file's name), when known.
    pub label: Option<String>,
    pub runs: Vec<RunResult>,
}

impl RunSet {
    pub fn new(label: Option<String>, runs: Vec<RunResult>) -> Self {
        RunSet {
            schema: RUN_SET_SCHEMA.into(),
            label,
            runs,
        }
    }

    /// Reads a set written by `run --repeat --json`; None when the file is
    /// a single run's result (or anything else: `RunResult::load` says).
    pub fn load(path: &Path) -> Result<Option<RunSet>, ResultError> {
        let text = crate::untrusted::read_text(
            path,
            crate::untrusted::Bound::Result,
            "an mcbench result",
        )?;
        RunSet::parse(&text).map_err(|e| e.in_file(path))
    }

    /// `load`'s parse: read straight into the runs' types, as
    /// `RunResult::parse` reads one (a document tree would cost some 30
    /// times the text), each run checked as a single one is.
    fn parse(text: &str) -> Result<Option<RunSet>, ResultError> {
        #[derive(serde::Deserialize)]
        struct Head {
            schema: Option<String>,
        }
        #[derive(serde::Deserialize)]
        struct SetFile {
            label: Option<String>,
            runs: Option<Vec<RunResult>>,
        }
        let head: Head = serde_json::from_str(text).map_err(ResultError::NotJson)?;
        if head.schema.as_deref() != Some(RUN_SET_SCHEMA) {
            return Ok(None);
        }
        let set: SetFile =
            serde_json::from_str(text).map_err(|source| ResultError::NotValidSet { source })?;
        let runs = set
            .runs
            .ok_or(ResultError::SetWithoutRuns)?
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                RunResult::admit(r).map_err(|e| ResultError::Run {
                    index: i + 1,
                    source: Box::new(e),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if runs.is_empty() {
            return Err(ResultError::EmptySet);
        }
        Ok(Some(RunSet::new(set.label, runs)))
    }
}

/// One figure of a run: ops/s, or a percentile of total latency (µs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    OkRate,
    Latency(f64),
}

impl Metric {
    /// ops/s, then each percentile of the first run.
    pub fn of(runs: &[RunResult]) -> Vec<Metric> {
        let mut m = vec![Metric::OkRate];
        if let Some(r) = runs.first() {
            m.extend(r.percentiles.iter().map(|p| Metric::Latency(*p)));
        }
        m
    }

    pub fn name(self) -> String {
        match self {
            Metric::OkRate => "ok ops/s".into(),
            Metric::Latency(p) => format!("{} µs", percentile_label(p)),
        }
    }

    /// Its value in `r`.
    pub fn value(self, r: &RunResult) -> Result<f64, ResultError> {
        match self {
            Metric::OkRate => Ok(r.total.ok_rate),
            Metric::Latency(p) => {
                let h = r.total.latency_hdr.decode()?;
                Ok(super::percentile_us(&h, p))
            }
        }
    }

    /// Whether a rise is for the better.
    pub fn higher_is_better(self) -> bool {
        self == Metric::OkRate
    }
}

/// A figure over the runs of one set.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spread {
    pub metric: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The median's 95 % bootstrap interval, relative to it (null with
    /// fewer than 2 runs).
    pub median_interval: Option<[f64; 2]>,
}

/// Each figure's spread over `runs`.
pub fn spreads(runs: &[RunResult]) -> Result<Vec<Spread>, ResultError> {
    Metric::of(runs)
        .into_iter()
        .map(|m| {
            let xs = runs
                .iter()
                .map(|r| m.value(r))
                .collect::<Result<Vec<_>, _>>()?;
            let median = bootstrap::median(&xs).unwrap_or(0.0);
            let interval = bootstrap::median_interval(&xs).map(|(lo, hi)| [lo, hi]);
            Ok(Spread {
                metric: m.name(),
                median,
                min: xs.iter().copied().fold(f64::INFINITY, f64::min),
                max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                median_interval: interval,
            })
        })
        .collect()
}

/// One figure from A to B.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Difference {
    pub metric: String,
    pub a_median: f64,
    pub b_median: f64,
    /// B's median over A's, less one, and its 95 % bootstrap interval.
    pub change: Change,
    /// The A/A floor: the largest change A's own runs allow against one
    /// another (null with fewer than 4 runs of A).
    pub floor: Option<f64>,
    /// The interval leaves out zero and the change exceeds the floor.
    pub real: bool,
    /// A real change for the better (fewer µs, more ops/s).
    pub better: bool,
}

/// Each figure's change from `a` to `b` (the first run of `a` names the
/// percentiles).
pub fn differences(a: &[RunResult], b: &[RunResult]) -> Result<Vec<Difference>, ResultError> {
    let mut out = Vec::new();
    for m in Metric::of(a) {
        let xa = a
            .iter()
            .map(|r| m.value(r))
            .collect::<Result<Vec<_>, _>>()?;
        let xb = b
            .iter()
            .map(|r| m.value(r))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(change) = bootstrap::change(&xa, &xb) else {
            continue;
        };
        let floor = bootstrap::noise_floor(&xa);
        let real = change.excludes_zero() && floor.is_none_or(|f| change.relative.abs() > f);
        out.push(Difference {
            metric: m.name(),
            a_median: bootstrap::median(&xa).unwrap_or(0.0),
            b_median: bootstrap::median(&xb).unwrap_or(0.0),
            better: real && ((change.relative > 0.0) == m.higher_is_better()),
            change,
            floor,
            real,
        });
    }
    Ok(out)
}
