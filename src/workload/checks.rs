//! memaslap's checks of what the server returns: `--verify` (a value must
//! be the bytes this run stores for its key, at its length) and
//! `--exp-verify` (a key set with a short expiry must hit before it and
//! miss after it).
//!
//! Neither keeps a table per key. A value's bytes follow from its key and
//! length (`ValueTable::value_for`), so any value this run stored checks
//! out and anything else fails; expiring keys are a few per connection,
//! in a ring on the connection's `Cursor`, on ids no other connection and
//! no other request uses.

use super::{Cursor, KeySpace, OpKind, Request};
use rand::Rng;

/// Expiring keys per connection at most.
pub const RING: usize = 16;
/// memcached's clock ticks in whole seconds: an item set with expiry E at
/// time t expires within a second either side of t + E. Expiries are
/// judged only outside that margin, ns.
pub const CLOCK_SLACK_NS: u64 = 1_000_000_000;
/// The expiry of `--exp-verify` sets without `--expiry`, s.
pub const DEFAULT_TTL_S: u32 = 2;

/// What a request checks, decided when it is issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Check {
    #[default]
    Nothing,
    /// A get whose value is compared with the bytes this run stores.
    Value,
    /// A set with the short expiry, into this slot of its connection's ring.
    ExpiringSet { slot: u8 },
    /// A get of an expiring key set at `set_sent_ns`, acknowledged at
    /// `set_acked_ns`, ns on the worker clock.
    ExpiringGet { set_sent_ns: u64, set_acked_ns: u64 },
}

/// One expiring key of a connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expiring {
    pub key: u64,
    pub sent_ns: u64,
    pub acked_ns: u64,
    /// Acknowledged, and no newer set of it is in flight.
    pub valid: bool,
}

/// A key is read back for this long past its expiry (and the server
/// clock's second) before its slot takes a new one, so that gets find it
/// both before and after its expiry, ns.
const AFTER_EXPIRY_NS: u64 = 2_000_000_000;
/// A set whose acknowledgement never came frees its slot after this, ns.
const LOST_SET_NS: u64 = 10_000_000_000;

/// The run's checks, from the spec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks {
    /// Share of single-key gets whose value is checked.
    pub verify: f64,
    /// Share of sets that carry the short expiry (and of gets that read
    /// an expiring key back).
    pub exp_verify: f64,
    /// The short expiry, s.
    pub ttl_s: u32,
    /// Every key of the key space is on the server (preloaded, and
    /// nothing deletes or expires keys): a checked get that misses is a
    /// `verify_misses`.
    pub all_present: bool,
}

impl Checks {
    pub fn active(&self) -> bool {
        self.verify > 0.0 || self.exp_verify > 0.0
    }

    /// What `req` checks; an expiring set or get is moved to one of the
    /// connection's expiring keys (which may live on another server: route
    /// the request after this).
    /// `now_ns` is when it is intended, on the worker clock.
    pub fn decide<R: Rng + ?Sized>(
        &self,
        req: &mut Request,
        rng: &mut R,
        cursor: &mut Cursor,
        keys: &KeySpace,
        now_ns: u64,
    ) {
        if self.exp_verify > 0.0 && rng.gen::<f64>() < self.exp_verify {
            let retire_after =
                u64::from(self.ttl_s) * 1_000_000_000 + CLOCK_SLACK_NS + AFTER_EXPIRY_NS;
            let slot = (req.op == OpKind::Set)
                .then(|| cursor.free_expiring_slot(now_ns, retire_after))
                .flatten();
            if let Some(slot) = slot {
                let key = keys.expiring_key(cursor.lane, slot);
                cursor.expiring[slot] = Expiring {
                    key,
                    sent_ns: now_ns,
                    ..Expiring::default()
                };
                req.key = key;
                req.check = Check::ExpiringSet { slot: slot as u8 };
                return;
            }
            if req.op == OpKind::Get {
                // A valid key at random, without collecting them: this runs
                // per request.
                let valid = cursor.expiring.iter().filter(|e| e.valid).count();
                if valid > 0 {
                    let nth = rng.gen_range(0..valid);
                    let e = cursor
                        .expiring
                        .iter()
                        .filter(|e| e.valid)
                        .nth(nth)
                        .expect("counted");
                    req.key = e.key;
                    req.check = Check::ExpiringGet {
                        set_sent_ns: e.sent_ns,
                        set_acked_ns: e.acked_ns,
                    };
                    return;
                }
            }
        }
        if self.verify > 0.0 && checks_value(req.op) && rng.gen::<f64>() < self.verify {
            req.check = Check::Value;
        }
    }

    /// Whether a checked get of `key` must find it.
    pub fn expects(&self, keys: &KeySpace, key: u64) -> bool {
        self.all_present && keys.contains(key)
    }

    /// An expiring get sent at `sent_ns` and answered at `answered_ns`:
    /// `Some(true)` if it must hit, `Some(false)` if it must miss, `None`
    /// within a second of the expiry either way.
    pub fn expected_hit(&self, check: Check, sent_ns: u64, answered_ns: u64) -> Option<bool> {
        let Check::ExpiringGet {
            set_sent_ns,
            set_acked_ns,
        } = check
        else {
            return None;
        };
        let ttl_ns = u64::from(self.ttl_s) * 1_000_000_000;
        // The server saw the set between its send and its acknowledgement,
        // and the get between its send and its answer.
        if answered_ns + CLOCK_SLACK_NS < set_sent_ns + ttl_ns {
            Some(true)
        } else if sent_ns > set_acked_ns + ttl_ns + CLOCK_SLACK_NS {
            Some(false)
        } else {
            None
        }
    }
}

/// The gets whose reply carries one value of the key asked.
pub fn checks_value(op: OpKind) -> bool {
    matches!(op, OpKind::Get | OpKind::Gets | OpKind::Gat | OpKind::Gats)
}

impl Cursor {
    /// A ring slot for the next expiring set, if one is free: a new one,
    /// or one whose key is `retire_after` past its set (read back after
    /// its expiry for long enough), or whose set was lost.
    fn free_expiring_slot(&mut self, now_ns: u64, retire_after: u64) -> Option<usize> {
        if self.expiring.len() < RING {
            self.expiring.push(Expiring::default());
            return Some(self.expiring.len() - 1);
        }
        for _ in 0..RING {
            let slot = self.expiring_next % RING;
            self.expiring_next = (slot + 1) % RING;
            let e = &self.expiring[slot];
            let age = now_ns.saturating_sub(e.sent_ns);
            if (e.valid && age > retire_after) || (!e.valid && age > LOST_SET_NS) {
                return Some(slot);
            }
        }
        None
    }

    /// The set into `slot` was stored at `acked_ns`.
    pub fn expiring_stored(&mut self, slot: usize, key: u64, sent_ns: u64, acked_ns: u64) {
        if let Some(e) = self.expiring.get_mut(slot).filter(|e| e.key == key) {
            *e = Expiring {
                key,
                sent_ns,
                acked_ns,
                valid: true,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries_are_judged_only_outside_the_servers_second() {
        let c = Checks {
            ttl_s: 2,
            exp_verify: 1.0,
            ..Checks::default()
        };
        let s = 1_000_000_000u64;
        let check = Check::ExpiringGet {
            set_sent_ns: 10 * s,
            set_acked_ns: 10 * s + 1000,
        };
        assert_eq!(c.expected_hit(check, 10 * s, 10 * s + s / 2), Some(true));
        assert_eq!(c.expected_hit(check, 11 * s, 11 * s + s / 2), None);
        assert_eq!(c.expected_hit(check, 12 * s, 12 * s), None);
        assert_eq!(
            c.expected_hit(check, 13 * s + 2000, 13 * s + 3000),
            Some(false)
        );
        assert_eq!(c.expected_hit(Check::Value, 0, 0), None);
    }
}
