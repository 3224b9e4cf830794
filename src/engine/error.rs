//! What can go wrong in the engine outside a request: a worker's set-up,
//! a lost connection opened again, the trace feed started, a trace command
//! asked. A request's own failure is never one of these: it is counted
//! (`stats::ErrorClass`).

use crate::net::{ExchangeError, NetError};
use crate::spec::SpecError;
use crate::trace::OpenError;
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("epoll: {0}")]
    Epoll(#[source] io::Error),
    #[error("receive timestamps (SO_TIMESTAMPNS): {0}")]
    RxStamps(#[source] io::Error),
    #[error("kernel timestamps (SO_TIMESTAMPING): {0}")]
    KernelStamps(#[source] io::Error),
    /// A socket opened again that could not be watched or stamped.
    #[error("{0}")]
    Socket(#[source] io::Error),
    #[error("cannot start the trace reader: {0}")]
    FeedThread(#[source] io::Error),
    /// A trace command's exchange ended without a reply line.
    #[error("no reply")]
    NoReply,
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Net(#[from] NetError),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    #[error(transparent)]
    Trace(#[from] OpenError),
}
