//! Planning a run's workers: each one's connections, share of the rate,
//! of `--ops` and of the key space, its CPU, and its share of a trace.

use super::{trace_feed, EngineError, WorkerPlan};
use crate::net::connect;
use crate::os;
use crate::spec::{LoadMode, RunSpec, StopAfter};
use crate::workload::KeySpace;
use std::ops::Range;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Shares connections, rate, `--ops` and the keys to preload among workers.
pub(super) fn plan_workers(
    spec: &RunSpec,
    keys: &KeySpace,
    conns: Vec<connect::Opened>,
    nservers: usize,
) -> Vec<WorkerPlan> {
    let t = spec.load.threads;
    let cpus = worker_cpus(spec);
    let mut plans: Vec<WorkerPlan> = (0..t)
        .map(|i| WorkerPlan {
            index: i,
            conns: Vec::new(),
            lanes: Vec::new(),
            rate: None,
            quota: match spec.load.stop {
                StopAfter::Ops(_) if spec.trace.is_some() => None,
                StopAfter::Ops(n) => Some(share(n, t, i)),
                StopAfter::Duration(_) | StopAfter::Schedule | StopAfter::TraceEnd => None,
            },
            load: Vec::new(),
            cpu: cpus.as_ref().map(|c| c[i % c.len()]),
            depth: spec.load.depth,
            trace: None,
            deletes: Vec::new(),
            coalesce_ns: spec.coalesce().as_nanos() as u64,
        })
        .collect();
    let total_conns = conns.len();
    let mut owner = connect::Owners::new(spec, nservers);
    for (i, conn) in conns.into_iter().enumerate() {
        let plan = &mut plans[owner.worker_of(i, conn.server)];
        plan.conns.push(conn);
        plan.lanes.push(i);
    }
    // Each worker's share of the rate follows its share of the connections,
    // so that every server gets the same share of the run's rate.
    for plan in &mut plans {
        plan.rate = spec
            .rate()
            .map(|r| r * plan.conns.len() as f64 / total_conns.max(1) as f64);
    }
    let placed = spec.places_keys(nservers);
    if spec.key_space.preload != LoadMode::NoLoad && spec.key_space.window.is_none() {
        let shares = match spec.key_space.load_each_thread {
            true => whole_key_space(&plans_conns(&plans), keys, placed, nservers),
            false => key_shares(&plans_conns(&plans), keys, placed, nservers),
        };
        for (plan, share) in plans.iter_mut().zip(shares) {
            plan.load = share;
        }
    }
    if spec.workload.delete90 {
        // Deleted by the workers that send queries (their halfway point
        // starts the deletes).
        let mut servers = plans_conns(&plans);
        for (w, plan) in plans.iter().enumerate() {
            if plan.quota == Some(0) {
                servers[w].clear();
            }
        }
        for (plan, share) in plans
            .iter_mut()
            .zip(key_shares(&servers, keys, placed, nservers))
        {
            plan.deletes = share;
        }
    }
    plans
}

/// Per worker: the servers of its connections.
fn plans_conns(plans: &[WorkerPlan]) -> Vec<Vec<usize>> {
    plans
        .iter()
        .map(|p| p.conns.iter().map(|o| o.server).collect())
        .collect()
}

/// `--affinity`'s CPUs, worker `i` taking the `i mod len`-th: the list
/// given, or every CPU this process may use.
fn worker_cpus(spec: &RunSpec) -> Option<Vec<usize>> {
    spec.load.affinity.as_ref().map(|list| {
        if list.is_empty() {
            os::allowed_cpus()
        } else {
            list.clone()
        }
    })
}

/// The measurement group's worker, numbered after the load's: its own
/// connections (`--measure-connections` per server), rate and depth, and
/// nothing to preload. Its lanes follow every lane of the load workers.
pub(super) fn plan_measure(
    spec: &RunSpec,
    addrs: &[crate::net::Target],
    stop: &std::sync::atomic::AtomicUsize,
) -> Result<Option<WorkerPlan>, crate::net::NetError> {
    let Some(m) = spec.measure else {
        return Ok(None);
    };
    let mut group = spec.clone();
    group.load.connections = m.connections;
    let conns = connect::connect_all(addrs, &group, stop)?.conns;
    let nservers = addrs.len();
    let first_lane = spec.total_connections(nservers) + (spec.load.threads + 1) * nservers;
    let cpu = worker_cpus(spec).map(|cpus| cpus[spec.load.threads % cpus.len()]);
    Ok(Some(WorkerPlan {
        index: spec.load.threads,
        lanes: (first_lane..first_lane + conns.len()).collect(),
        conns,
        rate: Some(m.rate),
        quota: None,
        load: Vec::new(),
        cpu,
        depth: m.depth,
        trace: None,
        deletes: Vec::new(),
        // The measurement group's few probes keep their exact schedule.
        coalesce_ns: 0,
    }))
}

/// Each worker's share of the key space, for the preload and
/// `--delete90`: keys placed on several servers are cut among the workers
/// (each has a socket to every server); otherwise every server gets every
/// key, cut among the workers connected to it. `servers[w]` are worker
/// `w`'s connections' servers.
fn key_shares(
    servers: &[Vec<usize>],
    keys: &KeySpace,
    placed: bool,
    nservers: usize,
) -> Vec<Vec<(Option<usize>, Range<u64>)>> {
    let ids = keys.ids();
    let shares = |n: usize| {
        split(ids.end - ids.start, n)
            .into_iter()
            .map(|r| r.start + ids.start..r.end + ids.start)
    };
    let mut out = vec![Vec::new(); servers.len()];
    if placed {
        let owners: Vec<usize> = (0..servers.len())
            .filter(|&w| !servers[w].is_empty())
            .collect();
        for (k, range) in shares(owners.len()).enumerate() {
            out[owners[k]].push((None, range));
        }
        return out;
    }
    for s in 0..nservers {
        let owners: Vec<usize> = (0..servers.len())
            .filter(|&w| servers[w].contains(&s))
            .collect();
        for (k, range) in shares(owners.len()).enumerate() {
            out[owners[k]].push((Some(s), range));
        }
    }
    out
}

/// `--load-each-thread`: every worker with connections loads every key
/// of each of its servers (all of them, where keys are placed).
fn whole_key_space(
    servers: &[Vec<usize>],
    keys: &KeySpace,
    placed: bool,
    nservers: usize,
) -> Vec<Vec<(Option<usize>, Range<u64>)>> {
    let ids = keys.ids();
    servers
        .iter()
        .map(|mine| match (placed, mine.is_empty()) {
            (_, true) => Vec::new(),
            (true, false) => vec![(None, ids.clone())],
            (false, false) => (0..nservers)
                .filter(|s| mine.contains(s))
                .map(|s| (Some(s), ids.clone()))
                .collect(),
        })
        .collect()
}

/// Part `i` of `n` shared by `parts` as evenly as whole numbers allow (the
/// first `n % parts` get one more).
pub fn share(n: u64, parts: usize, i: usize) -> u64 {
    let parts = parts.max(1) as u64;
    n / parts + u64::from((i as u64) < n % parts)
}

/// `n` items cut into `parts` contiguous ranges of near-equal size.
fn split(n: u64, parts: usize) -> Vec<Range<u64>> {
    let parts = parts.max(1) as u64;
    (0..parts)
        .map(|p| (n * p / parts)..(n * (p + 1) / parts))
        .collect()
}

/// `--trace`: starts the reader and gives each load worker its share.
pub(super) fn start_feed(
    spec: &RunSpec,
    plans: &mut [WorkerPlan],
    stop: Arc<AtomicUsize>,
) -> Result<Option<std::thread::JoinHandle<trace_feed::FeedReport>>, EngineError> {
    let Some(t) = &spec.trace else {
        return Ok(None);
    };
    let workers = spec.load.threads;
    // The worker of each lane (a lane is a connection's number in the run).
    let client_lanes = t.clients.then(|| {
        let lanes = plans[..workers].iter().map(|p| p.lanes.len()).sum();
        let mut owner = vec![0; lanes];
        for (w, plan) in plans[..workers].iter().enumerate() {
            for &lane in &plan.lanes {
                owner[lane] = w;
            }
        }
        owner
    });
    let plan = trace_feed::FeedPlan {
        path: t.path.clone(),
        format: t.format,
        speed: spec.load.schedule.trace_speed(),
        client_lanes,
        workers,
        max_value: u32::try_from(spec.key_space.max_value_size).unwrap_or(u32::MAX),
        bounded: spec.load.time_limit.is_some(),
        // The feed counts `--ops` (workers' shares would not match what
        // each is handed).
        limit: match spec.load.stop {
            StopAfter::Ops(n) => Some(n),
            _ => None,
        },
    };
    let (rxs, handle) = trace_feed::spawn(plan, stop)?;
    for (plan, rx) in plans.iter_mut().zip(rxs) {
        plan.trace = Some(rx);
    }
    Ok(Some(handle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_everything_once() {
        for (n, parts) in [(10, 3), (0, 2), (7, 7), (5, 8)] {
            let ranges = split(n, parts);
            assert_eq!(ranges.len(), parts);
            assert_eq!(ranges.iter().map(|r| r.end - r.start).sum::<u64>(), n);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        }
    }
}
