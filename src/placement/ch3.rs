//! mcrouter's `Ch3` hash: `furc_hash(key, len, m)` (`mcrouter/lib/fbi/
//! hash.c`), a consistent hash onto `m` servers that needs no continuum.
//!
//! The bit stream is MurmurHash64A of the key with seed 4193360111, then
//! the murmur of each previous 64-bit word; up to 32 tries of 23-bit
//! strides pick a number below `m`.

const SEED: u64 = 4_193_360_111;
const M: u64 = 0xc6a4_a793_5bd1_e995;
const R: u32 = 47;
const FURC_SHIFT: u32 = 23;
const MAX_TRIES: u32 = 32;

/// MurmurHash64A of `key`, as mcrouter's `murmur_hash_64A`.
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut k = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The server (0..m) of `key`; `m` is at most 2^23.
pub fn furc_hash(key: &[u8], m: u64) -> u64 {
    if m <= 1 {
        return 0;
    }
    let mut stream = BitStream {
        words: vec![murmur64a(key, SEED)],
    };
    let mut d = 0u32;
    while m > (1u64 << d) {
        d += 1;
    }
    let mut a = d;
    for _ in 0..MAX_TRIES {
        while stream.bit(a) == 0 {
            d -= 1;
            if d == 0 {
                return 0;
            }
            a = d;
        }
        a += FURC_SHIFT;
        let mut num: u64 = 1;
        for _ in 0..d - 1 {
            num = (num << 1) | stream.bit(a);
            a += FURC_SHIFT;
        }
        if num < m {
            return num;
        }
    }
    0
}

/// The key's bits, extended on demand by re-hashing the last word.
struct BitStream {
    words: Vec<u64>,
}

impl BitStream {
    fn bit(&mut self, idx: u32) -> u64 {
        let w = (idx >> 6) as usize;
        while self.words.len() <= w {
            let last = *self.words.last().expect("seeded");
            self.words.push(murmur64a(&last.to_le_bytes(), SEED));
        }
        (self.words[w] >> (idx & 63)) & 1
    }
}
