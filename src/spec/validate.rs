//! `RunSpec::validate`: every check of a run that needs no network, in
//! one place. The checks of one part live beside it (`schedule.rs`,
//! `churn.rs`, `wire.rs`...); this file calls them all, and holds those of
//! the run's shape, its end and its workload.

use super::SpecError;

use super::{LoadMode, RunSpec, StopAfter, MAX_MULTIGET_KEYS};
use std::time::Duration;

impl RunSpec {
    /// Checks everything that can be checked without the network, this
    /// host's descriptors included: for a run made here.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.validate_plan()?;
        self.validate_host()
    }

    /// `validate` but for this host's limits: for a run other hosts make
    /// (a master of agents opens none of the load's connections; each
    /// agent checks its share against its own limits when it admits it).
    pub fn validate_plan(&self) -> Result<(), SpecError> {
        self.validate_shape()?;
        self.validate_label()?;
        self.validate_refill_batch()?;
        self.validate_schedule()?;
        self.validate_read_delay()?;
        self.validate_read_answers()?;
        self.validate_measure()?;
        self.validate_knobs()?;
        self.validate_trace()?;
        self.validate_save_rate()?;
        self.validate_precision()?;
        self.validate_tls()?;
        self.validate_stop()?;
        self.validate_churn()?;
        self.validate_checks()?;
        self.validate_counters()?;
        self.validate_interval()?;
        self.validate_workload()?;
        self.validate_window()?;
        self.validate_protocol()?;
        self.validate_placement()?;
        self.validate_replication()?;
        self.validate_server_stats()?;
        self.validate_bounds()?;
        self.validate_resources()
    }

    /// Threads, connections, depth and the key space's first key.
    fn validate_shape(&self) -> Result<(), SpecError> {
        if self.load.threads == 0 {
            return Err(SpecError::AtLeastOne("--threads"));
        }
        if self.load.connections == 0 {
            return Err(SpecError::AtLeastOne("--connections"));
        }
        if self.load.depth == 0 || self.load.depth > 65_536 {
            return Err(SpecError::Depth("--depth"));
        }
        if self.key_space.load_each_thread && self.key_space.window.is_some() {
            return Err(SpecError::Refused("--load-each-thread preloads; --window preloads nothing (its keys are written as it goes): drop one"));
        }
        if self.key_space.first_key > u64::from(u32::MAX) {
            return Err(SpecError::Invalid(format!(
                "--first-key is at most {} (4294967295), got {}",
                u32::MAX,
                self.key_space.first_key
            )));
        }
        Ok(())
    }

    /// `--save-rate` is a share of requests.
    fn validate_save_rate(&self) -> Result<(), SpecError> {
        match self.recording.save_rate {
            Some(share) if !(share > 0.0 && share <= 1.0) => Err(SpecError::Invalid(format!(
                "--save-rate is the share of requests saved, above 0 and at most 1; got {share}"
            ))),
            _ => Ok(()),
        }
    }

    /// The run's end: a duration, a count or a time limit, none of them
    /// zero.
    fn validate_stop(&self) -> Result<(), SpecError> {
        match self.load.stop {
            StopAfter::Duration(d) if d.is_zero() => {
                return Err(SpecError::Refused("--duration must be longer than zero"))
            }
            StopAfter::Ops(0) => return Err(SpecError::AtLeastOne("--ops")),
            _ => {}
        }
        if self.load.time_limit.is_some_and(|d| d.is_zero()) {
            return Err(SpecError::Refused("--time-limit must be longer than zero"));
        }
        Ok(())
    }

    /// Each interval closes a set of histograms per worker (~4 MB with
    /// two op types and their slots); ten a second is the most that stays
    /// cheap.
    fn validate_interval(&self) -> Result<(), SpecError> {
        if self.recording.interval < Duration::from_millis(100) {
            return Err(SpecError::Refused("--interval must be at least 100ms"));
        }
        Ok(())
    }

    /// Value sizes, the miss ratio and multigets the run can make.
    fn validate_workload(&self) -> Result<(), SpecError> {
        let (lo, hi) = self.key_space.value_size.support();
        let max = self.key_space.max_value_size;
        if lo > max as f64 || hi < 1.0 {
            return Err(SpecError::Invalid(format!(
                "--value-size {} cannot produce a valid value (1..={max} bytes; --max-value-size raises the limit)",
                self.key_space.value_size
            )));
        }
        if !(0.0..=1.0).contains(&self.workload.miss_ratio) {
            return Err(SpecError::between(
                "--miss-ratio",
                0,
                1,
                self.workload.miss_ratio,
            ));
        }
        if !(0.0..=1.0).contains(&self.workload.multiget.share)
            || self.workload.multiget.keys == 0
            || self.workload.multiget.keys > MAX_MULTIGET_KEYS
        {
            return Err(SpecError::Invalid(format!(
                "multiget needs 1..={MAX_MULTIGET_KEYS} keys and a share between 0 and 100 %"
            )));
        }
        Ok(())
    }

    /// memaslap's task window and its overwrites.
    fn validate_window(&self) -> Result<(), SpecError> {
        match self.key_space.window {
            Some(0) => return Err(SpecError::Refused("--window must hold at least one key")),
            Some(_) if self.key_space.preload == LoadMode::LoadOnly => return Err(SpecError::Refused("--load-only has nothing to load with --window (windows fill as the run writes): drop one of them")),
            None if self.key_space.overwrite > 0.0 => {
                return Err(SpecError::Refused("--overwrite needs --window: with a fixed key space every set overwrites"))
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.key_space.overwrite) {
            return Err(SpecError::between(
                "--overwrite",
                0,
                1,
                self.key_space.overwrite,
            ));
        }
        Ok(())
    }

    /// The counting ops' and cas's own checks: `--cas-unique` needs a cas
    /// in the mix. incr/decr change numbers up to 2^64−1 (mcbench's
    /// values are digits, and 19 of them always fit): a run whose preload
    /// or sets store longer values on the keys they count would fail
    /// every one as `client_error`. Refused before any traffic.
    fn validate_counters(&self) -> Result<(), SpecError> {
        use crate::workload::OpKind;
        const MAX_COUNTER_DIGITS: usize = 19;
        if self.request.cas_unique.is_some() && self.workload.mix.share_of(OpKind::Cas) == 0.0 {
            return Err(SpecError::Refused(
                "--cas-unique sets the unique of each cas: give cas in --mix",
            ));
        }
        let counts = [OpKind::Incr, OpKind::Decr]
            .into_iter()
            .any(|op| self.workload.mix.share_of(op) > 0.0);
        let stores = self.key_space.preload == LoadMode::Load
            || OpKind::ALL
                .into_iter()
                .any(|op| op.writes() && self.workload.mix.share_of(op) > 0.0);
        let longest = self.max_value_len();
        if !counts || !stores || self.trace.is_some() || longest <= MAX_COUNTER_DIGITS {
            return Ok(());
        }
        Err(SpecError::Invalid(format!(
            "--mix with incr/decr: memcached counts only numbers up to 2^64-1 (20 digits), \
             and this run stores values of up to {longest} bytes on the keys they count, so every one \
             would fail (client_error). Give --value-size {MAX_COUNTER_DIGITS} or less (mcbench's values \
             are digits), or --no-load without sets to count absent keys (NOT_FOUND)"
        )))
    }
}
