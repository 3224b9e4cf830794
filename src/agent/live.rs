//! `-i` with `--agent`: one live line per interval, of every agent's
//! interval of that number merged, printed once all have sent it (or an
//! agent is two intervals behind the others: a lost or lagging agent must
//! not hold the lines back).

use crate::stats::IntervalSummary;
use std::collections::BTreeMap;
use tokio::sync::mpsc;

/// Each agent's intervals, as they close; `None` when the run has no
/// live lines.
pub type Feed = Option<mpsc::UnboundedSender<IntervalSummary>>;

/// Prints merged lines until every agent's sender is gone.
pub async fn show(
    mut intervals: mpsc::UnboundedReceiver<IntervalSummary>,
    agents: usize,
    percentiles: Vec<f64>,
) {
    let mut waiting: BTreeMap<u64, Vec<IntervalSummary>> = BTreeMap::new();
    while let Some(s) = intervals.recv().await {
        let newest = s.index;
        waiting.entry(s.index).or_default().push(s);
        let ready: Vec<u64> = waiting
            .iter()
            .filter(|(index, parts)| parts.len() >= agents || **index + 2 <= newest)
            .map(|(index, _)| *index)
            .collect();
        for index in ready {
            if let Some(parts) = waiting.remove(&index) {
                print(index, &parts, &percentiles);
            }
        }
    }
    for (index, parts) in waiting {
        print(index, &parts, &percentiles);
    }
}

fn print(index: u64, parts: &[IntervalSummary], percentiles: &[f64]) {
    let refs: Vec<&IntervalSummary> = parts.iter().collect();
    match crate::result::merge_interval(index, &refs) {
        Ok(s) => crate::stderr_line!("{}", crate::report::live_line(&s, percentiles)),
        Err(e) => crate::stderr_line!("mcbench: interval {index}: {e}"),
    }
}
