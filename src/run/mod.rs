//! One run from spec to result: a memcached started for it when the spec
//! names no server, the engine, and the result built with the run's
//! context. What `app` (flags, presentation, outputs) and `agent` (a
//! share streamed to its master) both call, below both; it prints
//! nothing itself.

use crate::embedded::{EmbeddedMemcached, Sizing};
use crate::engine::{self, Observer};
use crate::error::Failure;
use crate::net::tls::Client;
use crate::net::Target;
use crate::result::{RunContext, RunResult, DEFAULT_PERCENTILES};
use crate::spec::{Address, RunSpec};
use crate::stats::{IntervalSummary, Sample};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Runs `spec` against its servers (or a memcached started for it) and
/// builds its result; `observer` sees each interval and `--save`'s
/// samples as they come.
pub fn measure(
    spec: &RunSpec,
    percentiles: Vec<f64>,
    stop: &Arc<AtomicUsize>,
    observer: &mut dyn Observer,
) -> Result<RunResult, Failure> {
    crate::os::claim_fds(spec.fds_needed()).map_err(Failure::usage)?;
    let embedded = if spec.target.servers.is_empty() {
        Some(EmbeddedMemcached::start(&embedded_size(spec))?)
    } else {
        None
    };
    let tls = match &spec.target.tls {
        Some(t) => Some(crate::net::tls::Client::new(t).map_err(Failure::usage)?),
        None => None,
    };
    let addrs = match &embedded {
        Some(e) => vec![Target::plain(Address::Tcp(e.addr))],
        None => targets(spec, tls.as_ref())?,
    };
    let outcome = engine::run(spec, &addrs, stop.clone(), observer)?;
    let ctx = RunContext {
        servers: addrs.iter().map(ToString::to_string).collect(),
        tls: tls.map(|t| t.report()),
        embedded_server: embedded.as_ref().map(|e| e.version.clone()),
        stopped_by: stopped_by(stop),
        percentiles,
    };
    drop(embedded);
    Ok(RunResult::build(spec, &outcome, ctx))
}

/// The run's servers, resolved, each with its TLS name over `--tls`.
fn targets(spec: &RunSpec, tls: Option<&Arc<Client>>) -> Result<Vec<Target>, Failure> {
    spec.target
        .servers
        .iter()
        .map(|s| {
            let addr = s.resolve().map_err(Failure::run)?;
            let tls = match tls {
                Some(c) => Some((c.clone(), c.name_for(&s.host()).map_err(Failure::usage)?)),
                None => None,
            };
            Ok(Target { addr, tls })
        })
        .collect()
}

/// A run with no output of its own: each interval goes to `on_interval`
/// (an agent's stream to its master).
pub fn quietly(
    spec: &RunSpec,
    stop: &Arc<AtomicUsize>,
    on_interval: &mut dyn FnMut(&IntervalSummary),
) -> Result<RunResult, Failure> {
    measure(
        spec,
        DEFAULT_PERCENTILES.to_vec(),
        stop,
        &mut Forward(on_interval),
    )
}

/// `quietly`, and sending ends as at `-t` once `enough` is set (an
/// agent's master judged the run precise enough).
pub fn quietly_until(
    spec: &RunSpec,
    stop: &Arc<AtomicUsize>,
    enough: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSummary),
) -> Result<RunResult, Failure> {
    let mut forward = Forward(on_interval);
    measure(
        spec,
        DEFAULT_PERCENTILES.to_vec(),
        stop,
        &mut Until(&mut forward, enough),
    )
}

/// Hands each interval on; no samples are asked for.
struct Forward<'a>(&'a mut dyn FnMut(&IntervalSummary));

impl Observer for Forward<'_> {
    fn interval(&mut self, s: &IntervalSummary) {
        (self.0)(s)
    }

    fn samples(&mut self, _: &[Sample], _: u64) {}
}

/// An observer whose run is precise enough once the flag is set.
struct Until<'a, 'b>(&'a mut Forward<'b>, &'a AtomicBool);

impl Observer for Until<'_, '_> {
    fn interval(&mut self, s: &IntervalSummary) {
        self.0.interval(s)
    }

    fn samples(&mut self, _: &[Sample], _: u64) {}

    fn enough(&self) -> bool {
        self.1.load(Ordering::Relaxed)
    }
}

use crate::error::stopped_by;

/// What the embedded memcached must hold: every connection, the key space
/// (mean item size plus ~64 bytes of item header), the largest value.
pub fn embedded_size(spec: &RunSpec) -> Sizing {
    let item = spec.key_space.key_size.mean().min(250.0)
        + spec
            .key_space
            .value_size
            .mean()
            .min(spec.max_value_len() as f64)
        + 64.0;
    Sizing {
        connections: spec.load.connections + spec.measure.map_or(0, |m| m.connections),
        data_bytes: (spec.key_space.keys as f64 * item) as u64,
        max_item_bytes: spec.largest_stored_value() + 512,
    }
}
