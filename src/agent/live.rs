//! `-i` and `--precision` with `--agent`: every agent's interval of one
//! number merged once all have sent it (or an agent is two intervals
//! behind the others: a lost or lagging agent must not hold the lines
//! back); one live line each, and the merged run judged precise enough or
//! not.

use crate::stats::IntervalSummary;
use std::collections::BTreeMap;
use tokio::sync::mpsc;

/// Each agent's intervals, as they close; `None` when the run has no
/// live lines and no `--precision`.
pub type Feed = Option<mpsc::UnboundedSender<IntervalSummary>>;

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
/// all have sent it (or an agent is two behind) and prints its line when
/// `percentiles` are given; `judge` sees every agent's part of each.
pub async fn show(
    mut intervals: mpsc::UnboundedReceiver<IntervalSummary>,
    agents: usize,
    percentiles: Option<Vec<f64>>,
    mut judge: Option<Judge>,
) {
    let mut waiting: BTreeMap<u64, Vec<IntervalSummary>> = BTreeMap::new();
    while let Some(s) = intervals.recv().await {
        let newest = s.index;
        if let Some(j) = judge.as_mut() {
            if j.add(&s, agents).await {
                judge = None;
            }
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
            if let (Some(p), Some(m)) = (&percentiles, merged(index, &parts)) {
                crate::stderr_line!("{}", crate::report::live_line(&m, p));
            }
        }
    }
    for (index, parts) in waiting {
        if let (Some(p), Some(m)) = (&percentiles, merged(index, &parts)) {
            crate::stderr_line!("{}", crate::report::live_line(&m, p));
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
