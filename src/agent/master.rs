//! The master's side: agents checked, their clocks measured, their shares
//! prepared, one start, their streams read, their results merged.

use super::pb::agent_client::AgentClient;
use super::pb::{self, run_event};
use super::{share, token, PROTOCOL_VERSION};
use crate::error::Failure;
use crate::result::{AgentSummary, RunResult};
use crate::spec::RunSpec;
use crate::warnings::Warning;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

type Client = AgentClient<InterceptedService<Channel, token::Attach>>;

/// What a lost agent does to the run (`--on-agent-loss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentLoss {
    /// The run fails (exit 1), with what every agent sent kept.
    Fail,
    /// The others go on; the result says which agent was lost and when.
    Continue,
}

/// Pings per agent; the one with the shortest round trip gives the offset.
const PINGS: usize = 8;
/// How long connecting to an agent may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One agent as the master knows it.
struct Agent {
    name: String,
    client: Client,
    weight: u64,
    /// Agent clock − master clock, ns (at the least-delayed ping).
    offset_ns: i64,
    rtt_ns: i64,
}

/// How an agent's part ended.
enum Part {
    Done(Box<RunResult>),
    /// Lost `at_s` seconds after the start, for `why`.
    Lost {
        at_s: f64,
        why: String,
    },
}

/// Runs `spec` on `addrs`' agents and returns the merged result, with a
/// row per agent. Usage errors (a wrong token, another protocol version,
/// a share that makes no run) come before any traffic.
pub fn run_with_agents(
    spec: &RunSpec,
    addrs: &[String],
    token_file: &Path,
    loss: AgentLoss,
    stop: &Arc<AtomicUsize>,
) -> Result<RunResult, Failure> {
    let token = token::read(token_file).map_err(Failure::usage)?;
    let attach = token::Attach::new(&token).map_err(Failure::usage)?;
    // What the shares need of the run, checked before any agent is called.
    share::shares(spec, &vec![1; addrs.len()]).map_err(Failure::usage)?;
    let rt = super::runtime().map_err(Failure::run)?;
    rt.block_on(async {
        let mut agents = Vec::new();
        for addr in addrs {
            agents.push(enlist(addr, attach.clone()).await?);
        }
        let weights: Vec<u64> = agents.iter().map(|a| a.weight).collect();
        let shares = share::shares(spec, &weights).map_err(Failure::usage)?;
        prepare(&mut agents, &shares).await?;
        let parts = run_all(&agents, spec, stop).await;
        merge(spec, &agents, parts, loss)
    })
}

fn unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Connects, checks the version and measures the clock offset.
async fn enlist(addr: &str, attach: token::Attach) -> Result<Agent, Failure> {
    let url = format!("http://{addr}");
    let channel = Endpoint::from_shared(url)
        .map_err(|e| Failure::usage(format!("--agent {addr}: {e}")))?
        .connect_timeout(CONNECT_TIMEOUT)
        .connect()
        .await
        .map_err(|e| Failure::run(format!("agent {addr}: cannot connect: {e}")))?;
    let mut client = AgentClient::with_interceptor(channel, attach);
    let hello = client
        .hello(pb::HelloRequest {
            protocol_version: PROTOCOL_VERSION,
        })
        .await
        .map_err(|s| refusal(addr, &s))?
        .into_inner();
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(Failure::usage(format!(
            "agent {addr} speaks protocol {} (mcbench {}), this master {PROTOCOL_VERSION}: run the same mcbench on both",
            hello.protocol_version, hello.mcbench_version
        )));
    }
    let (mut offset_ns, mut rtt_ns) = (0, i64::MAX);
    for _ in 0..PINGS {
        let t0 = unix_ns();
        let reply = client
            .ping(pb::PingRequest {})
            .await
            .map_err(|s| refusal(addr, &s))?
            .into_inner();
        let t1 = unix_ns();
        if t1 - t0 < rtt_ns {
            rtt_ns = t1 - t0;
            offset_ns = reply.agent_unix_ns - (t0 + (t1 - t0) / 2);
        }
    }
    eprintln!(
        "mcbench: agent {addr} ({}, {} CPUs, weight {}): clock offset {:+.3} ms, round trip {:.3} ms",
        hello.hostname,
        hello.cpus,
        hello.weight,
        offset_ns as f64 / 1e6,
        rtt_ns as f64 / 1e6
    );
    Ok(Agent {
        name: addr.to_string(),
        client,
        weight: u64::from(hello.weight.max(1)),
        offset_ns,
        rtt_ns,
    })
}

/// An agent's refusal in words: a wrong token is a usage error.
fn refusal(addr: &str, s: &tonic::Status) -> Failure {
    match s.code() {
        tonic::Code::Unauthenticated => Failure::usage(format!(
            "agent {addr} refused the token: give the agent's --token-file"
        )),
        _ => Failure::run(format!("agent {addr}: {}", s.message())),
    }
}

/// Every agent checks (and preloads) its share; all before any starts.
async fn prepare(agents: &mut [Agent], shares: &[RunSpec]) -> Result<(), Failure> {
    let mut tasks = Vec::new();
    for (a, spec) in agents.iter().zip(shares) {
        let mut client = a.client.clone();
        let name = a.name.clone();
        let json = serde_json::to_string(spec).map_err(|e| Failure::run(e.to_string()))?;
        tasks.push(tokio::spawn(async move {
            client
                .prepare(pb::PrepareRequest {
                    spec_json: json,
                    name: name.clone(),
                })
                .await
                .map_err(|s| match s.code() {
                    tonic::Code::InvalidArgument => {
                        Failure::usage(format!("agent {name} refused its share: {}", s.message()))
                    }
                    _ => refusal(&name, &s),
                })
        }));
    }
    for t in tasks {
        t.await.map_err(|e| Failure::run(e.to_string()))??;
    }
    Ok(())
}

/// Starts every agent at one instant and reads their streams.
async fn run_all(agents: &[Agent], spec: &RunSpec, stop: &Arc<AtomicUsize>) -> Vec<Part> {
    let slowest = agents.iter().map(|a| a.rtt_ns).max().unwrap_or(0);
    let start = unix_ns() + 300_000_000 + 4 * slowest;
    let started = Instant::now();
    let patience = spec.interval * 3 + spec.timeout + Duration::from_secs(10);
    let first = Duration::from_nanos((start - unix_ns()).max(0) as u64) + spec.warmup + patience;
    let mut tasks = Vec::new();
    for a in agents {
        let mut client = a.client.clone();
        let at = start + a.offset_ns;
        let stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            let lost = |why: String| Part::Lost {
                at_s: started.elapsed().as_secs_f64(),
                why,
            };
            let mut stream = match client.run(pb::RunRequest { start_unix_ns: at }).await {
                Ok(r) => r.into_inner(),
                Err(s) => return lost(s.message().to_string()),
            };
            let mut wait = first;
            loop {
                if stop.load(Ordering::Relaxed) != 0 {
                    return lost("the master was stopped by a signal".into());
                }
                match tokio::time::timeout(wait, stream.message()).await {
                    Err(_) => return lost(format!("nothing for {wait:?}")),
                    Ok(Err(s)) => return lost(s.message().to_string()),
                    Ok(Ok(None)) => return lost("its stream ended without a result".into()),
                    Ok(Ok(Some(ev))) => match ev.event {
                        Some(run_event::Event::Final(f)) => {
                            return match serde_json::from_str::<RunResult>(&f.result_json) {
                                Ok(r) => Part::Done(Box::new(r)),
                                Err(e) => lost(format!("its result does not parse: {e}")),
                            }
                        }
                        Some(run_event::Event::Interval(_)) | None => wait = patience,
                    },
                }
            }
        }));
    }
    let mut parts = Vec::new();
    for t in tasks {
        parts.push(t.await.unwrap_or_else(|e| Part::Lost {
            at_s: started.elapsed().as_secs_f64(),
            why: e.to_string(),
        }));
    }
    parts
}

/// The agents' results as one, with a row per agent.
fn merge(
    spec: &RunSpec,
    agents: &[Agent],
    parts: Vec<Part>,
    loss: AgentLoss,
) -> Result<RunResult, Failure> {
    let mut rows = Vec::new();
    let mut done = Vec::new();
    let mut lost = Vec::new();
    for (a, part) in agents.iter().zip(parts) {
        match part {
            Part::Done(r) => {
                rows.push(AgentSummary::of(&a.name, a.offset_ns, a.rtt_ns, &r));
                done.push(*r);
            }
            Part::Lost { at_s, why } => {
                rows.push(AgentSummary::lost(
                    &a.name,
                    a.offset_ns,
                    a.rtt_ns,
                    at_s,
                    &why,
                ));
                lost.push(Warning::AgentLost {
                    agent: a.name.clone(),
                    at_s,
                    why,
                });
            }
        }
    }
    if done.is_empty() {
        let why: Vec<String> = lost.iter().map(ToString::to_string).collect();
        return Err(Failure::run(format!(
            "every agent was lost: {}",
            why.join("; ")
        )));
    }
    let mut merged = crate::result::merge(&done).map_err(Failure::run)?;
    merged.spec = spec.clone();
    merged.agents = rows;
    if !lost.is_empty() {
        merged.completed = false;
        if loss == AgentLoss::Fail {
            let why: Vec<String> = lost.iter().map(ToString::to_string).collect();
            merged.failure = Some(why.join("; "));
        }
        merged.warnings.extend(lost);
    }
    Ok(merged)
}
