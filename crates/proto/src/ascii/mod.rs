//! memcached's text ("ASCII") protocol, as `doc/protocol.txt` defines it.
//!
//! Requests are written straight into the caller's buffer; responses are
//! parsed from a byte slice that may hold any prefix of the stream.

mod encode;
mod parse;

pub use crate::line::MAX_LINE;
pub use encode::{auth, encode, fence, supports, supports_noreply};
pub use parse::{parse, parse_response, parse_response_from};
