//! Why a command's flags are refused before it does anything: the
//! checks of `route`, the stats tools and the search and scan series
//! beyond those of the flags' own layers. Usage errors (exit 2).

use crate::placement::PlacementError;
use crate::spec::SpecError;

/// A command's flags refused.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Placement(#[from] PlacementError),
    #[error("--distribution none places no key: every server takes any")]
    NoPlacement,
    #[error("a server weight (HOST:PORT:WEIGHT) means nothing to a stats command")]
    StatsWeight,
    #[error("'{0}': stats are read over TCP or a unix socket")]
    StatsOverUdp(String),
    /// A `run` flag a series cannot take, with why.
    #[error("search and scan do not take {0}")]
    NotInSeries(&'static str),
}
