//! Each agent's share of one run: its connections, rate, requests and a
//! key slice of its own, in proportion to its weight (`--lambda-mul`).
//! The workload itself (mix, sizes, servers, duration) is the whole run's.

use super::AgentError;
use crate::spec::{RunSpec, Schedule, StopAfter};
use crate::workload::ClientSlice;

/// `total` shared by `weights`, each part rounded down and the rest
/// handed out one by one from the first: the parts add up to `total`.
fn weighted(total: u64, weights: &[u64], i: usize) -> u64 {
    let sum: u64 = weights.iter().sum::<u64>().max(1);
    let floors: Vec<u64> = weights
        .iter()
        .map(|w| (u128::from(total) * u128::from(*w) / u128::from(sum)) as u64)
        .collect();
    let rest = total - floors.iter().sum::<u64>();
    floors[i] + u64::from((i as u64) < rest)
}

/// What an agent says of itself when it enlists.
#[derive(Debug, Clone, Copy)]
pub struct Seat {
    /// Its `--lambda-mul`.
    pub weight: u64,
    /// Its `--threads`; 0: the master's.
    pub threads: usize,
}

/// The specs of `seats.len()` agents, in order. Refused (a usage error,
/// before any traffic) when a share would be empty.
pub fn shares(spec: &RunSpec, seats: &[Seat]) -> Result<Vec<RunSpec>, AgentError> {
    let weights: Vec<u64> = seats.iter().map(|s| s.weight).collect();
    let n = weights.len();
    if spec.target.servers.is_empty() {
        return Err(AgentError::Refused(
            "--agent needs --server: agents cannot reach a memcached the master starts",
        ));
    }
    if spec.trace.is_some() {
        return Err(AgentError::Refused("--trace and --read-file with --agent are not supported: one file cannot be split among agents yet"));
    }
    if (spec.load.connections as u64) < n as u64 {
        return Err(AgentError::FewConnections {
            connections: spec.load.connections,
            agents: n,
        });
    }
    (0..n)
        .map(|i| one(spec, &weights, seats[i].threads, i))
        .collect()
}

fn one(spec: &RunSpec, weights: &[u64], threads: usize, i: usize) -> Result<RunSpec, AgentError> {
    let n = weights.len();
    let sum: u64 = weights.iter().sum::<u64>().max(1);
    let mut s = spec.clone();
    s.load.connections = weighted(spec.load.connections as u64, weights, i) as usize;
    let threads = if threads == 0 {
        spec.load.threads
    } else {
        threads
    };
    s.load.threads = threads.min(s.load.connections).max(1);
    if let Some(rate) = spec.rate() {
        let mine = rate * weights[i] as f64 / sum as f64;
        s.load.schedule = Schedule::Open(spec.load.schedule.at_rate(mine));
    }
    // The measurement group is the master's own (its probe connections).
    s.measure = None;
    // The master judges precision over every agent's intervals merged,
    // and tells each agent when it is enough: a share alone would judge
    // its part.
    s.load.precision.clear();
    s.load.decide = None;
    if let StopAfter::Ops(ops) = spec.load.stop {
        let mine = weighted(ops, weights, i);
        if mine == 0 {
            return Err(AgentError::FewOps { ops, agents: n });
        }
        s.load.stop = StopAfter::Ops(mine);
    }
    if let Schedule::Churn(c) = &mut s.load.schedule {
        c.conns = weighted(c.conns, weights, i).max(1);
    }
    // Disjoint keys: agent i takes slice i of each of the run's slices.
    s.key_space.client = ClientSlice {
        index: spec.key_space.client.index * n as u64 + i as u64,
        of: spec.key_space.client.of * n as u64,
    };
    // Different random draws (gaps, keys) on every agent.
    s.workload.seed = spec
        .workload
        .seed
        .wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // Its descriptors are the agent's to check, not this host's.
    s.validate_plan().map_err(|source| AgentError::Share {
        agent: i + 1,
        source,
    })?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::weighted;

    #[test]
    fn weighted_shares_add_up() {
        for (total, weights) in [
            (10, vec![1, 1, 1]),
            (7, vec![2, 1]),
            (1000, vec![3, 5, 1, 1]),
        ] {
            let parts: Vec<u64> = (0..weights.len())
                .map(|i| weighted(total, &weights, i))
                .collect();
            assert_eq!(parts.iter().sum::<u64>(), total, "{parts:?}");
        }
        assert_eq!(weighted(10, &[2, 1, 1, 1], 0), 4);
        assert_eq!(weighted(9, &[1, 1, 1], 2), 3);
    }
}
