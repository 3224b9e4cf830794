//! Consistent hashing on a continuum of points, as libmemcached's
//! `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` builds it (`hosts.cc`
//! `update_continuum`), which twemproxy's `distribution: ketama` with
//! `hash: md5` shares.
//!
//! Each server gets `floor(share × 40 × servers + 1e-10) × 4` points (160
//! when weights are equal), computed in single precision as libmemcached
//! does. Point `k`'s string is hashed with MD5, and each digest gives four
//! points, its little-endian words. A key goes to the first point at or
//! above the first MD5 word of the key, wrapping to the first point.

use super::hashes::{md5_word, md5_words};
use super::Server;

/// How the point strings name a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// libmemcached: `host-k`, or `host:port-k` unless the port is 11211.
    Libmemcached,
    /// spymemcached (`KETAMA_SPY`): `/host:port-k`, port always.
    Spy,
}

#[derive(Debug, Clone)]
pub struct Continuum {
    /// (point, server index), sorted by point then index.
    points: Vec<(u32, u32)>,
}

impl Continuum {
    pub fn new(servers: &[Server], naming: Naming) -> Self {
        let total: u64 = servers.iter().map(|s| u64::from(s.weight)).sum();
        let live = servers.len() as f32;
        let mut points = Vec::new();
        for (index, server) in servers.iter().enumerate() {
            let share = server.weight as f32 / total.max(1) as f32;
            // Single precision, as libmemcached computes it.
            let per_server =
                ((share * 160.0 / 4.0 * live + 0.000_000_000_1_f32).floor()) as u32 * 4;
            for k in 0..per_server / 4 {
                let name = point_name(server, naming, k);
                for word in md5_words(name.as_bytes()) {
                    points.push((word, index as u32));
                }
            }
        }
        points.sort_unstable();
        Continuum { points }
    }

    /// The server of a key whose hash is `hash`.
    pub fn server_of_hash(&self, hash: u32) -> usize {
        let i = self.points.partition_point(|&(p, _)| p < hash);
        let (_, server) = self
            .points
            .get(i)
            .or(self.points.first())
            .copied()
            .unwrap_or((0, 0));
        server as usize
    }

    pub fn server_of(&self, key: &[u8]) -> usize {
        self.server_of_hash(md5_word(key, 0))
    }

    /// The point a key of hash `hash` lands on.
    #[cfg(test)]
    pub fn point_at_or_after(&self, hash: u32) -> u32 {
        let i = self.points.partition_point(|&(p, _)| p < hash);
        self.points
            .get(i)
            .or(self.points.first())
            .map_or(0, |p| p.0)
    }

    /// Points on the continuum.
    pub fn len(&self) -> usize {
        self.points.len()
    }
}

fn point_name(server: &Server, naming: Naming, k: u32) -> String {
    match naming {
        Naming::Libmemcached if server.port == 11211 => format!("{}-{k}", server.host),
        Naming::Libmemcached => format!("{}:{}-{k}", server.host, server.port),
        Naming::Spy => format!("/{}:{}-{k}", server.host, server.port),
    }
}
