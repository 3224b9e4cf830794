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

    /// A value of `len` bytes (at most the table's `max_len`).
    pub fn value<R: Rng + ?Sized>(&self, rng: &mut R, len: usize) -> &[u8] {
        let start = rng.gen_range(0..=self.bytes.len() - len);
        &self.bytes[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_have_the_asked_length() {
        let table = ValueTable::new(1000, 3);
        let mut rng = SmallRng::seed_from_u64(1);
        for len in [0, 1, 200, 1000] {
            assert_eq!(table.value(&mut rng, len).len(), len);
        }
    }
}
