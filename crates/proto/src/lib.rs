//! Wire-protocol codecs for memcached load generation.
//!
//! This crate knows bytes and nothing else: it encodes requests into a
//! caller-owned buffer and parses responses out of a caller-owned buffer. It
//! does no I/O, allocates nothing on its own, and never panics on any input:
//! a malformed response is an [`ParseError`], a partial one is `Ok(None)`.
//!
//! It is not a client: matching responses to requests, timing and retries
//! belong to whoever owns the sockets.
//!
//! Each protocol module has the same three entry points — `encode`,
//! `parse` and `supports` — and [`Protocol`] picks one at run time.

pub mod ascii;
mod asked;
mod auth;
pub mod binary;
mod command;
mod line;
pub mod meta;
pub mod resp;
mod response;
pub mod stats;
pub mod trace;
pub mod udp;
mod value;

pub use auth::AuthOutcome;
pub use command::{Cmd, Expect, Request};
pub use response::{ParseError, Progress, Response, ResponseClass};

/// memcached's longest relative expiry, s (30 days): a larger exptime is a
/// Unix time (`protocol.txt`, "Expiration times").
pub const MAX_RELATIVE_EXPTIME: u32 = 60 * 60 * 24 * 30;

/// The wire protocols mcbench speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// memcached's text protocol.
    Ascii,
    /// memcached 1.6's meta commands (`mg`, `ms`, `md`, `ma`, `mn`).
    Meta,
    /// memcached's binary protocol.
    Binary,
    /// Redis's RESP2.
    Resp,
}

impl Protocol {
    pub const ALL: [Protocol; 4] = [
        Protocol::Ascii,
        Protocol::Meta,
        Protocol::Binary,
        Protocol::Resp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Ascii => "ascii",
            Protocol::Meta => "meta",
            Protocol::Binary => "binary",
            Protocol::Resp => "resp",
        }
    }

    /// The `exptime` that makes an item live `ttl_s` seconds from
    /// `now_unix_s`: memcached reads an exptime over 30 days as a Unix time,
    /// so a longer TTL is sent as one; Redis's EX is always seconds.
    pub fn exptime_for(self, ttl_s: u32, now_unix_s: u64) -> u32 {
        if self == Protocol::Resp || ttl_s <= MAX_RELATIVE_EXPTIME {
            return ttl_s;
        }
        u32::try_from(now_unix_s.saturating_add(u64::from(ttl_s))).unwrap_or(u32::MAX)
    }

    /// Appends `req` in this protocol.
    #[inline]
    pub fn encode(self, out: &mut Vec<u8>, req: &Request) {
        self.encode_with(out, req, meta::Options::default())
    }

    /// Appends `req`; the meta protocol with the flags of `meta`, which the
    /// other protocols have no use for.
    #[inline]
    pub fn encode_with(self, out: &mut Vec<u8>, req: &Request, meta: meta::Options) {
        match self {
            Protocol::Ascii => ascii::encode(out, req),
            Protocol::Meta => meta::encode_with(out, req, meta),
            Protocol::Binary => binary::encode(out, req),
            Protocol::Resp => resp::encode(out, req),
        }
    }

    /// Parses the reply to the request `expect` describes from the front of
    /// `buf`: the response and the bytes it took, `Ok(None)` if more bytes
    /// are needed (then `progress` remembers how far it got, and the next
    /// call must pass the same response's bytes from its start).
    ///
    /// `asked` is the request's keys as sent ([`Request::keys`]): a value
    /// whose reply names a key (text `VALUE`, meta `k`, binary `GETKQ`)
    /// must be one of them, in order, once per time asked
    /// ([`ParseError::KeyMismatch`]). Empty: keys are not checked.
    #[inline]
    pub fn parse(
        self,
        buf: &[u8],
        progress: &mut Progress,
        expect: Expect,
        asked: &[u8],
    ) -> Result<Option<(Response, usize)>, ParseError> {
        match self {
            Protocol::Ascii => ascii::parse(buf, progress, expect, asked),
            Protocol::Meta => meta::parse(buf, progress, expect, asked),
            Protocol::Binary => binary::parse(buf, progress, expect, asked),
            Protocol::Resp => resp::parse(buf, progress, expect),
        }
    }

    /// Whether this protocol can send `cmd`.
    pub fn supports(self, cmd: Cmd) -> bool {
        match self {
            Protocol::Ascii => ascii::supports(cmd),
            Protocol::Meta => meta::supports(cmd),
            Protocol::Binary => binary::supports(cmd),
            Protocol::Resp => resp::supports(cmd),
        }
    }

    /// Whether quiet requests may go without a fence each
    /// ([`Request::unfenced`]), one fence ([`Protocol::encode_fence`])
    /// after the last telling them all done. The text protocol only: its
    /// errors come in order and name no request, so an unfenced request's
    /// error is the first line before the next reply; the other codecs
    /// fence each.
    pub fn fences_later(self) -> bool {
        self == Protocol::Ascii
    }

    /// Appends the fence that tells every quiet request before it done:
    /// the text protocol's `version` (see [`Protocol::fences_later`]).
    pub fn encode_fence(self, out: &mut Vec<u8>) {
        if self.fences_later() {
            ascii::fence(out);
        }
    }

    /// Whether `cmd` can be sent quiet (`--noreply`) in this protocol.
    pub fn supports_noreply(self, cmd: Cmd) -> bool {
        match self {
            Protocol::Ascii => ascii::supports_noreply(cmd),
            Protocol::Meta => meta::supports_noreply(cmd),
            Protocol::Binary => binary::supports_noreply(cmd),
            Protocol::Resp => resp::supports_noreply(cmd),
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown protocol '{s}' (one of: ascii, meta, binary, resp)"))
    }
}

#[cfg(test)]
mod exptime_tests {
    use super::*;

    #[test]
    fn ttls_over_thirty_days_become_unix_times_but_not_for_redis() {
        assert_eq!(Protocol::Ascii.exptime_for(600, 1_700_000_000), 600);
        let long = MAX_RELATIVE_EXPTIME + 1;
        assert_eq!(
            Protocol::Meta.exptime_for(long, 1_700_000_000),
            1_700_000_000 + long
        );
        assert_eq!(Protocol::Resp.exptime_for(long, 1_700_000_000), long);
    }
}
