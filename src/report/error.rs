//! What can go wrong making a report: rendering it (a kept histogram that
//! does not decode, a chart or a table that cannot be drawn) and writing
//! it (an output file that cannot be created or written).

use std::path::PathBuf;

/// A report that cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
    #[error(transparent)]
    Stats(#[from] crate::stats::StatsError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Csv(#[from] ::csv::Error),
    #[error("CSV: {0}")]
    CsvFlush(String),
    #[error("no run")]
    NoRun,
    #[error("this format holds runs, not curves")]
    NoCurves,
    #[error("op '{0}' is no log tag")]
    LogTag(String),
    /// The HdrHistogram log writer's error, as it words it.
    #[error("{0}")]
    Log(String),
    /// plotters' error, as it words it (its Debug form).
    #[error("drawing a chart: {0}")]
    Chart(String),
}

/// An output that cannot be created or written (`flag` names it).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{flag} {path}: is a directory")]
    IsDirectory { flag: String, path: PathBuf },
    #[error("{flag} {path}: cannot open it: {source}")]
    Open {
        flag: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{flag} {path}: not a file name")]
    NotFileName { flag: String, path: PathBuf },
    #[error("{flag} {path}: cannot create the file: {source}")]
    Create {
        flag: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{first} and {second} name the same file {path}: give each its own")]
    SameFile {
        first: String,
        second: String,
        path: PathBuf,
    },
    #[error("cannot write to stdout: {0}")]
    Stdout(#[source] std::io::Error),
    #[error("cannot write {what}: {source}")]
    Write {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} holds one run: give one result, or --merge them")]
    OneRun(&'static str),
    #[error("{0} holds one run's histograms, not a curve; --json keeps every run")]
    NotCurve(&'static str),
    /// Output `flag`, whose report does not render.
    #[error("{flag}: {source}")]
    Render {
        flag: &'static str,
        #[source]
        source: RenderError,
    },
    #[error("written twice")]
    WrittenTwice,
    /// Output `flag` that cannot be written to `what` (a path, stdout or
    /// stderr).
    #[error("cannot write {flag} to {what}: {source}")]
    WriteTo {
        flag: &'static str,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// `--save`'s samples file.
    #[error("--save {path}: {source}")]
    Save {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
