//! Why `--distribution` or `--hash` is refused: a name we do not know, or
//! a hash given to a distribution that hashes keys its own way.

use super::{KeyHash, Scheme};

/// A key distribution, or its hash, refused. Usage errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlacementError {
    #[error("unknown --distribution '{0}': expected modula, ketama, ketama-spy, ch3 or none")]
    UnknownScheme(String),
    #[error("--hash {hash} applies to --distribution modula; {scheme} hashes keys with {}", own_hash(*.scheme))]
    HashNotModula { hash: KeyHash, scheme: Scheme },
    #[error("unknown hash '{0}': expected {names}", names = hash_names())]
    UnknownHash(String),
}

/// The hash `scheme` places keys with, by name.
fn own_hash(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::Ch3 => "MurmurHash64A",
        Scheme::None => "nothing",
        _ => "MD5",
    }
}

/// Every `--hash` name, comma-separated.
fn hash_names() -> String {
    let names: Vec<&str> = KeyHash::ALL.iter().map(|h| h.name()).collect();
    names.join(", ")
}
