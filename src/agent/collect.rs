//! The run itself, on the master's side: every agent started at one
//! instant, their streams read as the intervals close, the master's own
//! probe connections run beside them, and everything merged.

use super::master::{Agent, AgentLoss, Control};
use super::pb::{self, run_event};
use super::{unix_ns, AgentDataError};
use crate::error::Failure;
use crate::result::{self, AgentSummary, MeasureSummary, RunContext, RunResult};
use crate::spec::{LoadMode, MeasureGroup, OpenLoop, RunSpec, Schedule};
use crate::stats::IntervalSummary;
use crate::warnings::Warning;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What one agent sent: its intervals as they closed, then how it ended.
struct Part {
    intervals: Vec<IntervalSummary>,
    end: End,
}

enum End {
    Done(Box<RunResult>),
    /// Lost `at_s` seconds after the start, for `why`.
    Lost {
        at_s: f64,
        why: String,
    },
    /// The master was stopped by a signal before the agent finished.
    Stopped,
}

/// How long the master waits for an agent's stream.
#[derive(Clone, Copy)]
struct Patience {
    /// For the first event: the start, the warm-up and one interval.
    first: Duration,
    /// Between events afterwards.
    then: Duration,
    /// For the result once the agent was told to stop.
    stopping: Duration,
}

/// Beyond its own intervals, how long an agent's stream may be silent.
const STREAM_SLACK: Duration = Duration::from_secs(2);

/// Starts every agent (and the master's probe connections) at one instant
/// and merges what they measured. `stopped` turns true on a signal.
pub async fn run_all(
    agents: &[Agent],
    spec: &RunSpec,
    stop: &Arc<AtomicUsize>,
    stopped: watch::Receiver<bool>,
    control: &Control<'_>,
) -> Result<RunResult, Failure> {
    let slowest = agents.iter().map(|a| a.rtt_ns).max().unwrap_or(0);
    let start = unix_ns() + 300_000_000 + 4 * slowest;
    let patience = Patience::of(spec, start);
    let probe = spec.measure.map(|group| {
        let probe = probe_spec(spec, group);
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || {
            std::thread::sleep(Duration::from_nanos((start - unix_ns()).max(0) as u64));
            crate::run::quietly(&probe?, &stop, &mut |_| {})
        })
    });
    let (feed, lines) = tokio::sync::mpsc::unbounded_channel();
    let judge = crate::engine::precise::PrecisionWatch::new(spec).map(|watch| {
        super::live::Judge::new(watch, agents.iter().map(|a| a.client.clone()).collect())
    });
    let merging = spec.recording.live || judge.is_some() || control.telemetry.is_some();
    let live = merging.then(|| {
        let shown = super::live::Shown {
            percentiles: spec.recording.live.then(|| control.percentiles.clone()),
            telemetry: control.telemetry.clone(),
        };
        tokio::spawn(super::live::show(lines, agents.len(), shown, judge))
    });
    let mut tasks = Vec::new();
    for a in agents {
        let run = read_stream(
            a.client.clone(),
            start,
            a.offset_ns,
            patience,
            stopped.clone(),
            merging.then(|| super::live::AgentFeed {
                agent: a.name.as_str().into(),
                tx: feed.clone(),
            }),
        );
        tasks.push(tokio::spawn(run));
    }
    drop(feed);
    let mut parts = Vec::new();
    for t in tasks {
        parts.push(t.await.unwrap_or_else(|e| Part {
            intervals: Vec::new(),
            end: End::Lost {
                at_s: since(start),
                why: e.to_string(),
            },
        }));
    }
    if let Some(live) = live {
        let _ = live.await;
    }
    let probe = match probe {
        Some(p) => Some(
            p.await
                .map_err(|e| Failure::run(e.to_string()))
                .and_then(|r| r),
        ),
        None => None,
    };
    let mut merged = merge(spec, agents, parts, control.loss, stop)?;
    add_probe(&mut merged, probe, spec.measure);
    Ok(merged)
}

impl Patience {
    /// How long to wait for the agents of a run of `spec` that starts at
    /// `start` (ns, the master's clock).
    fn of(spec: &RunSpec, start: i64) -> Self {
        // An agent sends an interval each --interval: three missed, and a
        // request's timeout, and it is silent (it was 10 s more: an agent
        // that took the run and said nothing held the master for tens of
        // seconds).
        let then = spec.recording.interval * 3 + spec.longest_timeout() + STREAM_SLACK;
        let until_start = Duration::from_nanos((start - unix_ns()).max(0) as u64);
        Patience {
            first: until_start + spec.load.wait + spec.load.warmup + then,
            then,
            // After a Stop: the agent's drain, then its result.
            stopping: spec.longest_timeout() + Duration::from_secs(10),
        }
    }
}

/// The master's probe connections' result, or their failure, into the
/// agents' merged one.
fn add_probe(
    merged: &mut RunResult,
    probe: Option<Result<RunResult, Failure>>,
    group: Option<MeasureGroup>,
) {
    match (probe, group) {
        (Some(Ok(r)), Some(group)) => {
            merged.measure = Some(MeasureSummary::of_run(group, &r));
            merged.failure = merged.failure.take().or(r.failure);
        }
        // The agents' results are kept; the run failed all the same.
        (Some(Err(f)), _) => {
            merged.failure = Some(format!("the master's probe connections: {f}"));
        }
        _ => {}
    }
}

/// Seconds on the master's clock since the agreed start (0 before it).
fn since(start_ns: i64) -> f64 {
    unix_ns().saturating_sub(start_ns).max(0) as f64 / 1e9
}

/// A run stopped by a signal before it started: nothing measured, the
/// signal said (exit 130/143, the outputs written).
pub fn stopped_before_start(spec: &RunSpec, stop: &AtomicUsize) -> RunResult {
    let mut r = empty(spec);
    r.completed = false;
    r.stopped_by = crate::error::stopped_by(stop);
    r
}

/// The master's probe connections as a run of their own: the measurement
/// group's connections, rate and depth, on the run's workload, reading
/// the key space the agents preloaded.
pub fn probe_spec(spec: &RunSpec, group: MeasureGroup) -> Result<RunSpec, Failure> {
    let mut p = spec.clone();
    p.measure = None;
    p.load.connections = group.connections;
    p.load.threads = 1;
    p.load.depth = group.depth;
    // An open loop of few probes: no batched refills, and each probe sent
    // on its exact schedule, as the local measurement group's.
    p.load.refill_batch = 1;
    p.load.schedule = Schedule::Open(OpenLoop {
        coalesce: Some(Duration::ZERO),
        ..spec.load.schedule.at_rate(group.rate)
    });
    if p.key_space.preload == LoadMode::Load {
        p.key_space.preload = LoadMode::NoLoad;
    }
    p.validate()
        .map_err(|e| Failure::usage(format!("the master's probe connections: {e}")))?;
    Ok(p)
}

/// A flag that turns true once a signal stops the master.
pub fn watch_signal(stop: Arc<AtomicUsize>) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        while stop.load(Ordering::Relaxed) == 0 {
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = tx.send(true);
    });
    rx
}

/// Starts one agent at `start` (the master's clock; `offset_ns` turns it
/// into the agent's) and reads its stream to the end, keeping every
/// interval. On a signal the agent is told to stop, and its result so far
/// is still awaited.
async fn read_stream(
    mut client: super::master::Client,
    start: i64,
    offset_ns: i64,
    patience: Patience,
    mut stopped: watch::Receiver<bool>,
    live: super::live::Feed,
) -> Part {
    let mut intervals = Vec::new();
    // What an agent said is shown escaped.
    let lost = |why: String| End::Lost {
        at_s: since(start),
        why: super::vet::shown(&why),
    };
    let at = start.saturating_add(offset_ns);
    let mut stream = match client.run(pb::RunRequest { start_unix_ns: at }).await {
        Ok(r) => r.into_inner(),
        Err(s) => {
            return Part {
                intervals,
                end: lost(s.message().to_string()),
            }
        }
    };
    let mut wait = patience.first;
    let mut told_to_stop = false;
    let end = loop {
        let next = tokio::time::timeout(wait, stream.message());
        let signalled = async { stopped.wait_for(|s| *s).await.is_ok() };
        let event = tokio::select! {
            true = signalled, if !told_to_stop => None,
            r = next => Some(r),
        };
        let Some(event) = event else {
            told_to_stop = true;
            if !ask_to_stop(&client).await {
                break End::Stopped;
            }
            wait = patience.stopping;
            continue;
        };
        match event {
            Err(_) | Ok(Err(_)) if told_to_stop => break End::Stopped,
            Err(_) => break lost(format!("nothing for {wait:?}")),
            Ok(Err(s)) => break lost(s.message().to_string()),
            Ok(Ok(None)) => break lost("its stream ended without a result".into()),
            Ok(Ok(Some(ev))) => match ev.event {
                Some(run_event::Event::Final(f)) => {
                    break final_result(&f.result_json, told_to_stop, start)
                        .unwrap_or_else(|e| lost(e.to_string()))
                }
                Some(run_event::Event::Interval(i)) => match super::wire::summary(i)
                    .and_then(|s| super::vet::interval(&s, since(start)).map(|()| s))
                {
                    Ok(s) => {
                        if let Some(live) = &live {
                            live.send(s.clone());
                        }
                        intervals.push(s);
                    }
                    Err(e) => break lost(format!("it sent a bad interval: {e}")),
                },
                None => {}
            },
        }
        if !told_to_stop {
            wait = patience.then;
        }
    };
    Part { intervals, end }
}

/// An agent's final result, checked; or why the agent counts as lost.
fn final_result(json: &str, told_to_stop: bool, start: i64) -> Result<End, AgentDataError> {
    let r = serde_json::from_str::<RunResult>(json).map_err(AgentDataError::Parse)?;
    // Stopped on its own host (a signal there), not by the master: its
    // share was not run to its end.
    if !told_to_stop && r.stopped_by.is_some() {
        return Err(AgentDataError::StoppedThere {
            by: r.stopped_by.as_deref().unwrap_or("a signal").to_string(),
            secs: r.duration_s,
        });
    }
    super::vet::result(&r, since(start)).map_err(|e| AgentDataError::NotAddingUp(Box::new(e)))?;
    Ok(End::Done(Box::new(r)))
}

/// Tells an agent to end its share early; whether it heard.
async fn ask_to_stop(client: &super::master::Client) -> bool {
    let mut client = client.clone();
    let asked = client.stop(pb::StopRequest { enough: false });
    matches!(
        tokio::time::timeout(Duration::from_secs(5), asked).await,
        Ok(Ok(_))
    )
}

/// The agents' results as one, with a row per agent. A lost (or stopped)
/// agent counts for the intervals it sent.
fn merge(
    spec: &RunSpec,
    agents: &[Agent],
    parts: Vec<Part>,
    loss: AgentLoss,
    stop: &AtomicUsize,
) -> Result<RunResult, Failure> {
    let mut rows = Vec::new();
    let mut done = Vec::new();
    let mut cut = Vec::new();
    let mut lost = Vec::new();
    for (a, part) in agents.iter().zip(parts) {
        match part.end {
            End::Done(mut r) => {
                // The result comes without its intervals: they came as
                // they closed.
                r.intervals = part.intervals;
                rows.push(AgentSummary::of(&a.name, a.offset_ns, a.rtt_ns, &r));
                done.push(*r);
            }
            End::Lost { at_s, why } => {
                let (partial, secs) = partial_total(&part.intervals)?;
                rows.push(
                    AgentSummary::cut(&a.name, a.offset_ns, a.rtt_ns, &partial, secs)
                        .lost(at_s, &why),
                );
                lost.push(Warning::AgentLost {
                    agent: a.name.clone(),
                    at_s,
                    why,
                });
                cut.push(part.intervals);
            }
            End::Stopped => {
                let (partial, secs) = partial_total(&part.intervals)?;
                rows.push(AgentSummary::cut(
                    &a.name,
                    a.offset_ns,
                    a.rtt_ns,
                    &partial,
                    secs,
                ));
                cut.push(part.intervals);
            }
        }
    }
    let mut merged = if done.is_empty() {
        empty(spec)
    } else {
        result::merge(&done).map_err(Failure::run)?
    };
    for intervals in &cut {
        result::add_intervals(&mut merged, intervals).map_err(Failure::run)?;
    }
    merged.spec = spec.clone();
    // Every agent preloaded its slice in Prepare, before the start (a
    // failed preload refuses the run there).
    if spec.key_space.preload == LoadMode::Load {
        merged.preloaded = Some(true);
    }
    merged.agents = rows;
    merged.stopped_by = crate::error::stopped_by(stop);
    if !cut.is_empty() {
        merged.completed = false;
    }
    if !lost.is_empty() {
        let why: Vec<String> = lost.iter().map(ToString::to_string).collect();
        if done.is_empty() && merged.stopped_by.is_none() {
            merged.failure = Some(format!("every agent was lost: {}", why.join("; ")));
        } else if loss == AgentLoss::Fail {
            merged.failure = Some(why.join("; "));
        }
        merged.warnings.extend(lost);
    }
    Ok(merged)
}

/// What a cut-short agent's intervals add up to, over the time they
/// cover.
fn partial_total(intervals: &[IntervalSummary]) -> Result<(result::OpSummary, f64), Failure> {
    let secs = intervals.last().map_or(0.0, |s| s.time_s);
    let mut ops = result::ops_of_intervals(intervals, secs).map_err(Failure::run)?;
    let total = ops.remove("total").unwrap_or_else(result::OpSummary::empty);
    Ok((total, secs))
}

/// A result of nothing measured: the base when no agent finished.
fn empty(spec: &RunSpec) -> RunResult {
    let ctx = RunContext {
        servers: spec
            .target
            .servers
            .iter()
            .map(ToString::to_string)
            .collect(),
        embedded_server: None,
        tls: None,
        stopped_by: None,
        percentiles: result::DEFAULT_PERCENTILES.to_vec(),
    };
    let mut r = RunResult::build(spec, &crate::engine::Outcome::default(), ctx);
    r.failure = None;
    r.warnings.clear();
    r
}
