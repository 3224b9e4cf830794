//! Why a server's `stats` could not be had: its connection (opened, or
//! an exchange on it), or the server's refusal of the group asked for.

use crate::net::{ExchangeError, NetError};

/// A `stats` question that got no answer.
#[derive(Debug, thiserror::Error)]
pub enum StatsQueryError {
    #[error(transparent)]
    Connect(#[from] NetError),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    /// An error line for `what` (`stats` or `stats GROUP`); the
    /// connection stays in step.
    #[error("{} '{what}' ({class})", super::conn::REFUSED)]
    Refused { what: String, class: &'static str },
    #[error("not asked at the end: its connection had failed")]
    NotAsked,
}
