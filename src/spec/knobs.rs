//! mutilate's and memcache-perf's smaller knobs (`--skip`, `-W/--wait`,
//! `--trace-commands`) and what they need of the rest of the run.

use super::SpecError;

use super::{LoadMode, RunSpec};
use crate::workload::OpKind;

impl RunSpec {
    /// mutilate's and memcache-perf's smaller knobs: `--skip`, `-W/--wait`,
    /// `--trace-commands`.
    /// `--refill-batch`: a closed loop's, and no larger than the depth.
    pub(super) fn validate_refill_batch(&self) -> Result<(), SpecError> {
        if self.load.refill_batch == 0 || self.load.refill_batch > self.load.depth {
            return Err(SpecError::between(
                "--refill-batch",
                1,
                format!("--depth ({})", self.load.depth),
                self.load.refill_batch,
            ));
        }
        if self.load.refill_batch > 1 && self.open_loop() {
            return Err(SpecError::Refused("--refill-batch batches a closed loop's refills; an open loop sends each arrival when it is due: drop --refill-batch (or --rate, for a closed loop)"));
        }
        Ok(())
    }

    pub(super) fn validate_knobs(&self) -> Result<(), SpecError> {
        if self.workload.miss_window == Some(0) {
            return Err(SpecError::Refused(
                "--miss-window must be at least 1 request",
            ));
        }
        self.validate_assoc()?;
        self.validate_delete90()?;
        if self.load.wait > MAX_WAIT {
            return Err(SpecError::at_most(
                "--wait",
                "1h",
                format!("{:?}", self.load.wait),
            ));
        }
        if self.request.trace_commands
            && !matches!(
                self.target.protocol,
                mcbench_proto::Protocol::Ascii | mcbench_proto::Protocol::Meta
            )
        {
            return Err(SpecError::Refused("--trace-commands sends start_trace/stop_trace, text commands: use --protocol ascii or meta"));
        }
        if self.request.trace_commands
            && crate::spec::ServerAddr::first_udp(&self.target.servers).is_some()
        {
            return Err(SpecError::Refused(
                "--trace-commands sends its commands over TCP: give TCP or unix servers",
            ));
        }
        let measured = [
            (self.request.trace_commands, "--trace-commands brackets"),
            (!self.load.wait.is_zero(), "--wait precedes"),
            (self.workload.miss_window.is_some(), "--miss-window counts"),
        ];
        if self.key_space.preload == LoadMode::LoadOnly {
            if let Some((_, what)) = measured.iter().find(|(given, _)| *given) {
                return Err(SpecError::Invalid(format!(
                    "{what} the measured phase: --load-only has none"
                )));
            }
        }
        Ok(())
    }
}

impl RunSpec {
    /// `--assoc`: RESP gets and sets only, as single keys.
    fn validate_assoc(&self) -> Result<(), SpecError> {
        let Some(field) = self.workload.assoc else {
            return Ok(());
        };
        if self.target.protocol != mcbench_proto::Protocol::Resp {
            return Err(SpecError::Refused(
                "--assoc stores keys as Redis hash fields: it needs --protocol resp",
            ));
        }
        if self.request.expiry > 0 || self.checks.exp_verify > 0.0 {
            return Err(SpecError::Refused(
                "--assoc writes hash fields, which have no expiry: drop --expiry and --exp-verify",
            ));
        }
        if field == 0 || usize::from(field) > crate::workload::MAX_KEY_LEN {
            return Err(SpecError::Invalid(format!(
                "--assoc is the field's length in bytes, 1 to {}; got {field}",
                crate::workload::MAX_KEY_LEN
            )));
        }
        let others: Vec<&str> = self
            .ops_sent()
            .into_iter()
            .filter(|op| !matches!(op, OpKind::Get | OpKind::Set | OpKind::Fill))
            .map(|op| op.name())
            .collect();
        if !others.is_empty() || self.workload.multiget.share > 0.0 {
            return Err(SpecError::Invalid(format!(
                "--assoc sends gets and sets as HGET/HSET; it cannot send {}",
                if others.is_empty() {
                    "multigets".to_string()
                } else {
                    others.join(", ")
                }
            )));
        }
        Ok(())
    }
}

impl RunSpec {
    /// `--delete90`: a fixed number of queries in getset mode (as the
    /// fork demands), sent closed loop over the key space.
    fn validate_delete90(&self) -> Result<(), SpecError> {
        if !self.workload.delete90 {
            return Ok(());
        }
        if !self.workload.getset {
            return Err(SpecError::Refused(
                "--delete90 needs --getset: the deleted keys are refilled as gets miss",
            ));
        }
        if !matches!(self.load.stop, super::StopAfter::Ops(_)) {
            return Err(SpecError::Refused("--delete90 deletes halfway through a fixed number of queries: give --ops/-x (--queries)"));
        }
        let refused = [
            (
                self.open_loop(),
                "an open loop (--rate): the deletes pause the mix, which a closed loop does",
            ),
            (
                self.trace.is_some(),
                "--trace: a replay has no key space to delete from",
            ),
            (
                self.key_space.window.is_some(),
                "--window: each connection's window is its own key space",
            ),
            (
                self.checks.verify > 0.0 || self.checks.exp_verify > 0.0,
                "--verify: deleted keys would read as lost",
            ),
            (self.churn().is_some(), "--num-conns"),
            (
                self.key_space.preload == LoadMode::LoadOnly,
                "--load-only: there is no measured phase",
            ),
        ];
        match refused.iter().find(|(given, _)| *given) {
            Some((_, what)) => Err(SpecError::Invalid(format!(
                "--delete90 cannot be used with {what}"
            ))),
            None => Ok(()),
        }
    }
}

/// The longest `--wait`.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);
