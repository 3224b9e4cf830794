//! Why a workload's flag is refused: a mix, a distribution, a key
//! popularity or a client slice that does not parse, a key space that
//! cannot be built. Usage errors, found before any traffic.

/// A workload value, or the key space, refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    #[error("invalid client slice '{0}': expected I/N with 0 <= I < N")]
    ClientSlice(String),
    #[error("the key space must hold at least one key per client (--keys {0})")]
    KeyPerClient(u64),
    #[error("key prefix '{0}' must be printable ASCII without spaces")]
    PrefixNotPrintable(String),
    #[error("key prefix '{0}' is too long")]
    PrefixTooLong(String),
    #[error(
        "key size {fixed} is too small for {keys} keys with prefix '{prefix}': \
         it needs at least {min_len} bytes"
    )]
    KeySizeTooSmall {
        fixed: f64,
        keys: u64,
        prefix: String,
        min_len: usize,
    },
    #[error("key size {size} cannot produce a valid key (1..={max} bytes)", max = super::MAX_KEY_LEN)]
    KeySize { size: String },
    #[error("invalid update ratio {0}: it is the share of sets, between 0 and 1")]
    UpdateRatio(f64),
    /// `--mix TEXT`, refused for `why`.
    #[error("invalid mix '{text}': {why}")]
    Mix { text: String, why: String },
    #[error("invalid key popularity '{text}': {why}")]
    Popularity { text: String, why: String },
    #[error("invalid distribution '{text}': {why}")]
    Distribution { text: String, why: String },
}

/// A `--value-size` table (`LO-HI:SHARE,...`) refused; the reason of a
/// [`WorkloadError::Distribution`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableError {
    #[error("table row '{0}' is not LO-HI:SHARE")]
    Row(String),
    #[error("table shares sum to {0}, not 1")]
    Sum(f64),
}
