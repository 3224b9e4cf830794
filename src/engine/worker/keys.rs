//! What a worker's requests draw their keys with, and what answers tell
//! back to it.

use crate::workload::{Cursor, Named};

/// The key cursors, and keys waiting to be set.
pub(super) struct KeyState {
    /// Key state (sequential position, latest write, memaslap window,
    /// cas uniques, expiring keys): first the open loop's, which draws
    /// each arrival before it has a connection (one, or one per server
    /// when keys are not placed, so that a key stays on its server); then
    /// one per connection (a group draws with its lead's).
    pub(super) cursors: Vec<Cursor>,
    /// How many of `cursors` are the open loop's.
    pub(super) open_cursors: usize,
    /// Keys (or trace records) whose get missed, to set now (`--getset`).
    pub(super) fills: Vec<Named>,
}
