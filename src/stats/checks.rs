//! Counts of memaslap's checks (`--verify`, `--exp-verify`), under its
//! names, and the first failures for `--verbose`.

/// Failures kept as examples per recorder (and per run).
pub const MAX_EXAMPLES: usize = 10;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckCounts {
    /// Values compared with what this run stores.
    pub verified: u64,
    /// Checked gets of keys that must be there, which missed.
    pub verify_misses: u64,
    /// Values whose bytes were not this run's for the key.
    pub verify_failed: u64,
    /// Expiring gets judged (outside the server clock's second).
    pub exp_checked: u64,
    /// Gets that found a key after its expiry.
    pub expired_get: u64,
    /// Gets that missed a key before its expiry.
    pub unexpired_unget: u64,
    /// The first failures, described (`--verbose`).
    pub examples: Vec<String>,
}

impl CheckCounts {
    /// Every failed check.
    pub fn failures(&self) -> u64 {
        self.verify_misses + self.verify_failed + self.expired_get + self.unexpired_unget
    }

    pub fn example(&mut self, text: impl FnOnce() -> String) {
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(text());
        }
    }

    pub fn reset(&mut self) {
        let mut examples = std::mem::take(&mut self.examples);
        examples.clear();
        *self = CheckCounts {
            examples,
            ..CheckCounts::default()
        };
    }

    pub fn merge(&mut self, other: &CheckCounts) {
        self.verified += other.verified;
        self.verify_misses += other.verify_misses;
        self.verify_failed += other.verify_failed;
        self.exp_checked += other.exp_checked;
        self.expired_get += other.expired_get;
        self.unexpired_unget += other.unexpired_unget;
        let room = MAX_EXAMPLES.saturating_sub(self.examples.len());
        self.examples
            .extend(other.examples.iter().take(room).cloned());
    }
}
