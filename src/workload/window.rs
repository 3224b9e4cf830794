//! memaslap's task window: each connection works on the last `size` keys
//! it wrote. A set writes a new key (sliding the window) unless it
//! overwrites one of the window (share `overwrite`); gets read the window.
//!
//! With `--verify`, the window's ledger says which of its keys this run's
//! own acknowledged sets put on the server, so that a get of one that
//! misses is a `verify_misses` (memaslap counts a checked get of an item
//! it stored that misses, evicted or not).

use super::{Cursor, OpKind, Request, Workload};
use mcbench_proto::ResponseClass;
use rand::Rng;

/// The window's shape.
#[derive(Debug, Clone, Copy)]
pub struct TaskWindow {
    pub size: u64,
    pub overwrite: f64,
    /// Connections of the run (lanes of the window id layout).
    pub lanes: usize,
    /// Keys each connection writes before it reads: its whole window
    /// where the mix has no writes (memaslap's warm-up), else one.
    pub preset: u64,
}

/// Which of a connection's window keys are on the server by this run's
/// acknowledged sets: entry `k % size` holds `k + 1` once key number k's
/// latest write was answered STORED, 0 before and once k left the window.
#[derive(Debug, Clone, Default)]
pub struct WindowLedger {
    stored: Vec<u64>,
}

impl WindowLedger {
    fn entry(&mut self, k: u64, size: u64) -> &mut u64 {
        if self.stored.is_empty() {
            // Up to `--window` entries (memaslap keeps as many items).
            self.stored = vec![0; size as usize];
        }
        &mut self.stored[(k % size) as usize]
    }

    fn holds(&self, k: u64, size: u64) -> bool {
        self.stored.get((k % size) as usize) == Some(&(k + 1))
    }
}

impl Workload {
    pub(super) fn next_in_window<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        cursor: &mut Cursor,
        mut op: OpKind,
        window: TaskWindow,
    ) -> Request {
        // Nothing to read yet: memaslap writes first.
        if !op.writes() && cursor.written < window.preset {
            op = OpKind::Set;
        }
        let overwrite = cursor.written > 0 && rng.gen::<f64>() < window.overwrite;
        let key = if op.is_retrieval() {
            self.retrieval_key(rng, cursor)
        } else if !op.writes() || overwrite {
            // touch, incr, decr, delete and overwrites work on the window.
            self.window_pick(rng, cursor, window)
        } else {
            let k = cursor.written;
            cursor.written += 1;
            if self.checks.window_ledger {
                // Key k - size leaves the window; k is not stored yet.
                *cursor.ledger.entry(k, window.size) = 0;
            }
            self.keys.window_key(cursor.lane, window.lanes, k)
        };
        Request::new(op, key)
    }

    /// A key of the connection's window (which must not be empty).
    pub(super) fn window_pick<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        cursor: &Cursor,
        window: TaskWindow,
    ) -> u64 {
        let held = cursor.written.min(window.size).max(1);
        let k = cursor.written.saturating_sub(1 + rng.gen_range(0..held));
        self.keys.window_key(cursor.lane, window.lanes, k)
    }

    /// Key `key`'s number in `cursor`'s window, if it is one of the
    /// window's keys now.
    fn in_window(&self, cursor: &Cursor, key: u64) -> Option<(u64, u64)> {
        let window = self.window?;
        let k = self.keys.window_number(cursor.lane, window.lanes, key)?;
        (k < cursor.written && k + window.size >= cursor.written).then_some((k, window.size))
    }

    /// Whether a get of `key` must find it: a key of the loaded key space
    /// nothing removes, or a window key whose write was acknowledged.
    pub(super) fn must_hit(&self, cursor: &Cursor, key: u64) -> bool {
        if self.checks.window_ledger {
            self.in_window(cursor, key)
                .is_some_and(|(k, size)| cursor.ledger.holds(k, size))
        } else {
            self.checks.expects(&self.keys, key)
        }
    }

    /// The answer `class` to a write `op` of `key` on `cursor`'s
    /// connection: the window's ledger takes it (STORED puts the key on
    /// the server; any other answer leaves it unknown, as memcached drops
    /// the old item on a failed set).
    pub fn written(&self, cursor: &mut Cursor, op: OpKind, key: u64, class: ResponseClass) {
        if !self.checks.window_ledger || !op.writes() {
            return;
        }
        if let Some((k, size)) = self.in_window(cursor, key) {
            *cursor.ledger.entry(k, size) = if class == ResponseClass::Stored {
                k + 1
            } else {
                0
            };
        }
    }
}
