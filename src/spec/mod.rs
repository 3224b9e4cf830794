//! `RunSpec`: one typed, serialisable description of a run, and its
//! validation. Everything that reaches the engine has passed through here.

mod address;
mod checks;
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
mod verify;

pub use address::{with_default_port, Address, ServerAddr, Transport};
pub use churn::{Churn, Gaps, SocketOptions};
pub use measure::MeasureGroup;
pub use precision::PrecisionTarget;
pub use reads::ReadAnswers;
pub use replication::Replication;
pub use schedule::{Arrivals, OpenLoop, Schedule, ScheduleFlags};
pub use tls::TlsSpec;
pub use trace::{parse_speed, TraceSpec};

use crate::workload::{
    ClientSlice, Distribution, KeySpace, Mix, MultiGet, Popularity, TaskWindow, ValueTable,
    Workload,
};
use mcbench_proto::udp::HEADER_LEN as UDP_HEADER;
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
    /// What reports call the run (`--label`); None: its servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Servers as given (`HOST:PORT`); empty means "start one for the run".
    pub servers: Vec<ServerAddr>,
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
    /// memaslap's task window: keys per connection; `None` uses the key space.
    pub window: Option<u64>,
    /// Window mode: share of sets that overwrite a key of the window.
    pub overwrite: f64,
    /// Largest value size allowed, bytes.
    pub max_value_size: usize,
    pub load: LoadMode,
    /// Every worker preloads every key of its servers (mutilate's each
    /// thread does), not its share: the server sees threads × the keys.
    #[serde(default)]
    pub load_each_thread: bool,
    /// Live-report interval; also the length of each JSON interval.
    #[serde(with = "units::seconds")]
    pub interval: Duration,
    /// True when the user asked for live lines (`-i`).
    pub live: bool,
    /// CPUs to pin worker threads to, in order; `None` leaves them free.
    pub affinity: Option<Vec<usize>>,
    pub seed: u64,
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
    /// The wire protocol.
    #[serde(with = "protocol_name")]
    pub protocol: Protocol,
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
    /// Open lost connections again.
    pub reconnect: bool,
    /// Closed loop: how long a worker waits after a wake-up before it
    /// reads, so that answers pile up (`--read-delay`; zero: read at once;
    /// `None`: the default, `RunSpec::read_pause`).
    #[serde(
        default,
        with = "units::seconds_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_delay: Option<Duration>,
    /// `--save`: the share of measured requests whose samples are kept
    /// (`--save-rate`); `None` keeps none.
    #[serde(default)]
    pub save_rate: Option<f64>,
    /// User to authenticate as (SASL PLAIN on binary, `-Y` text
    /// authentication on ascii and meta, AUTH on RESP).
    pub user: Option<String>,
    /// Never written to reports.
    #[serde(skip)]
    pub password: Option<String>,
    /// `--tls` (or servers named `tls:`): every connection over TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSpec>,
    /// Linger, buffers, Nagle and source addresses of every TCP connection.
    #[serde(default)]
    pub socket: SocketOptions,
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
    /// memaslap's facebook test: each connection is a UDP socket for the
    /// retrievals and `conn_sock` TCP connections for everything else, to
    /// the same server (same port number).
    #[serde(default)]
    pub facebook: bool,
    /// `--conn-sock`: TCP connections per connection with `--facebook`.
    #[serde(default = "one")]
    pub conn_sock: usize,
    /// Workers poll without sleeping (mutilate's and memcache-perf's
    /// default; their `-B` blocks): no wake-up latency, a CPU per worker.
    #[serde(default)]
    pub busy_poll: bool,
    /// `--kernel-stamps`: the kernel stamps each request as transmitted and
    /// each answer as received, to take every latency apart and time the
    /// send lag (where it can: `latency_parts_blocker`). `None`: wherever
    /// it is cheap (all but a closed loop at depth 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_stamps: Option<bool>,
    /// `--read-answers`: when an open loop's workers read answers (`None`:
    /// late wherever the run allows, `reads_late()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_answers: Option<ReadAnswers>,
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
    /// memaslap's replication test (`--rep-write`), if the run is one.
    #[serde(default)]
    pub replication: Option<Replication>,
    /// Read every server's `stats` at each interval (`--server-stats`).
    #[serde(default)]
    pub server_stats: bool,
    /// Measurement connections beside the load (`--measure-connections`).
    #[serde(default)]
    pub measure: Option<MeasureGroup>,
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
    /// A trace to replay instead of the mix (`--trace`, `--read-file`).
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// A pause with nothing sent between the preload and the measured
    /// phase (`-W/--wait`).
    #[serde(default, with = "units::seconds")]
    pub wait: Duration,
    /// Send `start_trace`/`stop_trace` around the measured phase
    /// (`--trace-commands`).
    #[serde(default)]
    pub trace_commands: bool,
    /// `--precision`: measure until each percentile's 95 % interval is
    /// this narrow and the intervals look alike, within `-t`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precision: Vec<PrecisionTarget>,
    /// `search`/`scan`: end a probe once its SLO is decided, within `-t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide: Option<precision::SloDecision>,
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
            window: self.window.map(|size| TaskWindow {
                size,
                overwrite: self.overwrite,
                // Every connection's cursor, and each worker's open-loop
                // ones (up to one per server).
                lanes: self.total_connections(self.servers.len().max(1))
                    + self.threads * self.servers.len().max(1),
                // memaslap presets a whole window where nothing writes.
                preset: match self
                    .mix
                    .shares
                    .iter()
                    .any(|(op, s)| op.writes() && *s > 0.0)
                {
                    true => 1,
                    false => size,
                },
            }),
            values: ValueTable::new(self.max_value_len(), self.seed),
            keys,
            mix: self.mix.clone(),
            multiget: self.multiget,
            miss_ratio: self.miss_ratio,
            getset: self.getset,
            cas_unique: self.cas_unique,
            checks: self.checks(),
            value_size: self.value_size.clone(),
            max_value: self.max_value_size,
        }
    }

    /// Checks everything that can be checked without the network, this
    /// host's descriptors included: for a run made here.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_plan()?;
        self.validate_host()
    }

    /// `validate` but for this host's limits: for a run other hosts make
    /// (a master of agents opens none of the load's connections; each
    /// agent checks its share against its own limits when it admits it).
    pub fn validate_plan(&self) -> Result<(), String> {
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        if self.depth == 0 || self.depth > 65_536 {
            return Err("--depth must be between 1 and 65536".into());
        }
        self.validate_label()?;
        if self.load_each_thread && self.window.is_some() {
            return Err("--load-each-thread preloads; --window preloads nothing (its keys are written as it goes): drop one".into());
        }
        if self.first_key > u64::from(u32::MAX) {
            return Err(format!(
                "--first-key is at most {} (4294967295), got {}",
                u32::MAX,
                self.first_key
            ));
        }
        self.validate_refill_batch()?;
        self.validate_schedule()?;
        self.validate_read_delay()?;
        self.validate_read_answers()?;
        self.validate_measure()?;
        self.validate_knobs()?;
        self.validate_trace()?;
        if let Some(share) = self.save_rate {
            if !(share > 0.0 && share <= 1.0) {
                return Err(format!(
                    "--save-rate is the share of requests saved, above 0 and at most 1; got {share}"
                ));
            }
        }
        self.validate_precision()?;
        self.validate_tls()?;
        match self.stop {
            StopAfter::Duration(d) if d.is_zero() => {
                return Err("--duration must be longer than zero".into())
            }
            StopAfter::Ops(0) => return Err("--ops must be at least 1".into()),
            _ => {}
        }
        if self.time_limit.is_some_and(|d| d.is_zero()) {
            return Err("--time-limit must be longer than zero".into());
        }
        self.validate_churn()?;
        self.validate_checks()?;
        self.validate_counters()?;
        // Each interval closes a set of histograms per worker (~4 MB with
        // two op types and their slots);
        // ten a second is the most that stays cheap.
        if self.interval < Duration::from_millis(100) {
            return Err("--interval must be at least 100ms".into());
        }
        let (lo, hi) = self.value_size.support();
        let max = self.max_value_size;
        if lo > max as f64 || hi < 1.0 {
            return Err(format!(
                "--value-size {} cannot produce a valid value (1..={max} bytes; --max-value-size raises the limit)",
                self.value_size
            ));
        }
        if !(0.0..=1.0).contains(&self.miss_ratio) {
            return Err(format!(
                "--miss-ratio must be between 0 and 1, got {}",
                self.miss_ratio
            ));
        }
        if !(0.0..=1.0).contains(&self.multiget.share)
            || self.multiget.keys == 0
            || self.multiget.keys > MAX_MULTIGET_KEYS
        {
            return Err(format!(
                "multiget needs 1..={MAX_MULTIGET_KEYS} keys and a share between 0 and 100 %"
            ));
        }
        match self.window {
            Some(0) => return Err("--window must hold at least one key".into()),
            Some(_) if self.load == LoadMode::LoadOnly => return Err(
                "--load-only has nothing to load with --window (windows fill as the run writes): drop one of them"
                    .into(),
            ),
            None if self.overwrite > 0.0 => {
                return Err(
                    "--overwrite needs --window: with a fixed key space every set overwrites"
                        .into(),
                )
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.overwrite) {
            return Err(format!(
                "--overwrite must be between 0 and 1, got {}",
                self.overwrite
            ));
        }
        self.validate_protocol()?;
        self.validate_placement()?;
        self.validate_replication()?;
        self.validate_server_stats()?;
        self.validate_bounds()?;
        self.validate_resources()
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

    /// `--noreply` must quiet some command the run measures: a text
    /// protocol `get` has no quiet form, so `--mix get=1 --noreply` would
    /// change nothing but the preload.
    fn validate_noreply(&self) -> Result<(), String> {
        use crate::workload::OpKind;
        if !self.noreply {
            return Ok(());
        }
        let p = self.protocol;
        if p == Protocol::Resp {
            return Err(
                "--noreply: RESP has no quiet mode; drop it, or use --protocol ascii, meta or binary"
                    .into(),
            );
        }
        let preload_only = |op: OpKind| {
            op == OpKind::Set
                && self.mix.share_of(OpKind::Set) == 0.0
                && self.load != LoadMode::LoadOnly
        };
        let quiet = self
            .ops_sent()
            .into_iter()
            .any(|op| !preload_only(op) && p.supports_noreply(op.cmd()));
        if !quiet {
            return Err(format!(
                "--noreply: no command the run measures has a quiet form in the {} protocol",
                p.name()
            ));
        }
        Ok(())
    }

    /// The protocol must carry every op the run can send.
    fn validate_protocol(&self) -> Result<(), String> {
        let p = self.protocol;
        for op in self.ops_sent() {
            if !p.supports(op.cmd()) {
                return Err(format!(
                    "--protocol {} has no '{}' command; ops it can send: {}",
                    p.name(),
                    op.name(),
                    crate::workload::OpKind::ALL
                        .iter()
                        .filter(|o| p.supports(o.cmd()) && **o != crate::workload::OpKind::Fill)
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if self.servers.is_empty() && p == Protocol::Resp {
            return Err("--protocol resp needs --server: the embedded server is memcached".into());
        }
        if self.meta_flags.is_some() && p != Protocol::Meta {
            return Err(format!(
                "--meta-flags are for --protocol meta, not {}",
                p.name()
            ));
        }
        let (_, key_max) = self.key_size.support();
        if self.meta_options()?.base64_keys && key_max > 186.0 {
            return Err(
                "--meta-flags b: a base64 key must fit memcached's 250 bytes, so keys of at most \
                 186 bytes (see --key-size)"
                    .into(),
            );
        }
        self.validate_noreply()?;
        if crate::spec::ServerAddr::first_udp(&self.servers).is_some() {
            self.validate_udp(true)?;
        }
        self.validate_facebook()?;
        if self.user.is_some() != self.password.is_some() {
            return Err("--user and --password go together".into());
        }
        if self.user.is_some() && self.servers.is_empty() {
            return Err(
                "--user/--password need --server: the embedded memcached runs without authentication"
                    .into(),
            );
        }
        Ok(())
    }

    /// What memcached's UDP transport can carry: one request per datagram,
    /// text or binary, no authentication.
    /// Requests over UDP must fit a datagram; `stores` says whether
    /// storage commands go over UDP too (not with `--facebook`).
    fn validate_udp(&self, stores: bool) -> Result<(), String> {
        if self.protocol == Protocol::Resp {
            return Err("RESP does not run over UDP".into());
        }
        if self.user.is_some() {
            return Err("memcached has no authentication over UDP".into());
        }
        // The largest requests the run can send, measured by encoding them:
        // every protocol frames them differently.
        let ops = self.ops_sent();
        let (_, key_max) = self.key_size.support();
        let key = vec![b'k'; key_max.min(250.0) as usize];
        if ops.contains(&crate::workload::OpKind::Mget) {
            let keys = vec![key.as_slice(); self.multiget.keys as usize].join(&b' ');
            let size = self.largest_udp_request(mcbench_proto::Request::new(
                mcbench_proto::Cmd::Gats,
                &keys,
            ))?;
            if size > MAX_UDP_REQUEST {
                return Err(format!(
                    "over UDP a request must fit one {MAX_UDP_REQUEST}-byte datagram, but a \
                     multiget of {} keys of up to {} bytes takes {size} \
                     (--multiget or --getq-size set the keys)",
                    self.multiget.keys,
                    key.len()
                ));
            }
        }
        if stores && ops.iter().any(|op| op.writes()) {
            let value = vec![b'0'; self.max_value_len()];
            let store = mcbench_proto::Request {
                value: &value,
                ..mcbench_proto::Request::new(mcbench_proto::Cmd::Cas, &key)
            };
            let size = self.largest_udp_request(store)?;
            if size > MAX_UDP_REQUEST {
                return Err(format!(
                    "over UDP a request must fit one {MAX_UDP_REQUEST}-byte datagram, but a \
                     store of a {}-byte value under a {}-byte key takes {size} (see --value-size)",
                    value.len(),
                    key.len()
                ));
            }
        }
        Ok(())
    }

    /// The meta flags, parsed.
    pub fn meta_options(&self) -> Result<mcbench_proto::meta::Options, String> {
        self.meta_flags
            .as_deref()
            .map_or(Ok(Default::default()), |flags| {
                flags.parse().map_err(|e| format!("--meta-flags: {e}"))
            })
    }

    /// The bytes of `req` as one UDP datagram of this run, with every
    /// number at its widest.
    fn largest_udp_request(&self, req: mcbench_proto::Request) -> Result<usize, String> {
        let req = mcbench_proto::Request {
            flags: u32::MAX,
            exptime: u32::MAX,
            cas: u64::MAX,
            delta: u64::MAX,
            opaque: u32::MAX,
            noreply: self.noreply,
            ..req
        };
        let mut out = Vec::new();
        self.protocol
            .encode_with(&mut out, &req, self.meta_options()?);
        Ok(UDP_HEADER + out.len())
    }

    /// Every op type the run may send.
    pub fn ops_sent(&self) -> Vec<crate::workload::OpKind> {
        use crate::workload::OpKind;
        let mut ops: Vec<OpKind> = OpKind::ALL
            .into_iter()
            .filter(|op| self.mix.share_of(*op) > 0.0)
            .collect();
        if let Some(t) = self
            .trace
            .as_ref()
            .filter(|t| t.format != crate::trace::TraceFormat::Keys)
        {
            ops = crate::trace::ops_of(t.format).to_vec();
        }
        if self.multiget.share > 0.0 && self.mix.share_of(OpKind::Get) > 0.0 {
            ops.push(OpKind::Mget);
        }
        if self.mix.share_of(OpKind::Cas) > 0.0 {
            ops.push(OpKind::Gets);
        }
        if self.load != LoadMode::NoLoad {
            ops.push(OpKind::Set);
        }
        if self.getset {
            ops.push(OpKind::Fill);
        }
        if self.delete90 {
            ops.push(OpKind::Delete);
        }
        ops.sort_by_key(|op| op.index());
        ops.dedup();
        ops
    }

    /// The key space, its keys placed by `router`.
    pub fn key_space(&self, router: crate::placement::Router) -> Result<KeySpace, String> {
        let names = crate::workload::KeyNames {
            prefix: self.key_prefix.clone(),
            digits: self.key_digits,
            first: self.first_key,
        };
        KeySpace::new(
            self.keys,
            self.client,
            &names,
            self.key_size.clone(),
            self.popularity,
            self.seed,
            router,
        )
        .map(|keys| keys.with_replicas(self.replicas()))
    }

    /// The counting ops' and cas's own checks: `--cas-unique` needs a cas
    /// in the mix. incr/decr change numbers up to 2^64−1 (mcbench's
    /// values are digits, and 19 of them always fit): a run whose preload
    /// or sets store longer values on the keys they count would fail
    /// every one as `client_error`. Refused before any traffic.
    fn validate_counters(&self) -> Result<(), String> {
        use crate::workload::OpKind;
        const MAX_COUNTER_DIGITS: usize = 19;
        if self.cas_unique.is_some() && self.mix.share_of(OpKind::Cas) == 0.0 {
            return Err("--cas-unique sets the unique of each cas: give cas in --mix".into());
        }
        let counts = [OpKind::Incr, OpKind::Decr]
            .into_iter()
            .any(|op| self.mix.share_of(op) > 0.0);
        let stores = self.load == LoadMode::Load
            || OpKind::ALL
                .into_iter()
                .any(|op| op.writes() && self.mix.share_of(op) > 0.0);
        let longest = self.max_value_len();
        if !counts || !stores || self.trace.is_some() || longest <= MAX_COUNTER_DIGITS {
            return Ok(());
        }
        Err(format!(
            "--mix with incr/decr: memcached counts only numbers up to 2^64-1 (20 digits), \
             and this run stores values of up to {longest} bytes on the keys they count, so every one \
             would fail (client_error). Give --value-size {MAX_COUNTER_DIGITS} or less (mcbench's values \
             are digits), or --no-load without sets to count absent keys (NOT_FOUND)"
        ))
    }

    /// The largest value size a request can have, bytes.
    pub fn max_value_len(&self) -> usize {
        // A trace states each value's size, up to the item limit.
        if self.trace.is_some() {
            return self.max_value_size;
        }
        let (_, hi) = self.value_size.support();
        (hi.ceil().max(1.0) as usize).min(self.max_value_size)
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
            .any(|op| self.mix.share_of(*op) > 0.0);
        // Without a preload the keys may hold what other runs wrote.
        let foreign = self.load == LoadMode::NoLoad;
        let largest = if grows || foreign {
            self.max_value_size
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
        self.connections * servers * self.sockets_per_connection()
    }

    /// 1, or with `--facebook` the UDP socket and the TCP connections.
    pub fn sockets_per_connection(&self) -> usize {
        if self.facebook {
            1 + self.conn_sock
        } else {
            1
        }
    }

    /// memaslap's facebook test: retrievals over UDP, the rest over TCP,
    /// one closed-loop group of sockets per connection.
    fn validate_facebook(&self) -> Result<(), String> {
        if !self.facebook {
            return if self.conn_sock == 1 {
                Ok(())
            } else {
                Err("--conn-sock sets the TCP connections of each --facebook connection: give --facebook".into())
            };
        }
        if self.conn_sock == 0 || self.conn_sock > 10_000 {
            return Err(format!(
                "--conn-sock must be between 1 and 10000, got {}",
                self.conn_sock
            ));
        }
        if self.servers.is_empty() {
            return Err(
                "--facebook needs --server: the embedded memcached listens on TCP only".into(),
            );
        }
        if let Some(s) = self.servers.iter().find(|s| !s.is_tcp()) {
            return Err(format!("--facebook reaches each server over both TCP and UDP at HOST:PORT; '{s}' names one transport"));
        }
        let refuse = |what: &str| Err(format!("--facebook does not go with {what}"));
        match self.schedule {
            Schedule::Closed => {}
            Schedule::Open(_) => {
                return refuse(
                    "--rate: it runs each group of sockets closed loop, as memaslap does",
                )
            }
            Schedule::Churn(_) => return refuse("--num-conns"),
        }
        if self.reconnect {
            return refuse("--reconnect: a group that lost its sockets is done");
        }
        self.validate_udp(false)
    }
}
