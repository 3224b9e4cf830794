//! The master's side: agents checked, their clocks measured, their shares
//! prepared, one start, their streams read, their results merged.

use super::collect;
use super::pb;
use super::pb::agent_client::AgentClient;
use super::server::{KEEPALIVE, KEEPALIVE_TIMEOUT};
use super::tls::ClientTls;
use super::unix_ns;
use super::{share, token, PROTOCOL_VERSION};
use crate::error::Failure;
use crate::result::RunResult;
use crate::spec::RunSpec;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

pub(super) type Client = AgentClient<InterceptedService<Channel, token::Attach>>;

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
/// How long Hello and each Ping may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// A clock further off than this is refused (an agent waits at most 60 s
/// for its start).
const MAX_OFFSET: Duration = Duration::from_secs(30);
/// The largest message the master takes: a whole result.
const MAX_MESSAGE: usize = 256 << 20;

/// A request that fails after `CALL_TIMEOUT`.
fn timed<T>(message: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.set_timeout(CALL_TIMEOUT);
    r
}
/// How long connecting to an agent may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One agent as the master knows it.
pub(super) struct Agent {
    pub name: String,
    pub client: Client,
    pub seat: share::Seat,
    /// Agent clock − master clock, ns (at the least-delayed ping).
    pub offset_ns: i64,
    pub rtt_ns: i64,
}

/// How the master reaches its agents (`run`'s agent flags).
pub struct Control<'a> {
    /// `--agent`, in order.
    pub addrs: &'a [String],
    pub token_file: &'a Path,
    pub loss: AgentLoss,
    /// `--agent-tls-ca` and `--agent-tls-domain`.
    pub tls_ca: Option<&'a Path>,
    pub tls_domain: Option<String>,
    /// The percentiles of live lines (`-i`).
    pub percentiles: Vec<f64>,
    /// `--metrics-listen`: where the merged intervals, and each agent's,
    /// are served.
    pub telemetry: Option<crate::telemetry::Sink>,
}

/// Runs `spec` on the agents and returns the merged result, with a row
/// per agent. Usage errors (a wrong token, another protocol version, a
/// share that makes no run) come before any traffic.
pub fn run_with_agents(
    spec: &RunSpec,
    control: &Control,
    stop: &Arc<AtomicUsize>,
) -> Result<RunResult, Failure> {
    // The agents would read the key material named off their own disks,
    // or need it sent: neither is done yet.
    if spec.target.tls.is_some() {
        return Err(Failure::usage(
            "--tls with --agent: the agents cannot reach the servers over TLS yet; run without --agent, or without --tls",
        ));
    }
    let token = token::read(control.token_file).map_err(Failure::usage)?;
    let attach = token::Attach::new(&token).map_err(Failure::usage)?;
    let tls = control
        .tls_ca
        .map(|ca| ClientTls::read(ca, control.tls_domain.clone()))
        .transpose()
        .map_err(Failure::usage)?;
    if spec.target.password.is_some() && tls.is_none() {
        return Err(Failure::usage(
            "--user/--password with --agent: the password goes to the agents only over TLS; give --agent-tls-ca (and the agents --tls-cert/--tls-key)",
        ));
    }
    let addrs = addresses(control.addrs)?;
    // What the shares and the probe need of the run, checked before any
    // agent is called.
    let even = share::Seat {
        weight: 1,
        threads: 0,
    };
    share::shares(spec, &vec![even; addrs.len()]).map_err(Failure::usage)?;
    if let Some(group) = spec.measure {
        collect::probe_spec(spec, group)?;
    }
    let rt = super::runtime().map_err(Failure::run)?;
    rt.block_on(async {
        let stopped = collect::watch_signal(stop.clone());
        let setup = async {
            let mut agents = Vec::new();
            for addr in &addrs {
                agents.push(enlist(addr, attach.clone(), tls.as_ref()).await?);
            }
            let seats: Vec<share::Seat> = agents.iter().map(|a| a.seat).collect();
            let shares = share::shares(spec, &seats).map_err(Failure::usage)?;
            prepare(&mut agents, &shares).await?;
            Ok::<_, Failure>(agents)
        };
        let mut signal = stopped.clone();
        let agents = tokio::select! {
            agents = setup => agents?,
            _ = signal.wait_for(|s| *s) => return Ok(collect::stopped_before_start(spec, stop)),
        };
        collect::run_all(&agents, spec, stop, stopped, control).await
    })
}

/// `--agent`s as HOST:PORT (mcbench agent's port when none is given),
/// each once: an agent runs one share at a time.
fn addresses(given: &[String]) -> Result<Vec<String>, Failure> {
    let mut out: Vec<String> = Vec::new();
    for a in given {
        let addr = crate::spec::with_default_port(a, super::DEFAULT_PORT);
        if out.contains(&addr) {
            return Err(Failure::usage(format!(
                "--agent {addr} is given twice: an agent runs one share at a time; start another agent"
            )));
        }
        out.push(addr);
    }
    Ok(out)
}

/// Connects, checks the version and measures the clock offset.
async fn enlist(
    addr: &str,
    attach: token::Attach,
    tls: Option<&ClientTls>,
) -> Result<Agent, Failure> {
    let channel = connect(addr, tls).await?;
    // A whole result (histograms of every op) may exceed gRPC's 4 MB.
    let mut client =
        AgentClient::with_interceptor(channel, attach).max_decoding_message_size(MAX_MESSAGE);
    let hello = client
        .hello(timed(pb::HelloRequest {
            protocol_version: PROTOCOL_VERSION,
        }))
        .await
        .map_err(|s| match s.code() {
            tonic::Code::Unauthenticated => refusal(addr, &s),
            _ => Failure::run(format!(
                "agent {addr}: {} (an agent serving TLS needs this master's --agent-tls-ca, and one without TLS needs none)",
                super::vet::shown(s.message())
            )),
        })?
        .into_inner();
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(Failure::usage(format!(
            "agent {addr} speaks protocol {} (mcbench {}), this master {PROTOCOL_VERSION}: run the same mcbench on both",
            hello.protocol_version,
            super::vet::shown(&hello.mcbench_version)
        )));
    }
    let (offset_ns, rtt_ns) = clock_offset(&mut client, addr).await?;
    crate::stderr_line!(
        "mcbench: agent {addr} ({}, {} CPUs, weight {}): clock offset {:+.3} ms, round trip {:.3} ms",
        super::vet::shown(&hello.hostname),
        hello.cpus,
        hello.weight,
        offset_ns as f64 / 1e6,
        rtt_ns as f64 / 1e6
    );
    Ok(Agent {
        name: addr.to_string(),
        client,
        seat: share::Seat {
            weight: u64::from(hello.weight.max(1)),
            threads: hello.threads as usize,
        },
        offset_ns,
        rtt_ns,
    })
}

/// A channel to the agent at `addr`, over TLS with `tls`.
async fn connect(addr: &str, tls: Option<&ClientTls>) -> Result<Channel, Failure> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))
        .map_err(|e| Failure::usage(format!("--agent {addr}: {e}")))?
        .connect_timeout(CONNECT_TIMEOUT)
        .http2_keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    if let Some(tls) = tls {
        endpoint = endpoint
            .tls_config(tls.config(addr))
            .map_err(|e| Failure::usage(format!("--agent-tls-ca: {e}")))?;
    }
    endpoint
        .connect()
        .await
        .map_err(|e| Failure::run(format!("agent {addr}: cannot connect: {}", chain(&e))))
}

/// The agent's wall clock less this one's, from the fastest of `PINGS`
/// round trips, and that round trip, ns. An offset over `MAX_OFFSET` is
/// refused.
async fn clock_offset(client: &mut Client, addr: &str) -> Result<(i64, i64), Failure> {
    let (mut offset_ns, mut rtt_ns) = (0, i64::MAX);
    for _ in 0..PINGS {
        // The round trip on the monotonic clock; the midpoint on the wall
        // clock, which the agent's reading is compared with.
        let sent = std::time::Instant::now();
        let t0 = unix_ns();
        let reply = client
            .ping(timed(pb::PingRequest {}))
            .await
            .map_err(|s| refusal(addr, &s))?
            .into_inner();
        let rtt = sent.elapsed().as_nanos().min(i64::MAX as u128) as i64;
        if rtt < rtt_ns {
            rtt_ns = rtt;
            offset_ns = reply
                .agent_unix_ns
                .saturating_sub(t0.saturating_add(rtt / 2));
        }
    }
    if offset_ns.unsigned_abs() > MAX_OFFSET.as_nanos() as u64 {
        return Err(Failure::run(format!(
            "agent {addr}'s clock is {:.1} s off this one's: synchronise the clocks (NTP) first",
            offset_ns as f64 / 1e9
        )));
    }
    Ok((offset_ns, rtt_ns))
}

/// An agent's refusal in words: a wrong token is a usage error.
fn refusal(addr: &str, s: &tonic::Status) -> Failure {
    match s.code() {
        tonic::Code::Unauthenticated => Failure::usage(format!(
            "agent {addr} refused the token: give the agent's --token-file"
        )),
        _ => Failure::run(format!("agent {addr}: {}", super::vet::shown(s.message()))),
    }
}

/// The slowest preload an agent may take: this many sets a second, plus
/// `PREPARE_SLACK`. An agent that accepted Prepare and went silent is
/// given up on then, not held for ever.
const PREPARE_MIN_RATE: f64 = 10_000.0;
const PREPARE_SLACK: Duration = Duration::from_secs(10);

/// How long an agent's Prepare of `spec` may take.
fn prepare_patience(spec: &RunSpec) -> Duration {
    let preload = match spec.key_space.preload {
        crate::spec::LoadMode::NoLoad => 0.0,
        _ => spec.key_space.keys as f64 / PREPARE_MIN_RATE,
    };
    PREPARE_SLACK + Duration::from_secs_f64(preload.min(86_400.0))
}

/// Every agent checks (and preloads) its share; all before any starts.
async fn prepare(agents: &mut [Agent], shares: &[RunSpec]) -> Result<(), Failure> {
    let mut tasks = Vec::new();
    for (a, spec) in agents.iter().zip(shares) {
        let mut client = a.client.clone();
        let name = a.name.clone();
        let json = serde_json::to_string(spec).map_err(|e| Failure::run(e.to_string()))?;
        let password = spec.target.password.clone().unwrap_or_default();
        let mut request = tonic::Request::new(pb::PrepareRequest {
            spec_json: json,
            name: name.clone(),
            password,
        });
        request.set_timeout(prepare_patience(spec));
        tasks.push(tokio::spawn(async move {
            client.prepare(request).await.map_err(|s| match s.code() {
                tonic::Code::InvalidArgument => {
                    let why = super::vet::shown(s.message());
                    Failure::usage(format!("agent {name} refused its share: {why}"))
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

/// An error with its causes: tonic's own message is only "transport
/// error"; the cause says refused, timed out or a certificate's fault.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}
