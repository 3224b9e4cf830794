//! `--measure-connections`: the measurement group's results, apart from the
//! load's. Its latency is free of the load connections' client-side
//! queueing: what mutilate's master reports, and what an SLO reads.

use super::merge::merge_op;
use super::{op_summary_table, LagSummary, OpSummary};
use crate::spec::{MeasureGroup, RunSpec};
use crate::stats::batches::BatchSeries;
use crate::stats::Recorder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasureSummary {
    /// Connections per server, the group's rate (ops/s) and depth.
    pub connections: usize,
    pub rate: f64,
    pub depth: usize,
    pub ops: BTreeMap<String, OpSummary>,
    pub total: OpSummary,
    /// Intended send → sent, µs: the group's own schedule kept?
    pub send_lag_us: LagSummary,
    /// Requests that found every measurement connection at its depth.
    pub waits: u64,
}

impl MeasureSummary {
    /// The group's recorder and batches (`r`) over `secs`.
    pub fn build(
        spec: &RunSpec,
        group: MeasureGroup,
        (r, batches): (&Recorder, &BTreeMap<String, BatchSeries>),
        secs: f64,
    ) -> Self {
        let (ops, total) = op_summary_table(spec, r, batches, secs);
        MeasureSummary {
            connections: group.connections,
            rate: group.rate,
            depth: group.depth,
            ops,
            total,
            send_lag_us: LagSummary::of(&r.send_lag),
            waits: r.client_waits,
        }
    }

    /// The master's probe connections of an `--agent` run, which ran as
    /// a run of their own (`r`).
    pub fn of_run(group: MeasureGroup, r: &super::RunResult) -> Self {
        MeasureSummary {
            connections: group.connections,
            rate: group.rate,
            depth: group.depth,
            ops: r.ops.clone(),
            total: r.total.clone(),
            send_lag_us: r.client.send_lag_us.clone(),
            waits: r.client.waits,
        }
    }

    /// The groups of runs made at the same time, as one: histograms added;
    /// the send lag is the worst part's (its histogram is not kept).
    pub fn merge(parts: &[&MeasureSummary], secs: f64) -> Result<Option<Self>, super::ResultError> {
        let Some(first) = parts.first() else {
            return Ok(None);
        };
        let mut names: Vec<&String> = parts.iter().flat_map(|p| p.ops.keys()).collect();
        names.sort();
        names.dedup();
        let mut ops = BTreeMap::new();
        for name in names {
            let of: Vec<&OpSummary> = parts.iter().filter_map(|p| p.ops.get(name)).collect();
            ops.insert(name.clone(), merge_op(&of, secs)?);
        }
        let worst =
            |f: fn(&LagSummary) -> f64| parts.iter().map(|p| f(&p.send_lag_us)).fold(0.0, f64::max);
        Ok(Some(MeasureSummary {
            connections: parts.iter().map(|p| p.connections).sum(),
            rate: parts.iter().map(|p| p.rate).sum(),
            depth: first.depth,
            ops,
            total: merge_op(&parts.iter().map(|p| &p.total).collect::<Vec<_>>(), secs)?,
            send_lag_us: LagSummary {
                p50: worst(|l| l.p50),
                p99: worst(|l| l.p99),
                max: worst(|l| l.max),
            },
            waits: parts.iter().map(|p| p.waits).sum(),
        }))
    }
}
