//! What a request asks for, independent of the protocol that carries it.
//!
//! Every codec encodes a [`Request`] into its own wire form and parses the
//! reply with the [`Expect`] the request left behind; the engine never
//! speaks a protocol itself.

/// The commands a benchmark sends. Each protocol supports a subset
/// ([`crate::Protocol::supports`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmd {
    /// Retrieval of one key, or of several (a multiget).
    Get,
    /// A retrieval that also returns each item's cas unique.
    Gets,
    /// Get and touch: a retrieval that also sets the item's expiry.
    Gat,
    /// `gat` that also returns the cas unique.
    Gats,
    /// Sets an item's expiry without fetching it.
    Touch,
    Set,
    /// Stores only if the key is absent.
    Add,
    /// Stores only if the key is present.
    Replace,
    Append,
    Prepend,
    /// Stores only if the item's cas unique is still `Request::cas`.
    Cas,
    Incr,
    Decr,
    Delete,
    /// Does nothing; answered in order (meta `mn`, binary noop). Ends a
    /// pipeline of quiet requests.
    Noop,
}

impl Cmd {
    pub const ALL: [Cmd; 15] = [
        Cmd::Get,
        Cmd::Gets,
        Cmd::Gat,
        Cmd::Gats,
        Cmd::Touch,
        Cmd::Set,
        Cmd::Add,
        Cmd::Replace,
        Cmd::Append,
        Cmd::Prepend,
        Cmd::Cas,
        Cmd::Incr,
        Cmd::Decr,
        Cmd::Delete,
        Cmd::Noop,
    ];

    /// The memcached text-protocol name of the command.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Get => "get",
            Cmd::Gets => "gets",
            Cmd::Gat => "gat",
            Cmd::Gats => "gats",
            Cmd::Touch => "touch",
            Cmd::Set => "set",
            Cmd::Add => "add",
            Cmd::Replace => "replace",
            Cmd::Append => "append",
            Cmd::Prepend => "prepend",
            Cmd::Cas => "cas",
            Cmd::Incr => "incr",
            Cmd::Decr => "decr",
            Cmd::Delete => "delete",
            Cmd::Noop => "noop",
        }
    }

    /// Retrievals: each key counts as a hit or a miss.
    pub fn is_retrieval(self) -> bool {
        matches!(self, Cmd::Get | Cmd::Gets | Cmd::Gat | Cmd::Gats)
    }

    /// Commands that carry a value.
    pub fn is_storage(self) -> bool {
        matches!(
            self,
            Cmd::Set | Cmd::Add | Cmd::Replace | Cmd::Append | Cmd::Prepend | Cmd::Cas
        )
    }

    /// Whether a reply of `class` can answer this command (an error reply
    /// answers any).
    pub fn accepts(self, class: crate::ResponseClass) -> bool {
        use crate::ResponseClass::*;
        class.is_error()
            || match self {
                Cmd::Get | Cmd::Gets | Cmd::Gat | Cmd::Gats | Cmd::Noop => {
                    matches!(class, Value | End)
                }
                Cmd::Touch => matches!(class, Touched | NotFound),
                Cmd::Incr | Cmd::Decr => matches!(class, Num | NotFound),
                Cmd::Delete => matches!(class, Deleted | NotFound),
                Cmd::Set | Cmd::Add | Cmd::Replace | Cmd::Append | Cmd::Prepend | Cmd::Cas => {
                    matches!(class, Stored | NotStored | Exists | NotFound)
                }
            }
    }

    /// The outcome of a quiet request the server did not answer before its
    /// fence: quiet mode suppresses success (and a retrieval's misses).
    pub fn quiet_outcome(self) -> crate::ResponseClass {
        use crate::ResponseClass::*;
        match self {
            Cmd::Get | Cmd::Gets | Cmd::Gat | Cmd::Gats | Cmd::Noop => End,
            Cmd::Touch => Touched,
            Cmd::Incr | Cmd::Decr => Num,
            Cmd::Delete => Deleted,
            Cmd::Set | Cmd::Add | Cmd::Replace | Cmd::Append | Cmd::Prepend | Cmd::Cas => Stored,
        }
    }

    /// Retrievals that return the cas unique.
    pub fn wants_cas(self) -> bool {
        matches!(self, Cmd::Gets | Cmd::Gats)
    }
}

/// One request. Fields a command does not use are ignored by the encoders.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub cmd: Cmd,
    /// The key, or for a multiget the keys separated by single spaces
    /// (`b"k1 k2 k3"`). Keys never contain spaces or control bytes: the
    /// text protocols could not carry them.
    pub keys: &'a [u8],
    /// The data of a storage command.
    pub value: &'a [u8],
    /// Client flags stored with the item.
    pub flags: u32,
    /// Expiry for storage commands, `gat` and `touch`: seconds (or a unix
    /// time, as memcached reads it); 0 never expires.
    pub exptime: u32,
    /// The cas unique a `cas` must match.
    pub cas: u64,
    /// The amount of an `incr`/`decr`.
    pub delta: u64,
    /// Ask the server not to answer success (text `noreply`, meta `q`,
    /// binary quiet opcodes). Codecs that can fence a quiet request follow
    /// it with a noop so that it still gets exactly one response.
    pub noreply: bool,
    /// A quiet request sent without a fence of its own, where the
    /// protocol allows it ([`crate::Protocol::fences_later`]): a later
    /// request's reply, or a fence sent after it, tells it was done.
    pub unfenced: bool,
    /// Echoed by the server (binary opaque, meta `O`); checked on parse.
    pub opaque: u32,
    /// RESP only (the mutilate fork's `--assoc`): a get or set of a key
    /// longer than this many bytes goes to a hash named by the rest of the
    /// key, its field being these last bytes (`HGET`/`HSET`); 0 never.
    pub hash_field: u16,
}

impl<'a> Request<'a> {
    /// A request for `cmd` on `keys` with every other field zero.
    pub fn new(cmd: Cmd, keys: &'a [u8]) -> Self {
        Request {
            cmd,
            keys,
            value: &[],
            flags: 0,
            exptime: 0,
            cas: 0,
            delta: 0,
            noreply: false,
            unfenced: false,
            opaque: 0,
            hash_field: 0,
        }
    }

    /// The keys one by one.
    pub fn key_list(&self) -> impl Iterator<Item = &'a [u8]> {
        self.keys.split(|&b| b == b' ').filter(|k| !k.is_empty())
    }

    /// How many keys the request names.
    pub fn key_count(&self) -> u32 {
        self.key_list().count() as u32
    }

    /// What its reply will look like, for the parser.
    pub fn expect(&self) -> Expect {
        Expect {
            cmd: self.cmd,
            keys: self.key_count(),
            noreply: self.noreply,
            unfenced: self.noreply && self.unfenced,
            opaque: self.opaque,
            max_value: u32::MAX,
            hash: crate::resp::in_hash(self),
        }
    }
}

/// What the parser must know of the request a reply answers: replies such
/// as meta's `HD` mean different things for different commands, and a
/// quiet pipeline ends only at its fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    pub cmd: Cmd,
    /// Keys asked for (1 unless a multiget).
    pub keys: u32,
    /// The request was sent quiet and fenced with a noop.
    pub noreply: bool,
    /// ...or quiet without its own fence (text protocol): its reply is an
    /// error or outcome line before the next request's reply, else none.
    pub unfenced: bool,
    /// The opaque the request carried.
    pub opaque: u32,
    /// The longest value a reply may carry, bytes (the caller's largest
    /// possible value): a longer one is `ValueTooLong`, found from its
    /// header, before its bytes are awaited. `u32::MAX`: the protocol's
    /// own ceiling.
    pub max_value: u32,
    /// RESP: the request went to a hash field (`HGET`/`HSET`).
    pub hash: bool,
}

impl Expect {
    /// The same, with values longer than `max_value` bytes refused.
    pub fn with_max_value(self, max_value: u32) -> Expect {
        Expect { max_value, ..self }
    }

    /// Whether a value of `len` bytes exceeds the caller's limit.
    pub(crate) fn too_long(&self, len: u64) -> bool {
        len > u64::from(self.max_value)
    }
}
