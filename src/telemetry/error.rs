//! What can go wrong with `--metrics-listen`: a usage error before any
//! traffic (an address, the buckets), or an interval that cannot be shown.

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("--metrics-listen {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "--metrics-listen {0} is not a loopback address: whoever reaches it reads the run; \
         give --metrics-allow-remote to serve it there anyway"
    )]
    Remote(SocketAddr),
    #[error("--metrics-buckets: {0}")]
    Buckets(String),
    #[error("the metrics endpoint's thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("an interval the metrics cannot show: {0}")]
    Interval(#[source] crate::stats::StatsError),
}
