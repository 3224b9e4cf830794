//! libhashkit's key hashes (libmemcached 1.1.4, `src/libhashkit/`), as
//! libmemcached's modula distribution applies them to a key.
//!
//! Written here rather than taken from crates: each is a few lines, and
//! libmemcached's variants differ from the textbook ones in small ways
//! (`char` sign-extended before mixing, a truncated 64-bit FNV, CRC's top
//! 15 bits). The test vectors are libmemcached's own
//! (`tests/fixtures/placement/hashes.json`).

use md5::{Digest, Md5};

/// A key hash, by libmemcached's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyHash {
    /// Bob Jenkins' one-at-a-time: libmemcached's default.
    OneAtATime,
    Md5,
    Crc,
    Fnv164,
    Fnv1a64,
    Fnv132,
    Fnv1a32,
    Jenkins,
}

impl KeyHash {
    pub const ALL: [KeyHash; 8] = [
        KeyHash::OneAtATime,
        KeyHash::Md5,
        KeyHash::Crc,
        KeyHash::Fnv164,
        KeyHash::Fnv1a64,
        KeyHash::Fnv132,
        KeyHash::Fnv1a32,
        KeyHash::Jenkins,
    ];

    /// The name `--hash` takes (libmemcached's, lower case).
    pub fn name(self) -> &'static str {
        match self {
            KeyHash::OneAtATime => "one_at_a_time",
            KeyHash::Md5 => "md5",
            KeyHash::Crc => "crc",
            KeyHash::Fnv164 => "fnv1_64",
            KeyHash::Fnv1a64 => "fnv1a_64",
            KeyHash::Fnv132 => "fnv1_32",
            KeyHash::Fnv1a32 => "fnv1a_32",
            KeyHash::Jenkins => "jenkins",
        }
    }

    pub fn digest(self, key: &[u8]) -> u32 {
        match self {
            KeyHash::OneAtATime => one_at_a_time(key),
            KeyHash::Md5 => md5_word(key, 0),
            KeyHash::Crc => crc(key),
            KeyHash::Fnv164 => fnv1_64(key),
            KeyHash::Fnv1a64 => fnv1a_64(key),
            KeyHash::Fnv132 => fnv1_32(key),
            KeyHash::Fnv1a32 => fnv1a_32(key),
            KeyHash::Jenkins => jenkins(key),
        }
    }
}

impl std::str::FromStr for KeyHash {
    type Err = super::PlacementError;

    fn from_str(text: &str) -> Result<Self, super::PlacementError> {
        let t = text.trim().to_ascii_lowercase().replace('-', "_");
        if t == "default" || t == "oaat" {
            return Ok(KeyHash::OneAtATime);
        }
        KeyHash::ALL
            .into_iter()
            .find(|h| h.name() == t)
            .ok_or_else(|| super::PlacementError::UnknownHash(text.to_string()))
    }
}

impl std::fmt::Display for KeyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A byte as C's `(uint32_t) char` on x86: sign-extended.
#[inline]
fn signed(b: u8) -> u32 {
    b as i8 as i32 as u32
}

fn one_at_a_time(key: &[u8]) -> u32 {
    let mut v: u32 = 0;
    for &b in key {
        v = v.wrapping_add(signed(b));
        v = v.wrapping_add(v << 10);
        v ^= v >> 6;
    }
    v = v.wrapping_add(v << 3);
    v ^= v >> 11;
    v.wrapping_add(v << 15)
}

/// Little-endian word `a` (0..4) of the MD5 digest of `data`: word 0 is
/// libmemcached's MD5 key hash, words 0-3 are ketama's four points.
pub fn md5_word(data: &[u8], a: usize) -> u32 {
    md5_words(data)[a]
}

/// The MD5 digest of `data` as four little-endian words.
pub fn md5_words(data: &[u8]) -> [u32; 4] {
    let d = Md5::digest(data);
    std::array::from_fn(|a| {
        u32::from_le_bytes([d[4 * a], d[4 * a + 1], d[4 * a + 2], d[4 * a + 3]])
    })
}

/// libmemcached's CRC: the IEEE CRC-32, then its bits 16..31 masked to 15.
fn crc(key: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in key {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    ((!c) >> 16) & 0x7fff
}

const FNV_64_INIT: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_64_PRIME: u64 = 0x0100_0000_01b3;
const FNV_32_INIT: u32 = 2_166_136_261;
const FNV_32_PRIME: u32 = 16_777_619;

fn fnv1_64(key: &[u8]) -> u32 {
    let mut h = FNV_64_INIT;
    for &b in key {
        h = h.wrapping_mul(FNV_64_PRIME);
        h ^= b as i8 as i64 as u64;
    }
    h as u32
}

/// libmemcached's "fnv1a_64" works in 32 bits with the 64-bit constants
/// truncated.
fn fnv1a_64(key: &[u8]) -> u32 {
    let mut h = FNV_64_INIT as u32;
    for &b in key {
        h ^= signed(b);
        h = h.wrapping_mul(FNV_64_PRIME as u32);
    }
    h
}

fn fnv1_32(key: &[u8]) -> u32 {
    let mut h = FNV_32_INIT;
    for &b in key {
        h = h.wrapping_mul(FNV_32_PRIME);
        h ^= signed(b);
    }
    h
}

fn fnv1a_32(key: &[u8]) -> u32 {
    let mut h = FNV_32_INIT;
    for &b in key {
        h ^= signed(b);
        h = h.wrapping_mul(FNV_32_PRIME);
    }
    h
}

/// Bob Jenkins' lookup3 `hashlittle` with libmemcached's initval 13,
/// reading the key a byte at a time (what its aligned paths compute too).
fn jenkins(key: &[u8]) -> u32 {
    let init = 0xdead_beefu32
        .wrapping_add(key.len() as u32)
        .wrapping_add(13);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |s: &[u8]| {
        let mut w = [0u8; 4];
        w[..s.len()].copy_from_slice(s);
        u32::from_le_bytes(w)
    };
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        (a, b, c) = mix(a, b, c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let part = |from: usize| word(&k[from.min(k.len())..(from + 4).min(k.len())]);
    a = a.wrapping_add(part(0));
    b = b.wrapping_add(part(4));
    c = c.wrapping_add(part(8));
    final_mix(a, b, c)
}

fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    a = a.wrapping_sub(c);
    a ^= c.rotate_left(4);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a);
    b ^= a.rotate_left(6);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b);
    c ^= b.rotate_left(8);
    b = b.wrapping_add(a);
    a = a.wrapping_sub(c);
    a ^= c.rotate_left(16);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a);
    b ^= a.rotate_left(19);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b);
    c ^= b.rotate_left(4);
    b = b.wrapping_add(a);
    (a, b, c)
}

fn final_mix(mut a: u32, mut b: u32, mut c: u32) -> u32 {
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}
