//! The key space: which keys exist, their bytes, which server owns each,
//! and which one a request asks for.
//!
//! Key ids are global: `--keys N` names ids `0..N`, of which this instance
//! uses a slice (`--client I/N`, twemperf's `-c`). Key `id` is always the
//! same bytes (so a get after a set finds it): the prefix, then `id` in
//! decimal, left-padded with zeros to the key's size, which is fixed or
//! drawn once from the size distribution with a seed derived from `id`.
//! Keys are printable ASCII without spaces, at most 250 bytes. Ids from `N`
//! up to `2N` are never written: requests for them are planned misses.

use super::popularity::{Cursor, Picker, Popularity};
use super::Distribution;
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
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("invalid client slice '{text}': expected I/N with 0 <= I < N");
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

#[derive(Debug, Clone)]
pub struct KeySpace {
    /// This instance's ids: `first..first + count`.
    first: u64,
    count: u64,
    /// All instances' keys: ids `total..2 * total` are planned misses.
    total: u64,
    prefix: Vec<u8>,
    size: Distribution,
    /// The shortest key that still holds the prefix and every id.
    min_len: usize,
    seed: u64,
    servers: u64,
    /// Per server: its popularity over its own keys.
    pickers: Vec<Picker>,
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

impl KeySpace {
    /// Validates the combination and builds the key space for `servers`
    /// servers (key `id` lives on server `id % servers`).
    pub fn new(
        total: u64,
        slice: ClientSlice,
        prefix: &str,
        size: Distribution,
        popularity: Popularity,
        seed: u64,
        servers: usize,
    ) -> Result<Self, String> {
        // In u128: total × index overflows u64 for large key spaces.
        let cut = |i: u64| (u128::from(total) * u128::from(i) / u128::from(slice.of)) as u64;
        let first = cut(slice.index);
        let count = cut(slice.index + 1) - first;
        if count == 0 {
            return Err(format!(
                "the key space must hold at least one key per client (--keys {total})"
            ));
        }
        if prefix.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(format!(
                "key prefix '{prefix}' must be printable ASCII without spaces"
            ));
        }
        let servers = servers.max(1) as u64;
        // Room for every id, planned misses included (see `miss_on`).
        let min_len = prefix.len() + digits(2 * total + 2 * servers);
        // Any id (window keys grow without bound) must fit: u64 has 20 digits.
        if prefix.len() + 20 > MAX_KEY_LEN {
            return Err(format!("key prefix '{prefix}' is too long"));
        }
        let (lo, hi) = size.support();
        if let Some(fixed) = size.as_fixed() {
            if fixed < min_len as f64 {
                return Err(format!(
                    "key size {fixed} is too small for {total} keys with prefix '{prefix}': \
                     it needs at least {min_len} bytes"
                ));
            }
        }
        if lo > MAX_KEY_LEN as f64 || hi < 1.0 {
            return Err(format!(
                "key size {size} cannot produce a valid key (1..={MAX_KEY_LEN} bytes)"
            ));
        }
        let mut ks = KeySpace {
            first,
            count,
            total,
            prefix: prefix.as_bytes().to_vec(),
            size,
            min_len,
            seed,
            servers,
            pickers: Vec::new(),
            lens: Vec::new(),
            fixed_len: None,
            table: Vec::new(),
        };
        if ks.size.as_fixed().is_some() {
            let len = ks.draw_len(first);
            if count.saturating_mul(len as u64) <= MAX_KEY_TABLE {
                let mut buf = [0u8; MAX_KEY_LEN];
                let mut table = Vec::with_capacity(count as usize * len);
                for id in first..first + count {
                    table.extend_from_slice(ks.format_key(id, &mut buf));
                }
                ks.table = table;
            }
            ks.fixed_len = Some(len);
        } else if count <= MAX_LEN_TABLE {
            ks.lens = (first..first + count)
                .map(|id| ks.draw_len(id) as u8)
                .collect();
        }
        ks.pickers = (0..servers as usize)
            .map(|s| Picker::new(popularity, ks.keys_on(s)))
            .collect();
        Ok(ks)
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
        let digits = num.format(id).as_bytes();
        let p = self.prefix.len();
        // Window keys grow without bound; such a key outgrows its size.
        let len = self.len_of(id).max(p + digits.len());
        let pad = len - p - digits.len();
        buf[..p].copy_from_slice(&self.prefix);
        buf[p..p + pad].fill(b'0');
        buf[p + pad..len].copy_from_slice(digits);
        &buf[..len]
    }

    /// The server that owns key `id`.
    pub fn server_of(&self, id: u64) -> usize {
        (id % self.servers) as usize
    }

    /// The slice offset of server `s`'s first key.
    fn offset_on(&self, s: usize) -> u64 {
        (s as u64 + self.servers - self.first % self.servers) % self.servers
    }

    /// How many of this instance's keys server `s` owns.
    pub fn keys_on(&self, s: usize) -> u64 {
        let j0 = self.offset_on(s);
        if j0 >= self.count {
            0
        } else {
            (self.count - 1 - j0) / self.servers + 1
        }
    }

    /// The id of rank `m` among server `s`'s keys.
    pub fn nth_on(&self, s: usize, m: u64) -> u64 {
        self.first + self.offset_on(s) + m * self.servers
    }

    /// The rank of key `id` among its server's keys.
    pub fn rank_of(&self, id: u64) -> u64 {
        (id - self.first) / self.servers
    }

    /// A key of server `s`, drawn by the popularity.
    #[inline]
    pub fn pick_on<R: Rng + ?Sized>(&self, rng: &mut R, s: usize, cursor: &mut Cursor) -> u64 {
        self.nth_on(s, self.pickers[s].pick(rng, cursor))
    }

    /// Key `k` of connection `lane`'s memaslap task window (of `lanes`
    /// connections), on `server`: ids past the key space and its planned
    /// misses, distinct for every connection and server.
    pub fn window_key(&self, lane: usize, lanes: usize, k: u64, server: usize) -> u64 {
        let base = (4 * self.total).div_ceil(self.servers) * self.servers;
        base + (k * lanes as u64 + lane as u64) * self.servers + server as u64
    }

    /// Expiring key `slot` of connection `lane` (`--exp-verify`), on
    /// `server`: ids from 2^63 up, far past the key space, its planned
    /// misses and any task window, distinct per connection and slot.
    pub fn expiring_key(&self, lane: usize, slot: usize, server: usize) -> u64 {
        let base = (1u64 << 63).div_ceil(self.servers) * self.servers;
        let n = lane as u64 * super::checks::RING as u64 + slot as u64;
        base + n * self.servers + server as u64
    }

    /// Whether `id` is one of the key space's keys (not a planned miss).
    pub fn contains(&self, id: u64) -> bool {
        id < self.total
    }

    /// A key of server `s` that no run ever writes: a planned miss.
    pub fn miss_on<R: Rng + ?Sized>(&self, rng: &mut R, s: usize) -> u64 {
        let base = self.total.div_ceil(self.servers) * self.servers;
        base + rng.gen_range(0..self.total.div_ceil(self.servers)) * self.servers + s as u64
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

    const ALL: ClientSlice = ClientSlice { index: 0, of: 1 };

    fn space(count: u64, size: &str, servers: usize) -> KeySpace {
        KeySpace::new(
            count,
            ALL,
            "mcb:",
            size.parse().unwrap(),
            Popularity::Uniform,
            1,
            servers,
        )
        .unwrap()
    }

    #[test]
    fn keys_are_stable_padded_and_distinct() {
        let ks = space(1000, "30", 1);
        let mut buf = [0; MAX_KEY_LEN];
        assert_eq!(ks.key(7, &mut buf), b"mcb:00000000000000000000000007");
        let mut seen = std::collections::HashSet::new();
        for i in 0..2000 {
            let k = ks.key(i, &mut buf).to_vec();
            assert_eq!(k.len(), 30);
            assert!(k.iter().all(|b| b.is_ascii_graphic()));
            assert!(seen.insert(k));
        }
    }

    #[test]
    fn expiring_keys_are_their_own_and_on_their_server() {
        let ks = space(1000, "30", 3);
        let mut buf = [0; MAX_KEY_LEN];
        let small: std::collections::HashSet<Vec<u8>> =
            (0..2000).map(|i| ks.key(i, &mut buf).to_vec()).collect();
        for lane in [0, 1, 9_999] {
            for slot in [0, 15] {
                for server in 0..3 {
                    let id = ks.expiring_key(lane, slot, server);
                    assert_eq!(ks.server_of(id), server);
                    let key = ks.key(id, &mut buf).to_vec();
                    assert!(!small.contains(&key), "{}", String::from_utf8_lossy(&key));
                    assert!(key.starts_with(b"mcb:"));
                }
            }
        }
    }

    #[test]
    fn variable_sizes_are_stable_and_bounded() {
        let ks = space(10_000, "uniform:5,300", 1);
        let mut a = [0; MAX_KEY_LEN];
        for i in 0..10_000 {
            let len = ks.len_of(i);
            assert!((9..=MAX_KEY_LEN).contains(&len));
            assert_eq!(ks.key(i, &mut a).len(), len);
            assert_eq!(len, ks.len_of(i));
        }
    }

    #[test]
    fn too_small_or_impossible_sizes_are_rejected() {
        let new = |n, prefix: &str, size: &str| {
            KeySpace::new(
                n,
                ALL,
                prefix,
                size.parse().unwrap(),
                Popularity::Uniform,
                1,
                1,
            )
        };
        let err = new(1_000_000, "mcb:", "5").unwrap_err();
        assert!(err.contains("at least 11 bytes"), "{err}");
        assert!(new(10, "mcb:", "fixed:300").is_err());
        assert!(new(10, "has space", "30").is_err());
        assert!(new(0, "k", "30").is_err());
    }

    #[test]
    fn servers_partition_the_keys() {
        for slice in [ALL, ClientSlice { index: 1, of: 3 }] {
            let ks = KeySpace::new(
                10,
                slice,
                "k",
                "30".parse().unwrap(),
                Popularity::Uniform,
                1,
                3,
            )
            .unwrap();
            let mut ids: Vec<u64> = (0..3)
                .flat_map(|s| (0..ks.keys_on(s)).map(move |m| (s, m)))
                .map(|(s, m)| {
                    let id = ks.nth_on(s, m);
                    assert_eq!(ks.server_of(id), s);
                    assert_eq!(ks.rank_of(id), m);
                    id
                })
                .collect();
            ids.sort_unstable();
            let expect: Vec<u64> = (ks.first..ks.first + ks.count).collect();
            assert_eq!(ids, expect);
        }
    }

    #[test]
    fn client_slices_are_disjoint_and_cover_the_space() {
        let mut all = Vec::new();
        for i in 0..3 {
            let ks = KeySpace::new(
                100,
                ClientSlice { index: i, of: 3 },
                "k",
                "30".parse().unwrap(),
                Popularity::Uniform,
                1,
                1,
            )
            .unwrap();
            all.extend(ks.first..ks.first + ks.count);
        }
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        assert!("3/3".parse::<ClientSlice>().is_err());
        assert!("x".parse::<ClientSlice>().is_err());
    }

    #[test]
    fn planned_misses_are_outside_the_space_and_on_their_server() {
        let ks = space(1000, "30", 3);
        let mut rng = SmallRng::seed_from_u64(1);
        for s in 0..3 {
            for _ in 0..1000 {
                let id = ks.miss_on(&mut rng, s);
                assert!((1000..2004).contains(&id), "{id}");
                assert_eq!(ks.server_of(id), s);
            }
        }
    }
}
