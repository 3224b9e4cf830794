//! The JSON report: `RunResult` as it is, schema `mcbench.run/2`.

use super::Exporter;
use crate::result::RunResult;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, String> {
        let mut s = serde_json::to_string_pretty(&runs[0]).map_err(|e| e.to_string())?;
        s.push('\n');
        Ok(s.into_bytes())
    }
}
