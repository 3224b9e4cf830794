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

    /// Parses the JSON text of a result; refuses other schemas by name,
    /// and a result that does not add up (`checked`).
    ///
    /// Read straight into the result's types, never as a `serde_json::Value`
    /// first: a document tree costs some 30 times its text (1.4 GB for a
    /// 44 MB result), and a field mcbench does not know is skipped, not
    /// kept.
    pub fn parse(text: &str) -> Result<RunResult, String> {
        #[derive(serde::Deserialize)]
        struct Head {
            schema: Option<String>,
        }
        let head: Head = serde_json::from_str(text).map_err(|e| {
            // JSON, but not an object with a string "schema" (an array, a
            // number), or not JSON at all.
            match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => "not an mcbench result (no \"schema\" field)".to_string(),
                Err(_) => format!("not JSON: {e}"),
            }
        })?;
        match head.schema.as_deref() {
            Some(SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "schema {other}, but this mcbench reads {SCHEMA}; results of schema \
                     mcbench.run/1 kept no histograms and cannot be rendered again"
                ))
            }
            None => return Err("not an mcbench result (no \"schema\" field)".into()),
        }
        let r: RunResult =
            serde_json::from_str(text).map_err(|e| format!("not a valid {SCHEMA} result: {e}"))?;
        RunResult::admit(r)
    }

    /// A result read from outside (a file, a set's member), kept only if
    /// it is of this schema, its spec is one a report can show, and its
    /// figures add up (`checked`).
    pub(super) fn admit(r: RunResult) -> Result<RunResult, String> {
        if r.schema != SCHEMA {
            return Err(format!(
                "schema {}, but this mcbench reads {SCHEMA}",
                r.schema
            ));
        }
        r.spec
            .validate_reported()
            .map_err(|e| format!("its spec: {e}"))?;
        super::checked::check(&r)?;
        Ok(r)
    }
}
