//! Saved results read back: `mcbench report`, `compare` and merges start
//! here.

use super::{ResultError, RunResult, SCHEMA};
use std::path::Path;

impl RunResult {
    /// Reads a result `mcbench run --json` wrote.
    pub fn load(path: &Path) -> Result<RunResult, ResultError> {
        let text = crate::untrusted::read_text(
            path,
            crate::untrusted::Bound::Result,
            "an mcbench result",
        )?;
        RunResult::parse(&text).map_err(|e| e.in_file(path))
    }

    /// Parses the JSON text of a result; refuses other schemas by name,
    /// and a result that does not add up (`checked`).
    ///
    /// Read straight into the result's types, never as a `serde_json::Value`
    /// first: a document tree costs some 30 times its text (1.4 GB for a
    /// 44 MB result), and a field mcbench does not know is skipped, not
    /// kept.
    pub fn parse(text: &str) -> Result<RunResult, ResultError> {
        #[derive(serde::Deserialize)]
        struct Head {
            schema: Option<String>,
        }
        let head: Head = serde_json::from_str(text).map_err(|e| {
            // JSON, but not an object with a string "schema" (an array, a
            // number), or not JSON at all.
            match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => ResultError::NoSchema,
                Err(_) => ResultError::NotJson(e),
            }
        })?;
        match head.schema.as_deref() {
            Some(SCHEMA) => {}
            Some(other) => return Err(ResultError::OldSchema(other.into())),
            None => return Err(ResultError::NoSchema),
        }
        let r: RunResult = serde_json::from_str(text).map_err(ResultError::NotValid)?;
        RunResult::admit(r)
    }

    /// A result read from outside (a file, a set's member), kept only if
    /// it is of this schema, its spec is one a report can show, and its
    /// figures add up (`checked`).
    pub(super) fn admit(r: RunResult) -> Result<RunResult, ResultError> {
        if r.schema != SCHEMA {
            return Err(ResultError::Schema(r.schema));
        }
        r.spec.validate_reported().map_err(ResultError::Spec)?;
        super::checked::check(&r)?;
        Ok(r)
    }
}
