//! `mcbench run`'s flags, and their mapping onto a validated `RunSpec`.

use super::OutputArgs;
use crate::spec::churn::{parse_buffer, parse_source_addrs};
use crate::spec::units::{parse_count, parse_duration, parse_rate};
use crate::spec::{
    Churn, Gaps, LoadMode, RunSpec, ScheduleFlags, SocketOptions, StopAfter, DEFAULT_MAX_VALUE,
};
use crate::workload::{ClientSlice, Distribution, Mix, MultiGet, Popularity};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Servers: HOST:PORT, udp:HOST:PORT or unix:/path; none starts a
    /// memcached.
    ///
    /// `HOST:PORT` (TCP), `udp:HOST:PORT` or `unix:/path`; repeatable,
    /// comma-separated; `MEMCACHED_SERVERS` as fallback. None: a `memcached`
    /// from PATH is started on a free 127.0.0.1 port for the run.
    /// `HOST:PORT:WEIGHT` weighs a server (ketama); `HOST:FIRST-LAST` names one
    /// server per port (memcache-perf's ranges)
    #[arg(
        value_name = "ADDR",
        help_heading = "Target",
        short = 's',
        long = "server",
        env = "MEMCACHED_SERVERS",
        value_delimiter = ','
    )]
    pub servers: Vec<String>,

    /// Worker threads, each with its own event loop.
    ///
    /// Worker threads, each with its own epoll loop (default 1)
    #[arg(
        value_name = "N",
        help_heading = "Load and schedule",
        short = 'T',
        long,
        default_value_t = 1
    )]
    pub threads: usize,

    /// Connections per server, spread over the threads.
    ///
    /// Connections per server, spread over the threads (default 4); with keys
    /// placed on several servers, clients (each a socket per server), at least
    /// one per thread.
    #[arg(
        value_name = "N",
        help_heading = "Load and schedule",
        short = 'c',
        long,
        default_value_t = 4
    )]
    pub connections: usize,

    /// Requests in flight per connection (pipelining).
    ///
    /// Requests in flight per connection (pipelining, default 1); a client of
    /// several servers keeps `N` × servers in flight in all, each on its key's
    /// socket, so a hot server's socket may hold more than `N`.
    #[arg(
        value_name = "N",
        help_heading = "Load and schedule",
        short = 'd',
        long,
        default_value_t = 1
    )]
    pub depth: usize,

    /// Closed loop: refill a connection once B of its --depth requests are
    /// answered (1 to --depth), in one write.
    ///
    /// Closed loop: a connection is refilled, in one write, once `B` of its
    /// `--depth` requests are answered (1 to `--depth`, default 1). At 1, `-d
    /// N` keeps `N` in flight, as memtier's `--pipeline` and mutilate's `-d`
    /// do, less the answers that come during a `--read-delay` pause (by
    /// default at depth 4 or more where a worker keeps 64 or more in
    /// flight); a larger `B` sends bigger writes for less client CPU per
    /// request, but keeps only `N-B+1` to `N` in flight, so the server sees a
    /// shallower queue (`bench/README.md` measures both). Refused with an
    /// open loop.
    #[arg(
        help_heading = "Load and schedule",
        hide_short_help = true,
        long,
        value_name = "B",
        default_value_t = 1
    )]
    pub refill_batch: usize,

    /// Target aggregate rate in ops/s (open loop; 20000, 20k).
    ///
    /// Target aggregate ops/s (`20000`, `20k`): open loop. Without it, closed
    /// loop. When the rate answered misses it by more than 1 % and the Poisson
    /// noise of the count, the report warns (`rate_missed`). At most 1e9 (a
    /// nanosecond apart)
    #[arg(value_name = "OPS", help_heading = "Load and schedule", short = 'q', long, value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Shape of an open loop's gaps between arrivals: exponential (Poisson), fixed, ...
    ///
    /// Shape of open-loop inter-arrival gaps, rescaled to the rate: exponential
    /// (Poisson), fixed, or any distribution (fb_ia, uniform:0,2).
    ///
    /// Without a rate there are no gaps to shape, and it is not used.
    #[arg(value_name = "SHAPE", help_heading = "Load and schedule", long, alias = "iadist", value_parser = parse_arrival, default_value = "exponential")]
    pub arrival: Distribution,

    /// Length of the measured phase (30s, 2m, 1h).
    ///
    /// `30s`, `2m`, `1h`; or exactly N measured requests (default 10 s).
    /// Sending stops at `-t`: arrivals still waiting for a connection then are
    /// never sent (`errors.unsent`, no failure; the seed layouts' `Skipped
    /// TXs`), requests in flight get up to `--timeout` to be answered, and the
    /// rates divide by the measured time, which ends with the last answer; a
    /// drain over 10 % of it is warned of (`long_drain`)
    #[arg(value_name = "D", help_heading = "Load and schedule", short = 't', long, value_parser = parse_duration, conflicts_with = "ops")]
    pub duration: Option<Duration>,

    /// Measure until this percentile's 95 % interval is this narrow, like
    /// `p99.9:5%` (repeatable)
    ///
    /// The run ends early, at the first interval (from the tenth, with 200
    /// samples beyond each named percentile) where every
    /// named percentile of the total latency has a 95 % interval within ± 90 %
    /// of its share of the value (the last intervals move it a little) and the
    /// intervals show no trend; `-t` is the longest
    /// it may take, and the verdict then says what was reached. Without it,
    /// the verdict judges each printed percentile against ±10 %.
    #[arg(value_name = "P:W", help_heading = "Load and schedule", long)]
    pub precision: Vec<crate::spec::PrecisionTarget>,

    /// Stop after exactly this many measured requests (mutilate's -N/--queries).
    ///
    /// Stop after exactly this many measured requests, shared among the
    /// servers (mutilate's -N/--queries).
    #[arg(value_name = "N", help_heading = "Load and schedule", short = 'x', long, alias = "queries", value_parser = parse_count)]
    pub ops: Option<u64>,

    /// End the measured phase after D at the latest, whatever else says.
    ///
    /// End the measured phase after D at the latest, whatever -t, -x, the
    /// connection schedule or the trace say (a cap for quick looks).
    #[arg(help_heading = "Load and schedule", long, value_parser = parse_duration, value_name = "D")]
    pub time_limit: Option<Duration>,

    /// Time to run before measuring, not counted.
    ///
    /// Time to run before measuring; not counted [default: 0s; 1s per
    /// probe of search and scan]
    #[arg(value_name = "D", help_heading = "Load and schedule", short = 'w', long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,

    /// A pause between the preload and the measured phase with nothing
    /// sent (mutilate's and memcache-perf's -W/--wait).
    #[arg(help_heading = "Load and schedule", hide_short_help = true, short = 'W', long, value_parser = parse_duration, value_name = "D")]
    pub wait: Option<Duration>,

    /// Open loop: when an arrival is over 5 ms late and finds no free
    /// connection slot, drop it unsent, and the later ones until the schedule
    /// is within 4 ms of now; count them (mutilate's --skip).
    ///
    /// Their latency is not measured: a truthful tail needs this off.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long)]
    pub skip: bool,

    /// Open loop: a connection sends nothing for 250 µs after each answer
    /// (mutilate's --moderate, as its code does it); arrivals meanwhile
    /// wait for another connection, and the wait is latency.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long)]
    pub moderate: bool,

    /// Send start_trace before the measured phase and stop_trace after it
    /// to every server (memcache-perf's -e, for tracing memcached builds);
    /// a server that refuses them gets a warning.
    #[arg(help_heading = "Protocol", hide_short_help = true, long)]
    pub trace_commands: bool,

    /// Replay a trace file: its keys, ops, sizes and timestamps.
    ///
    /// Replay a trace file instead of the mix: its keys (as given, without
    /// --key-prefix), ops, value sizes and (unless --trace-timing ignore) its
    /// timestamps.
    ///
    /// zstd-compressed files are read as they stream. Runs until the trace ends
    /// unless -t or -x cuts it.
    #[arg(
        help_heading = "Trace replay",
        long,
        value_name = "FILE",
        conflicts_with = "read_file",
        group = "trace_source"
    )]
    pub trace: Option<PathBuf>,

    /// The trace's format: twitter, oracle-general, oracle-general-opns, lcs or meta-kv.
    ///
    /// The trace's format: twitter, oracle-general, oracle-general-opns,
    /// lcs or meta-kv [default: from the lcs magic, the file name, or the
    /// first line's fields]
    #[arg(
        help_heading = "Trace replay",
        long,
        value_name = "FORMAT",
        requires = "trace"
    )]
    pub trace_format: Option<crate::trace::TraceFormat>,

    /// Replay the trace's timestamps this many times faster (2x, 0.5x).
    #[arg(help_heading = "Trace replay", long, value_name = "S", value_parser = crate::spec::parse_speed, requires = "trace")]
    pub trace_speed: Option<f64>,

    /// replay: send at the trace's timestamps (open loop, latency from
    /// each request's intended time); ignore: the run's own --rate, or a
    /// closed loop without it (the mutilate fork's way).
    #[arg(help_heading = "Trace replay", hide_short_help = true, long, value_name = "replay|ignore", value_parser = ["replay", "ignore"], requires = "trace")]
    pub trace_timing: Option<String>,

    /// Send each trace client's requests, in order, on one connection (client
    /// id modulo the run's connections).
    ///
    /// Closed loop only.
    #[arg(
        help_heading = "Trace replay",
        hide_short_help = true,
        long,
        requires = "trace_source"
    )]
    pub trace_clients: bool,

    /// Keys to send, in a file's order (the mutilate fork's --read_file).
    ///
    /// Keys to send, read from a file in order instead of drawn (the mutilate
    /// fork's --read_file): lines of `key`, `key,value size`, or the fork's
    /// `time,app,req,key,value size` (req 1 get, 2 set); ops not given come
    /// from the mix.
    ///
    /// Runs at --rate or closed loop until the file ends, unless -t or -x cuts
    /// it.
    #[arg(
        help_heading = "Trace replay",
        long,
        alias = "read_file",
        value_name = "FILE",
        group = "trace_source"
    )]
    pub read_file: Option<PathBuf>,

    /// Number of keys in the key space.
    ///
    /// Key space size (default 10000; `10k`, `1M` accepted)
    #[arg(value_name = "N", help_heading = "Keys and values", short = 'r', long, value_parser = parse_count, default_value_t = DEFAULT_KEYS)]
    pub keys: u64,

    /// Key size in bytes (a distribution).
    ///
    /// Sizes in bytes, as distributions (below), truncated to whole bytes as
    /// mutilate and twemperf do (`uniform:10,12` and `u10,12` give 10 or 11).
    /// Keys are clamped to 1..250 bytes, values to 1 byte..`--max-value-size`
    /// (default 1 MiB, at most 1 GiB)
    #[arg(
        value_name = "SIZE",
        help_heading = "Keys and values",
        short = 'K',
        long,
        default_value = "30"
    )]
    pub key_size: Distribution,

    /// Value size in bytes (a distribution).
    #[arg(
        value_name = "SIZE",
        help_heading = "Keys and values",
        short = 'V',
        long,
        default_value = "200"
    )]
    pub value_size: Distribution,

    /// Prefix of every key.
    ///
    /// Key prefix (default `mcb:`)
    #[arg(value_name = "P", help_heading = "Keys and values", hide_short_help = true, long, default_value = DEFAULT_PREFIX)]
    pub key_prefix: String,

    /// How key numbers are written after the prefix: decimal, or hex as
    /// twemperf's (`mcp:0000000a`).
    #[arg(value_name = "D", help_heading = "Keys and values", hide_short_help = true, long, value_enum, default_value_t = crate::workload::KeyDigits::Decimal)]
    pub key_digits: crate::workload::KeyDigits,

    /// The number of the first key (twemperf's is 1).
    #[arg(
        value_name = "N",
        help_heading = "Keys and values",
        hide_short_help = true,
        long,
        default_value_t = 0
    )]
    pub first_key: u64,

    /// Share of requests that are sets (0..1); the rest are gets. Wins over
    /// --mix.
    ///
    /// Share of sets / op weights (default 9:1; `-u` wins over `--mix`). Ops:
    /// `get`, `gets`, `gat`, `gats`, `touch`, `set`, `add`, `replace`,
    /// `append`, `prepend`, `cas` (with the unique of the connection's last
    /// `gets`; without one, a `gets` goes first), `incr`, `decr`, `delete`,
    /// `mget`. Values are decimal digits, so `incr`/`decr` succeed on values of
    /// up to 19 bytes (memcached takes 20 digits, up to 2^64−1); a run with
    /// `incr`/`decr` whose preload or sets store values longer than 19 bytes is
    /// refused (exit 2), since every one would fail as `client_error`.
    #[arg(value_name = "R", help_heading = "Workload", short = 'u', long)]
    pub update: Option<f64>,

    /// Op mix as weights, e.g. get=90,set=10 (default get=90,set=10).
    ///
    /// incr/decr count numbers up to 2^64-1: with a preload or sets they need
    /// --value-size 19 or less (values are digits), else the run is refused.
    #[arg(value_name = "WEIGHTS", help_heading = "Workload", long)]
    pub mix: Option<Mix>,

    /// Which keys requests ask for: uniform, zipf:THETA, hotspot:F,S, sequential, latest.
    ///
    /// Which keys requests ask for: uniform, zipf:THETA, hotspot:FRACTION,SHARE,
    /// sequential, latest[:THETA] (YCSB's request distributions).
    #[arg(
        value_name = "P",
        help_heading = "Keys and values",
        long,
        alias = "keyorder",
        default_value = "uniform"
    )]
    pub key_popularity: Popularity,

    /// Use the I-th of N disjoint slices of the key space (twemperf's -c), so
    /// that N instances share a run without overlapping.
    #[arg(
        help_heading = "Keys and values",
        hide_short_help = true,
        long,
        value_name = "I/N",
        default_value = "0/1"
    )]
    pub client: ClientSlice,

    /// Send every get as a multiget of N keys (memaslap --division).
    ///
    /// Send every get as a multiget of N keys (memaslap --division); with
    /// mget in --mix, only the keys per mget.
    #[arg(help_heading = "Workload", long, value_name = "N", conflicts_with_all = ["getq_freq"])]
    pub multiget: Option<u32>,

    /// Percentage of gets sent as multigets (memcache-perf -g, 0..100).
    #[arg(
        value_name = "P",
        help_heading = "Workload",
        hide_short_help = true,
        long
    )]
    pub getq_freq: Option<f64>,

    /// Keys per multiget for --getq-freq (memcache-perf -G).
    #[arg(
        value_name = "N",
        help_heading = "Workload",
        hide_short_help = true,
        long,
        default_value_t = 100
    )]
    pub getq_size: u32,

    /// Share of get keys asked from outside the loaded set: planned misses.
    #[arg(
        value_name = "R",
        help_heading = "Workload",
        long,
        default_value_t = 0.0
    )]
    pub miss_ratio: f64,

    /// On a get miss, set that key (op "fill"); the mutilate fork's --getsetorset.
    ///
    /// On a get miss, set that key (reported as op "fill"); the mix's own
    /// sets are sent too, so this is also the mutilate fork's
    /// --getsetorset (its --getset sends gets only: add -u 0).
    #[arg(help_heading = "Workload", long, alias = "getsetorset")]
    pub getset: bool,

    /// Halfway through --ops/-x, delete 90 % of the key space (every key but
    /// each tenth), then go on with the mix: the mutilate fork's --delete90,
    /// after Rumble et al.
    ///
    /// (FAST '14). Needs --getset and --ops; closed loop. The deletes are
    /// measured as op "delete" and are not counted in --ops.
    #[arg(help_heading = "Workload", hide_short_help = true, long)]
    pub delete90: bool,

    /// Latency and throughput count only answers without an error reply
    /// (the mutilate fork's --successful); error replies are still
    /// counted and shown as errors.
    #[arg(help_heading = "Workload", hide_short_help = true, long)]
    pub successful: bool,

    /// Redis only (--protocol resp): a key longer than B bytes is stored
    /// as field (its last B bytes) of a hash (the rest), with HSET/HGET;
    /// shorter keys stay plain keys (the mutilate fork's --assoc).
    #[arg(
        help_heading = "Workload",
        hide_short_help = true,
        long,
        value_name = "B"
    )]
    pub assoc: Option<u16>,

    /// The miss ratio per window of N measured answers, as a series in
    /// the JSON (`miss_windows`, per worker thread), to see when the cache
    /// reaches a steady state (the mutilate fork's -m/--misswindow).
    #[arg(help_heading = "Workload", hide_short_help = true, long, alias = "misswindow", value_parser = parse_count, value_name = "N")]
    pub miss_window: Option<u64>,

    /// memaslap's task window: each connection works on the last N keys it wrote.
    ///
    /// memaslap's task window: each connection works on the last N keys it
    /// wrote, sets write new keys (memaslap --win_size).
    ///
    /// Replaces the key space and the preload.
    #[arg(value_name = "N", help_heading = "Keys and values", long, alias = "win-size", value_parser = parse_count)]
    pub window: Option<u64>,

    /// With --window: share of sets that overwrite a key of the window.
    ///
    /// With --window: share of sets that overwrite a key of the window
    /// rather than write a new one (memaslap -o).
    #[arg(
        value_name = "R",
        help_heading = "Keys and values",
        short = 'o',
        long,
        default_value_t = 0.0
    )]
    pub overwrite: f64,

    /// Largest value size allowed, bytes (memcached's -I; default 1 MiB).
    #[arg(value_name = "B", help_heading = "Keys and values", long, value_parser = parse_count, default_value_t = DEFAULT_MAX_VALUE as u64)]
    pub max_value_size: u64,

    /// A workload profile to start from (see `mcbench profiles`); the config
    /// file and flags override it.
    ///
    /// Start from a workload profile (`mcbench profiles` lists them: `etc`,
    /// `mcperf-1`..`mcperf-4`, `ycsb-a`..`ycsb-d`, `ycsb-f`)
    #[arg(value_name = "NAME", help_heading = "Workload", long)]
    pub profile: Option<String>,

    /// A TOML run file whose keys are the long flag names; flags override it.
    ///
    /// A TOML run file whose keys are the long flag names (`threads = 2`,
    /// `key-size = "fb_key"`, `server = ["h:11211"]`)
    #[arg(help_heading = "Workload", long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// A memaslap configuration file (key and value size tables, get/set shares).
    #[arg(
        help_heading = "Workload",
        hide_short_help = true,
        short = 'F',
        long = "cfg-cmd",
        value_name = "FILE"
    )]
    pub cfg_cmd: Option<PathBuf>,

    /// Preload every key before measuring, so gets hit (default).
    ///
    /// Preload every key once before measuring (default), don't, or only
    /// preload.
    #[arg(help_heading = "Keys and values", long, conflicts_with_all = ["no_load", "load_only"])]
    pub load: bool,

    /// Do not preload.
    #[arg(help_heading = "Keys and values", long, conflicts_with_all = ["load", "load_only"])]
    pub no_load: bool,

    /// Every thread preloads every key of its servers, as each of
    /// mutilate's threads does (the server counts threads × the sets).
    #[arg(
        help_heading = "Keys and values",
        hide_short_help = true,
        long,
        conflicts_with = "no_load"
    )]
    pub load_each_thread: bool,

    /// Preload every key, report the load, and stop.
    #[arg(help_heading = "Keys and values", long, conflicts_with_all = ["load", "no_load"])]
    pub load_only: bool,

    /// Print a live line per interval on stderr (1s, 500ms).
    ///
    /// A live line per interval on stderr; otherwise a progress bar on a
    /// terminal.
    #[arg(value_name = "D", help_heading = "Outputs", short = 'i', long, value_parser = parse_duration)]
    pub interval: Option<Duration>,

    #[command(flatten, next_help_heading = "Outputs")]
    pub outputs: OutputArgs,

    /// Name the run in reports (default: its servers).
    ///
    /// Name the run in reports: the HTML page's legends and headline,
    /// `report` and `compare` of several runs (default: its servers).
    #[arg(
        help_heading = "Outputs",
        hide_short_help = true,
        long,
        value_name = "NAME"
    )]
    pub label: Option<String>,

    /// Write every measured request to FILE, tab-separated (docs/samples.md).
    ///
    /// Write every measured request (intended send, op, latency, service
    /// time, reply) to FILE, tab-separated (docs/samples.md).
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// With --save: the share of requests written (0..1), for high rates.
    #[arg(
        help_heading = "Outputs",
        hide_short_help = true,
        long,
        value_name = "R",
        requires = "save"
    )]
    pub save_rate: Option<f64>,

    /// Pin worker threads to CPUs: one each in order, or a list such as 1,3.
    ///
    /// Pin worker threads to CPUs: alone, one CPU per thread in order;
    /// or a list such as `1,3`.
    #[arg(help_heading = "Load and schedule", long, value_name = "CPUS", num_args = 0..=1, default_missing_value = "auto")]
    pub affinity: Option<String>,

    /// Seed of every random choice, for repeatable runs.
    ///
    /// Seed of every random choice (the request stream repeats exactly with one
    /// connection per thread; with more, the order answers arrive in decides
    /// which connection draws next)
    #[arg(value_name = "N", help_heading = "Workload", long, default_value_t = 1)]
    pub seed: u64,

    /// How long a connect or an answer may take (twemperf's --timeout).
    ///
    /// Sets the three timeouts below at once, as twemperf's --timeout does;
    /// each of them, given, wins over it.
    #[arg(value_name = "D", help_heading = "Load and schedule", long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,

    /// A connect that takes longer fails [default: --timeout].
    ///
    /// twemperf's socket-timo. It bounds the connect and the exchanges that
    /// open a connection (authentication), at the start, for --num-conns and
    /// --reconnect, and for the connections of --server-stats and the
    /// replication-lag probe.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub connect_timeout: Option<Duration>,

    /// A request unanswered this long fails [default: --timeout].
    ///
    /// Counted from its intended send; it fails as a timeout and closes its
    /// connection (twemperf's client-timo; a held connection is opened
    /// again). A request waiting in the client for a connection fails so
    /// too. In a phase without an end in time (the preload, -x), servers
    /// silent this long have stalled it: the run fails.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub request_timeout: Option<Duration>,

    /// Once sending stops, how long answers in flight are waited for
    /// [default: --timeout].
    ///
    /// Those still unanswered then count as timeouts. The measured time
    /// ends with the last answer, not with this wait.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub drain_timeout: Option<Duration>,

    /// Open and close this many connections over the run (twemperf's --num-
    /// conns).
    ///
    /// twemperf's connection generator: open N connections over the run instead
    /// of holding `-c`, at rate R: `1000` per second, `0` (default) each after
    /// the previous closes, or intervals `dT` (fixed), `eT` (exponential, mean
    /// T), `uT1,T2` (uniform) in seconds or with a unit (`e1ms`). Servers and
    /// `--source-addrs` are taken in turn. The run ends when every connection
    /// has closed, or at `-t`. The `-c` connections only preload and close
    /// before measuring.
    #[arg(value_name = "N", help_heading = "Connections", long, value_parser = parse_count)]
    pub num_conns: Option<u64>,

    /// How connections are opened, twemperf's syntax: R per second, 0 for
    /// each after the previous closes, or dT, eT, uT1,T2 (intervals in s).
    #[arg(help_heading = "Connections", hide_short_help = true, long, value_name = "R", value_parser = Gaps::parse, requires = "num_conns")]
    pub conn_rate: Option<Gaps>,

    /// Requests each connection sends before it closes (--num-conns).
    ///
    /// Requests per connection before it closes (default 1), and their pace in
    /// `--conn-rate`'s syntax (`0`, the default: each after the previous
    /// answer). A connection's first call is intended when the connection was:
    /// the connect is part of its latency.
    #[arg(value_name = "N", help_heading = "Connections", hide_short_help = true, long, value_parser = parse_count, requires = "num_conns")]
    pub num_calls: Option<u64>,

    /// How a connection's requests follow each other, in --conn-rate's
    /// syntax: 0 (the default) sends each after the previous answer.
    #[arg(help_heading = "Connections", hide_short_help = true, long, value_name = "R", value_parser = Gaps::parse, requires = "num_conns")]
    pub call_rate: Option<Gaps>,

    /// SO_LINGER on close, s: 0 resets the connection (no TIME_WAIT).
    ///
    /// SO_LINGER on every TCP connection: closing waits up to S s for unsent
    /// data; `0` resets the connection, leaving no TIME_WAIT.
    #[arg(
        help_heading = "Connections",
        hide_short_help = true,
        long,
        value_name = "S"
    )]
    pub linger: Option<u32>,

    /// SO_SNDBUF of each connection, bytes (4096, 16k).
    ///
    /// SO_SNDBUF, SO_RCVBUF (`16k`) of every TCP connection; leave Nagle on
    /// (TCP_NODELAY off; twemperf `-D`, memcache-perf `--no_nodelay`)
    #[arg(help_heading = "Connections", hide_short_help = true, long, value_name = "BYTES", value_parser = parse_buffer)]
    pub send_buffer: Option<usize>,

    /// SO_RCVBUF of each connection, bytes.
    #[arg(help_heading = "Connections", hide_short_help = true, long, value_name = "BYTES", value_parser = parse_buffer)]
    pub recv_buffer: Option<usize>,

    /// Leave Nagle's algorithm on (TCP_NODELAY off; twemperf's -D).
    #[arg(
        help_heading = "Connections",
        hide_short_help = true,
        long,
        alias = "no_nodelay"
    )]
    pub no_nodelay: bool,

    /// Share of single-key gets whose value is checked byte for byte
    /// (memaslap's --verify).
    ///
    /// memaslap's `-v`: a share R of single-key gets (`get`, `gets`, `gat`,
    /// `gats`) checks the value byte for byte against what this run stores for
    /// the key. A value's bytes follow from its key and length, so no table is
    /// kept per key: another client's write, a truncated value or one meant for
    /// another key fails (`verify_failed`). It cannot tell this run's latest
    /// write of a key from an earlier one. After a full preload with no
    /// `delete` in the mix and no `--expiry`, a checked get that misses is a
    /// `verify_misses`; so is one in memaslap's task window (`--window`) of a
    /// key whose set this connection saw STORED before the get went out
    /// (evicted or not, as memaslap counts). Refused with `append`, `prepend`,
    /// `incr` or `decr` in the mix.
    #[arg(help_heading = "Checks", long, value_name = "R")]
    pub verify: Option<f64>,

    /// Share of sets with a short expiry, read back to check it (memaslap's
    /// --exp_verify).
    ///
    /// memaslap's `-e`: a share R of each connection's sets (counted, so R
    /// within one set) carries a short expiry (`--exp-verify-ttl`), each on a
    /// fresh key apart from the key space, all run long; and a share R of gets
    /// reads one back. 16 of them per connection (or in an open loop per worker
    /// and server) are kept to read, spread over ages up to 2 s past the
    /// expiry, so that gets land on both sides of it. Judged outside the server
    /// clock's second either side of the expiry: a miss before it is
    /// `unexpired_unget`, a hit after it `expired_get`.
    #[arg(help_heading = "Checks", long, alias = "exp_verify", value_name = "R")]
    pub exp_verify: Option<f64>,

    /// The expiry of --exp-verify's sets, s [default: --expiry, else 2;
    /// memaslap's is 60].
    ///
    /// The expiry of `--exp-verify`'s sets, s (default `--expiry`, else 2;
    /// `mcbench memaslap -e` sends memaslap's 60)
    #[arg(
        help_heading = "Checks",
        hide_short_help = true,
        long,
        value_name = "S",
        requires = "exp_verify"
    )]
    pub exp_verify_ttl: Option<u32>,

    /// memaslap's facebook test: retrievals over UDP, everything else over TCP,
    /// to the same HOST:PORT servers (memaslap's --facebook).
    ///
    /// memaslap's facebook test (`-a`, `-n`): each connection to a `HOST:PORT`
    /// server is a UDP socket for the retrievals (with `--multiget N`,
    /// memaslap's `--division`) and N TCP connections (default 1) for
    /// everything else, refilled as one closed loop. The server must listen for
    /// UDP on the same port number. Refused with `--rate`, `--num-conns`,
    /// `--source-addrs` and the socket buffers (its UDP socket keeps a 4 MiB
    /// receive buffer)
    #[arg(help_heading = "Connections", hide_short_help = true, long)]
    pub facebook: bool,

    /// Workers poll without sleeping: no wake-up latency, a whole CPU per
    /// thread.
    ///
    /// Workers poll without sleeping (mutilate's and memcache-perf's default;
    /// their `-B` blocks): no wake-up latency in what is measured, a whole CPU
    /// per thread. The busy share then says nothing of saturation and is not
    /// warned about; the send lag still is.
    #[arg(help_heading = "Load and schedule", long)]
    pub busy_poll: bool,

    /// Take each latency apart by the kernel's own stamps (on), or not (off).
    ///
    /// Take each latency apart by the kernel's own stamps (on), or not (off).
    /// By default on, except in a closed loop at depth 1, where reading a
    /// transmit stamp back after every request costs 16-24 % more client
    /// CPU per request, and as much throughput with one thread (at depth
    /// 16, 5-12 % more; at 20k ops/s open loop, 8-10 % more: two runs in
    /// `bench/README.md`). The kernel stamps when each request's last byte
    /// was transmitted (`SO_TIMESTAMPING`, software, numbered by byte) and
    /// when each answer's last byte was received, and every output splits
    /// each op's latency into client queue (intended send to the send call),
    /// send path (to the transmit stamp), network and server (to the receive
    /// stamp) and client receive (to the answer parsed; nothing where answers
    /// are timed by their stamp); the four add up to each request's latency.
    /// The open loop's send lag is then the transmit stamp less the intended
    /// time (less any wait for a free connection), so it holds the client's
    /// own send path. TCP without TLS only: over TLS, UDP, unix sockets and
    /// `--num-conns` the parts are left out and the report says why.
    #[arg(help_heading = "Output", hide_short_help = true, long, value_name = "on|off", value_parser = parse_on_off)]
    pub kernel_stamps: Option<bool>,

    /// Open loop: let one wake-up send the arrivals due within W (less CPU,
    /// measured wait).
    ///
    /// Open loop: a worker sleeping until an arrival may sleep on up to `W`
    /// past its intended time (e.g. `50us`; off by default; at most `1ms`), and
    /// an answer that wakes it sooner sends it then (with `--read-answers
    /// at-once`; read late, answers wake nothing, so every arrival waits the
    /// whole `W`): one wake-up sends every arrival due by that time. Nothing
    /// goes out before its intended time, the schedule itself is unchanged
    /// (still Poisson), and latency and send lag count from each arrival's
    /// intended time, so the wait shows in the figures. It is the client's own
    /// wait, added to what the server is measured by, so it is never on unless
    /// asked for. At 20k ops/s it cut the client's CPU per op by 11 % at `50us`
    /// and 27 % at `100us`, for a send lag p99 of ~160 µs and a higher p99
    /// (`bench/README.md`). The measurement group (`--measure-connections`, and
    /// the master's probe connections under `--agent`) keeps its exact
    /// schedule.
    #[arg(help_heading = "Load and schedule", long, value_parser = parse_duration, value_name = "W")]
    pub coalesce: Option<Duration>,

    /// Open loop: when workers read answers.
    ///
    /// Open loop: when workers read answers. `late`, the default over TCP
    /// (without `--busy-poll`, `--num-conns` or `--moderate`): a worker sleeps
    /// through answers to its next arrival, sends that arrival first, then
    /// reads what came meanwhile, each answer timed by when the kernel received
    /// it (`SO_TIMESTAMPNS`), not by when it was read. It wakes once per
    /// arrival rather than once more per answer: at 20k ops/s, 15-18 % less
    /// client CPU per op (`bench/README.md`), and latencies that leave out the
    /// client's own wake-up. Answers that one read takes together are timed by
    /// the last of them. A stamp is not trusted below two bounds: what a read
    /// finds was not readable at the worker's previous poll (TCP gives a read
    /// that waited for a lost segment the stamp of a later one that came
    /// meanwhile), and no answer comes before its request was sent (else it is
    /// timed when read). Bytes a read leaves unread are read at once, and no
    /// request is timed out while answers wait unread. No arrival waits for a
    /// connection whose answer is already in: one that finds no free connection
    /// first reads the answers that came (a non-blocking look at the sockets),
    /// and while any request waits in the client for a connection, answers are
    /// read as they come; so the count of waits, and the latencies, are those
    /// of a client that reads at once (checked against a simulation of the
    /// run's own schedule: `bench/oracle.py`, `bench/README.md`). `at-once`:
    /// each answer read as it comes and timed then; always so in closed loops,
    /// over UDP and unix sockets (the kernel stamps no unix-socket stream), and
    /// in the drain after sending stops. Asking for `late` where it cannot be
    /// is a usage error.
    #[arg(
        help_heading = "Load and schedule",
        long,
        value_enum,
        value_name = "WHEN"
    )]
    pub read_answers: Option<crate::spec::ReadAnswers>,

    /// Where keys live among several servers: modula, ketama, ketama-spy, ch3
    /// or none.
    ///
    /// Where keys live among several servers, computed as the application's
    /// client computes it: `modula` (libmemcached's default; `--hash`
    /// one_at_a_time (default), md5, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32,
    /// jenkins), `ketama` (libmemcached `KETAMA_WEIGHTED`, and twemproxy's
    /// `distribution: ketama` with `hash: md5`: MD5, 160 points per server by
    /// weight, `:11211` dropped from the point names), `ketama-spy`
    /// (spymemcached's names), `ch3` (mcrouter's furc hash), or `none` (each
    /// connection's server takes any key, as mutilate and memcache-perf do;
    /// every server is preloaded with every key). A key is drawn from the whole
    /// key space by its popularity first, then sent to its server: hot keys
    /// make a hot server. With several servers each connection is a client with
    /// a socket to every server, keeping `depth` × servers requests in flight,
    /// each on its key's socket; the report adds a row per server. `mcbench
    /// route -s ... KEY...` prints where keys go.
    #[arg(help_heading = "Target", long, value_name = "NAME")]
    pub distribution: Option<String>,

    /// modula's key hash: one_at_a_time (default), md5, crc, fnv1_64, ..., jenkins.
    ///
    /// modula's key hash: one_at_a_time (libmemcached's default), md5,
    /// crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, jenkins.
    #[arg(help_heading = "Target", long, value_name = "NAME")]
    pub hash: Option<crate::placement::KeyHash>,

    /// Thread t connects to server t mod servers only (mutilate's and memcache-
    /// perf's -R); each server then gets any key.
    ///
    /// mutilate's and memcache-perf's `-R`: thread t connects to server t mod
    /// servers only (with fewer threads than servers, server s to thread s mod
    /// threads); implies `--distribution none`.
    #[arg(help_heading = "Target", hide_short_help = true, long)]
    pub roundrobin: bool,

    /// Run the same workload against each server in turn, each from its own
    /// preload, then compare them (the repcached guide's comparison).
    ///
    /// The repcached guide's comparison in one command: the same workload
    /// against each `-s` server alone, in turn, each from its own preload; each
    /// run's report prints as it ends, then the `compare` table with each run's
    /// ratio to the first (and the servers' own figures with `--server-stats`:
    /// commands/s, hit ratio, evictions, items, MB/s, CPU per command).
    /// `--json`, `--csv`, `--hdr-log` get a file per server (`r.json` →
    /// `r.1.json`, `r.2.json`, ...); `--html` overlays the runs. Not with
    /// `--rep-write`, `--roundrobin`, `--save` or outputs to `-`.
    #[arg(help_heading = "Target", hide_short_help = true, long)]
    pub each: bool,

    /// Run the same configuration N times and keep every run
    ///
    /// Each run opens fresh connections (and starts a fresh memcached when
    /// mcbench starts one). Prints each figure's median over the runs with
    /// its 95 % bootstrap interval; `--json` writes the set (`mcbench
    /// compare` of two sets gives each change with its interval and the A/A
    /// noise floor), `--html` overlays the runs.
    #[arg(help_heading = "Outputs", hide_short_help = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub repeat: Option<u32>,

    /// With --repeat: a shell command run before each run but the first
    /// (restart the server, drop caches); a failure stops the set.
    #[arg(
        help_heading = "Outputs",
        hide_short_help = true,
        long,
        value_name = "CMD",
        requires = "repeat"
    )]
    pub between: Option<String>,

    /// An agent (`mcbench agent`) to offer a share of the load from, HOST:PORT;
    /// repeat for several.
    ///
    /// Each gets its share of connections, rate, requests and keys; their
    /// histograms are merged exactly.
    #[cfg(feature = "agents")]
    #[arg(help_heading = "Agents", long = "agent", value_name = "HOST:PORT")]
    pub agents: Vec<String>,

    /// The file holding the agents' shared token (its first line).
    #[cfg(feature = "agents")]
    #[arg(
        help_heading = "Agents",
        long,
        value_name = "FILE",
        requires = "agents"
    )]
    pub token_file: Option<PathBuf>,

    /// When an agent drops out: fail the run, or continue with the others.
    ///
    /// When an agent drops out: fail the run (exit 1, what was measured
    /// kept), or continue with the others and say so.
    #[cfg(feature = "agents")]
    #[arg(
        help_heading = "Agents",
        long,
        value_enum,
        default_value = "fail",
        value_name = "fail|continue",
        requires = "agents"
    )]
    pub on_agent_loss: crate::agent::AgentLoss,

    /// Reach the agents over TLS, trusting this PEM certificate
    ///
    /// Reach the agents over TLS, trusting this certificate (PEM: the CA
    /// that signed the agents' certificates, or an agent's own). The
    /// cache's own TLS is --tls and --tls-ca.
    #[cfg(feature = "agents")]
    #[arg(
        help_heading = "Agents",
        long,
        value_name = "FILE",
        requires = "agents"
    )]
    pub agent_tls_ca: Option<PathBuf>,

    /// The name the agents' certificates must carry (default: each
    /// --agent's HOST).
    #[cfg(feature = "agents")]
    #[arg(
        help_heading = "Agents",
        hide_short_help = true,
        long,
        value_name = "NAME",
        requires = "agent_tls_ca"
    )]
    pub agent_tls_domain: Option<String>,

    /// Read every server's own `stats` at each interval and report them beside
    /// the client's.
    ///
    /// Read every server's own `stats` on a connection of its own: at the start
    /// of measurement (without a warm-up, before the first measured request),
    /// at each `--interval` and at the end, with `stats settings` once and
    /// `stats slabs`/`stats items` at start and end. The report shows per
    /// server `cmd_get`, `cmd_set`, commands/s, hit ratio, evictions,
    /// reclaimed, connections (peak/new/rejected), bytes read and written,
    /// items and the server's CPU per command (`rusage_user + rusage_system`),
    /// every other numeric stat that moved, and the `stats` round trip on the
    /// kept connection (the connect timed apart); JSON has it per interval too,
    /// and the HTML report charts it. When a server's lookups or hits differ
    /// from what the run's answers account for (beyond the failed requests and
    /// 1 %), a warning says so. memcached's text `stats` only: not with
    /// `--protocol resp`, UDP servers, or `--user` over binary.
    #[arg(help_heading = "Server stats and replication", long)]
    pub server_stats: bool,

    /// memaslap's replication test: the first N servers take the writes, reads
    /// go elsewhere.
    ///
    /// memaslap's replication test (`--rep_write`): the first N servers take
    /// the writes, each key on the writer `--distribution` places it on, and
    /// every read goes to a server the key was not written to (in turn among
    /// them in a closed loop, at random in an open loop). A miss there is a
    /// *replication miss*, reported apart from the other misses (text,
    /// `replication` in JSON, and per interval); a replica that evicted the key
    /// counts too, and so does a key written to another server while its writer
    /// was down. Only get and the storage commands and counters may be in the
    /// mix, without `--expiry`, `--verify`, `--exp-verify` or `--getset`, so
    /// that nothing else can pass for one. A server that is down (at the
    /// start, or later) is passed over: writes go to the next writer up, then any server; reads to another
    /// server, then the key's own writer. Implies `--reconnect`: a server that
    /// returns is used again; when every server has been down for `--timeout`,
    /// the run fails. Needs `--load` (the default), single-key reads and held
    /// TCP or unix connections.
    #[arg(
        help_heading = "Server stats and replication",
        long,
        alias = "rep_write",
        value_name = "N"
    )]
    pub rep_write: Option<usize>,

    /// With --rep-write: replication-lag probes per second, each a write of its
    /// own key on its own connection, polled on another server until it shows
    /// (0: none) [default: 10]
    ///
    /// With `--rep-write`: R replication-lag probes a second (default 10; 0:
    /// none), one at a time on connections of their own: each writes a key of
    /// its own to a writer and, from the acknowledgement, polls another server
    /// every D (default 100us, or 1 % of the time waited if longer) until the
    /// key shows with its value, for at most `--timeout`. The lag (an upper
    /// bound: up to the answer of the poll that found it) is a histogram;
    /// probes not seen, failed, and found by the first poll (below the
    /// resolution) are counted.
    #[arg(
        help_heading = "Server stats and replication",
        hide_short_help = true,
        long,
        value_name = "R",
        requires = "rep_write"
    )]
    pub rep_lag_rate: Option<f64>,

    /// With --rep-write: where reads go: `others` (a server the key was not
    /// written to) or `any` (any server, its writer included, as memaslap's
    /// `-p` draws one) [default: others]
    #[arg(help_heading = "Server stats and replication", hide_short_help = true, long, value_name = "WHERE", value_parser = ["others", "any"], requires = "rep_write")]
    pub rep_read: Option<String>,

    /// With --rep-write: the wait between polls of a probe's key (the
    /// lag's resolution, with a poll's round trip) [default: 100us]
    #[arg(help_heading = "Server stats and replication", hide_short_help = true, long, value_parser = parse_duration, value_name = "D", requires = "rep_write")]
    pub rep_lag_poll: Option<Duration>,

    /// Measurement connections per server beside the load (mutilate's -C).
    ///
    /// Measurement connections per server beside the load (mutilate's
    /// -C): their own open loop at --measure-rate, their latency reported
    /// apart, free of the load's client-side queueing.
    #[arg(
        help_heading = "Measurement connections",
        long,
        alias = "measure_connections",
        value_name = "N"
    )]
    pub measure_connections: Option<usize>,

    /// The measurement connections' rate, ops/s over all of them
    /// (mutilate's -Q) [default: 1000]
    #[arg(help_heading = "Measurement connections", hide_short_help = true, 
        long,
        alias = "measure_qps",
        value_parser = parse_rate,
        value_name = "R",
        requires = "measure_connections"
    )]
    pub measure_rate: Option<f64>,

    /// Requests in flight per measurement connection (mutilate's -D)
    /// [default: 1]
    #[arg(
        help_heading = "Measurement connections",
        hide_short_help = true,
        long,
        alias = "measure_depth",
        value_name = "D",
        requires = "measure_connections"
    )]
    pub measure_depth: Option<usize>,

    /// With --facebook: TCP connections beside each connection's UDP
    /// socket (memaslap's --conn_sock).
    #[arg(
        help_heading = "Connections",
        hide_short_help = true,
        long,
        alias = "conn_sock",
        value_name = "N",
        default_value_t = 1
    )]
    pub conn_sock: usize,

    /// Print the first failed checks: key, expected, got (memaslap's -b).
    ///
    /// With `--verify`/`--exp-verify`: print the first 10 failed checks (key,
    /// expected and got); memaslap's `-b` prints them in its layout.
    #[arg(help_heading = "Checks", hide_short_help = true, long)]
    pub verbose: bool,

    /// Failed --verify/--exp-verify checks are a warning, not a failed run
    /// (exit 0 instead of 1).
    ///
    /// Failed checks are a warning (`CHECKS FAILED`) and the run exits 0;
    /// without it a run whose checks failed exits 1, its report written
    /// (memaslap's personality too)
    #[arg(help_heading = "Checks", hide_short_help = true, long)]
    pub tolerate_check_failures: bool,

    /// Local addresses to bind connections to, in turn, each with its own
    /// ephemeral ports (127.0.0.2,127.0.0.3): past one address's ports.
    ///
    /// Bind each TCP connection to these local addresses in turn before
    /// connecting (IP_BIND_ADDRESS_NO_PORT: the port is picked per
    /// destination): each adds a range of ephemeral ports (below)
    #[arg(
        help_heading = "Connections",
        hide_short_help = true,
        long,
        value_name = "ADDRS"
    )]
    pub source_addrs: Option<String>,

    /// Wire protocol: ascii, meta, binary or resp (Redis).
    ///
    /// `ascii` (default), `meta` (memcached 1.6 `mg`/`ms`/`md`/`ma`/`mn`),
    /// `binary` (also `-B`), `resp` (Redis: GET, SET, MGET, DEL, INCRBY/DECRBY,
    /// APPEND). A command the protocol lacks is refused before any traffic.
    #[arg(
        value_name = "P",
        help_heading = "Target",
        long,
        default_value = "ascii"
    )]
    pub protocol: mcbench_proto::Protocol,

    /// memaslap's --udp: reach every HOST:PORT server over UDP.
    ///
    /// memaslap's: plain `HOST:PORT` servers over UDP. A request must fit one
    /// 1400-byte datagram; a request unanswered after 1 s counts as
    /// `udp_timeout`, never as a latency.
    #[arg(help_heading = "Target", long, requires = "servers")]
    pub udp: bool,

    /// memaslap's -B: the binary protocol (same as --protocol binary).
    #[arg(
        help_heading = "Target",
        hide_short_help = true,
        short = 'B',
        long,
        conflicts_with = "protocol"
    )]
    pub binary: bool,

    /// Expiry of storage commands, gat and touch, in seconds (0: never).
    ///
    /// Expiry of storage commands, `gat` and `touch` (default 0, never); amount
    /// of `incr`/`decr` (default 1)
    #[arg(
        value_name = "S",
        help_heading = "Protocol",
        long,
        alias = "exptime",
        default_value_t = 0
    )]
    pub expiry: u32,

    /// Amount added or subtracted by incr/decr.
    #[arg(
        value_name = "N",
        help_heading = "Protocol",
        hide_short_help = true,
        long,
        default_value_t = 1
    )]
    pub delta: u64,

    /// A cas sends this unique instead of the one a gets read first (twemperf's
    /// -m cas sends 1): no gets goes out, and the server answers EXISTS or
    /// NOT_FOUND.
    ///
    /// Every `cas` sends unique N, with no `gets` before it (twemperf's `-m
    /// cas` sends 1): the server answers `EXISTS` or `NOT_FOUND`. Without it, a
    /// `cas` sends the unique its connection's last `gets` read. Refused
    /// without `cas` in `--mix`.
    #[arg(
        help_heading = "Protocol",
        hide_short_help = true,
        long,
        value_name = "N"
    )]
    pub cas_unique: Option<u64>,

    /// Open a lost connection again instead of running on without it
    /// (memaslap's -R).
    ///
    /// memaslap's: open a lost connection again (after 0.1 s, doubling to 1.6 s
    /// while it keeps failing); a worker with no connection up for `--timeout`
    /// gives up. Without it the run goes on with the rest and ends when none is
    /// left; with keys placed on several servers, a client that lost one
    /// server's socket is done, so a server that dies ends the run (exit 1)
    /// unless `--reconnect` is given: then its keys fail as `no_connection`
    /// until it is back. Reopening blocks the worker for the connect and
    /// authentication (at most 0.25 s each)
    #[arg(help_heading = "Connections", short = 'R', long)]
    pub reconnect: bool,

    /// Closed loop: after each wake-up wait this long (e.g. 50us) before
    /// reading, so that answers are read in batches. By default 50us where a
    /// worker keeps 64 or more requests in flight at depth 4 or more (100us
    /// from 256), over TCP; `0` reads each answer at once.
    ///
    /// Closed loops over TCP or unix sockets only (refused with `--rate`, UDP,
    /// `--facebook`, `--num-conns`, `--measure-connections` or `--load-only`),
    /// at most 10ms; never during the preload: after each
    /// wake-up, wait `D` before reading, so that answers are read in batches.
    /// Fewer reads, ACKs and wake-ups for client and server, as with
    /// mc-crusher's lazy reads. Over TCP each answer is timed by when the
    /// kernel received it (`SO_TIMESTAMPNS`, with the bounds of
    /// `--read-answers` below), not when it was read, so the pause is not in
    /// the latency; answers that one read takes together are timed by the
    /// last of them. A freed slot is refilled when its answer is read, and
    /// that request is timed from then, as every closed-loop request is from
    /// when it is made. A unix stream carries no stamps: there every answer
    /// is timed up to one pause late, and the report says which. Bytes a turn
    /// leaves unread, and the rest of an answer already begun, are read at
    /// once, not after another pause.
    ///
    /// The default, measured against reading at once (50 memcached
    /// connections on one worker, `bench/README.md`, "The depth default"):
    /// the pause is time a connection sits answered and idle, so it pays only
    /// where the requests still in flight keep the server busy through it. At
    /// depth 1 and 2 it lost 8-27 % of the ops/s for no CPU saved, and one
    /// connection at depth 16 lost half; from depth 4 with 64 in flight the
    /// ops/s rose and the client's CPU per op fell to 0.36-0.67×. At depth 16
    /// (800 in flight) the tail rises with the bursts it sends (p99 8.3 ms
    /// against 6.3-6.9 ms reading at once), while the truth oracle's server
    /// (`bench/oracle.py -d 16`) is measured as closely as reading at once,
    /// or more. The default pauses only over TCP with kernel stamps (not with
    /// `--kernel-stamps off`, unix sockets, `--busy-poll`, `--num-conns` or
    /// `--measure-connections`); the report says when it did.
    #[arg(help_heading = "Load and schedule", hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub read_delay: Option<Duration>,

    /// Meta protocol: extra flags on retrievals, comma-separated: k (return the
    /// key), t (the TTL), s (the size), b (base64 keys), N<ttl> (vivify misses
    /// as stubs, which count as misses).
    ///
    /// Meta protocol: extra flags on retrievals, comma-separated: `k`, `t`, `s`
    /// (return key, TTL, size), `b` (base64 keys, up to 186 raw bytes),
    /// `N<ttl>` (vivify misses; the stub a miss leaves, flagged `W`/`Z` without
    /// data, counts as a miss). `v`, `f`, `c`, `q`, `O`, `T` are sent where the
    /// command needs them.
    #[arg(
        help_heading = "Protocol",
        hide_short_help = true,
        long,
        value_name = "FLAGS"
    )]
    pub meta_flags: Option<String>,

    /// Send commands quiet (text noreply, meta q, binary quiet opcodes).
    ///
    /// Quiet commands (text `noreply`, meta `q`, binary quiet opcodes), each
    /// followed by a noop (`version` in text, `mn`, binary noop) so that it is
    /// still timed and its failures still counted. In text, the quiet
    /// commands of one write share one `version` after the last: each is
    /// timed to it, and an error line before the next reply is the first
    /// unanswered one's.
    #[arg(help_heading = "Protocol", long)]
    pub noreply: bool,

    /// User to authenticate as: SASL PLAIN, memcached -Y text auth, or Redis
    /// AUTH.
    ///
    /// Authenticate every connection before the run: SASL PLAIN (binary,
    /// memcached `-S`), text authentication (ascii and meta, memcached `-Y`),
    /// `AUTH` (resp). A refusal exits 1. `MCBENCH_PASSWORD` keeps the password
    /// out of `ps`; it is never written to reports.
    #[arg(
        value_name = "USER",
        help_heading = "Target",
        long,
        short = 'U',
        alias = "username",
        env = "MCBENCH_USER"
    )]
    pub user: Option<String>,

    /// Password for --user (mutilate's -P; MCBENCH_PASSWORD keeps it out
    /// of ps).
    #[arg(
        value_name = "PASS",
        help_heading = "Target",
        long,
        short = 'P',
        env = "MCBENCH_PASSWORD",
        hide_env_values = true
    )]
    pub password: Option<String>,

    /// Speak TLS to every server (or name them tls:HOST:PORT)
    ///
    /// Every connection speaks TLS (rustls, in the engine's own event loop:
    /// kernel receive stamps and pipelining work as over TCP). The server's
    /// certificate is checked against --tls-ca (else the system's roots) and
    /// the server's host as written (else --tls-server-name). TCP only.
    #[arg(help_heading = "Target", long)]
    pub tls: bool,

    /// Trust the certificates in this PEM file for --tls (default: the
    /// system's roots).
    #[arg(
        help_heading = "Target",
        hide_short_help = true,
        long,
        value_name = "FILE"
    )]
    pub tls_ca: Option<PathBuf>,

    /// A client certificate chain (PEM) for a server that asks for one
    /// (memcached's ssl_verify_mode); with --tls-key.
    #[arg(
        help_heading = "Target",
        hide_short_help = true,
        long,
        value_name = "FILE"
    )]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert.
    #[arg(
        help_heading = "Target",
        hide_short_help = true,
        long,
        value_name = "FILE"
    )]
    pub tls_key: Option<PathBuf>,

    /// The name sent (SNI) and checked in the server's certificate
    /// (default: each server's host as written).
    #[arg(
        help_heading = "Target",
        hide_short_help = true,
        long,
        value_name = "NAME"
    )]
    pub tls_server_name: Option<String>,

    /// Check no certificate at all (the report says so, loudly).
    #[arg(help_heading = "Target", hide_short_help = true, long)]
    pub tls_insecure: bool,

    /// Resume TLS sessions on later connections (on), or make every
    /// handshake a full one (off), to measure both. A server that refuses
    /// a resumed handshake (memcached under ssl_verify_mode=2) gets full
    /// ones from then on, and the report says so.
    #[arg(help_heading = "Target", hide_short_help = true, long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub tls_resume: bool,
}

/// `-r`'s and `--key-prefix`'s defaults.
const DEFAULT_KEYS: u64 = 10_000;
const DEFAULT_PREFIX: &str = "mcb:";

/// The default length of a run when neither `--duration` nor `--ops` is given.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunArgs {
    /// Maps the flags onto a validated `RunSpec`.
    /// `--tls` and its flags, or servers named `tls:`; the TLS flags
    /// without either are refused.
    fn tls_spec(
        &self,
        servers: &[crate::spec::ServerAddr],
    ) -> Result<Option<crate::spec::TlsSpec>, String> {
        let prefixed = servers.iter().any(|s| s.has_tls_prefix());
        if !self.tls && !prefixed {
            let given = [
                ("--tls-ca", self.tls_ca.is_some()),
                ("--tls-cert", self.tls_cert.is_some()),
                ("--tls-key", self.tls_key.is_some()),
                ("--tls-server-name", self.tls_server_name.is_some()),
                ("--tls-insecure", self.tls_insecure),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
                return Err(format!(
                    "{flag} is for the servers' TLS: add --tls (the agents' control plane is --agent-tls-ca)"
                ));
            }
            return Ok(None);
        }
        Ok(Some(crate::spec::TlsSpec {
            ca: self.tls_ca.clone(),
            cert: self.tls_cert.clone(),
            key: self.tls_key.clone(),
            server_name: self.tls_server_name.clone(),
            insecure: self.tls_insecure,
            resume: self.tls_resume,
        }))
    }

    pub fn to_spec(&self) -> Result<RunSpec, String> {
        let stop = match (self.ops, self.duration) {
            (Some(n), _) => StopAfter::Ops(n),
            (None, Some(d)) => StopAfter::Duration(d),
            (None, None) if self.num_conns.is_some() => StopAfter::Schedule,
            (None, None) if self.trace.is_some() || self.read_file.is_some() => StopAfter::TraceEnd,
            (None, None) => StopAfter::Duration(DEFAULT_DURATION),
        };
        let (trace, trace_speed) = match self.trace_spec()? {
            Some((trace, speed)) => (Some(trace), speed),
            None => (None, None),
        };
        // A replay has no key space to preload, unless asked (and refused).
        let load = if self.load_only {
            LoadMode::LoadOnly
        } else if self.no_load || (trace.is_some() && !self.load) {
            LoadMode::NoLoad
        } else {
            LoadMode::Load
        };
        let mix = match (self.update, &self.mix) {
            (Some(u), _) => Mix::from_update_ratio(u)?,
            (None, Some(mix)) => mix.clone(),
            (None, None) => Mix::from_update_ratio(0.1)?,
        };
        let written: Vec<String> = self
            .servers
            .iter()
            .map(|s| self.with_transport(s))
            .collect();
        let (servers, weights) = crate::spec::servers::expand(&written)?;
        let tls = self.tls_spec(&servers)?;
        let spec = RunSpec {
            label: self.label.clone(),
            servers,
            weights,
            distribution: self.distribution()?,
            roundrobin: self.roundrobin,
            replication: self.replication()?,
            server_stats: self.server_stats,
            measure: self.measure()?,
            successful: self.successful,
            miss_window: self.miss_window,
            assoc: self.assoc,
            wait: self.wait.unwrap_or(Duration::ZERO),
            trace_commands: self.trace_commands,
            precision: self.precision.clone(),
            decide: None,
            threads: self.threads,
            connections: self.connections,
            depth: self.depth,
            refill_batch: self.refill_batch,
            stop,
            time_limit: self.time_limit,
            warmup: self.warmup.unwrap_or(Duration::ZERO),
            keys: self.keys,
            key_size: self.key_size.clone(),
            value_size: self.value_size.clone(),
            key_prefix: self.key_prefix.clone(),
            key_digits: self.key_digits,
            first_key: self.first_key,
            popularity: self.key_popularity,
            client: self.client,
            multiget: self.multiget_spec(&mix)?,
            mix,
            miss_ratio: self.miss_ratio,
            // Records that name no op are gets that fill their misses.
            getset: self.getset || trace.as_ref().is_some_and(|t| !t.names_ops),
            delete90: self.delete90,
            trace,
            window: self.window,
            overwrite: self.overwrite,
            max_value_size: usize::try_from(self.max_value_size).unwrap_or(usize::MAX),
            load,
            load_each_thread: self.load_each_thread,
            interval: self.interval.unwrap_or(Duration::from_secs(1)),
            live: self.interval.is_some(),
            affinity: self.affinity.as_deref().map(parse_affinity).transpose()?,
            seed: self.seed,
            timeout: self.request_timeout.unwrap_or(self.timeout),
            connect_timeout: Some(self.connect_timeout.unwrap_or(self.timeout)),
            drain_timeout: Some(self.drain_timeout.unwrap_or(self.timeout)),
            protocol: if self.binary {
                mcbench_proto::Protocol::Binary
            } else {
                self.protocol
            },
            expiry: self.expiry,
            delta: self.delta,
            cas_unique: self.cas_unique,
            noreply: self.noreply,
            meta_flags: self.meta_flags.clone(),
            reconnect: self.reconnect || self.rep_write.is_some(),
            read_delay: self.read_delay,
            save_rate: self.save.as_ref().map(|_| self.save_rate.unwrap_or(1.0)),
            user: self.user.clone(),
            password: self.password.clone(),
            tls,
            verify: self.verify.unwrap_or(0.0),
            exp_verify: self.exp_verify.unwrap_or(0.0),
            exp_verify_ttl: self.exp_verify_ttl,
            verbose: self.verbose,
            tolerate_check_failures: self.tolerate_check_failures,
            facebook: self.facebook,
            conn_sock: self.conn_sock,
            busy_poll: self.busy_poll,
            kernel_stamps: self.kernel_stamps,
            read_answers: self.read_answers,
            schedule: ScheduleFlags {
                rate: self.rate,
                arrival: self.arrival.clone(),
                coalesce: self.coalesce,
                skip: self.skip,
                moderate: self.moderate,
                churn: self.num_conns.map(|conns| Churn {
                    conns,
                    conn_gaps: self.conn_rate.unwrap_or(Gaps::AfterPrevious),
                    calls: self.num_calls.unwrap_or(1),
                    call_gaps: self.call_rate.unwrap_or(Gaps::AfterPrevious),
                }),
                trace_speed,
            }
            .schedule()?,
            socket: SocketOptions {
                linger_s: self.linger,
                send_buffer: self.send_buffer,
                recv_buffer: self.recv_buffer,
                no_nodelay: self.no_nodelay,
                source_addrs: self
                    .source_addrs
                    .as_deref()
                    .map(parse_source_addrs)
                    .transpose()?
                    .unwrap_or_default(),
            },
        };
        // --each runs each server alone: each of those runs is checked,
        // not the servers together (whose key placement none of them has).
        // With agents, the agents open the connections: this host's
        // descriptors are no limit of the run.
        if self.each {
            spec.each()?;
        } else if self.by_agents() {
            spec.validate_plan()?;
        } else {
            spec.validate()?;
        }
        Ok(spec)
    }
}

impl RunArgs {
    /// Whether agents make the run (`--agent`), not this process.
    fn by_agents(&self) -> bool {
        #[cfg(feature = "agents")]
        return !self.agents.is_empty();
        #[cfg(not(feature = "agents"))]
        false
    }

    /// `--trace` or `--read-file`: the file opened to find its format (a
    /// file that cannot be read is a usage error, before any traffic).
    /// The trace to replay, and its speed if it is replayed at its
    /// timestamps.
    fn trace_spec(&self) -> Result<Option<(crate::spec::TraceSpec, Option<f64>)>, String> {
        use crate::trace::{TraceFormat, TraceReader};
        let (path, format) = match (&self.trace, &self.read_file) {
            (Some(path), _) => (path, self.trace_format),
            (None, Some(path)) => (path, Some(TraceFormat::Keys)),
            (None, None) => return Ok(None),
        };
        // Read twice (here for its format and first record, then by the
        // replay), and once per run of a search or scan: not a pipe.
        if path.exists() && !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return Err(format!(
                "{} is not a regular file: a trace is read once for its format and again to replay it; save it to a file first",
                path.display()
            ));
        }
        let mut reader = TraceReader::open(path, format)?;
        let format = reader.format();
        self.refuse_key_space_flags(format)?;
        let ignore = self.trace_timing.as_deref() == Some("ignore");
        if ignore && self.trace_speed.is_some() {
            return Err(
                "--trace-speed sets the replay of timestamps; --trace-timing ignore uses none"
                    .into(),
            );
        }
        let speed = (format.timed() && !ignore).then(|| self.trace_speed.unwrap_or(1.0));
        // The first record, read now: a malformed one, or one without the
        // timestamp a replay needs, is refused before any traffic.
        let mut first = crate::trace::Record::default();
        let any = reader
            .next(&mut first)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if speed.is_some() && any && first.time_s.is_none() {
            return Err(format!(
                "{}: its records have no timestamps to replay: add --trace-timing ignore",
                path.display()
            ));
        }
        if let (Some(speed), Some(t)) = (speed, first.time_s) {
            self.judge_schedule(&mut reader, t, speed)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let trace = crate::spec::TraceSpec {
            path: path.clone(),
            format,
            clients: self.trace_clients,
            names_ops: reader.names_ops(),
        };
        Ok(Some((trace, speed)))
    }

    /// A timed replay's schedule, judged before any traffic from the
    /// trace's first `PRESCAN_RECORDS` records (`first_s` is the first's
    /// time): a gap over a day is refused without `--time-limit` (exit 2),
    /// one out of proportion warned of. Past them the feed judges the
    /// gaps as it reads (a refused one then fails the run).
    fn judge_schedule(
        &self,
        reader: &mut crate::trace::TraceReader,
        first_s: u64,
        speed: f64,
    ) -> Result<(), String> {
        use crate::trace::{Record, ScheduleJudge, Verdict};
        /// About a second of reading, for a text trace.
        const PRESCAN_RECORDS: u64 = 2_000_000;
        let mut judge = ScheduleJudge::default();
        judge.see(first_s);
        let mut rec = Record::default();
        let mut whole = false;
        for _ in 1..PRESCAN_RECORDS {
            if !reader.next(&mut rec).map_err(|e| e.to_string())? {
                whole = true;
                break;
            }
            if let Some(t) = rec.time_s {
                judge.see(t);
            }
        }
        match judge.verdict(speed, self.time_limit) {
            Verdict::Refuse(why) => Err(why),
            Verdict::Warn(why) if whole => {
                crate::stderr_line!("mcbench: warning: {why}");
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The key space's flags have no meaning for a trace, whose keys (and,
    /// but for `--read-file`, ops and value sizes) are its own: given, they
    /// are refused rather than ignored.
    fn refuse_key_space_flags(&self, format: crate::trace::TraceFormat) -> Result<(), String> {
        use crate::trace::TraceFormat;
        let keys_file = format == TraceFormat::Keys;
        let given = [
            (self.keys != DEFAULT_KEYS, "-r/--keys"),
            (self.key_size != Distribution::Fixed(30.0), "-K/--key-size"),
            (self.key_prefix != DEFAULT_PREFIX, "--key-prefix"),
            (
                self.key_digits != crate::workload::KeyDigits::Decimal,
                "--key-digits",
            ),
            (self.first_key != 0, "--first-key"),
            (self.client != ClientSlice { index: 0, of: 1 }, "--client"),
            (!keys_file && self.update.is_some(), "-u/--update"),
            (!keys_file && self.mix.is_some(), "--mix"),
            // Twitter's misses state no size: -V gives it their fills.
            (
                !matches!(format, TraceFormat::Keys | TraceFormat::Twitter)
                    && self.value_size != Distribution::Fixed(200.0),
                "-V/--value-size",
            ),
        ];
        match given.iter().find(|(g, _)| *g) {
            Some((_, flag)) => Err(format!(
                "{flag} shapes the generated workload; a trace brings its own keys{}: drop it",
                if keys_file {
                    ""
                } else {
                    ", ops and value sizes"
                }
            )),
            None => Ok(()),
        }
    }

    /// `--rep-write` and its lag probe; the probe's flags alone are refused.
    fn replication(&self) -> Result<Option<crate::spec::Replication>, String> {
        use crate::spec::replication::{DEFAULT_LAG_POLL, DEFAULT_LAG_RATE};
        let Some(writers) = self.rep_write else {
            return Ok(None);
        };
        if self.rep_lag_rate == Some(0.0) && self.rep_lag_poll.is_some() {
            return Err(
                "--rep-lag-poll sets how the lag probe polls; --rep-lag-rate 0 runs none".into(),
            );
        }
        Ok(Some(crate::spec::Replication {
            writers,
            any_reader: self.rep_read.as_deref() == Some("any"),
            lag_rate: self.rep_lag_rate.unwrap_or(DEFAULT_LAG_RATE),
            lag_poll: self.rep_lag_poll.unwrap_or(DEFAULT_LAG_POLL),
        }))
    }

    /// `--measure-connections` and its rate and depth; these alone are
    /// refused.
    fn measure(&self) -> Result<Option<crate::spec::MeasureGroup>, String> {
        let Some(connections) = self.measure_connections else {
            return Ok(None);
        };
        Ok(Some(crate::spec::MeasureGroup {
            connections,
            rate: self.measure_rate.unwrap_or(1000.0),
            depth: self.measure_depth.unwrap_or(1),
        }))
    }

    /// `--distribution` with `--hash`; `--roundrobin` means `none`.
    fn distribution(&self) -> Result<crate::placement::Scheme, String> {
        use crate::placement::Scheme;
        match (&self.distribution, self.roundrobin) {
            (None, true) if self.hash.is_none() => Ok(Scheme::None),
            (None, _) => Ok(Scheme::parse("modula", self.hash)?),
            (Some(name), _) => Scheme::parse(name, self.hash),
        }
    }

    /// `--udp` puts plain `HOST:PORT` servers on UDP.
    fn with_transport(&self, server: &str) -> String {
        let server = server.trim();
        let plain = !["udp:", "unix:", "tcp:"]
            .iter()
            .any(|t| server.starts_with(t));
        if self.udp && plain {
            format!("udp:{server}")
        } else {
            server.to_string()
        }
    }

    /// How gets become multigets. With `mget` in the mix, the mix decides
    /// how many there are and `--multiget` (else `--getq-size`) how many
    /// keys each asks for; otherwise `--multiget N` turns every get into a
    /// multiget of N keys and `--getq-freq` a share of them.
    fn multiget_spec(&self, mix: &Mix) -> Result<MultiGet, String> {
        if mix.share_of(crate::workload::OpKind::Mget) > 0.0 {
            if self.getq_freq.is_some() {
                return Err(
                    "--getq-freq has nothing to do with mget in --mix: the mix sets how many \
                     requests are multigets"
                        .into(),
                );
            }
            return Ok(MultiGet {
                share: 0.0,
                keys: self.multiget.unwrap_or(self.getq_size),
            });
        }
        match (self.multiget, self.getq_freq) {
            (Some(n), _) => Ok(MultiGet {
                share: 1.0,
                keys: n,
            }),
            (None, Some(pct)) if (0.0..=100.0).contains(&pct) => Ok(MultiGet {
                share: pct / 100.0,
                keys: self.getq_size,
            }),
            (None, Some(pct)) => Err(format!("--getq-freq is a percentage (0..100), got {pct}")),
            (None, None) => Ok(MultiGet::NONE),
        }
    }
}

/// `exponential` (Poisson arrivals), `fixed` (even gaps), or a distribution.
fn parse_arrival(text: &str) -> Result<Distribution, String> {
    match text {
        "exponential" => Ok(Distribution::Exponential { mean: 1.0 }),
        "fixed" => Ok(Distribution::Fixed(1.0)),
        _ => text.parse(),
    }
}

/// `auto` (one CPU per thread, in order of the CPUs this process may use)
/// or a comma-separated list of CPU numbers.
fn parse_affinity(text: &str) -> Result<Vec<usize>, String> {
    if text == "auto" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("invalid --affinity '{text}': expected CPU numbers like 0,2"))
        })
        .collect()
}

/// `on` or `off` (also true/false, yes/no, 1/0).
fn parse_on_off(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is neither on nor off")),
    }
}
