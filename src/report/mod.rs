//! Renderers of a `RunResult`, one file per format behind one trait, and the
//! live per-interval line.

mod json;
mod live;
mod text;

pub use json::JsonExporter;
pub use live::live_line;
pub use text::TextExporter;

use crate::result::RunResult;

/// One output format.
pub trait Exporter {
    fn render(&self, result: &RunResult) -> String;
}
