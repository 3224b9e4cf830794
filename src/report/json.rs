//! The JSON report: `RunResult` as it is, schema `mcbench.run/2`; several
//! runs as a `RunSet`, `mcbench.runs/1`; a scan's or a search's `Curve`,
//! schema `mcbench.curve/1`.

use crate::report::RenderError;

use super::Exporter;
use crate::result::{Curve, RunResult, RunSet};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    /// One run as it is; several (`run --repeat`, `report A B`) as a set,
    /// `mcbench.runs/1`.
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let mut s = match runs {
            [one] => serde_json::to_string_pretty(one),
            several => serde_json::to_string_pretty(&RunSet::new(None, several.to_vec())),
        }?;
        s.push('\n');
        Ok(s.into_bytes())
    }

    fn takes_several(&self) -> bool {
        true
    }

    /// The curve's points and every run behind them (`mcbench.curve/1`).
    fn render_curve(&self, curve: &Curve) -> Result<Vec<u8>, RenderError> {
        let mut s = serde_json::to_string_pretty(curve)?;
        s.push('\n');
        Ok(s.into_bytes())
    }

    fn takes_curve(&self) -> bool {
        true
    }
}
