//! What the endpoint serves: each interval of the run added up, per
//! source (this process, or the master's merged view, and each agent).
//! Updated once per closed interval, never on a load thread.

use super::family::{Family, Kind, Value};
use super::histogram::Buckets;
use super::{Named, TelemetryError};
use crate::stats::parts::PART_NAMES;
use crate::stats::{IntervalOp, IntervalServer, IntervalSummary};
use crate::warnings::LAG_P99_LIMIT_US;
use std::collections::BTreeMap;

/// Where the run is, as the `mcbench_phase` gauge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Connecting, preloading, warming up: no interval measured yet.
    Starting,
    Measuring,
    /// Every interval is in: the counts are final.
    Done,
}

impl Phase {
    const ALL: [Phase; 3] = [Phase::Starting, Phase::Measuring, Phase::Done];

    fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Measuring => "measuring",
            Phase::Done => "done",
        }
    }
}

/// What an added summary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whole {
    /// A closed interval: its counts, and the last interval's gauges.
    Interval,
    /// An agent's part of an interval already added without it: its
    /// counts only.
    LatePart,
}

/// The run's cumulative metrics.
#[derive(Debug)]
pub struct Exported {
    /// The `run` label; `None` for an agent with no share yet.
    run: Option<String>,
    /// An agent's own endpoint: its name, on every series.
    agent: Option<String>,
    /// Classic histogram bounds, seconds, increasing.
    bounds: Vec<f64>,
    /// The servers in the run's order: each interval's `servers` by index.
    servers: Vec<String>,
    target_rate: Option<f64>,
    phase: Phase,
    /// Bumped at each change: the endpoint knows what a scrape has seen.
    generation: u64,
    /// `None`: this process's run, or a master's merge of its agents;
    /// `Some(agent)`: that agent's own share.
    sources: BTreeMap<Option<String>, Source>,
}

#[derive(Debug, Default)]
struct Source {
    ops: BTreeMap<String, OpSeries>,
    failures: BTreeMap<String, u64>,
    servers: Vec<IntervalServer>,
    bytes_tx: u64,
    bytes_rx: u64,
    cpu_s: f64,
    intervals: u64,
    /// The last interval's send lag p99, s (an open loop's only).
    send_lag_p99_s: Option<f64>,
}

#[derive(Debug)]
struct OpSeries {
    requests: u64,
    error_replies: u64,
    hits: u64,
    misses: u64,
    latency: Buckets,
    service_time: Buckets,
    /// Per `PART_NAMES`, where the kernel stamped requests.
    parts: Vec<Buckets>,
}

impl OpSeries {
    fn new(bounds: usize) -> Self {
        OpSeries {
            requests: 0,
            error_replies: 0,
            hits: 0,
            misses: 0,
            latency: Buckets::new(bounds),
            service_time: Buckets::new(bounds),
            parts: vec![Buckets::new(bounds); PART_NAMES.len()],
        }
    }

    fn add(&mut self, op: &IntervalOp, bounds: &[f64]) -> Result<(), TelemetryError> {
        let decode = |h: &crate::stats::Hdr| h.decode().map_err(TelemetryError::Interval);
        self.latency.add_ns(&decode(&op.latency_hdr)?, bounds);
        self.service_time
            .add_ns(&decode(&op.service_time_hdr)?, bounds);
        for (part, h) in self.parts.iter_mut().zip(&op.parts_hdr) {
            part.add_ns(&decode(h)?, bounds);
        }
        self.requests += op.count;
        self.error_replies += op.errors;
        self.hits += op.hits;
        self.misses += op.misses;
        Ok(())
    }
}

impl Exported {
    /// Nothing measured yet: `run` names the run (`--label`, or its
    /// servers), `servers` are its servers in order.
    pub fn new(named: Named, bounds: Vec<f64>) -> Self {
        Exported {
            run: named.run,
            agent: named.agent,
            bounds,
            servers: named.servers,
            target_rate: named.target_rate,
            phase: Phase::Starting,
            generation: 0,
            sources: BTreeMap::new(),
        }
    }

    /// Another run from now on: nothing measured yet, the generation
    /// still increasing.
    pub fn rename(&mut self, named: Named) {
        let generation = self.generation + 1;
        *self = Exported {
            generation,
            ..Exported::new(named, std::mem::take(&mut self.bounds))
        };
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn set_target_rate(&mut self, rate: Option<f64>) {
        self.target_rate = rate;
        self.generation += 1;
    }

    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
        self.generation += 1;
    }

    /// Adds one closed interval: this process's or the merged one
    /// (`agent` None), or one agent's share of it.
    pub fn record(
        &mut self,
        s: &IntervalSummary,
        agent: Option<&str>,
        whole: Whole,
    ) -> Result<(), TelemetryError> {
        let bounds = &self.bounds;
        let src = self.sources.entry(agent.map(str::to_owned)).or_default();
        for (name, op) in s.ops.iter().filter(|(name, _)| *name != "total") {
            let series = src
                .ops
                .entry(name.clone())
                .or_insert_with(|| OpSeries::new(bounds.len()));
            series.add(op, bounds)?;
        }
        for (class, n) in &s.error_classes {
            *src.failures.entry(class.clone()).or_default() += n;
        }
        src.servers.resize(
            src.servers.len().max(s.servers.len()),
            IntervalServer::default(),
        );
        for (sum, one) in src.servers.iter_mut().zip(&s.servers) {
            sum.add(one);
        }
        src.bytes_tx += s.bytes_tx;
        src.bytes_rx += s.bytes_rx;
        src.cpu_s += s.client_cpu_s;
        if whole == Whole::Interval {
            src.intervals += 1;
            let lag = s.send_lag_hdr.decode().map_err(TelemetryError::Interval)?;
            src.send_lag_p99_s =
                (!lag.is_empty()).then(|| lag.value_at_quantile(0.99) as f64 / 1e9);
        }
        if agent.is_none() {
            self.phase = Phase::Measuring;
        }
        self.generation += 1;
        Ok(())
    }

    /// Every family, in the order served; none for an agent that has not
    /// had a share yet (`Named::idle`): no run to name.
    pub fn families(&self) -> Vec<Family<'_>> {
        if self.run.is_none() {
            return Vec::new();
        }
        let mut out = self.op_families();
        out.extend(self.source_families());
        out.extend(self.run_families());
        out.extend(self.histogram_families());
        out
    }

    /// A source's labels: the run's, and one `agent`: the source's in a
    /// master's merge, else this endpoint's own when it is an agent's.
    fn labels(&self, agent: &Option<String>) -> Vec<(&'static str, String)> {
        let mut l = vec![("run", self.run.clone().unwrap_or_default())];
        l.extend(
            agent
                .as_ref()
                .or(self.agent.as_ref())
                .map(|a| ("agent", a.clone())),
        );
        l
    }

    fn op_families(&self) -> Vec<Family<'_>> {
        type Count = fn(&OpSeries) -> u64;
        let counters: [(&'static str, &'static str, Count); 4] = [
            (
                "mcbench_requests_total",
                "Requests answered (error replies included), per op type.",
                |o| o.requests,
            ),
            (
                "mcbench_error_replies_total",
                "Answers that were error replies, per op type.",
                |o| o.error_replies,
            ),
            ("mcbench_hits_total", "Keys found, per op type.", |o| o.hits),
            (
                "mcbench_misses_total",
                "Keys not found, per op type.",
                |o| o.misses,
            ),
        ];
        counters
            .into_iter()
            .map(|(name, help, count)| {
                let mut f = Family::new(name, Kind::Counter, help);
                for (agent, src) in &self.sources {
                    for (op, series) in &src.ops {
                        let mut l = self.labels(agent);
                        l.push(("op", op.clone()));
                        f.push(l, Value::Number(count(series) as f64));
                    }
                }
                f
            })
            .collect()
    }

    fn source_families(&self) -> Vec<Family<'_>> {
        let mut failures = Family::new(
            "mcbench_failures_total",
            Kind::Counter,
            "Failed requests and datagram events, by class (the run's error classes).",
        );
        let mut server_requests = Family::new(
            "mcbench_server_requests_total",
            Kind::Counter,
            "Requests answered, per server (runs of several servers).",
        );
        let mut server_failures = Family::new(
            "mcbench_server_failures_total",
            Kind::Counter,
            "Failed requests (error replies, lost, timed out, no connection), per server.",
        );
        let simple = simple_source_families();
        let mut out: Vec<Family> = simple
            .iter()
            .map(|(n, k, h, _)| Family::new(n, *k, h))
            .collect();
        for (agent, src) in &self.sources {
            for (class, n) in &src.failures {
                let mut l = self.labels(agent);
                l.push(("class", class.clone()));
                failures.push(l, Value::Number(*n as f64));
            }
            for (addr, s) in self
                .servers
                .iter()
                .zip(&src.servers)
                .filter(|_| self.servers.len() > 1)
            {
                let mut l = self.labels(agent);
                l.push(("server", addr.clone()));
                server_requests.push(l.clone(), Value::Number(s.count as f64));
                server_failures.push(l, Value::Number(s.errors as f64));
            }
            for (f, (_, _, _, value)) in out.iter_mut().zip(&simple) {
                if let Some(v) = value(src) {
                    f.push(self.labels(agent), Value::Number(v));
                }
            }
        }
        out.splice(0..0, [failures, server_requests, server_failures]);
        out
    }

    /// What only the process itself knows: the phase and the target.
    fn run_families(&self) -> Vec<Family<'_>> {
        let mut phase = Family::new(
            "mcbench_phase",
            Kind::Gauge,
            "1 for the phase the run is in (starting, measuring, done), 0 for the others.",
        );
        for p in Phase::ALL {
            let mut l = self.labels(&None);
            l.push(("phase", p.name().to_owned()));
            phase.push(l, Value::Number(f64::from(u8::from(p == self.phase))));
        }
        let mut out = vec![phase];
        if let Some(rate) = self.target_rate {
            let mut f = Family::new(
                "mcbench_target_rate",
                Kind::Gauge,
                "The rate asked for (--rate), ops/s.",
            );
            f.push(self.labels(&None), Value::Number(rate));
            out.push(f);
        }
        out
    }

    fn histogram_families(&self) -> Vec<Family<'_>> {
        let mut latency = Family::new(
            "mcbench_latency_seconds",
            Kind::Histogram,
            "Latency, intended send to answer parsed, per op type.",
        );
        let mut service = Family::new(
            "mcbench_service_time_seconds",
            Kind::Histogram,
            "Service time, actual send to answer parsed, per op type.",
        );
        let mut parts = Family::new(
            "mcbench_latency_part_seconds",
            Kind::Histogram,
            "The latency's parts by the kernel's stamps (client queue, send path, network and server, client receive), per op type.",
        );
        let bounds = &self.bounds[..];
        for (agent, src) in &self.sources {
            for (op, series) in &src.ops {
                let mut l = self.labels(agent);
                l.push(("op", op.clone()));
                latency.push(l.clone(), Value::Histogram(&series.latency, bounds));
                service.push(l.clone(), Value::Histogram(&series.service_time, bounds));
                for (name, part) in PART_NAMES
                    .iter()
                    .zip(&series.parts)
                    .filter(|(_, p)| p.count() > 0)
                {
                    let mut l = l.clone();
                    l.push(("part", (*name).to_owned()));
                    parts.push(l, Value::Histogram(part, bounds));
                }
            }
        }
        vec![latency, service, parts]
    }
}

/// A number of one source, where it has one.
type SourceNumber = fn(&Source) -> Option<f64>;

/// The families of one number per source: name, kind, help, the number.
fn simple_source_families() -> [(&'static str, Kind, &'static str, SourceNumber); 6] {
    [
        (
            "mcbench_sent_bytes_total",
            Kind::Counter,
            "Bytes written to the servers.",
            |s| Some(s.bytes_tx as f64),
        ),
        (
            "mcbench_received_bytes_total",
            Kind::Counter,
            "Bytes read from the servers.",
            |s| Some(s.bytes_rx as f64),
        ),
        (
            "mcbench_client_cpu_seconds_total",
            Kind::Counter,
            "CPU time (user + system) the load's threads used.",
            |s| Some(s.cpu_s),
        ),
        (
            "mcbench_intervals_total",
            Kind::Counter,
            "Intervals measured and added here.",
            |s| Some(s.intervals as f64),
        ),
        (
            "mcbench_send_lag_p99_seconds",
            Kind::Gauge,
            "The last interval's send lag p99: intended send to sent (open loop).",
            |s| s.send_lag_p99_s,
        ),
        (
            "mcbench_client_bound",
            Kind::Gauge,
            "1 when the last interval's send lag p99 was over the report's CLIENT-BOUND limit (1 ms; open loop); the verdict's other signs are the whole run's.",
            |s| {
                s.send_lag_p99_s
                    .map(|lag| f64::from(u8::from(lag * 1e6 > LAG_P99_LIMIT_US)))
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Hdr;

    /// An open-loop interval whose every request was sent `lag_ns` late.
    fn late_by(lag_ns: u64) -> IntervalSummary {
        let mut lag = crate::stats::new_histogram();
        lag.record_n(lag_ns, 100).unwrap();
        IntervalSummary {
            index: 0,
            time_s: 1.0,
            duration_s: 1.0,
            ops: BTreeMap::new(),
            hits: 0,
            misses: 0,
            errors: 0,
            error_classes: BTreeMap::new(),
            client_cpu_s: 0.5,
            bytes_tx: 0,
            bytes_rx: 0,
            send_lag_hdr: Hdr::encode(&lag),
            servers: Vec::new(),
            replica: None,
        }
    }

    fn gauge(e: &Exported, name: &str) -> Vec<f64> {
        let families = e.families();
        let f = families.iter().find(|f| f.name == name).unwrap();
        f.samples
            .iter()
            .map(|s| match s.value {
                Value::Number(n) => n,
                Value::Histogram(..) => panic!("{name} is a histogram"),
            })
            .collect()
    }

    #[test]
    fn an_idle_agent_serves_nothing_until_its_first_share() {
        let mut e = Exported::new(Named::idle(), vec![1e-3]);
        assert!(e.families().is_empty());
        let share = Named {
            run: Some("r".into()),
            servers: vec!["s".into()],
            target_rate: None,
            agent: Some("a:1".into()),
        };
        e.rename(share);
        let families = e.families();
        let phase = families.iter().find(|f| f.name == "mcbench_phase").unwrap();
        let starting = &phase.samples[0].labels;
        assert!(starting.contains(&("agent", "a:1".into())), "{starting:?}");
        assert!(
            starting.contains(&("phase", "starting".into())),
            "{starting:?}"
        );
    }

    #[test]
    fn an_empty_label_still_names_a_run_and_a_series_has_one_agent() {
        let named = Named {
            run: Some(String::new()),
            servers: vec!["s".into()],
            target_rate: None,
            agent: Some("own:1".into()),
        };
        let mut e = Exported::new(named, vec![1e-3]);
        e.record(&late_by(1_000), Some("other:2"), Whole::Interval)
            .unwrap();
        let families = e.families();
        assert!(!families.is_empty());
        for sample in families.iter().flat_map(|f| &f.samples) {
            let agents = sample.labels.iter().filter(|(n, _)| *n == "agent").count();
            assert!(agents <= 1, "{:?}", sample.labels);
        }
    }

    #[test]
    fn the_client_bound_gauge_follows_the_last_intervals_send_lag() {
        let named = Named {
            run: Some("r".into()),
            servers: vec!["s".into()],
            target_rate: Some(1e3),
            agent: None,
        };
        let mut e = Exported::new(named, vec![1e-3]);
        assert!(gauge(&e, "mcbench_client_bound").is_empty());
        e.record(&late_by(900_000), None, Whole::Interval).unwrap();
        assert_eq!(gauge(&e, "mcbench_client_bound"), [0.0]);
        e.record(&late_by(1_500_000), None, Whole::Interval)
            .unwrap();
        assert_eq!(gauge(&e, "mcbench_client_bound"), [1.0]);
        // A late agent part is counts only: the gauge stays the interval's.
        e.record(&late_by(10_000), None, Whole::LatePart).unwrap();
        assert_eq!(gauge(&e, "mcbench_client_bound"), [1.0]);
        assert_eq!(gauge(&e, "mcbench_client_cpu_seconds_total"), [1.5]);
    }
}
