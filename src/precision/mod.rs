//! How far a number taken from latency samples can be trusted: a
//! confidence interval for any percentile of a histogram (order
//! statistics, their ranks those of the samples' worth in independent
//! ones where a run's short batches show the tail clustered or drifting,
//! censored requests counted), trend and warm-up tests over a series of
//! intervals, and bootstrap intervals for the change between two sets of
//! runs.
//!
//! Pure arithmetic over histograms and numbers: it knows nothing of a
//! run, a spec or a report. `result` builds the verdict of a run from it,
//! the engine asks it whether a run is precise enough to stop.

pub mod bootstrap;
pub mod dispersion;
mod estimate;
mod judge;
pub mod order;
mod series;
pub mod trend;

pub use dispersion::{Batches, MIN_BATCHES};
pub use estimate::{estimate, us, Estimate, Method, Samples, CONFIDENCE, MARKED_EFFECT};
pub use judge::{judge, Shortfall, MIN_INDEPENDENT_TAIL};
pub use series::{stationarity, stationarity_of, Stationarity, TREND_P};
