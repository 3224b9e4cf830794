//! The JSON report: `RunResult` as it is, schema `mcbench.run/2`; a scan's
//! or a search's `Curve`, schema `mcbench.curve/1`.

use super::Exporter;
use crate::result::{Curve, RunResult};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, String> {
        let mut s = serde_json::to_string_pretty(&runs[0]).map_err(|e| e.to_string())?;
        s.push('\n');
        Ok(s.into_bytes())
    }

    /// The curve's points and every run behind them (`mcbench.curve/1`).
    fn render_curve(&self, curve: &Curve) -> Result<Vec<u8>, String> {
        let mut s = serde_json::to_string_pretty(curve).map_err(|e| e.to_string())?;
        s.push('\n');
        Ok(s.into_bytes())
    }

    fn takes_curve(&self) -> bool {
        true
    }
}
