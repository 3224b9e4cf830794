//! What requests to send: distributions, the key space, values, the op mix.
//! Knows nothing about sockets or wire formats.

mod distribution;
mod keyspace;
mod mix;
mod values;

pub use distribution::Distribution;
pub use keyspace::{KeySpace, MAX_KEY_LEN};
pub use mix::{Mix, OpKind};
pub use values::ValueTable;
