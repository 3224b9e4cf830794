//! The key space: which keys exist, their bytes, and which server owns each.
//!
//! Key `i` is always the same bytes (so a get after a set finds it): the
//! prefix, then `i` in decimal, left-padded with zeros to the key's size.
//! Its size is fixed or drawn once from the size distribution with a seed
//! derived from `i`. Keys are valid for the text protocol: printable ASCII,
//! no spaces, at most 250 bytes.

use super::Distribution;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// memcached's limit on key length, in bytes.
pub const MAX_KEY_LEN: usize = 250;

#[derive(Debug, Clone)]
pub struct KeySpace {
    count: u64,
    prefix: Vec<u8>,
    size: Distribution,
    /// The shortest key that still holds the prefix and every index.
    min_len: usize,
    seed: u64,
    servers: u64,
}

impl KeySpace {
    /// Validates the combination and builds the key space. `servers` is how
    /// many servers share it (key `i` lives on server `i % servers`).
    pub fn new(
        count: u64,
        prefix: &str,
        size: Distribution,
        seed: u64,
        servers: usize,
    ) -> Result<Self, String> {
        if count == 0 {
            return Err("the key space must hold at least one key (--keys)".into());
        }
        if prefix.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(format!(
                "key prefix '{prefix}' must be printable ASCII without spaces"
            ));
        }
        let min_len = prefix.len() + digits(count - 1);
        if min_len > MAX_KEY_LEN {
            return Err(format!("key prefix '{prefix}' is too long"));
        }
        let (lo, hi) = size.support();
        if let Some(fixed) = size.as_fixed() {
            if fixed < min_len as f64 {
                return Err(format!(
                    "key size {fixed} is too small for {count} keys with prefix '{prefix}': \
                     it needs at least {min_len} bytes"
                ));
            }
        }
        if lo > MAX_KEY_LEN as f64 || hi < 1.0 {
            return Err(format!(
                "key size {size} cannot produce a valid key (1..={MAX_KEY_LEN} bytes)"
            ));
        }
        Ok(KeySpace {
            count,
            prefix: prefix.as_bytes().to_vec(),
            size,
            min_len,
            seed,
            servers: servers.max(1) as u64,
        })
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Length of key `i`, in bytes.
    pub fn len_of(&self, i: u64) -> usize {
        let wanted = match self.size.as_fixed() {
            Some(v) => v,
            None => {
                let mut rng =
                    SmallRng::seed_from_u64(self.seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                self.size.sample(&mut rng)
            }
        };
        (wanted.round().max(0.0) as usize).clamp(self.min_len, MAX_KEY_LEN)
    }

    /// Writes key `i` into `buf` and returns it.
    pub fn key<'b>(&self, i: u64, buf: &'b mut [u8; MAX_KEY_LEN]) -> &'b [u8] {
        let len = self.len_of(i);
        let mut num = itoa::Buffer::new();
        let digits = num.format(i).as_bytes();
        let p = self.prefix.len();
        let pad = len - p - digits.len();
        buf[..p].copy_from_slice(&self.prefix);
        buf[p..p + pad].fill(b'0');
        buf[p + pad..len].copy_from_slice(digits);
        &buf[..len]
    }

    /// The server that owns key `i`.
    pub fn server_of(&self, i: u64) -> usize {
        (i % self.servers) as usize
    }

    /// How many keys server `s` owns.
    pub fn keys_on(&self, s: usize) -> u64 {
        let s = s as u64;
        self.count / self.servers + u64::from(s < self.count % self.servers)
    }

    /// The `j`-th key of server `s`.
    pub fn nth_on(&self, s: usize, j: u64) -> u64 {
        j * self.servers + s as u64
    }

    /// A key drawn uniformly from the whole space.
    pub fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        rng.gen_range(0..self.count)
    }

    /// A key drawn uniformly from those of server `s`.
    pub fn pick_on<R: Rng + ?Sized>(&self, rng: &mut R, s: usize) -> u64 {
        self.nth_on(s, rng.gen_range(0..self.keys_on(s).max(1)))
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(count: u64, size: &str, servers: usize) -> KeySpace {
        KeySpace::new(count, "mcb:", size.parse().unwrap(), 1, servers).unwrap()
    }

    #[test]
    fn keys_are_stable_padded_and_distinct() {
        let ks = space(1000, "30", 1);
        let mut buf = [0; MAX_KEY_LEN];
        assert_eq!(ks.key(7, &mut buf), b"mcb:00000000000000000000000007");
        let mut seen = std::collections::HashSet::new();
        for i in 0..1000 {
            let k = ks.key(i, &mut buf).to_vec();
            assert_eq!(k.len(), 30);
            assert!(k.iter().all(|b| b.is_ascii_graphic()));
            assert!(seen.insert(k));
        }
    }

    #[test]
    fn variable_sizes_are_stable_and_bounded() {
        let ks = space(10_000, "uniform:5,300", 1);
        let mut a = [0; MAX_KEY_LEN];
        for i in 0..10_000 {
            let len = ks.len_of(i);
            assert!((8..=MAX_KEY_LEN).contains(&len));
            assert_eq!(ks.key(i, &mut a).len(), len);
            assert_eq!(len, ks.len_of(i));
        }
    }

    #[test]
    fn too_small_or_impossible_sizes_are_rejected() {
        let err = KeySpace::new(1_000_000, "mcb:", "5".parse().unwrap(), 1, 1).unwrap_err();
        assert!(err.contains("at least 10 bytes"), "{err}");
        assert!(KeySpace::new(10, "mcb:", "fixed:300".parse().unwrap(), 1, 1).is_err());
        assert!(KeySpace::new(10, "has space", "30".parse().unwrap(), 1, 1).is_err());
        assert!(KeySpace::new(0, "k", "30".parse().unwrap(), 1, 1).is_err());
    }

    #[test]
    fn servers_partition_the_keys() {
        let ks = space(10, "30", 3);
        assert_eq!((0..3).map(|s| ks.keys_on(s)).sum::<u64>(), 10);
        for s in 0..3 {
            for j in 0..ks.keys_on(s) {
                assert_eq!(ks.server_of(ks.nth_on(s, j)), s);
            }
        }
    }
}
