//! `mcbench mutilate` (the fork's flags, a superset of mutilate's), and
//! the flags it shares with `mcbench memcache-perf` (`memcache_perf.rs`),
//! with their defaults: 5 s,
//! one connection per server per thread, depth 1, 30 B keys, 200 B
//! values, 10,000 records, no sets, busy-polling workers.

use super::{Extras, PersonalityError, Tool, ToolCommand, Translation};
use clap::{ArgAction, Args};

/// Where a run's workload comes from, which decides the defaults passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keys {
    /// mutilate's generated keys: its defaults throughout.
    Generated,
    /// memcache-perf's --profile: only what was typed goes over it.
    Profile,
    /// --read_file: the file's keys, no generated-key flags.
    KeyFile,
    /// --read_file with --twitter_trace: its ops too.
    Twitter,
}

/// The flags mutilate and memcache-perf share.
#[derive(Debug, Args)]
pub(super) struct Common {
    /// Verbosity; repeat for more. mcbench: no effect (it logs only errors).
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    verbose: u8,
    /// Disable log messages. mcbench: no effect.
    #[arg(long = "quiet")]
    quiet: bool,
    /// Server hostname[:port]; repeat for several.
    #[arg(short = 's', long = "server", value_name = "STRING")]
    pub(super) server: Vec<String>,
    /// Use the binary memcached protocol instead of ASCII.
    #[arg(long = "binary")]
    binary: bool,
    /// Target aggregate QPS; 0 is peak (closed loop) [default: 0].
    #[arg(short = 'q', long = "qps", value_name = "INT")]
    pub(super) qps: Option<u64>,
    /// Maximum time to run, s [default: 5].
    #[arg(short = 't', long = "time", value_name = "INT")]
    time: Option<u64>,
    /// Length of keys (a distribution) [default: 30].
    #[arg(short = 'K', long = "keysize", value_name = "STRING")]
    keysize: Option<String>,
    /// Length of values (a distribution) [default: 200]. normal:M,S is
    /// mutilate's own (never below M − 1.18 S, a long right tail), run as
    /// its table of sizes.
    #[arg(short = 'V', long = "valuesize", value_name = "STRING")]
    valuesize: Option<String>,
    /// Records (keys) in all; with several servers each holds its share,
    /// the same key names on each (mutilate divides -r by the servers)
    /// [default: 10000].
    #[arg(short = 'r', long = "records", value_name = "INT")]
    pub(super) records: Option<u64>,
    /// Ratio of set:get commands [default: 0.0].
    #[arg(short = 'u', long = "update", value_name = "FLOAT")]
    update: Option<f64>,
    /// Username for SASL authentication.
    #[arg(short = 'U', long = "username", value_name = "STRING")]
    username: Option<String>,
    /// Password for SASL authentication.
    #[arg(short = 'P', long = "password", value_name = "STRING")]
    password: Option<String>,
    /// Threads to spawn [default: 1]. Under `mcbench mutilate`, each
    /// preloads the whole key space, as mutilate's threads do (the server
    /// sees -T × -r sets; not with agents).
    #[arg(short = 'T', long = "threads", value_name = "INT")]
    pub(super) threads: Option<usize>,
    /// Pin threads to CPUs, round-robin.
    #[arg(long = "affinity")]
    affinity: bool,
    /// Connections per server per thread [default: 1].
    #[arg(short = 'c', long = "connections", value_name = "INT")]
    pub(super) connections: Option<usize>,
    /// Most requests in flight per connection [default: 1].
    #[arg(short = 'd', long = "depth", value_name = "INT")]
    pub(super) depth: Option<usize>,
    /// Thread t connects to server t mod servers only.
    #[arg(short = 'R', long = "roundrobin")]
    roundrobin: bool,
    /// Inter-arrival distribution, rescaled to --qps [default: exponential].
    #[arg(short = 'i', long = "iadist", value_name = "STRING")]
    iadist: Option<String>,
    /// Skip transmissions when previous requests are late (counted).
    #[arg(short = 'S', long = "skip")]
    skip: bool,
    /// A minimum delay of ~1/lambda between requests.
    #[arg(long = "moderate")]
    moderate: bool,
    /// Skip loading the records.
    #[arg(long = "noload")]
    noload: bool,
    /// Load the records and exit.
    #[arg(long = "loadonly")]
    loadonly: bool,
    /// Blocking epoll() instead of polling. mcbench: workers sleep in
    /// epoll instead of busy-polling.
    #[arg(short = 'B', long = "blocking")]
    blocking: bool,
    /// Don't set TCP_NODELAY.
    #[arg(long = "no_nodelay")]
    no_nodelay: bool,
    /// Warm-up before measuring, s.
    #[arg(short = 'w', long = "warmup", value_name = "INT")]
    warmup: Option<u64>,
    /// Wait after start-up before measuring, s.
    #[arg(short = 'W', long = "wait", value_name = "INT")]
    wait: Option<u64>,
    /// Record latency samples to a file. mcbench: its own sample format
    /// (docs/samples.md), one tab-separated line per request.
    #[arg(long = "save", value_name = "STRING")]
    save: Option<String>,
    /// Find the QPS where the N-th percentile is under X µs (95:1000).
    /// mcbench: `mcbench search`, with its report.
    #[arg(long = "search", value_name = "N:X")]
    search: Option<String>,
    /// Latency across QPS rates from min to max. mcbench: `mcbench scan`,
    /// with its report; each step as mutilate's: a preload (unless
    /// --noload), -w's warm-up (none unless given), then -t.
    #[arg(long = "scan", value_name = "min:max:step")]
    scan: Option<String>,
    /// Agent mode: `mcbench agent` on every interface (token required).
    #[arg(short = 'A', long = "agentmode")]
    pub(super) agentmode: bool,
    /// Enlist a remote agent (`mcbench agent`, or `mutilate -A`).
    #[arg(short = 'a', long = "agent", value_name = "host")]
    pub(super) agent: Vec<String>,
    /// Agent port [default: 5556].
    #[arg(short = 'p', long = "agent_port", value_name = "STRING")]
    pub(super) agent_port: Option<String>,
    /// Lambda multiplier: this agent's weight, with its threads.
    #[arg(short = 'l', long = "lambda_mul", value_name = "INT")]
    pub(super) lambda_mul: Option<u32>,
    /// Master connections per server per thread (its probe connections).
    /// Without agents, as in mutilate: the run's connections, each at -q's
    /// rate per -c connection.
    #[arg(short = 'C', long = "measure_connections", value_name = "INT")]
    pub(super) measure_connections: Option<usize>,
    /// Master QPS (its probe connections' own open loop). Without agents,
    /// no effect, as in mutilate.
    #[arg(short = 'Q', long = "measure_qps", value_name = "INT")]
    pub(super) measure_qps: Option<u64>,
    /// Master depth (its probe connections'). Without agents, no effect,
    /// as in mutilate.
    #[arg(short = 'D', long = "measure_depth", value_name = "INT")]
    pub(super) measure_depth: Option<usize>,
    /// Print the version and exit.
    #[arg(long = "version", action = ArgAction::Version)]
    version: (),
    #[command(flatten)]
    pub(super) extras: Extras,
}

/// The mutilate fork's flags.
#[derive(Debug, Args)]
pub struct MutilateArgs {
    #[command(flatten)]
    common: Common,
    /// -s names UNIX socket paths instead of hosts.
    #[arg(long = "unix_socket")]
    unix_socket: bool,
    /// Redis RESP protocol instead of memcached's.
    #[arg(long = "redis")]
    redis: bool,
    /// On a get miss, set the key.
    #[arg(long = "getset")]
    getset: bool,
    /// --getset, with the mix's own sets also sent.
    #[arg(long = "getsetorset")]
    getsetorset: bool,
    /// Record latency and throughput of successful queries only.
    #[arg(long = "successful")]
    successful: bool,
    /// Prefix of every key.
    #[arg(long = "prefix", value_name = "STRING")]
    prefix: Option<String>,
    /// Delete 90 % of keys halfway through -N queries (needs --getset).
    #[arg(long = "delete90")]
    delete90: bool,
    /// Redis: hash-field keys of B bytes [default: 4].
    #[arg(long = "assoc", value_name = "INT")]
    assoc: Option<usize>,
    /// Read keys from a file.
    #[arg(long = "read_file", value_name = "STRING")]
    read_file: Option<String>,
    /// With --read_file: the file is a Twitter memcached trace (non-zero).
    #[arg(long = "twitter_trace", value_name = "INT", default_value_t = 0)]
    twitter_trace: u32,
    /// The miss ratio per window of N answers.
    #[arg(
        short = 'm',
        long = "misswindow",
        value_name = "INT",
        default_value_t = 0
    )]
    misswindow: u64,
    /// Queries to make, shared among the servers.
    #[arg(short = 'N', long = "queries", value_name = "INT", default_value_t = 0)]
    queries: u64,
}

pub(super) fn command(tool: Tool, cmd: clap::Command) -> clap::Command {
    cmd.name(tool.name())
        .about(format!(
            "{}'s command line, run by mcbench (see `mcbench --help`)",
            tool.name()
        ))
        .long_about(format!(
            "{}'s command line, run by mcbench's engine: latency from each request's \
             intended send, errors apart from throughput. Output in its layout; \
             percentiles come from mcbench's histograms (exact to 3 digits, where the \
             original interpolates in log bins).",
            tool.name()
        ))
        .version(env!("CARGO_PKG_VERSION"))
        .disable_version_flag(true)
}

impl ToolCommand for MutilateArgs {
    fn command(tool: Tool, cmd: clap::Command) -> clap::Command {
        command(tool, cmd)
    }
}

impl MutilateArgs {
    pub fn translate(self) -> Result<Translation, PersonalityError> {
        let c = &self.common;
        if c.agentmode {
            return c.agent();
        }
        let keys = match (&self.read_file, self.twitter_trace) {
            (Some(_), 0) => Keys::KeyFile,
            (Some(_), _) => Keys::Twitter,
            (None, _) => Keys::Generated,
        };
        let mut t = c.translate(self.unix_socket, keys, self.queries)?;
        if self.redis {
            t.flag("--protocol", "resp");
        }
        if self.getset || self.getsetorset {
            t.switch("--getset");
        }
        if self.successful {
            t.switch("--successful");
        }
        if let Some(p) = &self.prefix {
            t.flag("--key-prefix", p);
        }
        if self.delete90 {
            t.switch("--delete90");
        }
        if let Some(b) = self.assoc {
            t.flag("--assoc", b);
        }
        match (&self.read_file, self.twitter_trace) {
            (Some(f), 0) => t.flag("--read-file", f),
            (Some(f), _) => {
                t.flag("--trace", f);
                t.flag("--trace-format", "twitter");
                t.flag("--trace-timing", "ignore");
            }
            (None, 0) => {}
            (None, _) => {
                return Err(PersonalityError::Refused(
                    "--twitter_trace needs --read_file FILE",
                ))
            }
        }
        if self.misswindow > 0 {
            t.flag("--miss-window", self.misswindow);
        }
        c.finish(&mut t, Tool::Mutilate);
        Ok(t)
    }
}

impl Common {
    /// The flags both tools share. `profile`: a --profile sets the
    /// workload, so only what was typed is passed over it.
    pub(super) fn translate(
        &self,
        unix: bool,
        keys: Keys,
        queries: u64,
    ) -> Result<Translation, PersonalityError> {
        let mut t = Translation::new("run");
        if self.search.is_some() && self.scan.is_some() {
            return Err(PersonalityError::Refused(
                "--search and --scan exclude each other",
            ));
        }
        if let Some(s) = &self.search {
            t.command = "search";
            t.flag("--slo", s);
            t.note("--search: mcbench's search (bracket, bisect, confirm; its probes on stderr), then the table of the answer's run");
        }
        if let Some(s) = &self.scan {
            // mutilate's step: a preload (unless --noload), -w's warm-up
            // (none unless given), then -t.
            t.command = "scan";
            t.flag("--rates", s);
            if self.warmup.is_none() {
                t.flag("--warmup", "0s");
            }
            if !self.noload {
                t.switch("--load-every-rate");
            }
        }
        let servers = self.servers(&mut t, unix)?;
        // Each connection's server takes any key: mutilate places none.
        t.flag("--distribution", "none");
        if !matches!(keys, Keys::KeyFile | Keys::Twitter) {
            // Keys carry no prefix in mutilate or memcache-perf.
            t.flag("--key-prefix", "");
        }
        let threads = self.threads.unwrap_or(1);
        t.flag("--threads", threads);
        let per_server = self.per_server(threads, servers, &mut t)?;
        let (connections, rate) =
            self.agents(&mut t, threads, per_server, self.qps.unwrap_or(0))?;
        if keys != Keys::Profile || self.connections.is_some() || !self.agent.is_empty() {
            t.flag("--connections", connections);
        }
        t.flag("--depth", self.depth.unwrap_or(1));
        let defaults = keys == Keys::Generated;
        for (flag, given, default) in [
            ("--key-size", &self.keysize, "30"),
            ("--value-size", &self.valuesize, "200"),
            ("--arrival", &self.iadist, "exponential"),
        ] {
            match given {
                // mutilate's normal is its own (`mutilate_normal`).
                Some(v) if flag != "--arrival" => {
                    t.flag(flag, super::values::mutilate_normal(v).unwrap_or(v.clone()))
                }
                Some(v) => t.flag(flag, v),
                None if defaults => t.flag(flag, default),
                None => {}
            }
        }
        self.records(&mut t, keys, servers)?;
        // -u is 0 unless given: a profile sets no mix, and a key file's
        // lines without an op take the mix's; a Twitter trace names its own.
        match (self.update, keys) {
            (Some(u), _) => t.flag("--update", u),
            (None, Keys::Twitter) => {}
            (None, _) => t.flag("--update", 0),
        }
        if rate > 0 {
            t.flag("--rate", rate);
        }
        self.stop(&mut t, queries)?;
        Ok(t)
    }

    /// `-r`: mutilate divides the records by the servers, and every
    /// server's connections walk (and the preload puts) keys 0..r/servers
    /// on it. A key file or trace brings its own keys.
    fn records(
        &self,
        t: &mut Translation,
        keys: Keys,
        servers: usize,
    ) -> Result<(), PersonalityError> {
        if matches!(keys, Keys::KeyFile | Keys::Twitter) {
            if let Some(r) = self.records {
                t.flag("--keys", r);
            }
            return Ok(());
        }
        let records = self.records.unwrap_or(10_000);
        let each = records / servers.max(1) as u64;
        if each == 0 {
            return Err(PersonalityError::Invalid(format!(
                "-r/--records {records} over {servers} servers leaves none on each"
            )));
        }
        if self.records.is_some() || servers > 1 {
            t.flag("--keys", each);
        }
        Ok(())
    }

    /// mcbench's connections per server: mutilate's -c per server per
    /// thread, or with -R per thread of its one server.
    fn per_server(
        &self,
        threads: usize,
        servers: usize,
        t: &mut Translation,
    ) -> Result<usize, PersonalityError> {
        let per_thread = self.connections.unwrap_or(1);
        let threads_per_server = if self.roundrobin && servers > 1 {
            if !threads.is_multiple_of(servers) {
                t.note(format!(
                    "-R with {threads} threads on {servers} servers: each server gets the connections of {} threads (mcbench gives every server the same)",
                    threads.div_ceil(servers)
                ));
            }
            threads.div_ceil(servers)
        } else {
            threads
        };
        per_thread
            .checked_mul(threads_per_server)
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                PersonalityError::Invalid(format!(
                    "-c {per_thread} with -T {threads}: no connections, or too many"
                ))
            })
    }

    /// -s, each HOST[:PORT[-END]] (memcache-perf's port ranges), or paths;
    /// how many servers that makes.
    fn servers(&self, t: &mut Translation, unix: bool) -> Result<usize, PersonalityError> {
        if self.server.is_empty() {
            return Err(PersonalityError::Refused(
                "a server must be specified: -s HOST[:PORT]",
            ));
        }
        let mut n = 0;
        for s in &self.server {
            if unix {
                t.flag("--server", format!("unix:{s}"));
                n += 1;
                continue;
            }
            for one in expand_ports(s)? {
                t.flag("--server", one);
                n += 1;
            }
        }
        Ok(n)
    }

    /// -t, -N and --mcbench-duration: time and queries both bound a run.
    fn stop(&self, t: &mut Translation, queries: u64) -> Result<(), PersonalityError> {
        let time = std::time::Duration::from_secs(self.time.unwrap_or(5));
        if time.is_zero() {
            return Err(PersonalityError::Refused("-t/--time must be at least 1 s"));
        }
        let cap = self.extras.duration.map_or(time, |d| d.min(time));
        if queries > 0 {
            t.flag("--ops", queries);
            t.flag("--time-limit", format!("{}s", cap.as_secs_f64()));
        } else {
            // A run, or each probe of a search or scan, runs -t long.
            t.flag("--duration", format!("{}s", cap.as_secs_f64()));
        }
        Ok(())
    }

    /// The rest of the shared flags, and the layout.
    pub(super) fn finish(&self, t: &mut Translation, tool: Tool) {
        if self.roundrobin {
            t.switch("--roundrobin");
        }
        if self.skip {
            t.switch("--skip");
        }
        if self.moderate {
            t.switch("--moderate");
        }
        if self.noload {
            t.switch("--no-load");
        } else if tool == Tool::Mutilate && self.agent.is_empty() && self.threads.unwrap_or(1) > 1 {
            // Each of mutilate's threads preloads the whole key space.
            t.switch("--load-each-thread");
        }
        if self.loadonly {
            t.switch("--load-only");
        }
        if self.binary {
            t.switch("--binary");
        }
        if self.no_nodelay {
            t.switch("--no-nodelay");
        }
        if self.affinity {
            t.switch("--affinity");
        }
        if !self.blocking {
            t.switch("--busy-poll");
        }
        if let Some(w) = self.warmup {
            t.flag("--warmup", format!("{w}s"));
        }
        if let Some(w) = self.wait {
            t.flag("--wait", format!("{w}s"));
        }
        if let Some(u) = &self.username {
            t.flag("--user", u);
        }
        if let Some(p) = &self.password {
            t.flag("--password", p);
        }
        if let Some(s) = &self.save {
            t.flag("--save", s);
            t.note("--save writes mcbench's samples (docs/samples.md), not 'start latency' lines");
        }
        if self.verbose > 0 || self.quiet {
            t.note("-v/--verbose and --quiet have no effect: mcbench logs only errors");
        }
        // The duration cap is in stop(), with -t and -N.
        t.native.extend(self.extras.outputs());
        t.presenter = Some(Box::new(super::mutilate_out::Table::new(tool, self.skip)));
    }
}

/// `host`, `host:port` or memcache-perf's `host:port-end`, as servers.
fn expand_ports(s: &str) -> Result<Vec<String>, PersonalityError> {
    let full = super::values::with_port(s, 11211);
    let Some((host, ports)) = full.rsplit_once(':') else {
        return Ok(vec![full]);
    };
    let Some((a, b)) = ports.split_once('-') else {
        return Ok(vec![full]);
    };
    let bad = || PersonalityError::Invalid(format!("-s {s}: expected HOST[:PORT[-END_PORT]]"));
    let a: u16 = a.parse().map_err(|_| bad())?;
    let b: u16 = b.parse().map_err(|_| bad())?;
    if b < a {
        return Err(bad());
    }
    Ok((a..=b).map(|p| format!("{host}:{p}")).collect())
}

#[cfg(test)]
mod tests {
    use super::expand_ports;

    #[test]
    fn servers_and_memcache_perf_port_ranges() {
        assert_eq!(expand_ports("localhost").unwrap(), ["localhost:11211"]);
        assert_eq!(expand_ports("h:7").unwrap(), ["h:7"]);
        assert_eq!(expand_ports("h:7-9").unwrap(), ["h:7", "h:8", "h:9"]);
        assert_eq!(expand_ports("::1").unwrap(), ["[::1]:11211"]);
        assert_eq!(expand_ports("[::1]:7-8").unwrap(), ["[::1]:7", "[::1]:8"]);
        assert!(expand_ports("h:9-7").is_err());
        assert!(expand_ports("h:x-7").is_err());
    }
}
