//! `RunSpec`: one typed, serialisable description of a run, and its
//! validation. Everything that reaches the engine has passed through here.

mod address;
mod checks;
mod error;
pub use checks::MAX_LABEL;
pub mod churn;
mod knobs;
pub mod measure;
pub mod precision;
mod reads;
pub mod replication;
pub mod schedule;
pub mod servers;
pub mod tls;
mod trace;
pub mod units;
mod validate;
mod verify;
mod wire;

pub use address::{with_default_port, Address, ServerAddr, Transport};
pub use churn::{Churn, Gaps, SocketOptions};
pub use error::SpecError;
pub use measure::MeasureGroup;
pub use precision::PrecisionTarget;
pub use reads::{ReadAnswers, DEFAULT_STAMP_EVERY, MAX_STAMP_EVERY};
pub use replication::Replication;
pub use schedule::{Arrivals, OpenLoop, Schedule, ScheduleFlags};
pub use tls::TlsSpec;
pub use trace::{parse_speed, TraceSpec};

use crate::workload::{
    ClientSlice, Distribution, KeySpace, Mix, MultiGet, Popularity, TaskWindow, ValueTable,
    Workload,
};
use mcbench_proto::Protocol;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Whether keys are written once before measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// Preload every key, then measure.
    Load,
    /// Measure straight away.
    NoLoad,
    /// Preload every key and stop; the report covers the load.
    LoadOnly,
}

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopAfter {
    #[serde(with = "units::seconds")]
    Duration(Duration),
    /// Exactly this many measured requests.
    Ops(u64),
    /// When every connection of `--num-conns` has made its calls and
    /// closed (twemperf's end of run).
    Schedule,
    /// When the trace (`--trace`, `--read-file`) has been replayed whole.
    TraceEnd,
}

/// A complete, validated run description.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    #[serde(flatten)]
    pub target: TargetSpec,
    #[serde(flatten)]
    pub load: LoadSpec,
    #[serde(flatten)]
    pub request: RequestSpec,
    #[serde(flatten)]
    pub key_space: KeySpaceSpec,
    #[serde(flatten)]
    pub workload: WorkloadSpec,
    #[serde(flatten)]
    pub recording: RecordingSpec,
    #[serde(flatten)]
    pub conns: ConnectionSpec,
    #[serde(flatten)]
    pub checks: CheckSpec,
    #[serde(flatten)]
    pub server: ServerSpec,
    /// Measurement connections beside the load (`--measure-connections`).
    #[serde(default)]
    pub measure: Option<MeasureGroup>,
    /// A trace to replay instead of the mix (`--trace`, `--read-file`).
    #[serde(default)]
    pub trace: Option<TraceSpec>,
}

/// Where the load goes and how it is spoken: `run --help`'s target flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Servers as given (`HOST:PORT`); empty means "start one for the run".
    pub servers: Vec<ServerAddr>,
    /// Per server (in `servers` order): its weight (`HOST:PORT:WEIGHT`);
    /// empty when none was given.
    #[serde(default)]
    pub weights: Vec<u32>,
    /// Where keys live among several servers (`--distribution`).
    #[serde(default = "default_scheme")]
    pub distribution: crate::placement::Scheme,
    /// memcache-perf's and mutilate's `-R`: thread `t` connects to server
    /// `t mod servers` only (or, with fewer threads than servers, each
    /// server to thread `s mod threads`).
    #[serde(default)]
    pub roundrobin: bool,
    /// The wire protocol.
    #[serde(with = "protocol_name")]
    pub protocol: Protocol,
    /// User to authenticate as (SASL PLAIN on binary, `-Y` text
    /// authentication on ascii and meta, AUTH on RESP).
    pub user: Option<String>,
    /// Never written to reports.
    #[serde(skip)]
    pub password: Option<String>,
    /// `--tls` (or servers named `tls:`): every connection over TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSpec>,
}

/// How much load, when, and for how long: the load flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadSpec {
    pub threads: usize,
    /// Connections per server, spread over the threads.
    pub connections: usize,
    /// Requests in flight per connection.
    pub depth: usize,
    /// Closed loop: a connection is refilled once this many of its `depth`
    /// requests are answered (1..=depth; 1 keeps `depth` in flight).
    #[serde(default = "one")]
    pub refill_batch: usize,
    /// When requests are sent: closed loop, open loop or connection churn
    /// (its JSON is the flat `rate`, `arrival`, `coalesce`, `skip`,
    /// `moderate`, `churn` and `trace_speed`).
    #[serde(flatten)]
    pub schedule: Schedule,
    pub stop: StopAfter,
    /// `--time-limit`: the measured phase ends by then whatever `stop`
    /// says (a cap on `-x`, a connection schedule or a trace).
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub time_limit: Option<Duration>,
    #[serde(with = "units::seconds")]
    pub warmup: Duration,
    /// A pause with nothing sent between the preload and the measured
    /// phase (`-W/--wait`).
    #[serde(default, with = "units::seconds")]
    pub wait: Duration,
    /// `--precision`: measure until each percentile's 95 % interval is
    /// this narrow and the intervals look alike, within `-t`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precision: Vec<PrecisionTarget>,
    /// `search`/`scan`: end a probe once its SLO is decided, within `-t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide: Option<precision::SloDecision>,
    /// CPUs to pin worker threads to, in order; `None` leaves them free.
    pub affinity: Option<Vec<usize>>,
    /// `--request-timeout`: a request unanswered this long after its
    /// intended send fails with its connection (twemperf's `client-timo`),
    /// and servers silent this long have stalled a phase without an end
    /// in time.
    #[serde(with = "units::seconds")]
    pub timeout: Duration,
    /// `--connect-timeout`: a connect (and its first exchange) that takes
    /// longer fails (`socket-timo`); `None` (results saved before it
    /// existed) is `timeout`.
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub connect_timeout: Option<Duration>,
    /// `--drain-timeout`: once sending stops, how long answers in flight
    /// are waited for; `None` is `timeout`.
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub drain_timeout: Option<Duration>,
    /// Workers poll without sleeping (mutilate's and memcache-perf's
    /// default; their `-B` blocks): no wake-up latency, a CPU per worker.
    #[serde(default)]
    pub busy_poll: bool,
    /// `--read-answers`: when an open loop's workers read answers (`None`:
    /// late wherever the run allows, `reads_late()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_answers: Option<ReadAnswers>,
    /// Closed loop: how long a worker waits after a wake-up before it
    /// reads, so that answers pile up (`--read-delay`; zero: read at once;
    /// `None`: the default, `RunSpec::read_pause`).
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_delay: Option<Duration>,
}

/// What each request carries beyond its key and value: the request flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestSpec {
    /// Send `start_trace`/`stop_trace` around the measured phase
    /// (`--trace-commands`).
    #[serde(default)]
    pub trace_commands: bool,
    /// Expiry of storage commands, `gat` and `touch`, seconds (0: never).
    pub expiry: u32,
    /// Amount of `incr`/`decr`.
    pub delta: u64,
    /// `--cas-unique`: the unique every `cas` sends (none: the one its
    /// connection's last `gets` read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cas_unique: Option<u64>,
    /// Send commands quiet (`noreply`), each fenced so it is still timed.
    pub noreply: bool,
    /// Meta protocol flags on retrievals (`k,t,s,b,N<ttl>`), as given.
    pub meta_flags: Option<String>,
}

/// The keys and values, and their preload: the key-space flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeySpaceSpec {
    pub keys: u64,
    pub key_size: Distribution,
    pub value_size: Distribution,
    pub key_prefix: String,
    /// How key numbers are written after the prefix.
    #[serde(default)]
    pub key_digits: crate::workload::KeyDigits,
    /// The number of the first key.
    #[serde(default)]
    pub first_key: u64,
    /// Which keys requests ask for.
    pub popularity: Popularity,
    /// This instance's slice of the key space.
    pub client: ClientSlice,
    /// memaslap's task window: keys per connection; `None` uses the key space.
    pub window: Option<u64>,
    /// Window mode: share of sets that overwrite a key of the window.
    pub overwrite: f64,
    /// Largest value size allowed, bytes.
    pub max_value_size: usize,
    #[serde(rename = "load")]
    pub preload: LoadMode,
    /// Every worker preloads every key of its servers (mutilate's each
    /// thread does), not its share: the server sees threads × the keys.
    #[serde(default)]
    pub load_each_thread: bool,
}

/// Which requests are sent: the workload flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub mix: Mix,
    pub multiget: MultiGet,
    /// Share of get keys asked from outside the loaded set.
    pub miss_ratio: f64,
    /// On a get miss, set that key.
    pub getset: bool,
    /// Halfway through `--ops`, delete 90 % of the key space (the mutilate
    /// fork's `--delete90`).
    #[serde(default)]
    pub delete90: bool,
    /// Latency and throughput of answers without an error reply only
    /// (`--successful`); errors are still counted.
    #[serde(default)]
    pub successful: bool,
    /// The miss ratio per window of this many answers (`--miss-window`).
    #[serde(default)]
    pub miss_window: Option<u64>,
    /// RESP: keys longer than this go to hash fields of this many bytes
    /// (`--assoc`).
    #[serde(default)]
    pub assoc: Option<u16>,
    pub seed: u64,
}

/// What is recorded and how often: the recording flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordingSpec {
    /// What reports call the run (`--label`); None: its servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Live-report interval; also the length of each JSON interval.
    #[serde(with = "units::seconds")]
    pub interval: Duration,
    /// True when the user asked for live lines (`-i`).
    pub live: bool,
    /// `--save`: the share of measured requests whose samples are kept
    /// (`--save-rate`); `None` keeps none.
    #[serde(default)]
    pub save_rate: Option<f64>,
    /// `--kernel-stamps`: the kernel stamps each request as transmitted and
    /// each answer as received, to take every latency apart and time the
    /// send lag (where it can: `latency_parts_blocker`). `None`: wherever
    /// it is cheap (all but a closed loop at depth 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_stamps: Option<bool>,
    /// `--kernel-stamps 1/N` (`all`: 1): the kernel stamps one write in N
    /// as transmitted, drawn at random, and the parts and the open loop's
    /// send lag come from the requests those writes carry. `None`: one
    /// in `DEFAULT_STAMP_EVERY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_sample: Option<u32>,
}

/// How connections behave: the connection flags (the churn is in `LoadSpec::schedule`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConnectionSpec {
    /// Open lost connections again.
    pub reconnect: bool,
    /// memaslap's facebook test: each connection is a UDP socket for the
    /// retrievals and `conn_sock` TCP connections for everything else, to
    /// the same server (same port number).
    #[serde(default)]
    pub facebook: bool,
    /// `--conn-sock`: TCP connections per connection with `--facebook`.
    #[serde(default = "one")]
    pub conn_sock: usize,
    /// Linger, buffers, Nagle and source addresses of every TCP connection.
    #[serde(default)]
    pub socket: SocketOptions,
}

/// What the answers are checked for: the check flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckSpec {
    /// memaslap's `--verify`: the share of single-key gets whose value is
    /// checked byte for byte.
    #[serde(default)]
    pub verify: f64,
    /// memaslap's `--exp_verify`: the share of sets that carry a short
    /// expiry, read back to check it.
    #[serde(default)]
    pub exp_verify: f64,
    /// The expiry of `--exp-verify`'s sets, s: `None` is `--expiry`, else
    /// `DEFAULT_TTL_S`.
    #[serde(default)]
    pub exp_verify_ttl: Option<u32>,
    /// Print the first failed checks.
    #[serde(default)]
    pub verbose: bool,
    /// Failed checks leave the run's exit code 0 (they are a warning).
    #[serde(default)]
    pub tolerate_check_failures: bool,
}

/// What is asked of the servers beside the load: the server flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerSpec {
    /// memaslap's replication test (`--rep-write`), if the run is one.
    #[serde(default)]
    pub replication: Option<Replication>,
    /// Read every server's `stats` at each interval (`--server-stats`).
    #[serde(default)]
    pub server_stats: bool,
}

fn one() -> usize {
    1
}

/// libmemcached's default: modula with one-at-a-time.
pub fn default_scheme() -> crate::placement::Scheme {
    crate::placement::Scheme::Modula(crate::placement::KeyHash::OneAtATime)
}

/// `Protocol` as its name in JSON and TOML.
mod protocol_name {
    use mcbench_proto::Protocol;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(p: &Protocol, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(p.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Protocol, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Replies may always carry values this long, whatever the run writes: an
/// incr result of up to 20 digits.
const MIN_VALUE_LIMIT: usize = 32;

/// The largest request datagram memcached reads, bytes (its replies use
/// datagrams of this size too).
const MAX_UDP_REQUEST: usize = 1400;

/// The default largest value, in bytes: memcached's default item size
/// limit (`-I 1m`).
pub const DEFAULT_MAX_VALUE: usize = 1024 * 1024;

/// The most keys one multiget may ask.
pub const MAX_MULTIGET_KEYS: u32 = 10_000;

impl RunSpec {
    /// The workload this run draws its requests from, over `keys`.
    pub fn workload(&self, keys: KeySpace) -> Workload {
        Workload {
            window: self.key_space.window.map(|size| TaskWindow {
                size,
                overwrite: self.key_space.overwrite,
                // Every connection's cursor, and each worker's open-loop
                // ones (up to one per server).
                lanes: self.total_connections(self.target.servers.len().max(1))
                    + self.load.threads * self.target.servers.len().max(1),
                // memaslap presets a whole window where nothing writes.
                preset: match self
                    .workload
                    .mix
                    .shares
                    .iter()
                    .any(|(op, s)| op.writes() && *s > 0.0)
                {
                    true => 1,
                    false => size,
                },
            }),
            values: ValueTable::new(self.max_value_len(), self.workload.seed),
            keys,
            mix: self.workload.mix.clone(),
            multiget: self.workload.multiget,
            miss_ratio: self.workload.miss_ratio,
            getset: self.workload.getset,
            cas_unique: self.request.cas_unique,
            checks: self.checks(),
            value_size: self.key_space.value_size.clone(),
            max_value: self.key_space.max_value_size,
        }
    }

    /// How late an open loop's worker may wake for an arrival: `--coalesce`,
    /// else none. Arrivals are never sent early, and each one's latency and
    /// send lag count from its own intended time, so the wait is measured,
    /// not hidden; but it is the client's own wait, added to what the
    /// server is measured by, so it is asked for, never a default.
    pub fn coalesce(&self) -> Duration {
        self.open()
            .and_then(|o| o.coalesce)
            .unwrap_or(Duration::ZERO)
    }

    /// Every op type the run may send.
    pub fn ops_sent(&self) -> Vec<crate::workload::OpKind> {
        use crate::workload::OpKind;
        let mut ops: Vec<OpKind> = OpKind::ALL
            .into_iter()
            .filter(|op| self.workload.mix.share_of(*op) > 0.0)
            .collect();
        if let Some(t) = self
            .trace
            .as_ref()
            .filter(|t| t.format != crate::trace::TraceFormat::Keys)
        {
            ops = crate::trace::ops_of(t.format).to_vec();
        }
        if self.workload.multiget.share > 0.0 && self.workload.mix.share_of(OpKind::Get) > 0.0 {
            ops.push(OpKind::Mget);
        }
        if self.workload.mix.share_of(OpKind::Cas) > 0.0 {
            ops.push(OpKind::Gets);
        }
        if self.key_space.preload != LoadMode::NoLoad {
            ops.push(OpKind::Set);
        }
        if self.workload.getset {
            ops.push(OpKind::Fill);
        }
        if self.workload.delete90 {
            ops.push(OpKind::Delete);
        }
        ops.sort_by_key(|op| op.index());
        ops.dedup();
        ops
    }

    /// The key space, its keys placed by `router`.
    pub fn key_space(&self, router: crate::placement::Router) -> Result<KeySpace, SpecError> {
        let names = crate::workload::KeyNames {
            prefix: self.key_space.key_prefix.clone(),
            digits: self.key_space.key_digits,
            first: self.key_space.first_key,
        };
        Ok(KeySpace::new(
            self.key_space.keys,
            self.key_space.client,
            &names,
            self.key_space.key_size.clone(),
            self.key_space.popularity,
            self.workload.seed,
            router,
        )
        .map(|keys| keys.with_replicas(self.replicas()))?)
    }

    /// The largest value size a request can have, bytes.
    pub fn max_value_len(&self) -> usize {
        // A trace states each value's size, up to the item limit.
        if self.trace.is_some() {
            return self.key_space.max_value_size;
        }
        let (_, hi) = self.key_space.value_size.support();
        (hi.ceil().max(1.0) as usize).min(self.key_space.max_value_size)
    }

    /// The longest value a reply of this run can carry, bytes: the largest
    /// the run writes; the server's item limit, `--max-value-size`, when
    /// values grow (`append`/`prepend`) or the keys may hold others' data
    /// (`--no-load`); never under 32 bytes (incr results). A reply claiming
    /// more is a protocol error; with the keys per request, it bounds what
    /// one connection may buffer.
    pub fn largest_stored_value(&self) -> usize {
        use crate::workload::OpKind;
        let grows = [OpKind::Append, OpKind::Prepend]
            .iter()
            .any(|op| self.workload.mix.share_of(*op) > 0.0);
        // Without a preload the keys may hold what other runs wrote.
        let foreign = self.key_space.preload == LoadMode::NoLoad;
        let largest = if grows || foreign {
            self.key_space.max_value_size
        } else {
            self.max_value_len()
        };
        // An incr result is up to 20 digits (a binary one, 8 bytes): a
        // value of 1 byte may come back longer.
        largest.max(MIN_VALUE_LIMIT)
    }

    /// Sockets of the run: connections, and with `--facebook` each one's
    /// UDP socket and `conn_sock` TCP connections.
    pub fn total_connections(&self, servers: usize) -> usize {
        self.load.connections * servers * self.sockets_per_connection()
    }

    /// 1, or with `--facebook` the UDP socket and the TCP connections.
    pub fn sockets_per_connection(&self) -> usize {
        if self.conns.facebook {
            1 + self.conns.conn_sock
        } else {
            1
        }
    }
}
