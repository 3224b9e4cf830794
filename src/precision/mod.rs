//! How far a number taken from latency samples can be trusted: a
//! confidence interval for any percentile of a histogram (order
//! statistics, batch means over the run's intervals, censored requests
//! counted), trend and warm-up tests over a series of intervals, and
//! bootstrap intervals for the change between two sets of runs.
//!
//! Pure arithmetic over histograms and numbers: it knows nothing of a
//! run, a spec or a report. `result` builds the verdict of a run from it,
//! the engine asks it whether a run is precise enough to stop.

pub mod bootstrap;
mod estimate;
pub mod order;
mod series;
pub mod trend;

pub use estimate::{estimate, us, Estimate, Method, Samples, CONFIDENCE};
pub use series::{stationarity, Stationarity, TREND_P};
