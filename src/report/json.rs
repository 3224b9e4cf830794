//! The JSON report: `RunResult` as it is, schema `mcbench.run/1`.

use super::Exporter;
use crate::result::RunResult;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, result: &RunResult) -> String {
        let mut s = serde_json::to_string_pretty(result).expect("RunResult serialises");
        s.push('\n');
        s
    }
}
