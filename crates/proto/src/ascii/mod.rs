//! memcached's text ("ASCII") protocol, as `doc/protocol.txt` defines it.
//!
//! Requests are written straight into the caller's buffer; responses are
//! parsed from a byte slice that may hold any prefix of the stream.

mod encode;
mod parse;

pub use encode::{
    arith, auth, cas, delete, encode, gat, get, multi_get, retrieval_begin, retrieval_end,
    retrieval_key, store, supports, supports_noreply, touch, Arith, Retrieve, Store,
};
pub use parse::{parse, parse_response, parse_response_from, MAX_LINE};
