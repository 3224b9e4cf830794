//! mutilate's and memcache-perf's agent mode on mcbench's agents: `-A`
//! serves (`mcbench agent`), `-a HOST` drives agents (`run --agent`), and
//! `-C/-Q/-D` are the master's own probe connections (with no agent, as
//! in mutilate, `-C` replaces `-c`'s count at `-c`'s rate per connection,
//! and `-Q` and `-D` do nothing).

use super::mutilate::Common;
use super::values::with_port;
use super::{PersonalityError, Translation};
use std::path::PathBuf;

/// The token every agent and master shares. mutilate has none: the file
/// named by `MCBENCH_TOKEN_FILE`, else `~/.config/mcbench/agent-token`.
fn token_file() -> Result<String, PersonalityError> {
    if let Some(p) = std::env::var_os("MCBENCH_TOKEN_FILE") {
        return Ok(p.to_string_lossy().into_owned());
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let p = home.join(".config/mcbench/agent-token");
    if p.exists() {
        return Ok(p.display().to_string());
    }
    Err(PersonalityError::NoToken(p))
}

/// mutilate's agent port (`mcbench agent` listens on the same by default).
const MUTILATE_AGENT_PORT: u16 = 5556;

/// The probe connections a master keeps: per server, rate, depth.
struct Probe {
    connections: usize,
    rate: f64,
    depth: usize,
}

impl Common {
    fn port(&self) -> Result<u16, PersonalityError> {
        match &self.agent_port {
            None => Ok(MUTILATE_AGENT_PORT),
            Some(p) => p.parse().map_err(|_| {
                PersonalityError::Invalid(format!("-p/--agent_port must be a port number, got {p}"))
            }),
        }
    }

    /// `-A`: serve as an agent, on every interface as mutilate's agent
    /// does, weighted as mutilate weighs one (threads × `-l`).
    pub(super) fn agent(&self) -> Result<Translation, PersonalityError> {
        let mut t = Translation::new("agent");
        if !self.agent.is_empty() {
            return Err(PersonalityError::Refused(
                "-A and -a exclude each other: an agent enlists no agents",
            ));
        }
        t.flag("--listen", format!("0.0.0.0:{}", self.port()?));
        // mutilate's agent serves plain text on every interface; its
        // command line means the same, and says so.
        t.switch("--insecure-plaintext");
        t.flag("--token-file", token_file()?);
        let threads = self.threads.unwrap_or(1);
        t.flag("--threads", threads);
        let weight = threads as u64 * u64::from(self.lambda_mul.unwrap_or(1));
        t.flag("--lambda-mul", weight);
        // The agent refuses --metrics-hold itself, with its reason.
        t.native.extend(self.extras.telemetry());
        t.note("-A listens on every interface in plain text, as mutilate's agent does (--insecure-plaintext); each call must carry the shared token");
        if !self.server.is_empty() || self.qps.is_some() || self.connections.is_some() {
            t.note("-s, -q and -c have no effect on an agent: the master sends the workload");
        }
        let unused = self.extras.unused_by_an_agent();
        if !unused.is_empty() {
            t.note(format!(
                "{} {} no effect on an agent: the master writes the results and ends the run",
                unused.join(", "),
                if unused.len() == 1 { "has" } else { "have" }
            ));
        }
        Ok(t)
    }

    /// The master's side: its agents, and the load connections and rate
    /// left to them once the master's probe takes its own. `per_server`
    /// is `-c` × `-T` per server; `rate` is `-q` (0: closed loop). Without
    /// agents, as in mutilate (whose `-Q` and `-D` only share the load
    /// with agents): `-C` connections each at `-q`'s rate per `-c`
    /// connection.
    pub(super) fn agents(
        &self,
        t: &mut Translation,
        threads: usize,
        per_server: usize,
        rate: u64,
    ) -> Result<(usize, u64), PersonalityError> {
        if self.lambda_mul.is_some() {
            return Err(PersonalityError::Refused(
                "-l/--lambda_mul weighs an agent: give it with -A on that agent",
            ));
        }
        if self.agent.is_empty() {
            if self.agent_port.is_some() {
                t.note("-p has no effect without -A or -a");
            }
            let conns = self.measure_connections.map_or(per_server, |c| c * threads);
            if self.measure_qps.is_some() || self.measure_depth.is_some() {
                t.note(
                    "-Q and -D have no effect without agents, as in mutilate: it reads them \
                     only to share -q with its agents",
                );
            }
            // mutilate's per-connection rate is -q over -c's connections.
            let rate = (rate as u128 * conns as u128 / per_server.max(1) as u128) as u64;
            return Ok((conns, rate));
        }
        let port = self.port()?;
        for a in &self.agent {
            t.flag("--agent", with_port(a, port));
        }
        t.flag("--token-file", token_file()?);
        // Each agent opens -c per server on each of the master's -T
        // threads (mutilate: on each of the agent's own).
        let load = per_server * self.agent.len();
        let (rate, probe) = self.probe(threads, per_server, load, rate)?;
        match probe {
            Some(p) => {
                t.flag("--measure-connections", p.connections);
                t.flag("--measure-rate", format!("{:.3}", p.rate));
                t.flag("--measure-depth", p.depth);
            }
            None => t.note(
                "the master opens no connections of its own without -C/-Q/-D: \
                 its latency is every agent's, merged",
            ),
        }
        Ok((load, rate))
    }

    /// The agents' rate and the master's probe (with -C, -Q or -D), as
    /// mutilate shares -q: -Q is the master's and the rest the agents';
    /// without -Q the master takes its connections' share.
    fn probe(
        &self,
        threads: usize,
        per_server: usize,
        load: usize,
        rate: u64,
    ) -> Result<(u64, Option<Probe>), PersonalityError> {
        if self.measure_connections.is_none()
            && self.measure_qps.is_none()
            && self.measure_depth.is_none()
        {
            return Ok((rate, None));
        }
        let connections = self.measure_connections.map_or(per_server, |c| c * threads);
        let depth = self.measure_depth.or(self.depth).unwrap_or(1);
        let (probe_rate, agents_rate) = match self.measure_qps {
            Some(q) if rate > 0 && q >= rate => {
                return Err(PersonalityError::Invalid(format!(
                    "-Q {q} leaves nothing of -q {rate} to the agents: give -q above -Q"
                )))
            }
            Some(q) => (q as f64, rate.saturating_sub(q)),
            None if rate == 0 => {
                return Err(PersonalityError::Refused("-C or -D without -Q on a closed-loop run: the master's probe connections keep a rate; give -Q"))
            }
            None => {
                let share = rate as f64 * connections as f64 / (connections + load) as f64;
                (share, rate - share.round() as u64)
            }
        };
        Ok((
            agents_rate,
            Some(Probe {
                connections,
                rate: probe_rate,
                depth,
            }),
        ))
    }
}
