//! What an agent will run. A share is checked as `run` checks a spec
//! (`RunSpec::validate`), then against this agent's own limits, which fit
//! one machine unless its owner raised them. An agent never touches a
//! path on its machine named by a master: a share that names one (a
//! trace, a unix socket) is refused, as is anything else a master never
//! sends (a measurement group of its own).

use super::AgentError;
use crate::spec::{RunSpec, StopAfter};
use std::time::Duration;

/// The most an agent runs for one share (`mcbench agent --max-*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Keys in the share's key space (its preload's size).
    pub keys: u64,
    /// Sockets the share opens, over every server.
    pub connections: usize,
    /// Requests per second (an open loop's rate).
    pub rate: f64,
    /// Warm-up and measured time; a share bounded by requests is cut by it.
    pub duration: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            keys: 100_000_000,
            connections: 10_000,
            rate: 10_000_000.0,
            duration: Duration::from_secs(24 * 3600),
        }
    }
}

/// The share the agent will run: `spec` checked, with a time limit of
/// `limits.duration` when nothing else bounds its time. Refused with the
/// reason (the master shows it) otherwise.
pub fn admit(mut spec: RunSpec, limits: &Limits) -> Result<RunSpec, AgentError> {
    spec.validate()?;
    if spec.trace.is_some() {
        return Err(AgentError::Refused(
            "this agent reads no file a master names: a share with a trace is refused",
        ));
    }
    if let Some(server) = spec.target.servers.iter().find(|s| s.is_unix()) {
        return Err(AgentError::UnixSocket(server.to_string()));
    }
    if spec.measure.is_some() {
        return Err(AgentError::Refused(
            "a share never carries a measurement group: that is the master's own",
        ));
    }
    let over = |what, given, flag, limit| {
        Err(AgentError::OverLimit {
            what,
            given,
            flag,
            limit,
        })
    };
    if spec.key_space.keys > limits.keys {
        return over(
            "keys",
            spec.key_space.keys.to_string(),
            "--max-keys",
            limits.keys.to_string(),
        );
    }
    let sockets = spec.total_connections(spec.target.servers.len());
    if sockets > limits.connections {
        let limit = limits.connections.to_string();
        return over(
            "connections",
            sockets.to_string(),
            "--max-connections",
            limit,
        );
    }
    if let Some(rate) = spec.rate().filter(|r| *r > limits.rate) {
        let limit = format!("{}/s", limits.rate);
        return over("requests", format!("{rate}/s"), "--max-rate", limit);
    }
    let time = match spec.load.stop {
        StopAfter::Duration(d) => Some(d),
        _ => spec.load.time_limit,
    };
    if let Some(total) = time
        .map(|t| t + spec.load.warmup)
        .filter(|t| *t > limits.duration)
    {
        let limit = format!("{:?}", limits.duration);
        return over("of running", format!("{total:?}"), "--max-duration", limit);
    }
    if time.is_none() {
        spec.load.time_limit = Some(limits.duration.saturating_sub(spec.load.warmup));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RunSpec {
        crate::cli::run_spec(&["-s", "10.0.0.1:11211", "-t", "10s"])
    }

    #[test]
    fn shares_past_the_limits_or_naming_paths_are_refused() {
        let limits = Limits::default();
        assert!(admit(spec(), &limits).is_ok());
        let mut s = spec();
        s.key_space.keys = 1 << 62;
        let e = admit(s, &limits).unwrap_err();
        assert!(
            matches!(
                e,
                AgentError::OverLimit {
                    flag: "--max-keys",
                    ..
                }
            ),
            "{e}"
        );
        let mut s = spec();
        s.target.servers = vec!["unix:/var/run/docker.sock".parse().unwrap()];
        assert!(admit(s, &limits)
            .unwrap_err()
            .to_string()
            .contains("unix socket"));
        let mut s = spec();
        s.load.stop = StopAfter::Duration(Duration::from_secs(90_000));
        assert!(admit(s, &limits)
            .unwrap_err()
            .to_string()
            .contains("--max-duration"));
        let mut s = spec();
        s.load.schedule = crate::spec::Schedule::Open(s.load.schedule.at_rate(1e9));
        assert!(admit(s, &limits)
            .unwrap_err()
            .to_string()
            .contains("--max-rate"));
        // A share bounded by requests is bounded in time too.
        let mut s = spec();
        s.load.stop = StopAfter::Ops(10);
        assert_eq!(
            admit(s, &limits).unwrap().load.time_limit,
            Some(limits.duration)
        );
    }
}
