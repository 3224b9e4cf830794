//! What requests to send: distributions, the key space and its popularity,
//! values, the op mix, and workload files (memaslap configs, profiles).
//! Knows nothing about sockets or wire formats.

mod checks;
mod distribution;
mod error;
mod keyspace;
mod mix;
mod popularity;
mod request;
mod values;
mod window;

pub use checks::{checks_value, Check, Checks, Expiring, ExpiringKeys, DEFAULT_TTL_S};
pub use distribution::{Distribution, Range};
pub use error::{TableError, WorkloadError};
pub use keyspace::{ClientSlice, KeyDigits, KeyNames, KeySpace, MAX_KEY_LEN, MAX_SERVERS};
pub use mix::{Mix, MultiGet, OpKind};
pub use popularity::{Cursor, Popularity};
pub use request::{Named, Request, Workload};
pub use values::ValueTable;
pub use window::{TaskWindow, WindowLedger};
