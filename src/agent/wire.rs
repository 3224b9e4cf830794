//! An interval on the wire: `IntervalSummary` to the API's `Interval` and
//! back. Histograms stay in HdrHistogram V2 compressed encoding both ways,
//! so nothing is rounded on the way.

use super::{pb, AgentDataError};
use crate::stats::batches::SlotHdrs;
use crate::stats::{Hdr, IntervalOp, IntervalSummary, OpRecorder, StatsError};
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
                slot_latency_hdr: slot_bytes(o, |s| &s.latency),
                slot_service_hdr: slot_bytes(o, |s| &s.service),
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

/// One side of an op's slots as bytes (none without slots).
fn slot_bytes(o: &IntervalOp, side: fn(&SlotHdrs) -> &Vec<Hdr>) -> Vec<Vec<u8>> {
    o.slots.as_deref().map_or(Vec::new(), |s| {
        side(s).iter().map(|h| h.bytes().to_vec()).collect()
    })
}

/// Slots as an agent sent them: none, or `SLOTS` of each side adding up
/// to the op's count.
fn slots(
    latency: Vec<Vec<u8>>,
    service: Vec<Vec<u8>>,
    count: u64,
) -> Result<Option<Box<SlotHdrs>>, StatsError> {
    if latency.is_empty() && service.is_empty() {
        return Ok(None);
    }
    let decode = |all: Vec<Vec<u8>>| -> Result<Vec<Hdr>, StatsError> {
        all.into_iter().map(Hdr::from_bytes).collect()
    };
    let s = SlotHdrs {
        latency: decode(latency)?,
        service: decode(service)?,
    };
    s.check(count)?;
    Ok(Some(Box::new(s)))
}

/// An interval as the master keeps it. Refused when a histogram does not
/// decode or disagrees with its count: the agent's data would be wrong.
pub fn summary(i: pb::Interval) -> Result<IntervalSummary, AgentDataError> {
    let secs = i.duration_s.max(1e-9);
    let mut ops = BTreeMap::new();
    for o in i.ops {
        let latency = Hdr::from_bytes(o.latency_hdr)?.decode()?;
        if latency.len() != o.count {
            return Err(AgentDataError::Count {
                index: i.index,
                op: o.op,
                held: latency.len(),
                count: o.count,
            });
        }
        let r = OpRecorder {
            latency,
            service: Hdr::from_bytes(o.service_time_hdr)?.decode()?,
            hits: o.hits,
            misses: o.misses,
            errors: o.errors,
            left_out: 0,
            parts: None,
            slots: None,
        };
        let mut op = IntervalOp::new(&r, secs);
        op.parts_hdr = (o.parts_hdr.into_iter())
            .map(Hdr::from_bytes)
            .collect::<Result<_, _>>()?;
        // Four histograms of as many requests, at most the count.
        let in_op = |source| AgentDataError::Op {
            index: i.index,
            op: o.op.clone(),
            source,
        };
        op.parts().map_err(in_op)?;
        op.slots = slots(o.slot_latency_hdr, o.slot_service_hdr, op.count).map_err(in_op)?;
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

    /// `r` as the one worker's first interval of 1 s, on the wire.
    fn on_the_wire(r: Recorder, cpu_ns: u64) -> pb::Interval {
        let mut c = crate::stats::Collector::new(1, 1_000_000_000, false);
        let s = c
            .add(&crate::stats::Snapshot {
                worker: 0,
                index: 0,
                end_ns: 1_000_000_000,
                cpu_ns,
                recorder: Box::new(r),
            })
            .unwrap();
        interval(&s)
    }

    fn agent_interval() -> pb::Interval {
        let mut r = Recorder::default();
        r.record_op(OpKind::Get, 1_000, 500);
        r.error(ErrorClass::Timeout, 2);
        on_the_wire(r, 250_000_000)
    }

    /// An interval whose 100 gets were answered 10 ms apart, in slots.
    fn slotted_interval() -> pb::Interval {
        let mut r = Recorder::default();
        r.prepare(&[OpKind::Get], 1);
        r.slot_clock = crate::stats::batches::SlotClock::starting(0, 1_000_000_000);
        for t in 0..100u64 {
            r.answered_at(t * 10_000_000);
            r.record_op(OpKind::Get, 1_000 + t, 500);
        }
        on_the_wire(r, 1)
    }

    #[test]
    fn slots_cross_the_wire_and_slots_that_do_not_add_up_are_refused() {
        let s = summary(slotted_interval()).unwrap();
        let slots = s.ops["get"].slots.as_deref().expect("slots");
        let counts: Vec<u64> = slots
            .latency
            .iter()
            .map(|h| h.decode_batch().unwrap().len())
            .collect();
        assert_eq!(counts, [10; 10]);
        assert!(s.ops["total"].slots.is_some());
        // One slot short, or a slot claiming more than the count.
        let mut i = slotted_interval();
        i.ops[0].slot_latency_hdr.pop();
        assert!(summary(i).is_err());
        let mut i = slotted_interval();
        let mut fifty = crate::stats::batches::new_batch_histogram();
        fifty.record_n(1_000, 50).unwrap();
        i.ops[0].slot_latency_hdr[0] = Hdr::encode(&fifty).bytes().to_vec();
        assert!(summary(i)
            .unwrap_err()
            .to_string()
            .contains("slots hold 140"));
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
        assert!(summary(i).unwrap_err().to_string().contains("made_up"));
        for cpu in [-1.0, f64::NAN, f64::INFINITY] {
            let mut i = agent_interval();
            i.client_cpu_s = cpu;
            assert!(
                summary(i).unwrap_err().to_string().contains("CPU time"),
                "{cpu}"
            );
        }
    }
}
