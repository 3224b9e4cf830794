//! `-i` and `--precision` with `--agent`: every agent's interval of one
//! number merged once all have sent it (or an agent is two intervals
//! behind the others: a lost or lagging agent must not hold the lines
//! back); one live line each, and the merged run judged precise enough or
//! not.

use crate::stats::IntervalSummary;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Each agent's intervals, as they close; `None` when the run has no
/// live lines, no `--precision` and no `--metrics-listen`.
pub type Feed = Option<AgentFeed>;

/// One agent's intervals, sent under its name.
#[derive(Clone)]
pub struct AgentFeed {
    pub agent: Arc<str>,
    pub tx: mpsc::UnboundedSender<(Arc<str>, IntervalSummary)>,
}

impl AgentFeed {
    pub fn send(&self, s: IntervalSummary) {
        let _ = self.tx.send((self.agent.clone(), s));
    }
}

/// Where the merged intervals go: live lines (with the run's
/// percentiles) and `--metrics-listen`'s endpoint.
pub struct Shown {
    pub percentiles: Option<Vec<f64>>,
    pub telemetry: Option<crate::telemetry::Sink>,
}

impl Shown {
    fn merged(&self, m: &IntervalSummary) {
        if let Some(p) = &self.percentiles {
            crate::stderr_line!("{}", crate::report::live_line(m, p));
        }
        if let Some(t) = &self.telemetry {
            t.record(m, None);
        }
    }
}

/// `--precision` over agents: the watch of the merged intervals, and the
/// agents to tell once it is met.
pub struct Judge {
    pub watch: crate::engine::precise::PrecisionWatch,
    pub clients: Vec<super::master::Client>,
    /// Intervals waiting for every agent's part: judged whole and in
    /// order only, however late an agent is (lines do not wait for it).
    pub parts: BTreeMap<u64, Vec<IntervalSummary>>,
    /// The next interval number to judge.
    pub next: u64,
}

impl Judge {
    pub fn new(
        watch: crate::engine::precise::PrecisionWatch,
        clients: Vec<super::master::Client>,
    ) -> Self {
        Judge {
            watch,
            clients,
            parts: BTreeMap::new(),
            next: 0,
        }
    }

    /// Adds one agent's interval; whether the run is now precise enough
    /// (every agent then told: its share ends sending as at its -t).
    async fn add(&mut self, s: &IntervalSummary, agents: usize) -> bool {
        self.parts.entry(s.index).or_default().push(s.clone());
        if self.next == 0 {
            self.next = *self.parts.keys().next().unwrap_or(&0);
        }
        while self
            .parts
            .get(&self.next)
            .is_some_and(|p| p.len() >= agents)
        {
            let parts = self.parts.remove(&self.next).unwrap_or_default();
            let index = self.next;
            self.next += 1;
            if let Some(m) = merged(index, &parts) {
                if self.watch.add(&m) {
                    self.tell_every_agent().await;
                    return true;
                }
            }
        }
        false
    }

    async fn tell_every_agent(&self) {
        for c in &self.clients {
            let mut c = c.clone();
            let asked = c.stop(super::pb::StopRequest { enough: true });
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), asked).await;
        }
    }
}

/// Until every agent's sender is gone: merges each interval number once
/// all have sent it (or an agent is two behind) and shows it (`shown`);
/// `judge` sees every agent's part of each. The endpoint also gets each
/// agent's own part, and a part that comes after its interval was shown
/// is added to the merged counts there, which then stay the sum of the
/// agents'.
pub async fn show(
    mut intervals: mpsc::UnboundedReceiver<(Arc<str>, IntervalSummary)>,
    agents: usize,
    shown: Shown,
    mut judge: Option<Judge>,
) {
    let mut waiting: BTreeMap<u64, Vec<IntervalSummary>> = BTreeMap::new();
    let mut done = std::collections::BTreeSet::new();
    while let Some((agent, s)) = intervals.recv().await {
        let newest = s.index;
        if let Some(j) = judge.as_mut() {
            if j.add(&s, agents).await {
                judge = None;
            }
        }
        if let Some(t) = &shown.telemetry {
            t.record(&s, Some(&agent));
            if done.contains(&s.index) {
                t.record_late(&s);
            }
        }
        if done.contains(&s.index) {
            continue;
        }
        waiting.entry(s.index).or_default().push(s);
        let ready: Vec<u64> = waiting
            .iter()
            .filter(|(index, parts)| parts.len() >= agents || **index + 2 <= newest)
            .map(|(index, _)| *index)
            .collect();
        for index in ready {
            let Some(parts) = waiting.remove(&index) else {
                continue;
            };
            done.insert(index);
            if let Some(m) = merged(index, &parts) {
                shown.merged(&m);
            }
        }
    }
    for (index, parts) in waiting {
        if let Some(m) = merged(index, &parts) {
            shown.merged(&m);
        }
    }
}

fn merged(index: u64, parts: &[IntervalSummary]) -> Option<IntervalSummary> {
    let refs: Vec<&IntervalSummary> = parts.iter().collect();
    match crate::result::merge_interval(index, &refs) {
        Ok(s) => Some(s),
        Err(e) => {
            crate::stderr_line!("mcbench: interval {index}: {e}");
            None
        }
    }
}
