//! `--save`: raw samples, one measured request per line, streamed to the
//! file as the intervals arrive (format: `docs/samples.md`).

use super::staged::StagedFile;
use super::OutputError;
use crate::stats::Sample;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The column names, the file's first line.
pub const SAMPLES_HEADER: &str = "intended_ns\top\tlatency_ns\tservice_ns\treply\t\
     client_queue_ns\tsend_path_ns\tnetwork_server_ns\tclient_receive_ns\n";

pub struct SampleWriter {
    staged: StagedFile,
    out: BufWriter<File>,
    /// The first write error; later writes are skipped.
    error: Option<std::io::Error>,
    pub rows: u64,
}

impl SampleWriter {
    /// Creates the file (before any traffic) and writes its header.
    pub fn create(path: &Path) -> Result<SampleWriter, OutputError> {
        let (staged, file) = StagedFile::create("--save", path)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(SAMPLES_HEADER.as_bytes())
            .map_err(|source| OutputError::Save {
                path: path.into(),
                source,
            })?;
        Ok(SampleWriter {
            staged,
            out,
            error: None,
            rows: 0,
        })
    }

    /// Appends `samples`; `start_ns` is the measured phase's start on the
    /// worker clock, the zero of `intended_ns`.
    pub fn write(&mut self, samples: &[Sample], start_ns: u64) {
        if self.error.is_some() {
            return;
        }
        for s in samples {
            let row = write!(
                self.out,
                "{}\t{}\t{}\t{}\t{}",
                s.intended_ns.saturating_sub(start_ns),
                s.op.name(),
                s.latency_ns.max(1),
                s.service_ns.max(1),
                s.reply.name()
            )
            .and_then(|()| write_parts(&mut self.out, s.parts));
            if let Err(e) = row {
                self.error = Some(e);
                return;
            }
            self.rows += 1;
        }
    }

    /// Flushes the file and puts it in place; reports the first write
    /// error.
    pub fn finish(mut self) -> Result<(), OutputError> {
        let flushed = self.out.flush();
        let path = self.staged.path().to_path_buf();
        let written = match self.error.take().map_or(flushed, Err) {
            Ok(()) => self.staged.commit(),
            Err(e) => Err(e),
        };
        written.map_err(|source| OutputError::Save { path, source })
    }
}

/// The latency's four parts, ns, ending the row: empty cells where the
/// kernel stamped nothing. They add up to `latency_ns` (which is at least
/// 1: a latency of 0 shows as 1 beside parts of 0).
fn write_parts(out: &mut impl Write, parts: Option<[u64; 4]>) -> std::io::Result<()> {
    match parts {
        Some([q, s, n, r]) => writeln!(out, "\t{q}\t{s}\t{n}\t{r}"),
        None => writeln!(out, "\t\t\t\t"),
    }
}
