//! An interval on the wire: `IntervalSummary` to the API's `Interval` and
//! back. Histograms stay in HdrHistogram V2 compressed encoding both ways,
//! so nothing is rounded on the way.

use super::pb;
use crate::stats::{Hdr, IntervalOp, IntervalSummary, OpRecorder};
use std::collections::BTreeMap;

/// An interval as an agent sends it.
pub fn interval(s: &IntervalSummary) -> pb::Interval {
    pb::Interval {
        index: s.index,
        time_s: s.time_s,
        duration_s: s.duration_s,
        ops: s
            .ops
            .iter()
            .map(|(name, o)| pb::OpInterval {
                op: name.clone(),
                count: o.count,
                hits: o.hits,
                misses: o.misses,
                errors: o.errors,
                latency_hdr: o.latency_hdr.bytes().to_vec(),
                service_time_hdr: o.service_time_hdr.bytes().to_vec(),
                parts_hdr: o.parts_hdr.iter().map(|h| h.bytes().to_vec()).collect(),
            })
            .collect(),
        hits: s.hits,
        misses: s.misses,
        errors: s.errors,
        bytes_tx: s.bytes_tx,
        bytes_rx: s.bytes_rx,
        send_lag_hdr: s.send_lag_hdr.bytes().to_vec(),
        error_classes: s.error_classes.clone().into_iter().collect(),
        client_cpu_s: s.client_cpu_s,
    }
}

/// An interval as the master keeps it. Refused when a histogram does not
/// decode or disagrees with its count: the agent's data would be wrong.
pub fn summary(i: pb::Interval) -> Result<IntervalSummary, String> {
    let secs = i.duration_s.max(1e-9);
    let mut ops = BTreeMap::new();
    for o in i.ops {
        let latency = Hdr::from_bytes(o.latency_hdr)?.decode()?;
        if latency.len() != o.count {
            return Err(format!(
                "interval {}: {} holds {} latencies for a count of {}",
                i.index,
                o.op,
                latency.len(),
                o.count
            ));
        }
        let r = OpRecorder {
            latency,
            service: Hdr::from_bytes(o.service_time_hdr)?.decode()?,
            hits: o.hits,
            misses: o.misses,
            errors: o.errors,
            left_out: 0,
            parts: None,
        };
        let mut op = IntervalOp::new(&r, secs);
        op.parts_hdr = (o.parts_hdr.into_iter())
            .map(Hdr::from_bytes)
            .collect::<Result<_, _>>()?;
        // Four histograms of as many requests, at most the count.
        op.parts()
            .map_err(|e| format!("interval {}: {}: {e}", i.index, o.op))?;
        ops.insert(o.op, op);
    }
    let summary = IntervalSummary {
        index: i.index,
        time_s: i.time_s,
        duration_s: i.duration_s,
        ops,
        hits: i.hits,
        misses: i.misses,
        errors: i.errors,
        error_classes: i.error_classes.into_iter().collect(),
        client_cpu_s: i.client_cpu_s,
        bytes_tx: i.bytes_tx,
        bytes_rx: i.bytes_rx,
        send_lag_hdr: Hdr::from_bytes(i.send_lag_hdr)?,
        servers: Vec::new(),
        replica: None,
    };
    summary.check()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{ErrorClass, Recorder};
    use crate::workload::OpKind;

    fn agent_interval() -> pb::Interval {
        let mut r = Recorder::default();
        r.record_op(OpKind::Get, 1_000, 500);
        r.error(ErrorClass::Timeout, 2);
        let mut c = crate::stats::Collector::new(1, 1_000_000_000, false);
        let s = c
            .add(&crate::stats::Snapshot {
                worker: 0,
                index: 0,
                end_ns: 1_000_000_000,
                cpu_ns: 250_000_000,
                recorder: Box::new(r),
            })
            .unwrap();
        interval(&s)
    }

    #[test]
    fn error_classes_and_cpu_cross_the_wire() {
        let s = summary(agent_interval()).unwrap();
        assert_eq!(s.error_classes.get("timeout"), Some(&2));
        assert_eq!(s.error_classes.len(), 1);
        assert!((s.client_cpu_s - 0.25).abs() < 1e-12);
    }

    #[test]
    fn an_agents_unknown_class_or_impossible_cpu_is_refused() {
        let mut i = agent_interval();
        i.error_classes.insert("made_up".into(), 1);
        assert!(summary(i).unwrap_err().contains("made_up"));
        for cpu in [-1.0, f64::NAN, f64::INFINITY] {
            let mut i = agent_interval();
            i.client_cpu_s = cpu;
            assert!(summary(i).unwrap_err().contains("CPU time"), "{cpu}");
        }
    }
}
