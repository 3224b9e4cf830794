//! memaslap's checks of what the server returns: `--verify` (a value must
//! be the bytes this run stores for its key, at its length) and
//! `--exp-verify` (a key set with a short expiry must hit before it and
//! miss after it).
//!
//! Neither keeps a table per key of the key space. A value's bytes follow
//! from its key and length (`ValueTable::value_for`), so any value this
//! run stored checks out and anything else fails. `--exp-verify` gives the
//! share R of each connection's sets the short expiry, each on a fresh key
//! of its own (`KeySpace::expiring_key`); a few of them, spread over their
//! ages, are kept on the connection's `Cursor` to be read back on both
//! sides of their expiry. In memaslap's task window, which keys a get must
//! find is the window's ledger's to say (`window.rs`).

use super::{Cursor, KeySpace, OpKind, Request};
use rand::Rng;

/// Expiring keys kept to read back, per connection.
pub const RING: usize = 16;
/// memcached's clock ticks in whole seconds: an item set with expiry E at
/// time t expires within a second either side of t + E; and the tick is a
/// timer event, which a busy machine runs late, so the clock can be
/// behind by more than that second when the item is set (a CI run saw
/// 9 of 1,556 keys missed just inside the second). Expiries are judged
/// only outside that second and a quarter, ns.
pub const CLOCK_SLACK_NS: u64 = 1_250_000_000;
/// The expiry of `--exp-verify` sets without `--expiry`, s.
pub const DEFAULT_TTL_S: u32 = 2;

/// What a request checks, decided when it is issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Check {
    #[default]
    Nothing,
    /// A get whose value is compared with the bytes this run stores;
    /// `must_hit`: this run's key was on the server when the get was
    /// issued, so a miss is a `verify_misses`.
    Value { must_hit: bool },
    /// A set with the short expiry; `kept`: the slot of its connection's
    /// kept keys it fills, if it is one to read back.
    ExpiringSet { kept: Option<u8> },
    /// A get of an expiring key set at `set_sent_ns`, acknowledged at
    /// `set_acked_ns`, ns on the worker clock.
    ExpiringGet { set_sent_ns: u64, set_acked_ns: u64 },
}

/// One expiring key kept to read back.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expiring {
    pub key: u64,
    pub sent_ns: u64,
    pub acked_ns: u64,
    /// Acknowledged as stored.
    pub valid: bool,
}

/// One connection's expiring sets (`--exp-verify`).
#[derive(Debug, Clone, Default)]
pub struct ExpiringKeys {
    /// Sets drawn, and how many of them carried the short expiry.
    sets: u64,
    expiring: u64,
    /// The next fresh key's number.
    next: u64,
    /// Keys kept to read back, at most `RING`.
    kept: Vec<Expiring>,
}

/// Kept keys are read back for this long past their expiry and the server
/// clock's second, ns.
const AFTER_EXPIRY_NS: u64 = 2_000_000_000;

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
    /// nothing deletes or expires keys): a checked get of one that misses
    /// is a `verify_misses`.
    pub all_present: bool,
    /// memaslap's task window with `--verify`, where nothing deletes or
    /// expires keys: the window's ledger says which gets must hit.
    pub window_ledger: bool,
}

impl Checks {
    pub fn active(&self) -> bool {
        self.verify > 0.0 || self.exp_verify > 0.0
    }

    /// Ages over which kept keys are read back: to their expiry, the
    /// server clock's second either side, and a while after, ns.
    fn span_ns(&self) -> u64 {
        u64::from(self.ttl_s) * 1_000_000_000 + 2 * CLOCK_SLACK_NS + AFTER_EXPIRY_NS
    }

    /// Whether `req`, a set of `cursor`'s connection, is one of the share
    /// that carries the short expiry; if so it moves to a fresh expiring
    /// key (route it after this). Counted per connection, so that each
    /// connection's share is R within one set. `now_ns`: when it is
    /// intended, on the worker clock.
    pub fn expiring_set(
        &self,
        req: &mut Request,
        cursor: &mut Cursor,
        keys: &KeySpace,
        now_ns: u64,
    ) -> bool {
        if self.exp_verify <= 0.0 || req.op != OpKind::Set {
            return false;
        }
        let e = &mut cursor.expiring;
        e.sets += 1;
        if e.expiring as f64 >= self.exp_verify * e.sets as f64 {
            return false;
        }
        e.expiring += 1;
        let key = keys.expiring_key(cursor.lane, e.next);
        e.next += 1;
        let kept = e.keep(key, now_ns, self.span_ns() / RING as u64);
        *req = Request {
            check: Check::ExpiringSet { kept },
            ..Request::new(OpKind::Set, key)
        };
        true
    }

    /// What get `req` checks: with share R it reads a kept expiring key
    /// back instead; else with share `verify` its value is checked, and
    /// `must_hit` says whether a miss is this run's key gone.
    pub fn decide_get<R: Rng + ?Sized>(
        &self,
        req: &mut Request,
        rng: &mut R,
        cursor: &Cursor,
        must_hit: impl FnOnce(u64) -> bool,
    ) {
        if !checks_value(req.op) {
            return;
        }
        if req.op == OpKind::Get && self.exp_verify > 0.0 && rng.gen::<f64>() < self.exp_verify {
            if let Some(e) = cursor.expiring.pick(rng) {
                req.named = super::Named::key(e.key);
                req.check = Check::ExpiringGet {
                    set_sent_ns: e.sent_ns,
                    set_acked_ns: e.acked_ns,
                };
                return;
            }
        }
        let Some(key) = req.key_id() else {
            return;
        };
        if self.verify > 0.0 && rng.gen::<f64>() < self.verify {
            req.check = Check::Value {
                must_hit: must_hit(key),
            };
        }
    }

    /// Whether a checked get of `key`, outside a task window, must find it.
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

impl ExpiringKeys {
    /// Keeps `key`, set at `now_ns`, to read back if a slot is free or the
    /// newest kept key is `spacing` old (replacing the oldest): so the kept
    /// keys' ages spread over the span they are read in. Its slot, if kept.
    fn keep(&mut self, key: u64, now_ns: u64, spacing: u64) -> Option<u8> {
        let entry = Expiring {
            key,
            sent_ns: now_ns,
            ..Expiring::default()
        };
        if self.kept.len() < RING {
            self.kept.push(entry);
            return Some((self.kept.len() - 1) as u8);
        }
        let newest = self.kept.iter().map(|e| e.sent_ns).max().unwrap_or(0);
        if now_ns.saturating_sub(newest) < spacing {
            return None;
        }
        let (oldest, _) = self
            .kept
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.sent_ns)?;
        self.kept[oldest] = entry;
        Some(oldest as u8)
    }

    /// A kept key acknowledged as stored, at random (without collecting
    /// them: this runs per get).
    fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Expiring> {
        let valid = self.kept.iter().filter(|e| e.valid).count();
        if valid == 0 {
            return None;
        }
        let nth = rng.gen_range(0..valid);
        self.kept.iter().filter(|e| e.valid).nth(nth).copied()
    }

    /// The set of `key` into slot `kept` was sent at `sent_ns` and stored
    /// at `acked_ns`.
    pub fn stored(&mut self, kept: usize, key: u64, sent_ns: u64, acked_ns: u64) {
        if let Some(e) = self.kept.get_mut(kept).filter(|e| e.key == key) {
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
    use crate::placement::Router;
    use crate::workload::{ClientSlice, Popularity};
    use rand::{rngs::SmallRng, SeedableRng};

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
        // Past the expiry and the clock's slack.
        let late = 12 * s + CLOCK_SLACK_NS;
        assert_eq!(c.expected_hit(check, late, late + 1000), None);
        assert_eq!(c.expected_hit(check, late + 2000, late + 3000), Some(false));
        assert_eq!(c.expected_hit(Check::Value { must_hit: true }, 0, 0), None);
    }

    /// The share of sets with the expiry is R from the first sets on, and
    /// the kept keys spread over the ages they are read back in.
    #[test]
    fn a_share_of_sets_expires_and_kept_keys_span_their_expiry() {
        let keys = KeySpace::new(
            1000,
            ClientSlice { index: 0, of: 1 },
            &crate::workload::KeyNames::decimal("mcb:"),
            "30".parse().unwrap(),
            Popularity::Uniform,
            1,
            Router::Single,
        )
        .unwrap();
        let c = Checks {
            ttl_s: 2,
            exp_verify: 0.05,
            ..Checks::default()
        };
        let mut cursor = Cursor::new(3);
        let (mut expiring, mut seen) = (0, std::collections::HashSet::new());
        // 10 s of sets, one per ms, each acknowledged at once.
        for i in 0..10_000u64 {
            let now = i * 1_000_000;
            let mut req = Request::new(OpKind::Set, i % 1000);
            if c.expiring_set(&mut req, &mut cursor, &keys, now) {
                expiring += 1;
                let key = req.key_id().unwrap();
                assert!(seen.insert(key), "fresh keys");
                assert!(!keys.contains(key));
                if let Check::ExpiringSet { kept: Some(slot) } = req.check {
                    cursor.expiring.stored(slot.into(), key, now, now);
                }
            } else {
                assert_eq!(req.check, Check::Nothing);
            }
            if i == 99 {
                assert_eq!(expiring, 5, "R of the first 100 sets");
            }
        }
        assert_eq!(expiring, 500);
        let now = 10_000 * 1_000_000u64;
        let ages: Vec<u64> = cursor
            .expiring
            .kept
            .iter()
            .map(|e| now - e.sent_ns)
            .collect();
        assert_eq!(ages.len(), RING);
        let ttl = 2_000_000_000;
        assert!(
            ages.iter().filter(|&&a| a < ttl - CLOCK_SLACK_NS).count() >= 2,
            "{ages:?}"
        );
        assert!(
            ages.iter().filter(|&&a| a > ttl + CLOCK_SLACK_NS).count() >= 2,
            "{ages:?}"
        );
        // Gets read them back with share R.
        let mut rng = SmallRng::seed_from_u64(1);
        let back = (0..10_000)
            .filter(|_| {
                let mut get = Request::new(OpKind::Get, 7);
                c.decide_get(&mut get, &mut rng, &cursor, |_| true);
                matches!(get.check, Check::ExpiringGet { .. })
            })
            .count();
        assert!((400..600).contains(&back), "{back}");
    }
}
