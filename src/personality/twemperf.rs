//! `mcbench mcperf`: twemperf's mcperf flags (its README and `-h`), with
//! its defaults: one connection of one `set` call, 1-byte values, keys
//! prefixed `mcp:`, 4 KB send and 16 KB receive buffers, no preload.

use super::values::twemperf_sizes;
use super::{Extras, PersonalityError, Tool, ToolCommand, Translation};
use clap::Args;

/// twemperf's methods (`-m`), each one of mcbench's op types.
const METHODS: [&str; 11] = [
    "get", "gets", "delete", "cas", "set", "add", "replace", "append", "prepend", "incr", "decr",
];

/// Most distinct keys: 2×this fits twemperf's 8 hex digits.
const MAX_KEYS: u64 = 0x7fff_ffff;

/// twemperf's flags.
#[derive(Debug, Args)]
pub struct TwemperfArgs {
    /// Logging level 0..11. mcbench: no effect (it logs only errors).
    #[arg(short = 'v', long = "verbosity", value_name = "N")]
    verbosity: Option<u8>,
    /// Logging file. mcbench: no effect (the statistics go to stderr, as
    /// twemperf's do; mcbench logs only errors).
    #[arg(short = 'o', long = "output", value_name = "S")]
    output: Option<String>,
    /// The server's host name.
    #[arg(
        short = 's',
        long = "server",
        default_value = "localhost",
        value_name = "S"
    )]
    server: String,
    /// The server's port.
    #[arg(short = 'p', long = "port", default_value_t = 11211, value_name = "N")]
    port: u16,
    /// Print the response-time histogram (1 ms bins).
    #[arg(short = 'H', long = "print-histogram")]
    print_histogram: bool,
    /// Connection and response timeout, s [default: 0.0: none]. mcbench:
    /// 0 keeps mcbench's 5 s, which ends a run whose server stopped.
    #[arg(short = 't', long = "timeout", value_name = "X")]
    timeout: Option<f64>,
    /// SO_LINGER timeout on close, s [default: off].
    #[arg(short = 'l', long = "linger", value_name = "N")]
    linger: Option<u32>,
    /// Socket send buffer, bytes.
    #[arg(
        short = 'b',
        long = "send-buffer",
        default_value_t = 4096,
        value_name = "N"
    )]
    send_buffer: u32,
    /// Socket receive buffer, bytes.
    #[arg(
        short = 'B',
        long = "recv-buffer",
        default_value_t = 16384,
        value_name = "N"
    )]
    recv_buffer: u32,
    /// Disable TCP_NODELAY.
    #[arg(short = 'D', long = "disable-nodelay")]
    disable_nodelay: bool,
    /// The request method: get, gets, delete, cas, set, add, replace,
    /// append, prepend, incr, decr.
    #[arg(short = 'm', long = "method", default_value = "set", value_name = "M")]
    method: String,
    /// Expiry of generated requests, s.
    #[arg(short = 'e', long = "expiry", default_value_t = 0, value_name = "N")]
    expiry: u32,
    /// Send requests with noreply. As twemperf's, a call follows the last
    /// once it is written; mcbench writes up to 64 at a time with one
    /// `version` after them, which tells them done (and times them), so
    /// its rate is bound by the server, twemperf's by one write per call.
    #[arg(short = 'q', long = "use-noreply")]
    use_noreply: bool,
    /// Prefix of generated keys.
    #[arg(short = 'P', long = "prefix", default_value = "mcp:", value_name = "S")]
    prefix: String,
    /// This instance is I of N. As twemperf's, every instance writes the
    /// same keys; I seeds the size draws (mcbench `--seed I+1`).
    #[arg(
        short = 'c',
        long = "client",
        default_value = "0/1",
        value_name = "I/N"
    )]
    client: String,
    /// Connections to create.
    #[arg(short = 'n', long = "num-conns", default_value_t = 1, value_name = "N")]
    num_conns: u64,
    /// Calls (requests) on each connection.
    #[arg(short = 'N', long = "num-calls", default_value_t = 1, value_name = "N")]
    num_calls: u64,
    /// Connection creation rate, [D]R1[,R2] (0: each after the previous
    /// closes).
    #[arg(short = 'r', long = "conn-rate", default_value = "0", value_name = "R")]
    conn_rate: String,
    /// Call rate on a connection, [D]R1[,R2] (0: each after the previous
    /// answer). At 0 mcbench busy-polls, as twemperf's event loop spins
    /// (a full core): sleeping between answers would halve the rate.
    #[arg(short = 'R', long = "call-rate", default_value = "0", value_name = "R")]
    call_rate: String,
    /// Item sizes, [D]R1[,R2]: d fixed, u uniform over [R1,R2), e
    /// exponential with mean R1.
    #[arg(short = 'z', long = "sizes", default_value = "d1", value_name = "R")]
    sizes: String,
    /// Show the version and exit.
    #[arg(short = 'V', long = "version", action = clap::ArgAction::Version)]
    version: (),
    /// This help.
    #[arg(short = 'h', long = "help", short_alias = '?', action = clap::ArgAction::Help)]
    help: (),
    #[command(flatten)]
    extras: Extras,
}

impl ToolCommand for TwemperfArgs {
    fn command(tool: Tool, cmd: clap::Command) -> clap::Command {
        cmd.name(tool.name())
            .about("twemperf's mcperf command line, run by mcbench (see `mcbench --help`)")
            .long_about(
                "twemperf's mcperf command line, run by mcbench's engine. The statistics \
                 print on stderr in mcperf's layout, from mcbench's measurements: \
                 percentiles are exact (mcperf rounds them to 1 ms bins, never below 1.0, \
                 and its p75 is the 70th), and the response-time stddev is in ms (mcperf \
                 prints seconds). memcache-perf, whose binary is also called mcperf, is \
                 `mcbench memcache-perf`.",
            )
            .version(env!("CARGO_PKG_VERSION"))
            .disable_version_flag(true)
            // getopt keeps a repeated flag's last value.
            .args_override_self(true)
            .disable_help_flag(true)
    }
}

/// memcache-perf's binary is also `mcperf`. Its flags that twemperf lacks
/// (`-T` threads, `-A` agent mode, `--loadonly`, ...), or its `-s
/// host:port`, say which tool the user meant: the hint, if they do.
pub fn memcache_perf_hint(args: &[std::ffi::OsString]) -> Option<String> {
    const THEIRS: [&str; 10] = [
        "-T",
        "--threads",
        "-A",
        "--agentmode",
        "--loadonly",
        "--noload",
        "--qps",
        "--depth",
        "--records",
        "--profile",
    ];
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let flag = |a: &str| {
        THEIRS
            .iter()
            .any(|f| a == *f || a.starts_with(&format!("{f}=")))
    };
    let server = args
        .windows(2)
        .any(|w| ["-s", "--server"].contains(&w[0].as_str()) && host_and_port(&w[1]));
    (args.iter().skip(1).any(|a| flag(a)) || server).then(|| {
        "hint: these are memcache-perf's flags (its binary is also called mcperf): \
         `mcbench memcache-perf` runs memcache-perf's command lines; `mcbench mcperf` is \
         twemperf's"
            .to_string()
    })
}

/// `host:port`, memcache-perf's `-s` (an IPv6 address has more colons).
fn host_and_port(server: &str) -> bool {
    matches!(server.split_once(':'), Some((host, port))
        if !host.is_empty() && !port.contains(':') && port.parse::<u16>().is_ok())
}

impl TwemperfArgs {
    pub fn translate(self) -> Result<Translation, PersonalityError> {
        if host_and_port(&self.server) {
            return Err(PersonalityError::Invalid(format!(
                "-s/--server takes a host, and -p/--port its port: '{}' is memcache-perf's \
                 host:port (its binary is also called mcperf; `mcbench memcache-perf` runs its \
                 command lines)",
                self.server
            )));
        }
        let mut t = Translation::new("run");
        t.flag(
            "--server",
            super::values::host_port(&self.server, self.port),
        );
        let method = self.method(&mut t)?;
        t.switch("--no-load");
        t.flag("--threads", 1);
        t.flag("--num-conns", self.num_conns);
        t.flag("--num-calls", self.num_calls);
        t.flag("--conn-rate", &self.conn_rate);
        t.flag("--call-rate", &self.call_rate);
        if self.call_rate.trim() == "0" {
            t.switch("--busy-poll");
        }
        self.sizes(&mut t, &method)?;
        self.keys(&mut t)?;
        self.sockets(&mut t)?;
        if self.verbosity.is_some() {
            t.note("-v/--verbosity has no effect: mcbench logs only errors");
        }
        if self.output.is_some() {
            t.note("-o/--output has no effect: mcbench logs only errors, and the statistics go to stderr as mcperf's do");
        }
        t.native.extend(self.extras.native());
        t.presenter = Some(Box::new(super::twemperf_out::Twemperf {
            histogram: self.print_histogram,
        }));
        Ok(t)
    }

    /// `-m`: the one command every call sends, lowercased.
    fn method(&self, t: &mut Translation) -> Result<String, PersonalityError> {
        let method = self.method.to_ascii_lowercase();
        if !METHODS.contains(&method.as_str()) {
            return Err(PersonalityError::Invalid(format!(
                "-m/--method '{}' is not one of {}",
                self.method,
                METHODS.join(", ")
            )));
        }
        t.flag("--mix", format!("{method}=1"));
        if method == "cas" {
            // twemperf's cas goes alone, with unique 1.
            t.flag("--cas-unique", 1);
        }
        Ok(method)
    }

    /// `-z`: the value sizes (for incr/decr, the amount).
    fn sizes(&self, t: &mut Translation, method: &str) -> Result<(), PersonalityError> {
        let sizes = twemperf_sizes(&self.sizes)?;
        if matches!(method, "incr" | "decr") {
            // twemperf sends the drawn size as the amount (`incr k N`).
            let delta: u64 = sizes.parse().map_err(|_| {
                PersonalityError::Invalid(format!(
                    "-z/--sizes '{}' with -m {method}: twemperf sends each size as the amount; \
                     mcbench's amount is one number: give -z dN",
                    self.sizes
                ))
            })?;
            t.flag("--delta", delta);
        }
        t.flag("--value-size", sizes);
        Ok(())
    }

    /// twemperf's keys, and `--client`'s seed.
    fn keys(&self, t: &mut Translation) -> Result<(), PersonalityError> {
        // twemperf's keys: the prefix and 8 hex digits of an id that
        // counts up from 1 with each call.
        t.flag("--key-prefix", &self.prefix);
        t.flag("--key-digits", "hex");
        t.flag("--first-key", 1);
        t.flag("--key-size", self.prefix.len() + 8);
        t.flag("--key-popularity", "sequential");
        let calls = self.num_conns.saturating_mul(self.num_calls);
        t.flag("--keys", calls.clamp(1, MAX_KEYS));
        // twemperf's instance id only seeds its draws: every instance
        // writes the same keys.
        let client: crate::workload::ClientSlice = self.client.parse()?;
        if client.index > 0 {
            t.flag("--seed", client.index + 1);
        }
        Ok(())
    }

    /// The requests' expiry and noreply, the sockets' options and the
    /// timeout.
    fn sockets(&self, t: &mut Translation) -> Result<(), PersonalityError> {
        t.flag("--expiry", self.expiry);
        t.flag("--send-buffer", self.send_buffer);
        t.flag("--recv-buffer", self.recv_buffer);
        if let Some(l) = self.linger {
            t.flag("--linger", l);
        }
        if self.disable_nodelay {
            t.switch("--no-nodelay");
        }
        if self.use_noreply {
            t.switch("--noreply");
        }
        match self.timeout {
            Some(x) if x > 0.0 && x.is_finite() => t.flag("--timeout", format!("{x}s")),
            Some(0.0) => t.note(
                "-t/--timeout 0 (none) keeps mcbench's 5 s: a request unanswered that long \
                 fails as client-timo",
            ),
            Some(x) => {
                return Err(PersonalityError::Invalid(format!(
                    "-t/--timeout must be 0 or more seconds, got {x}"
                )))
            }
            None => {}
        }
        Ok(())
    }
}
