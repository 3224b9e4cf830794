//! `mcbench run`'s flags under "Load and schedule".

use crate::cli::CliError;
use crate::spec::units::{parse_count, parse_duration, parse_rate};
use crate::workload::Distribution;
use clap::Args;
use std::time::Duration;

/// How much load, and when: threads, connections and depth, the rate and its arrivals, when the run stops, and the timeouts and read policy of every wait.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Load and schedule")]
pub struct LoadArgs {
    /// Worker threads, each with its own event loop.
    ///
    /// Worker threads, each with its own epoll loop (default 1)
    #[arg(value_name = "N", short = 'T', long, default_value_t = 1)]
    pub threads: usize,

    /// Connections per server, spread over the threads.
    ///
    /// Connections per server, spread over the threads (default 4); with keys
    /// placed on several servers, clients (each a socket per server), at least
    /// one per thread.
    #[arg(value_name = "N", short = 'c', long, default_value_t = 4)]
    pub connections: usize,

    /// Requests in flight per connection (pipelining).
    ///
    /// Requests in flight per connection (pipelining, default 1); a client of
    /// several servers keeps `N` × servers in flight in all, each on its key's
    /// socket, so a hot server's socket may hold more than `N`.
    #[arg(value_name = "N", short = 'd', long, default_value_t = 1)]
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
    #[arg(hide_short_help = true, long, value_name = "B", default_value_t = 1)]
    pub refill_batch: usize,

    /// Target aggregate rate in ops/s (open loop; 20000, 20k).
    ///
    /// Target aggregate ops/s (`20000`, `20k`): open loop. Without it, closed
    /// loop. When the rate answered misses it by more than 1 % and the Poisson
    /// noise of the count, the report warns (`rate_missed`). At most 1e9 (a
    /// nanosecond apart)
    #[arg(value_name = "OPS", short = 'q', long, value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Shape of an open loop's gaps between arrivals: exponential (Poisson), fixed, ...
    ///
    /// Shape of open-loop inter-arrival gaps, rescaled to the rate: exponential
    /// (Poisson), fixed, or any distribution (fb_ia, uniform:0,2).
    ///
    /// Without a rate there are no gaps to shape, and it is not used.
    #[arg(value_name = "SHAPE", long, alias = "iadist", value_parser = parse_arrival, default_value = "exponential")]
    pub arrival: Distribution,

    /// Length of the measured phase (30s, 2m, 1h).
    ///
    /// `30s`, `2m`, `1h`; or exactly N measured requests (default 10 s).
    /// Sending stops at `-t`: arrivals still waiting for a connection then are
    /// never sent (`errors.unsent`, no failure; the seed layouts' `Skipped
    /// TXs`), requests in flight get up to `--timeout` to be answered, and the
    /// rates divide by the measured time, which ends with the last answer; a
    /// drain over 10 % of it is warned of (`long_drain`)
    #[arg(value_name = "D", short = 't', long, value_parser = parse_duration, conflicts_with = "ops")]
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
    #[arg(value_name = "P:W", long)]
    pub precision: Vec<crate::spec::PrecisionTarget>,

    /// Stop after exactly this many measured requests (mutilate's -N/--queries).
    ///
    /// Stop after exactly this many measured requests, shared among the
    /// servers (mutilate's -N/--queries).
    #[arg(value_name = "N", short = 'x', long, alias = "queries", value_parser = parse_count)]
    pub ops: Option<u64>,

    /// End the measured phase after D at the latest, whatever else says.
    ///
    /// End the measured phase after D at the latest, whatever -t, -x, the
    /// connection schedule or the trace say (a cap for quick looks).
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub time_limit: Option<Duration>,

    /// Time to run before measuring, not counted.
    ///
    /// Time to run before measuring; not counted [default: 0s; 1s per
    /// probe of search and scan]
    #[arg(value_name = "D", short = 'w', long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,

    /// A pause between the preload and the measured phase with nothing
    /// sent (mutilate's and memcache-perf's -W/--wait).
    #[arg(hide_short_help = true, short = 'W', long, value_parser = parse_duration, value_name = "D")]
    pub wait: Option<Duration>,

    /// Open loop: when an arrival is over 5 ms late and finds no free
    /// connection slot, drop it unsent, and the later ones until the schedule
    /// is within 4 ms of now; count them (mutilate's --skip).
    ///
    /// Their latency is not measured: a truthful tail needs this off.
    #[arg(hide_short_help = true, long)]
    pub skip: bool,

    /// Open loop: a connection sends nothing for 250 µs after each answer
    /// (mutilate's --moderate, as its code does it); arrivals meanwhile
    /// wait for another connection, and the wait is latency.
    #[arg(hide_short_help = true, long)]
    pub moderate: bool,

    /// Pin worker threads to CPUs: one each in order, or a list such as 1,3.
    ///
    /// Pin worker threads to CPUs: alone, one CPU per thread in order;
    /// or a list such as `1,3`.
    #[arg(long, value_name = "CPUS", num_args = 0..=1, default_missing_value = "auto")]
    pub affinity: Option<String>,

    /// How long a connect or an answer may take (twemperf's --timeout).
    ///
    /// Sets the three timeouts below at once, as twemperf's --timeout does;
    /// each of them, given, wins over it.
    #[arg(value_name = "D", long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,

    /// A connect that takes longer fails [default: --timeout].
    ///
    /// twemperf's socket-timo. It bounds the connect and the exchanges that
    /// open a connection (authentication), at the start, for --num-conns and
    /// --reconnect, and for the connections of --server-stats and the
    /// replication-lag probe.
    #[arg(hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub connect_timeout: Option<Duration>,

    /// A request unanswered this long fails [default: --timeout].
    ///
    /// Counted from its intended send; it fails as a timeout and closes its
    /// connection (twemperf's client-timo; a held connection is opened
    /// again). A request waiting in the client for a connection fails so
    /// too. In a phase without an end in time (the preload, -x), servers
    /// silent this long have stalled it: the run fails.
    #[arg(hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub request_timeout: Option<Duration>,

    /// Once sending stops, how long answers in flight are waited for
    /// [default: --timeout].
    ///
    /// Those still unanswered then count as timeouts. The measured time
    /// ends with the last answer, not with this wait.
    #[arg(hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub drain_timeout: Option<Duration>,

    /// Workers poll without sleeping: no wake-up latency, a whole CPU per
    /// thread.
    ///
    /// Workers poll without sleeping (mutilate's and memcache-perf's default;
    /// their `-B` blocks): no wake-up latency in what is measured, a whole CPU
    /// per thread. The busy share then says nothing of saturation and is not
    /// warned about; the send lag still is.
    #[arg(long)]
    pub busy_poll: bool,

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
    #[arg(long, value_parser = parse_duration, value_name = "W")]
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
    #[arg(long, value_enum, value_name = "WHEN")]
    pub read_answers: Option<crate::spec::ReadAnswers>,

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
    #[arg(hide_short_help = true, long, value_parser = parse_duration, value_name = "D")]
    pub read_delay: Option<Duration>,
}

impl LoadArgs {
    /// A request's, a connect's and the drain's timeouts: each its own
    /// flag, else `--timeout`.
    pub(super) fn timeouts(&self) -> (Duration, Duration, Duration) {
        (
            self.request_timeout.unwrap_or(self.timeout),
            self.connect_timeout.unwrap_or(self.timeout),
            self.drain_timeout.unwrap_or(self.timeout),
        )
    }

    /// The CPUs to pin worker threads to: empty for one each in order.
    pub(super) fn affinity(&self) -> Result<Option<Vec<usize>>, CliError> {
        self.affinity.as_deref().map(parse_affinity).transpose()
    }
}

/// `exponential` (Poisson arrivals), `fixed` (even gaps), or a distribution.
fn parse_arrival(text: &str) -> Result<Distribution, crate::workload::WorkloadError> {
    match text {
        "exponential" => Ok(Distribution::Exponential { mean: 1.0 }),
        "fixed" => Ok(Distribution::Fixed(1.0)),
        _ => text.parse(),
    }
}

/// `auto` (one CPU per thread, in order of the CPUs this process may use)
/// or a comma-separated list of CPU numbers.
fn parse_affinity(text: &str) -> Result<Vec<usize>, CliError> {
    if text == "auto" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| CliError::Affinity(text.to_string()))
        })
        .collect()
}
