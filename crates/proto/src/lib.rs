//! Wire-protocol codecs for memcached load generation.
//!
//! This crate knows bytes and nothing else: it encodes requests into a
//! caller-owned buffer and parses responses out of a caller-owned buffer. It
//! does no I/O, allocates nothing on its own, and never panics on any input:
//! a malformed response is an [`ParseError`], a partial one is `Ok(None)`.
//!
//! It is not a client: matching responses to requests, timing and retries
//! belong to whoever owns the sockets.

pub mod ascii;
mod response;

pub use response::{ParseError, Response, ResponseClass};
