//! The preload's verdict: whether the keys the run reads are on the
//! server. Judged by the engine before it releases the workers to
//! measure, by a worker to stop a doomed preload early, and by the result
//! of a `--load-only` run.

use crate::stats::Recorder;

/// Share of failed sets above which a preload (`--load-only` too) failed:
/// the keys the run reads would not all be on the server.
pub const FAILED_SHARE: f64 = 0.01;

/// Why a preload failed by its replies: more than 1 % of its sets got no
/// reply or an error reply. The engine asks before it releases the workers
/// to measure; `--load-only` runs are judged by the same rule.
pub fn failure(counts: &Recorder) -> Option<String> {
    let (failed, attempted) = counts.failed_of_attempted();
    (failed > 0 && failed as f64 > FAILED_SHARE * attempted as f64).then(|| {
        format!(
            "preload: {failed} of {attempted} sets failed ({}); the keys the run reads are not \
             all on the server",
            counts.failure_summary()
        )
    })
}
