//! Everything mcbench reads from outside that is not a flag: files named
//! on the command line, saved results, and histograms (from files and
//! agents). Each reader here states its bound, and nothing is allocated
//! for an input before its size is checked against that bound.
//!
//! Not here: server replies (the codec, `mcbench_proto`, matches them to
//! their requests) and the agents' calls (`agent`, which validates them as
//! user input and decodes their histograms here).

mod error;
mod file;
mod histogram;
mod text;

pub use error::{FileError, HistogramError};
pub use file::{open_regular, read_bytes, read_private_bytes, read_private_text, read_text, Bound};
pub use histogram::{count_v2, inflate_v2, V2_COMPRESSED_COOKIE};
pub use text::shown;
