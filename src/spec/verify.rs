//! memaslap's checks as the spec holds them (`--verify`, `--exp-verify`,
//! `--verbose`): what they can be combined with, and the workload's view.

use super::SpecError;

use super::{LoadMode, RunSpec};
use crate::workload::{Checks, OpKind, DEFAULT_TTL_S};

impl RunSpec {
    /// The checks the workers make.
    pub fn checks(&self) -> Checks {
        let deletes = [OpKind::Delete]
            .iter()
            .any(|op| self.workload.mix.share_of(*op) > 0.0);
        Checks {
            verify: self.checks.verify,
            exp_verify: self.checks.exp_verify,
            ttl_s: match self.checks.exp_verify_ttl {
                Some(ttl) => ttl,
                None if self.request.expiry > 0 => self.request.expiry,
                None => DEFAULT_TTL_S,
            },
            all_present: self.key_space.preload == LoadMode::Load
                && self.key_space.window.is_none()
                && self.request.expiry == 0
                && !deletes,
            window_ledger: self.checks.verify > 0.0
                && self.key_space.window.is_some()
                && self.request.expiry == 0
                && !deletes,
        }
    }

    pub(super) fn validate_checks(&self) -> Result<(), SpecError> {
        for (flag, share) in [
            ("--verify", self.checks.verify),
            ("--exp-verify", self.checks.exp_verify),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return Err(SpecError::Invalid(format!(
                    "{flag} is a share between 0 and 1, got {share}"
                )));
            }
        }
        if let Some(ttl) = self.checks.exp_verify_ttl {
            if ttl == 0 || u64::from(ttl) > u64::from(mcbench_proto::MAX_RELATIVE_EXPTIME) {
                return Err(SpecError::Invalid(format!(
                    "--exp-verify-ttl is 1 to {} s (a relative expiry), got {ttl}",
                    mcbench_proto::MAX_RELATIVE_EXPTIME
                )));
            }
        }
        if self.checks.verify > 0.0 {
            if let Some(op) = [OpKind::Append, OpKind::Prepend, OpKind::Incr, OpKind::Decr]
                .into_iter()
                .find(|op| self.workload.mix.share_of(*op) > 0.0)
            {
                return Err(SpecError::Invalid(format!(
                    "--verify checks values against what this run sets; {} in --mix changes \
                     them on the server in ways it cannot check",
                    op.name()
                )));
            }
            if ![OpKind::Get, OpKind::Gets, OpKind::Gat, OpKind::Gats]
                .iter()
                .any(|op| self.workload.mix.share_of(*op) > 0.0)
            {
                return Err(SpecError::Refused(
                    "--verify checks the values gets read, but --mix has no get, gets, gat or gats",
                ));
            }
        }
        if self.checks.exp_verify > 0.0
            && (self.workload.mix.share_of(OpKind::Set) == 0.0
                || self.workload.mix.share_of(OpKind::Get) == 0.0)
        {
            return Err(SpecError::Refused("--exp-verify sets keys with a short expiry and gets them back: --mix needs both set and get"));
        }
        if self.checks.verbose && !(self.checks.verify > 0.0 || self.checks.exp_verify > 0.0) {
            return Err(SpecError::Refused(
                "--verbose prints the first failed checks: give --verify or --exp-verify",
            ));
        }
        Ok(())
    }
}
