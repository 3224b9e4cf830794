//! The key space: which keys exist, their bytes, which server holds each,
//! and which one a request asks for.
//!
//! Key ids are global: `--keys N` names ids `0..N`, of which this instance
//! uses a slice (`--client I/N`, twemperf's `-c`). Key `id` is always the
//! same bytes (so a get after a set finds it): the prefix, then `id`'s
//! number (`KeyNames`: decimal from 0, or as twemperf names its keys, hex
//! from 1), left-padded with zeros to the key's size, which is fixed or
//! drawn once from the size distribution with a seed derived from `id`.
//! Keys are printable ASCII without spaces, at most 250 bytes. Ids from `N`
//! up to `2N` are never written: requests for them are planned misses.
//!
//! A key is drawn from the whole space with its popularity first, and its
//! server follows from its bytes (`placement::Router`), as an
//! application's client places it: hot keys make a hot server.

use super::popularity::{Cursor, Picker, Popularity};
use super::{Distribution, WorkloadError};
use crate::placement::{Replicas, Router};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// memcached's limit on key length, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// Which of several cooperating instances this is (`--client I/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientSlice {
    pub index: u64,
    pub of: u64,
}

impl std::str::FromStr for ClientSlice {
    type Err = WorkloadError;

    fn from_str(text: &str) -> Result<Self, WorkloadError> {
        let bad = || WorkloadError::ClientSlice(text.into());
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, of) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if of == 0 || index >= of {
            return Err(bad());
        }
        Ok(ClientSlice { index, of })
    }
}

/// How a key's number is written: `--key-digits` and `--first-key`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum KeyDigits {
    /// 0-9 (mcbench, memaslap, mutilate).
    #[default]
    Decimal,
    /// 0-9a-f (twemperf: `mcp:0000000a`).
    Hex,
}

impl KeyDigits {
    fn base(self) -> u64 {
        match self {
            KeyDigits::Decimal => 10,
            KeyDigits::Hex => 16,
        }
    }
}

/// The bytes of key numbers: the prefix, then `first + id` in `digits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyNames {
    pub prefix: String,
    pub digits: KeyDigits,
    /// The number of id 0 (twemperf's first key is 1).
    pub first: u64,
}

impl KeyNames {
    /// Decimal numbers from 0 after `prefix`.
    pub fn decimal(prefix: &str) -> Self {
        KeyNames {
            prefix: prefix.to_string(),
            digits: KeyDigits::Decimal,
            first: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct KeySpace {
    /// This instance's ids: `first..first + count`.
    first: u64,
    count: u64,
    /// All instances' keys: ids `total..2 * total` are planned misses.
    total: u64,
    prefix: Vec<u8>,
    digits: KeyDigits,
    /// The number written for id 0.
    first_number: u64,
    size: Distribution,
    /// The shortest key that still holds the prefix and every id.
    min_len: usize,
    seed: u64,
    /// Where each key lives.
    router: Router,
    /// A replication run's servers: `router` places keys on its writers,
    /// and reads go elsewhere.
    replicas: Option<Replicas>,
    /// The popularity over this instance's keys.
    picker: Picker,
    /// The server of each of this instance's keys, when placement is
    /// computed (several servers) and the table fits `MAX_OWNER_TABLE`:
    /// a hash per request otherwise.
    owners: Vec<u16>,
    /// The length of every key when the size is fixed.
    fixed_len: Option<usize>,
    /// With a fixed size, this instance's keys formatted back to back
    /// (when they fit in `MAX_KEY_TABLE`): a copy instead of formatting
    /// one per request.
    table: Vec<u8>,
    /// Drawn key lengths of this instance's ids, when sizes vary: drawing
    /// one costs a seeded RNG and a sample per request otherwise.
    lens: Vec<u8>,
}

/// The largest table of formatted keys kept, bytes.
const MAX_KEY_TABLE: u64 = 16 << 20;

/// The most keys whose drawn lengths are kept (one byte each).
const MAX_LEN_TABLE: u64 = 64 << 20;

/// The most keys whose server is kept (two bytes each): building it costs
/// a hash per key at start.
const MAX_OWNER_TABLE: u64 = 1 << 20;

/// The most servers a run places keys on (`owners` holds u16).
pub const MAX_SERVERS: usize = 4096;

/// This client's slice of `total` keys: its first id and how many.
fn slice_of(total: u64, slice: ClientSlice) -> Result<(u64, u64), WorkloadError> {
    // In u128: total × index overflows u64 for large key spaces.
    let cut = |i: u64| (u128::from(total) * u128::from(i) / u128::from(slice.of)) as u64;
    let first = cut(slice.index);
    let count = cut(slice.index + 1) - first;
    if count == 0 {
        return Err(WorkloadError::KeyPerClient(total));
    }
    Ok((first, count))
}

/// The shortest key every id fits in, planned misses included (see
/// `miss`), once the prefix and `size` are found able to make keys.
fn min_key_len(names: &KeyNames, size: &Distribution, total: u64) -> Result<usize, WorkloadError> {
    let prefix = names.prefix.as_str();
    if prefix.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(WorkloadError::PrefixNotPrintable(prefix.into()));
    }
    // Room for every id, planned misses included (see `miss`).
    let base = names.digits.base();
    let min_len = prefix.len() + digits((2 * total).saturating_add(names.first), base);
    // Any id (window keys grow without bound) must fit: u64 has 20 digits.
    if prefix.len() + 20 > MAX_KEY_LEN {
        return Err(WorkloadError::PrefixTooLong(prefix.into()));
    }
    let (lo, hi) = size.support();
    if let Some(fixed) = size.as_fixed() {
        if fixed < min_len as f64 {
            return Err(WorkloadError::KeySizeTooSmall {
                fixed,
                keys: total,
                prefix: prefix.into(),
                min_len,
            });
        }
    }
    if lo > MAX_KEY_LEN as f64 || hi < 1.0 {
        return Err(WorkloadError::KeySize {
            size: size.to_string(),
        });
    }
    Ok(min_len)
}

impl KeySpace {
    /// Validates the combination and builds the key space, whose keys
    /// `router` places on servers.
    pub fn new(
        total: u64,
        slice: ClientSlice,
        names: &KeyNames,
        size: Distribution,
        popularity: Popularity,
        seed: u64,
        router: Router,
    ) -> Result<Self, WorkloadError> {
        let (first, count) = slice_of(total, slice)?;
        let min_len = min_key_len(names, &size, total)?;
        let mut ks = KeySpace {
            first,
            count,
            total,
            prefix: names.prefix.as_bytes().to_vec(),
            digits: names.digits,
            first_number: names.first,
            size,
            min_len,
            seed,
            router,
            replicas: None,
            picker: Picker::new(popularity, count),
            owners: Vec::new(),
            lens: Vec::new(),
            fixed_len: None,
            table: Vec::new(),
        };
        ks.fill_tables();
        Ok(ks)
    }

    /// The keys' lengths, their bytes and their servers, drawn once where
    /// the key space is small enough to keep them.
    fn fill_tables(&mut self) {
        let (first, count) = (self.first, self.count);
        if self.size.as_fixed().is_some() {
            let len = self.draw_len(first);
            if count.saturating_mul(len as u64) <= MAX_KEY_TABLE {
                let mut buf = [0u8; MAX_KEY_LEN];
                let mut table = Vec::with_capacity(count as usize * len);
                for id in first..first + count {
                    table.extend_from_slice(self.format_key(id, &mut buf));
                }
                self.table = table;
            }
            self.fixed_len = Some(len);
        } else if count <= MAX_LEN_TABLE {
            self.lens = (first..first + count)
                .map(|id| self.draw_len(id) as u8)
                .collect();
        }
        if !matches!(self.router, Router::Single) && count <= MAX_OWNER_TABLE {
            let mut buf = [0u8; MAX_KEY_LEN];
            self.owners = (first..first + count)
                .map(|id| self.router.server_of(self.key(id, &mut buf)) as u16)
                .collect();
        }
    }

    /// Length of key `id`, in bytes.
    #[inline]
    pub fn len_of(&self, id: u64) -> usize {
        if let Some(len) = self.fixed_len {
            return len;
        }
        match id
            .checked_sub(self.first)
            .and_then(|i| self.lens.get(i as usize))
        {
            Some(&len) => len as usize,
            None => self.draw_len(id),
        }
    }

    /// Draws key `id`'s length from the size distribution, seeded by `id`.
    fn draw_len(&self, id: u64) -> usize {
        let wanted = match self.size.as_fixed() {
            Some(v) => v,
            None => {
                let mut rng =
                    SmallRng::seed_from_u64(self.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                self.size.sample(&mut rng)
            }
        };
        // Whole bytes, truncated (see `Workload::value`).
        (wanted.floor().max(0.0) as usize).clamp(self.min_len, MAX_KEY_LEN)
    }

    /// Key `id`: from the table of formatted keys when it has one, else
    /// written into `buf`.
    #[inline]
    pub fn key<'b>(&'b self, id: u64, buf: &'b mut [u8; MAX_KEY_LEN]) -> &'b [u8] {
        if let (Some(len), Some(i)) = (self.fixed_len, id.checked_sub(self.first)) {
            // Checked: ids far past the key space (window and expiring
            // keys) must not wrap around into the table.
            let start = usize::try_from(i).ok().and_then(|i| i.checked_mul(len));
            if let Some(key) = start.and_then(|s| self.table.get(s..s.checked_add(len)?)) {
                return key;
            }
        }
        self.format_key(id, buf)
    }

    /// Writes key `id` into `buf` and returns it.
    fn format_key<'b>(&self, id: u64, buf: &'b mut [u8; MAX_KEY_LEN]) -> &'b [u8] {
        let mut num = itoa::Buffer::new();
        let mut hex = [0u8; 16];
        let number = id.wrapping_add(self.first_number);
        let digits = match self.digits {
            KeyDigits::Decimal => num.format(number).as_bytes(),
            KeyDigits::Hex => hex_digits(number, &mut hex),
        };
        let p = self.prefix.len();
        // Window keys grow without bound; such a key outgrows its size.
        let len = self.len_of(id).max(p + digits.len());
        let pad = len - p - digits.len();
        buf[..p].copy_from_slice(&self.prefix);
        buf[p..p + pad].fill(b'0');
        buf[p + pad..len].copy_from_slice(digits);
        &buf[..len]
    }

    /// The server that holds key `id` (0 without placement).
    #[inline]
    pub fn server_of(&self, id: u64) -> usize {
        if matches!(self.router, Router::Single) {
            return 0;
        }
        let known = id
            .checked_sub(self.first)
            .and_then(|i| self.owners.get(usize::try_from(i).ok()?));
        match known {
            Some(&s) => s as usize,
            None => {
                let mut buf = [0u8; MAX_KEY_LEN];
                self.router.server_of(self.key(id, &mut buf))
            }
        }
    }

    /// The server that holds `key` (0 without placement): for keys that
    /// are not the key space's (a trace's).
    pub fn server_of_key(&self, key: &[u8]) -> usize {
        self.router.server_of(key)
    }

    /// Whether keys are placed on several servers (else every key goes to
    /// the connection's own server). A replication run's are, even on one
    /// writer: its reads go to the others.
    pub fn placed(&self) -> bool {
        self.replicas.is_some() || !matches!(self.router, Router::Single)
    }

    /// The key space of a replication run over `replicas` (`None`: not
    /// one), whose router places keys on the writers.
    pub fn with_replicas(mut self, replicas: Option<Replicas>) -> Self {
        self.replicas = replicas;
        self
    }

    /// A replication run's servers.
    #[inline]
    pub fn replicas(&self) -> Option<&Replicas> {
        self.replicas.as_ref()
    }

    /// This instance's ids.
    pub fn ids(&self) -> std::ops::Range<u64> {
        self.first..self.first + self.count
    }

    /// The rank of key `id` among this instance's keys (0 for ids below
    /// the slice, which it never draws).
    pub fn rank_of(&self, id: u64) -> u64 {
        id.saturating_sub(self.first)
    }

    /// A key drawn by the popularity, from the whole space.
    #[inline]
    pub fn pick<R: Rng + ?Sized>(&self, rng: &mut R, cursor: &mut Cursor) -> u64 {
        self.first + self.picker.pick(rng, cursor)
    }

    /// Key `k` of connection `lane`'s memaslap task window (of `lanes`
    /// connections): ids past the key space and its planned misses,
    /// distinct for every connection.
    pub fn window_key(&self, lane: usize, lanes: usize, k: u64) -> u64 {
        4 * self.total + k * lanes as u64 + lane as u64
    }

    /// The number k of window key `id` of connection `lane` (the inverse
    /// of `window_key`), if it is one.
    pub fn window_number(&self, lane: usize, lanes: usize, id: u64) -> Option<u64> {
        let rel = id.checked_sub(4 * self.total).filter(|_| id < 1 << 63)?;
        let lanes = lanes.max(1) as u64;
        (rel % lanes == lane as u64).then_some(rel / lanes)
    }

    /// Expiring key number `n` of connection `lane` (`--exp-verify`): ids
    /// from 2^63 up, far past the key space, its planned misses and any
    /// task window, distinct per connection (up to 2^31 of them) and per
    /// number (wrapping after 2^32, long expired by then).
    pub fn expiring_key(&self, lane: usize, n: u64) -> u64 {
        (1u64 << 63) + ((lane as u64 & 0x7FFF_FFFF) << 32) + (n & 0xFFFF_FFFF)
    }

    /// Whether `id` is one of the key space's keys (not a planned miss).
    pub fn contains(&self, id: u64) -> bool {
        id < self.total
    }

    /// A key that no run ever writes: a planned miss.
    pub fn miss<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        self.total + rng.gen_range(0..self.total)
    }
}

/// `n` in lowercase hex, without leading zeros.
fn hex_digits(n: u64, buf: &mut [u8; 16]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let len = digits(n, 16);
    for (i, b) in buf[..len].iter_mut().enumerate() {
        *b = HEX[((n >> (4 * (len - 1 - i))) & 0xf) as usize];
    }
    &buf[..len]
}

/// How many digits `n` takes in `base`.
fn digits(mut n: u64, base: u64) -> usize {
    let mut d = 1;
    while n >= base {
        n /= base;
        d += 1;
    }
    d
}

#[cfg(test)]
mod tests;
