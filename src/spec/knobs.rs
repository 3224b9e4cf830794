//! mutilate's and memcache-perf's smaller knobs (`--skip`, `-W/--wait`,
//! `--trace-commands`) and what they need of the rest of the run.

use super::{LoadMode, RunSpec};

impl RunSpec {
    /// mutilate's and memcache-perf's smaller knobs: `--skip`, `-W/--wait`,
    /// `--trace-commands`.
    pub(super) fn validate_knobs(&self) -> Result<(), String> {
        if self.skip && self.rate.is_none() {
            return Err("--skip drops arrivals of an open loop that is behind: give --rate".into());
        }
        if self.moderate && self.rate.is_none() {
            return Err("--moderate spaces the sends of an open loop: give --rate".into());
        }
        if self.miss_window == Some(0) {
            return Err("--miss-window must be at least 1 request".into());
        }
        if self.wait > MAX_WAIT {
            return Err(format!("--wait must be at most 1h, got {:?}", self.wait));
        }
        if self.trace_commands
            && !matches!(
                self.protocol,
                mcbench_proto::Protocol::Ascii | mcbench_proto::Protocol::Meta
            )
        {
            return Err(
                "--trace-commands sends start_trace/stop_trace, text commands: use --protocol ascii or meta"
                    .into(),
            );
        }
        if self.trace_commands && self.load == LoadMode::LoadOnly {
            return Err(
                "--trace-commands brackets the measured phase: --load-only has none".into(),
            );
        }
        Ok(())
    }
}

/// The longest `--wait`.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);
