//! Saved results read back: `mcbench report`, `compare` and merges start
//! here.

use super::{RunResult, SCHEMA};
use std::path::Path;

impl RunResult {
    /// Reads a result `mcbench run --json` wrote.
    pub fn load(path: &Path) -> Result<RunResult, String> {
        let text = crate::untrusted::read_text(
            path,
            crate::untrusted::Bound::Result,
            "an mcbench result",
        )?;
        RunResult::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the JSON text of a result; refuses other schemas by name.
    pub fn parse(text: &str) -> Result<RunResult, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "schema {other}, but this mcbench reads {SCHEMA}; results of schema \
                     mcbench.run/1 kept no histograms and cannot be rendered again"
                ))
            }
            None => return Err("not an mcbench result (no \"schema\" field)".into()),
        }
        let r: RunResult = serde_json::from_value(value)
            .map_err(|e| format!("not a valid {SCHEMA} result: {e}"))?;
        r.spec
            .validate_reported()
            .map_err(|e| format!("its spec: {e}"))?;
        for s in &r.intervals {
            s.check()?;
        }
        let measured = r.measure.iter().flat_map(|m| {
            (m.ops.iter().map(|(n, o)| (n.as_str(), o))).chain([("measure total", &m.total)])
        });
        for (name, op) in r
            .ops
            .iter()
            .map(|(n, o)| (n.as_str(), o))
            .chain([("total", &r.total)])
            .chain(measured)
        {
            if let Some(parts) = &op.latency_parts {
                parts
                    .recorder(op.count)
                    .map_err(|e| format!("{name}: {e}"))?;
            }
            if let Some(b) = &op.batches {
                b.check(op.count).map_err(|e| format!("{name}: {e}"))?;
            }
        }
        Ok(r)
    }
}
