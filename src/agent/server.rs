//! `mcbench agent`: serves the control plane, runs the engine on the share
//! a master hands it, and streams what it measures back.

use super::pb::agent_server::{Agent, AgentServer};
use super::pb::{self, run_event, RunEvent};
use super::unix_ns;
use super::{token, PROTOCOL_VERSION};
use crate::error::Failure;
use crate::spec::{LoadMode, RunSpec};
use crate::stats::IntervalSummary;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

/// Longest wait for a start instant: a master whose clock is this far
/// off is refused rather than waited for.
const MAX_START_DELAY: Duration = Duration::from_secs(60);

/// What one agent process holds between calls.
struct Service {
    /// `--lambda-mul`: this agent's weight among the master's agents.
    weight: u32,
    /// `--threads`, 0 when not given (the master's then).
    threads: u32,
    /// The most one share may ask.
    limits: super::Limits,
    /// It serves TLS: a password may come with a share.
    tls: bool,
    /// `--metrics-listen`: where each share's intervals are shown.
    telemetry: Option<crate::telemetry::Sink>,
    /// The share the last Prepare checked (and preloaded).
    prepared: Mutex<Option<RunSpec>>,
    /// Set while a preload or a run is under way: one at a time.
    busy: Arc<AtomicBool>,
    /// The running share's stop flag, for Stop.
    running: Arc<Mutex<Option<Arc<AtomicUsize>>>>,
    /// Set by a Stop that says the run is precise enough: the running
    /// share ends sending as at its -t. Cleared as each share starts.
    enough: Arc<AtomicBool>,
}

/// Holds `Service::busy` until dropped.
struct Busy(Arc<AtomicBool>);

impl Busy {
    fn take(flag: &Arc<AtomicBool>) -> Result<Busy, Status> {
        flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| Status::unavailable("this agent is busy with another share"))?;
        Ok(Busy(flag.clone()))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Forgets the running share's stop flag when dropped (its phase ended).
struct ClearOnDrop(Arc<Mutex<Option<Arc<AtomicUsize>>>>);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Stops a share when dropped while armed: a call's future is dropped
/// when its master goes away (the connection closed, or its keepalive
/// went unanswered), and what the call started must not go on alone.
struct StopOnDrop(Option<Arc<AtomicUsize>>);

impl StopOnDrop {
    /// The call finished: nothing to stop.
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take() {
            stop.store(libc::SIGTERM as usize, Ordering::Relaxed);
        }
    }
}

/// How often both sides ping an idle HTTP/2 connection, and how long a
/// ping may go unanswered before the peer counts as gone.
pub(super) const KEEPALIVE: Duration = Duration::from_secs(10);
pub(super) const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How an agent serves (`mcbench agent`'s flags).
pub struct Serve<'a> {
    pub listen: SocketAddr,
    pub token_file: &'a Path,
    /// `--lambda-mul`.
    pub weight: u32,
    /// `--threads`: this agent's own thread count, if given.
    pub threads: Option<usize>,
    /// `--tls-cert` and `--tls-key`.
    pub tls: Option<(&'a Path, &'a Path)>,
    /// Set to the signal's number by SIGINT or SIGTERM.
    pub signal: Arc<AtomicUsize>,
    /// `--insecure-plaintext`: listening beyond loopback without TLS.
    pub insecure_plaintext: bool,
    /// The most one share may ask (`--max-*`).
    pub limits: super::Limits,
    /// `--metrics-listen`'s endpoint: each share's intervals.
    pub telemetry: Option<crate::telemetry::Sink>,
}

/// After a signal, how long the server may take to finish its calls
/// (a running share is stopped, and ends within a moment).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Serves until a signal (then returns `Ok`, the caller reads which from
/// `Serve::signal`), on an error (exit 1), or on a usage error before
/// listening (exit 2). A share running when the signal comes is stopped
/// as by the master's Stop.
pub fn serve(how: &Serve) -> Result<(), Failure> {
    let token = token::read(how.token_file).map_err(Failure::usage)?;
    if how.weight == 0 {
        return Err(Failure::usage("--lambda-mul must be at least 1"));
    }
    let tls = how
        .tls
        .map(|(cert, key)| super::tls::server(cert, key))
        .transpose()
        .map_err(Failure::usage)?;
    let listen = how.listen;
    if how.threads == Some(0) {
        return Err(Failure::usage("--threads must be at least 1"));
    }
    let service = Service {
        tls: tls.is_some(),
        limits: how.limits,
        threads: how.threads.unwrap_or(0) as u32,
        weight: how.weight,
        telemetry: how.telemetry.clone(),
        prepared: Mutex::new(None),
        busy: Arc::new(AtomicBool::new(false)),
        running: Arc::new(Mutex::new(None)),
        enough: Arc::new(AtomicBool::new(false)),
    };
    if tls.is_none() {
        plaintext_beyond_loopback(how)?;
    }
    let rt = super::runtime().map_err(Failure::run)?;
    let signalled = shutdown_on(how.signal.clone(), service.running.clone());
    let grace = {
        let signal = how.signal.clone();
        async move {
            signal_came(&signal).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        }
    };
    let served = async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| Failure::usage(format!("--listen {listen}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Failure::run(e.to_string()))?;
        let secure = if tls.is_some() { "TLS" } else { "plain text" };
        crate::stderr_line!(
            "mcbench agent: listening on {bound} ({secure}, protocol {PROTOCOL_VERSION})"
        );
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(super::door::accept(listener, tx));
        let incoming = tokio_stream::wrappers::ReceiverStream::new(rx);
        let mut server = tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(KEEPALIVE))
            .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT));
        if let Some(tls) = tls {
            server = server
                .tls_config(tls)
                .map_err(|e| Failure::usage(format!("--tls-cert/--tls-key: {e}")))?;
        }
        server
            .add_service(AgentServer::with_interceptor(
                service,
                token::Check::new(&token),
            ))
            .serve_with_incoming_shutdown(incoming, signalled)
            .await
            .map_err(|e| Failure::run(format!("the agent's server stopped: {e}")))
    };
    rt.block_on(async move {
        tokio::select! {
            served = served => served,
            () = grace => Ok(()),
        }
    })
}

/// Without TLS, listening beyond loopback is refused, unless asked for
/// (`--insecure-plaintext`) and then warned of.
fn plaintext_beyond_loopback(how: &Serve) -> Result<(), Failure> {
    let listen = how.listen;
    if listen.ip().is_loopback() {
        return Ok(());
    }
    if !how.insecure_plaintext {
        return Err(Failure::usage(format!(
            "--listen {listen} is beyond loopback: without TLS the token and every share (SASL credentials included) would cross the network in clear; give --tls-cert/--tls-key, or --insecure-plaintext on a network you trust"
        )));
    }
    crate::stderr_line!(
        "mcbench agent: warning: listening on {listen} without TLS (--insecure-plaintext): the token and the workload cross the network in clear"
    );
    Ok(())
}

/// Resolves once `signal` is set, after stopping the running share.
async fn shutdown_on(signal: Arc<AtomicUsize>, running: Arc<Mutex<Option<Arc<AtomicUsize>>>>) {
    signal_came(&signal).await;
    if let Some(stop) = running.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        stop.store(signal.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// Resolves once `signal` is set (looked at every 50 ms: the flag is set
/// by a signal handler, which cannot wake a future).
async fn signal_came(signal: &AtomicUsize) {
    while signal.load(Ordering::Relaxed) == 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tonic::async_trait]
impl Agent for Service {
    async fn hello(
        &self,
        _req: Request<pb::HelloRequest>,
    ) -> Result<Response<pb::HelloReply>, Status> {
        Ok(Response::new(pb::HelloReply {
            protocol_version: PROTOCOL_VERSION,
            mcbench_version: env!("CARGO_PKG_VERSION").into(),
            hostname: hostname(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            weight: self.weight,
            threads: self.threads,
        }))
    }

    async fn ping(
        &self,
        _req: Request<pb::PingRequest>,
    ) -> Result<Response<pb::PingReply>, Status> {
        Ok(Response::new(pb::PingReply {
            agent_unix_ns: unix_ns(),
        }))
    }

    async fn prepare(
        &self,
        req: Request<pb::PrepareRequest>,
    ) -> Result<Response<pb::PrepareReply>, Status> {
        let req = req.into_inner();
        let mut spec: RunSpec = serde_json::from_str(&req.spec_json)
            .map_err(|e| Status::invalid_argument(format!("the share is not a run spec: {e}")))?;
        if !req.password.is_empty() {
            if !self.tls {
                return Err(Status::invalid_argument(
                    "this agent serves no TLS: it takes no password in clear",
                ));
            }
            spec.target.password = Some(req.password);
        }
        let spec = super::policy::admit(spec, &self.limits)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let busy = Busy::take(&self.busy)?;
        let preload = spec.key_space.preload == LoadMode::Load;
        let share = spec.clone();
        // Stop, or the master gone, ends the preload too.
        let stop = Arc::new(AtomicUsize::new(0));
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(stop.clone());
        let abandoned = StopOnDrop(Some(stop.clone()));
        let running = self.running.clone();
        let preload_stop = stop.clone();
        let preloaded = tokio::task::spawn_blocking(move || {
            let _busy = busy;
            let _done = ClearOnDrop(running);
            if !preload {
                return Ok(0);
            }
            let mut load = share.clone();
            load.key_space.preload = LoadMode::LoadOnly;
            let result = crate::run::quietly(&load, &preload_stop, &mut |_| {})
                .map_err(|f| Status::failed_precondition(f.to_string()))?;
            // A --load-only run's failure is its preload's.
            match result.failure {
                None => Ok(result.total.count),
                Some(why) => Err(Status::failed_precondition(format!(
                    "the preload failed: {why}"
                ))),
            }
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        abandoned.disarm();
        if stop.load(Ordering::Relaxed) != 0 {
            return Err(Status::cancelled("the preload was stopped"));
        }
        let preloaded = preloaded?;
        crate::stderr_line!(
            "mcbench agent: prepared {} ({preloaded} keys loaded)",
            req.name
        );
        let mut run = spec;
        if run.key_space.preload == LoadMode::Load {
            run.key_space.preload = LoadMode::NoLoad;
        }
        *self.prepared.lock().unwrap_or_else(|e| e.into_inner()) = Some(run);
        Ok(Response::new(pb::PrepareReply { preloaded }))
    }

    type RunStream = ReceiverStream<Result<RunEvent, Status>>;

    async fn run(&self, req: Request<pb::RunRequest>) -> Result<Response<Self::RunStream>, Status> {
        let start_ns = req.into_inner().start_unix_ns;
        let busy = Busy::take(&self.busy)?;
        let spec = self
            .prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                Status::failed_precondition("Run before Prepare (or another master prepared since)")
            })?;
        let wait = Duration::from_nanos(start_ns.saturating_sub(unix_ns()).max(0) as u64);
        if wait > MAX_START_DELAY {
            return Err(Status::invalid_argument(format!(
                "the start is {wait:?} away on this agent's clock: are the clocks that far apart?"
            )));
        }
        let (tx, rx) = mpsc::channel(64);
        let stop = Arc::new(AtomicUsize::new(0));
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(stop.clone());
        self.enough.store(false, Ordering::Relaxed);
        let enough = self.enough.clone();
        // A master gone (its stream dropped, or its connection dead to the
        // keep-alive) stops the share at once, not at its next interval.
        // The watch holds a sender: it lets go when the share ends, so the
        // stream can end after the result.
        let gone = tx.clone();
        let stop_when_gone = stop.clone();
        let (ended, share_ended) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            tokio::select! {
                _ = gone.closed() => stop_when_gone.store(libc::SIGTERM as usize, Ordering::Relaxed),
                _ = share_ended => {}
            }
        });
        let running = self.running.clone();
        let telemetry = self.telemetry.clone();
        tokio::task::spawn_blocking(move || {
            let _busy = busy;
            // The start instant, on this clock; a stop cuts the wait short.
            while unix_ns() < start_ns && stop.load(Ordering::Relaxed) == 0 {
                let left = Duration::from_nanos(start_ns.saturating_sub(unix_ns()).max(0) as u64);
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
            run_share(&spec, (&stop, &enough), &tx, telemetry.as_ref());
            *running.lock().unwrap_or_else(|e| e.into_inner()) = None;
            let _ = ended.send(());
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn stop(&self, req: Request<pb::StopRequest>) -> Result<Response<pb::StopReply>, Status> {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stop) = running.as_ref() {
            if req.into_inner().enough {
                self.enough.store(true, Ordering::Relaxed);
            } else {
                stop.store(libc::SIGINT as usize, Ordering::Relaxed);
            }
        }
        Ok(Response::new(pb::StopReply {
            stopped: running.is_some(),
        }))
    }
}

/// Runs `spec`, sending each interval and then the result; `stop` ends it
/// early (Stop, or the master gone), `enough` ends its sending as at -t.
fn run_share(
    spec: &RunSpec,
    (stop, enough): (&Arc<AtomicUsize>, &AtomicBool),
    tx: &mpsc::Sender<Result<RunEvent, Status>>,
    telemetry: Option<&crate::telemetry::Sink>,
) {
    if let Some(t) = telemetry {
        // Labelled as this agent, so that a Prometheus scraping its master
        // too does not count the share twice in the merged sums.
        let me = format!("{}:{}", hostname(), std::process::id());
        t.begin_run(crate::telemetry::Named::of(spec, Some(me)));
    }
    let mut forward = |s: &IntervalSummary| {
        if let Some(t) = telemetry {
            t.record(s, None);
        }
        let event = RunEvent {
            event: Some(run_event::Event::Interval(super::wire::interval(s))),
        };
        if tx.blocking_send(Ok(event)).is_err() {
            stop.store(libc::SIGTERM as usize, Ordering::Relaxed);
        }
    };
    let outcome = crate::run::quietly_until(spec, stop, enough, &mut forward);
    if let Some(t) = telemetry {
        t.done();
    }
    let last = match outcome.and_then(|mut r| {
        // The master has the intervals from the stream.
        r.intervals.clear();
        serde_json::to_string(&r)
            .map_err(|e| Failure::run(format!("cannot encode the result: {e}")))
    }) {
        Ok(json) => Ok(RunEvent {
            event: Some(run_event::Event::Final(pb::Final { result_json: json })),
        }),
        Err(f) => Err(Status::aborted(f.to_string())),
    };
    let _ = tx.blocking_send(last);
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}
