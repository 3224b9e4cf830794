//! `mcbench memaslap`: libmemcached's memaslap flags (memaslap(1)), with
//! the defaults its code uses (1 thread, concurrency 16, 600 s, window
//! 10k, 64 B keys, 1024 B values, get/set 9:1).

use super::values::{memaslap_size, memaslap_time, proportion, with_port};
use super::{refused, Extras, PersonalityError, Tool, ToolCommand, Translation};
use clap::Args;
use std::time::Duration;

/// memaslap's flags, as its man page lists them.
#[derive(Debug, Args)]
pub struct MemaslapArgs {
    /// List one or more servers, comma-separated (HOST:PORT). Default:
    /// $MEMCACHED_SERVERS. mcbench: the concurrencies are shared equally
    /// among the servers (memaslap gives thread i server i mod N, and
    /// servers beyond the threads none).
    #[arg(short = 's', long = "servers", value_name = "SERVERS")]
    servers: Option<String>,
    /// Number of threads.
    #[arg(short = 'T', long = "threads", default_value_t = 1)]
    threads: usize,
    /// Number of concurrencies (connections, one request each in flight).
    #[arg(short = 'c', long = "concurrency", default_value_t = 16)]
    concurrency: usize,
    /// TCP sockets per concurrency. mcbench: only with -a
    /// (the facebook test's TCP sockets).
    #[arg(short = 'n', long = "conn_sock", default_value_t = 1)]
    conn_sock: usize,
    /// Number of operations to execute (K, M suffixes); given, it wins
    /// over --time, as in memaslap.
    #[arg(short = 'x', long = "execute_number", value_parser = memaslap_size)]
    execute_number: Option<u64>,
    /// How long the test runs: s, m, h, d (2m) [default: 600s].
    #[arg(short = 't', long = "time", value_parser = memaslap_time)]
    time: Option<Duration>,
    /// Configuration file of key, value and command distributions.
    /// Without it: ~/.memslap.cnf when it exists (memaslap's code's name;
    /// its man page says ~/.memaslap.cnf, also read), else the defaults.
    #[arg(short = 'F', long = "cfg_cmd", value_name = "FILE")]
    cfg_cmd: Option<String>,
    /// Task window of each concurrency, K or M suffix [default: 10k].
    #[arg(short = 'w', long = "win_size", value_parser = memaslap_size)]
    win_size: Option<u64>,
    /// Fixed value length, bytes (overrides the config file's values).
    #[arg(short = 'X', long = "fixed_size")]
    fixed_size: Option<u64>,
    /// Proportion of gets whose value is verified (0.01).
    #[arg(short = 'v', long = "verify", value_parser = proportion)]
    verify: Option<f64>,
    /// Keys per multi-get.
    #[arg(short = 'd', long = "division", default_value_t = 1)]
    division: usize,
    /// Dump statistics every period: s or m (20s). Also prints the final
    /// per-command statistics with their Log2 distribution.
    #[arg(short = 'S', long = "stat_freq", value_parser = memaslap_time)]
    stat_freq: Option<Duration>,
    /// Proportion of objects set with an expire time, verified (0.01).
    #[arg(short = 'e', long = "exp_verify", value_parser = proportion)]
    exp_verify: Option<f64>,
    /// Proportion of sets that overwrite an object of the window.
    #[arg(short = 'o', long = "overwrite", value_parser = proportion)]
    overwrite: Option<f64>,
    /// Reconnect lost connections.
    #[arg(short = 'R', long = "reconnect")]
    reconnect: bool,
    /// UDP instead of TCP (same port).
    #[arg(short = 'U', long = "udp")]
    udp: bool,
    /// Facebook test: sets over TCP, multi-gets over UDP. mcbench
    /// refuses a multi-get whose request outgrows one 1,400-byte datagram
    /// (memaslap sends one larger datagram, which a 1,500-byte network
    /// fragments).
    #[arg(short = 'a', long = "facebook")]
    facebook: bool,
    /// Binary protocol.
    #[arg(short = 'B', long = "binary")]
    binary: bool,
    /// Expected throughput, K or M suffix (10k). No effect, as in
    /// memaslap (its throttle's integer division is always 0); for a held
    /// rate, `mcbench run --rate`.
    #[arg(short = 'P', long = "tps", value_parser = memaslap_size)]
    tps: Option<u64>,
    /// The first N servers take the writes; each read goes to any server,
    /// in turn (memaslap draws one), over the task window as usual.
    #[arg(short = 'p', long = "rep_write")]
    rep_write: Option<usize>,
    /// Print details when a verification fails.
    #[arg(short = 'b', long = "verbose")]
    verbose: bool,
    /// Print the version and exit.
    #[arg(short = 'V', long = "version", action = clap::ArgAction::Version)]
    version: (),
    #[command(flatten)]
    extras: Extras,
}

impl ToolCommand for MemaslapArgs {
    fn command(tool: Tool, cmd: clap::Command) -> clap::Command {
        cmd.name(tool.name())
            .about("memaslap's command line, run by mcbench (see `mcbench --help`)")
            .long_about(
                "memaslap's command line, run by mcbench's engine: latency from each \
                 request's intended send, errors apart from throughput. Output in \
                 memaslap's layout; the numbers are mcbench's measurements.",
            )
            .version(env!("CARGO_PKG_VERSION"))
            .disable_version_flag(true)
            // getopt keeps a repeated flag's last value.
            .args_override_self(true)
    }
}

/// memaslap's default configuration (its `DEFAULT_CONGIF_STR`).
const DEFAULTS: [&str; 6] = [
    "--key-size",
    "64",
    "--value-size",
    "1024",
    "--mix",
    "get=90,set=10",
];

impl MemaslapArgs {
    pub fn translate(self) -> Result<Translation, PersonalityError> {
        let mut t = Translation::new("run");
        let (raw, servers) = self.server_list()?;
        t.flag("--server", servers.join(","));
        // Each concurrency is bound to one server, which takes any key
        // (memaslap places none); the replication test places them.
        if self.rep_write.is_none() {
            t.flag("--distribution", "none");
        }
        t.flag("--threads", self.threads);
        if self.concurrency == 0 || !self.concurrency.is_multiple_of(self.threads) {
            return Err(PersonalityError::Invalid(format!(
                "-c/--concurrency ({}) must be a multiple of -T/--threads ({})",
                self.concurrency, self.threads
            )));
        }
        t.flag("--connections", self.per_server(servers.len())?);
        match (self.execute_number, self.time) {
            (Some(n), _) => t.flag("--ops", n),
            (None, t_) => t.flag(
                "--duration",
                format!("{}s", t_.unwrap_or(DEFAULT_TIME).as_secs()),
            ),
        }
        t.native.extend(DEFAULTS.iter().map(|s| s.to_string()));
        // memaslap's default set:get, as it prints them.
        let mut proportions = (0.1, 0.9);
        if let Some(path) = self.config_file() {
            let text = crate::untrusted::read_text(
                std::path::Path::new(&path),
                crate::untrusted::Bound::Config,
                "a memaslap configuration",
            )
            .map_err(PersonalityError::ConfigFile)?;
            let reading = crate::config::Reading::AsMemaslap;
            let cfg = crate::config::memaslap_flags(&text, &path, reading)?;
            t.native.extend(cfg.args);
            proportions = cfg.proportions.unwrap_or(proportions);
            for line in cfg.skipped {
                t.note(line);
            }
        }
        if let Some(x) = self.fixed_size {
            t.flag("--value-size", x);
        }
        let window = self.win_size.unwrap_or(10 * 1024);
        if window == 0 || !window.is_multiple_of(1024) {
            return Err(PersonalityError::Invalid(format!(
                "-w/--win_size must be a multiple of 1024 (1k, 10k), got {window}"
            )));
        }
        t.flag("--window", window);
        self.checks_and_modes(&mut t)?;
        if let Some(freq) = self.stat_freq {
            t.flag("--interval", format!("{}s", freq.as_secs()));
        }
        t.native.extend(self.extras.native());
        t.presenter = Some(Box::new(super::memaslap_out::Memaslap::new(
            super::memaslap_out::Header {
                servers: raw,
                threads: self.threads,
                concurrency: self.concurrency,
                run_time: self
                    .execute_number
                    .is_none()
                    .then(|| self.time.unwrap_or(DEFAULT_TIME)),
                execute_number: self.execute_number,
                window,
                proportions,
            },
            self.stat_freq,
            self.extras.json.as_deref() == Some(std::path::Path::new("-")),
        )));
        Ok(t)
    }

    /// `-s`, else `MEMCACHED_SERVERS`; one at least.
    fn server_list(&self) -> Result<(String, Vec<String>), PersonalityError> {
        let text = match &self.servers {
            Some(s) => s.clone(),
            None => std::env::var("MEMCACHED_SERVERS").unwrap_or_default(),
        };
        let list: Vec<String> = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| with_port(s, 11211))
            .collect();
        if list.is_empty() {
            return Err(PersonalityError::Refused(
                "No servers provided: give -s/--servers or MEMCACHED_SERVERS",
            ));
        }
        Ok((text, list))
    }

    /// mcbench's connections per server for memaslap's concurrency: each
    /// concurrency has one server, or every server with --rep_write.
    fn per_server(&self, servers: usize) -> Result<usize, PersonalityError> {
        if self.rep_write.is_some() {
            return Ok(self.concurrency);
        }
        if !self.concurrency.is_multiple_of(servers) {
            return Err(PersonalityError::Invalid(format!(
                "-c/--concurrency ({}) must be a multiple of the {servers} servers: \
                 mcbench gives each server the same connections",
                self.concurrency
            )));
        }
        Ok(self.concurrency / servers)
    }

    fn config_file(&self) -> Option<String> {
        if let Some(p) = &self.cfg_cmd {
            return Some(p.clone());
        }
        let home = std::env::var("HOME").ok()?;
        [".memslap.cnf", ".memaslap.cnf"]
            .iter()
            .map(|name| format!("{home}/{name}"))
            .find(|p| std::path::Path::new(p).is_file())
    }

    /// Verification, multi-get, the transports and the replication test.
    fn checks_and_modes(&self, t: &mut Translation) -> Result<(), PersonalityError> {
        if let Some(v) = self.verify {
            t.flag("--verify", v);
        }
        if let Some(e) = self.exp_verify {
            t.flag("--exp-verify", e);
            // memaslap's FIXED_EXPIRE_TIME.
            t.flag("--exp-verify-ttl", 60);
        }
        if let Some(o) = self.overwrite {
            t.flag("--overwrite", o);
        }
        if self.verbose {
            t.switch("--verbose");
        }
        if self.division > 1 {
            t.flag("--multiget", self.division);
            per_key_mix(&mut t.native, self.division);
        } else if self.division == 0 {
            return Err(PersonalityError::Refused(
                "-d/--division must be at least 1",
            ));
        }
        if self.reconnect {
            t.switch("--reconnect");
        }
        if self.udp {
            t.switch("--udp");
        }
        if self.binary {
            t.switch("--binary");
        }
        if self.facebook {
            t.switch("--facebook");
            t.flag("--conn-sock", self.conn_sock);
        } else if self.conn_sock != 1 {
            return Err(refused(
                "-n/--conn_sock without -a/--facebook",
                "each concurrency would keep one request in flight over N sockets; \
                 give -c N times larger for N times the connections",
            ));
        }
        if let Some(n) = self.rep_write {
            // memaslap sends no replication-lag probes of its own; its
            // reads go to any server, the key's writer included.
            t.flag("--rep-write", n);
            t.flag("--rep-lag-rate", 0);
            t.flag("--rep-read", "any");
        }
        if let Some(tps) = self.tps {
            t.note(format!(
                "-P/--tps {tps} has no effect, as in memaslap: its throttle divides operations \
                 by microseconds in whole numbers, always 0 (for a held rate: mcbench run --rate)"
            ));
        }
        Ok(())
    }
}

const DEFAULT_TIME: Duration = Duration::from_secs(600);

/// memaslap keeps its get:set proportion per key: a get of `keys` keys
/// counts `keys` gets (its `get_opt`), so with `-d 20` and 9:1 it sends
/// about 2.2 sets per multi-get. mcbench's mix is per request: the last
/// `--mix` of `native` gets its get weight divided by `keys`.
fn per_key_mix(native: &mut [String], keys: usize) {
    let Some(at) = native.iter().rposition(|a| a == "--mix") else {
        return;
    };
    let Some(mix) = native.get_mut(at + 1) else {
        return;
    };
    let rows: Vec<String> = mix
        .split(',')
        .map(|row| match row.split_once('=') {
            Some(("get", w)) => match w.parse::<f64>() {
                Ok(w) => format!("get={}", w / keys as f64),
                Err(_) => row.to_string(),
            },
            _ => row.to_string(),
        })
        .collect();
    *mix = rows.join(",");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_gets_keys_count_in_the_proportion() {
        let mut native: Vec<String> = ["--mix", "get=90,set=10", "--mix", "set=0.1,get=0.9"]
            .map(String::from)
            .to_vec();
        per_key_mix(&mut native, 20);
        assert_eq!(native[1], "get=90,set=10");
        assert_eq!(native[3], "set=0.1,get=0.045");
    }
}
