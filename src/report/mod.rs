//! Renderers of results, one file per format behind one trait, and the one
//! manager that fans a result out to every output the user asked for.
//!
//! *When* is the manager's business (files are created before any traffic,
//! written once at the end, or on a signal); *how* is each exporter's.

mod compare;
mod csv;
mod error;
mod hdr_log;
mod html;
mod json;
mod live;
mod samples;
pub mod settings;
mod staged;
mod text;
mod text_agents;
mod text_brief;
mod text_conns;
pub mod text_curve;
mod text_parts;
pub mod text_runs;
mod text_server_stats;
mod text_servers;
mod text_settings;
mod text_verdict;
mod tone;

pub use compare::{compare, workload_differences, SHARE_OF_LOAD};
pub use error::{OutputError, RenderError};
pub use live::live_line;
pub use samples::SampleWriter;
pub use staged::{refuse_same_file, OneFile};

use crate::error::Failure;
use crate::result::{Curve, RunResult};
use staged::StagedFile;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// One output format.
pub trait Exporter {
    /// The output's bytes for these runs. A format that holds one run is
    /// given exactly one (the manager sees to it).
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError>;

    /// Whether the format can hold several runs (the HTML overlays them).
    fn takes_several(&self) -> bool {
        false
    }

    /// The output's bytes for a scan's or a search's curve.
    fn render_curve(&self, _curve: &Curve) -> Result<Vec<u8>, RenderError> {
        Err(RenderError::NoCurves)
    }

    /// Whether the format can hold a curve.
    fn takes_curve(&self) -> bool {
        false
    }
}

/// The formats, each with the flag that asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Html,
    HdrLog,
}

impl Format {
    pub fn flag(self) -> &'static str {
        match self {
            Format::Text => "the text report",
            Format::Json => "--json",
            Format::Csv => "--csv",
            Format::Html => "--html",
            Format::HdrLog => "--hdr-log",
        }
    }

    fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Text => Box::new(text::TextExporter { details: false }),
            Format::Json => Box::new(json::JsonExporter),
            Format::Csv => Box::new(csv::CsvExporter),
            Format::Html => Box::new(html::HtmlExporter),
            Format::HdrLog => Box::new(hdr_log::HdrLogExporter),
        }
    }
}

enum Dest {
    Stdout,
    Stderr,
    File(Option<StagedFile>, File),
}

struct Target {
    format: Format,
    exporter: Box<dyn Exporter>,
    dest: Dest,
}

/// Every output of one invocation: the text report on stdout (on stderr
/// when `-` sends another format to stdout) and each file asked for.
pub struct ExportManager {
    targets: Vec<Target>,
    /// Rendering saved results (`report`, `compare`): a signal drops what
    /// is not yet written, its temporary files removed. A run's outputs
    /// are written after a signal (the results so far).
    drop_on_signal: bool,
}

impl ExportManager {
    /// Creates every output file now (as a temporary beside its path), so
    /// that an unwritable path is a usage error before any traffic rather
    /// than a result lost after the run. `several`: the outputs will be
    /// given several runs.
    pub fn create(files: &[(Format, &Path)], several: bool) -> Result<Self, Failure> {
        Self::create_checked(files, |format, exporter| {
            if several && !exporter.takes_several() {
                return Err(OutputError::OneRun(format.flag()));
            }
            Ok(())
        })
    }

    /// The outputs of a scan or a search, which hold one curve.
    pub fn create_curve(files: &[(Format, &Path)]) -> Result<Self, Failure> {
        Self::create_checked(files, |format, exporter| {
            if !exporter.takes_curve() {
                return Err(OutputError::NotCurve(format.flag()));
            }
            Ok(())
        })
    }

    fn create_checked(
        files: &[(Format, &Path)],
        check: impl Fn(Format, &dyn Exporter) -> Result<(), OutputError>,
    ) -> Result<Self, Failure> {
        let to_stdout = files.iter().filter(|(_, p)| *p == Path::new("-")).count();
        if to_stdout > 1 {
            return Err(Failure::usage("only one output can go to stdout ('-')"));
        }
        let text_dest = if to_stdout == 1 {
            Dest::Stderr
        } else {
            Dest::Stdout
        };
        let mut targets = vec![Target {
            format: Format::Text,
            exporter: Format::Text.exporter(),
            dest: text_dest,
        }];
        for &(format, path) in files {
            let exporter = format.exporter();
            check(format, exporter.as_ref()).map_err(Failure::usage)?;
            let dest = if path == Path::new("-") {
                Dest::Stdout
            } else {
                let (staged, file) =
                    StagedFile::create(format.flag(), path).map_err(Failure::usage)?;
                Dest::File(Some(staged), file)
            };
            targets.push(Target {
                format,
                exporter,
                dest,
            });
        }
        Ok(ExportManager {
            targets,
            drop_on_signal: false,
        })
    }

    /// The same outputs, dropped (not written) once a signal asks the
    /// process to stop.
    pub fn dropped_on_signal(mut self) -> Self {
        self.drop_on_signal = true;
        self
    }

    /// The same outputs with `text` rendering the text report (a seed
    /// tool's layout).
    pub fn with_text(mut self, text: Box<dyn Exporter>, to_stderr: bool) -> Self {
        if let Some(t) = self.targets.iter_mut().find(|t| t.format == Format::Text) {
            t.exporter = text;
            if to_stderr {
                t.dest = Dest::Stderr;
            }
        }
        self
    }

    /// The same outputs with the text report in full (`--details`) where
    /// it is mcbench's own (call before `with_text`, which replaces it).
    pub fn detailed(mut self, details: bool) -> Self {
        if let Some(t) = self.targets.iter_mut().find(|t| t.format == Format::Text) {
            t.exporter = Box::new(text::TextExporter { details });
        }
        self
    }

    /// The same outputs without the text report (another manager prints
    /// it).
    pub fn without_text(mut self) -> Self {
        self.targets.retain(|t| t.format != Format::Text);
        self
    }

    /// Renders and writes every output. One that fails does not stop the
    /// others; the failures come back together (exit 1).
    pub fn write(&mut self, runs: &[RunResult]) -> Result<(), Failure> {
        let runs = with_precision(runs)?;
        self.write_each(|e| e.render(&runs))
    }

    /// Renders and writes a scan's or a search's curve to every output.
    pub fn write_curve(&mut self, curve: &Curve) -> Result<(), Failure> {
        let mut curve = curve.clone();
        curve.runs = with_precision(&curve.runs)?;
        self.write_each(|e| e.render_curve(&curve))
    }

    fn write_each(
        &mut self,
        render: impl Fn(&dyn Exporter) -> Result<Vec<u8>, RenderError>,
    ) -> Result<(), Failure> {
        let drop_on_signal = self.drop_on_signal;
        let mut failed = Vec::new();
        for t in self.targets.iter_mut() {
            let sig = crate::os::stop_requested();
            if drop_on_signal && sig != 0 {
                return Err(Failure::Stopped(sig));
            }
            if let Err(e) = write_one(t, &render) {
                failed.push(e.to_string());
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(Failure::run(failed.join("\nmcbench: error: ")))
        }
    }
}

/// The runs with every percentile's interval and the verdict filled in
/// for their percentiles (a saved result is given them again).
fn with_precision(runs: &[RunResult]) -> Result<Vec<RunResult>, Failure> {
    runs.iter()
        .map(|r| {
            let mut r = r.clone();
            r.attach_precision().map(|()| r)
        })
        .collect::<Result<_, _>>()
        .map_err(Failure::run)
}

fn write_one(
    t: &mut Target,
    render: impl Fn(&dyn Exporter) -> Result<Vec<u8>, RenderError>,
) -> Result<(), OutputError> {
    let flag = t.format.flag();
    let bytes =
        render(t.exporter.as_ref()).map_err(|source| OutputError::Render { flag, source })?;
    // The text's colour stays on a terminal only (`tone`).
    let colour = t.format == Format::Text;
    let (what, res) = match &mut t.dest {
        Dest::Stdout => (
            "stdout".to_string(),
            write_terminal(std::io::stdout().lock(), &bytes, colour),
        ),
        Dest::Stderr => (
            "stderr".to_string(),
            write_terminal(std::io::stderr().lock(), &bytes, colour),
        ),
        Dest::File(staged, file) => {
            let staged = staged.take().ok_or(OutputError::WrittenTwice)?;
            let what = staged.path().display().to_string();
            (
                what,
                write_flush(file, &bytes).and_then(|()| staged.commit()),
            )
        }
    };
    res.map_err(|source| OutputError::WriteTo { flag, what, source })
}

/// Writes to stdout or stderr; `colour` bytes pass through `anstream`,
/// which keeps their colour codes for a terminal only.
fn write_terminal<S>(raw: S, bytes: &[u8], colour: bool) -> std::io::Result<()>
where
    S: anstream::stream::RawStream + anstream::stream::AsLockedWrite,
{
    match colour {
        true => write_flush(anstream::AutoStream::auto(raw), bytes),
        false => write_flush(raw, bytes),
    }
}

fn write_flush(mut w: impl Write, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(bytes)?;
    w.flush()
}
