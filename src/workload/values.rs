//! Value bytes: slices of one pre-generated random table (memaslap's idea),
//! so that no request allocates or generates bytes.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Extra table length beyond the largest value, so slices start at varied
/// offsets even for the largest value. Bytes.
const SPREAD: usize = 64 * 1024;

#[derive(Debug)]
pub struct ValueTable {
    bytes: Vec<u8>,
}

impl ValueTable {
    /// A table that can serve values up to `max_len` bytes.
    pub fn new(max_len: usize, seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        // Decimal digits: a value of up to 19 bytes is then a number that
        // incr and decr accept.
        let alphabet = b"0123456789";
        let bytes = (0..max_len + SPREAD)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect();
        ValueTable { bytes }
    }

    /// Key `key`'s value of `len` bytes (at most the table's `max_len`):
    /// where it starts in the table follows from key and length, so a
    /// value read back can be checked against the bytes this run stores
    /// (`--verify`) with no table per key, and one cut short or meant for
    /// another key does not match.
    /// `None` past the table's length (a value no run of this spec stores).
    pub fn value_for(&self, key: u64, len: usize) -> Option<&[u8]> {
        if len > self.bytes.len() {
            return None;
        }
        // splitmix64's finaliser: a cheap, well-mixed hash.
        let mut h = key ^ (len as u64).rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
        let start = (h % (self.bytes.len() - len + 1) as u64) as usize;
        self.bytes.get(start..start + len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_have_the_asked_length_and_follow_from_key_and_length() {
        let table = ValueTable::new(1000, 3);
        for len in [0, 1, 200, 1000] {
            assert_eq!(table.value_for(7, len).unwrap().len(), len);
        }
        let v = |key, len| table.value_for(key, len).unwrap();
        assert_eq!(v(7, 200), v(7, 200));
        assert_ne!(v(7, 200), v(8, 200));
        assert_ne!(v(7, 199), &v(7, 200)[..199]);
        // Longer than any value the table serves: none, no panic.
        assert_eq!(table.value_for(7, 1_000_000), None);
    }
}
