//! `TraceReader`: a trace file opened, its format found, its records
//! streamed one at a time (zstd decompressed on the way).

use super::binary::{self, LCS_HEADER_LEN, OPNS_LEN, ORACLE_LEN};
use super::{text, OpenError, Record, RecordError, TraceError, TraceFormat};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// zstd's frame magic, little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Read buffer, bytes: an lcs header fits, and reads stay large.
const BUFFER: usize = 256 * 1024;
/// A text line longer than this is not a trace line, bytes.
const MAX_LINE: usize = 64 * 1024;

pub struct TraceReader {
    format: TraceFormat,
    input: Box<dyn BufRead + Send>,
    /// Bytes of one binary record (0: a text format).
    record_len: usize,
    lcs_version: u64,
    line: Vec<u8>,
    /// Lines or records read so far.
    at: u64,
}

impl TraceReader {
    /// Opens `path`: zstd is found by its magic number, the format from
    /// `format` or else the file (lcs magic, extension, first line).
    pub fn open(path: &Path, format: Option<TraceFormat>) -> Result<Self, OpenError> {
        // Unbounded, but streamed: only a regular file, which ends.
        let (file, _) = crate::untrusted::open_regular(path)?;
        Self::from_read(Box::new(file), path, format).map_err(|e| OpenError::In {
            path: path.into(),
            source: Box::new(e),
        })
    }

    /// Reads a trace from `input`; `path` is its name, for the format's
    /// extension.
    pub fn from_read(
        input: Box<dyn Read + Send>,
        path: &Path,
        format: Option<TraceFormat>,
    ) -> Result<Self, OpenError> {
        let mut raw = BufReader::with_capacity(BUFFER, input);
        let head = raw.fill_buf().map_err(OpenError::Read)?;
        let mut input: Box<dyn BufRead + Send> = if head.starts_with(&ZSTD_MAGIC) {
            let decoder = zstd::stream::read::Decoder::with_buffer(raw).map_err(OpenError::Zstd)?;
            Box::new(BufReader::with_capacity(BUFFER, decoder))
        } else {
            Box::new(raw)
        };
        let format = match format {
            Some(f) => f,
            None => detect(path, &mut input)?,
        };
        let mut reader = TraceReader {
            format,
            input,
            record_len: 0,
            lcs_version: 0,
            line: Vec::with_capacity(512),
            at: 0,
        };
        reader.start()?;
        Ok(reader)
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Whether records name their ops (else each is a get that fills its
    /// miss): not oracleGeneral's, nor lcs v1's.
    pub fn names_ops(&self) -> bool {
        match self.format {
            TraceFormat::OracleGeneral => false,
            TraceFormat::Lcs => self.lcs_version >= 2,
            _ => true,
        }
    }

    /// Reads the header (lcs) and sets the record length.
    fn start(&mut self) -> Result<(), OpenError> {
        self.record_len = match self.format {
            TraceFormat::OracleGeneral => ORACLE_LEN,
            TraceFormat::OracleGeneralOpns => OPNS_LEN,
            TraceFormat::Lcs => {
                let mut header = vec![0; LCS_HEADER_LEN];
                let n = read_full(&mut self.input, &mut header).map_err(OpenError::Head)?;
                header.truncate(n);
                self.lcs_version = binary::lcs_header(&header)?;
                binary::lcs_record_len(self.lcs_version)?
            }
            _ => 0,
        };
        Ok(())
    }

    /// The next record into `rec`; `false` at the end of the trace.
    pub fn next(&mut self, rec: &mut Record) -> Result<bool, TraceError> {
        rec.clear();
        if self.record_len > 0 {
            self.next_binary(rec)
        } else {
            self.next_text(rec)
        }
    }

    /// An error in the record just counted.
    fn fail(&self, why: RecordError) -> TraceError {
        TraceError {
            at: self.at,
            binary: self.record_len > 0,
            why,
        }
    }

    /// An error reading the next record, before it is counted.
    fn fail_reading(&self, e: std::io::Error) -> TraceError {
        TraceError {
            at: self.at + 1,
            binary: self.record_len > 0,
            why: RecordError::Read(e.to_string()),
        }
    }

    fn next_binary(&mut self, rec: &mut Record) -> Result<bool, TraceError> {
        self.line.resize(self.record_len, 0);
        let n = read_full(&mut self.input, &mut self.line).map_err(|e| self.fail_reading(e))?;
        if n == 0 {
            return Ok(false);
        }
        self.at += 1;
        if n < self.record_len {
            return Err(self.fail(RecordError::Cut {
                got: n,
                want: self.record_len,
            }));
        }
        let b = &self.line;
        let decoded = match self.format {
            TraceFormat::OracleGeneral => {
                binary::oracle(b, rec);
                Ok(())
            }
            TraceFormat::OracleGeneralOpns => binary::opns(b, rec),
            _ => binary::lcs(b, self.lcs_version, rec),
        };
        decoded.map_err(|e| self.fail(e))?;
        Ok(true)
    }

    fn next_text(&mut self, rec: &mut Record) -> Result<bool, TraceError> {
        loop {
            self.line.clear();
            let n = (&mut self.input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .map_err(|e| self.fail_reading(e))?;
            if n == 0 {
                return Ok(false);
            }
            self.at += 1;
            if self.line.len() > MAX_LINE {
                return Err(self.fail(RecordError::LongLine(MAX_LINE)));
            }
            let line = &self.line;
            let blank = line.iter().all(u8::is_ascii_whitespace);
            let header =
                self.at == 1 && self.format == TraceFormat::MetaKv && text::meta_header(line);
            if blank || header {
                continue;
            }
            let parsed = match self.format {
                TraceFormat::Twitter => text::twitter(line, rec),
                TraceFormat::MetaKv => text::meta_kv(line, rec),
                _ => text::keys(line, rec),
            };
            parsed.map_err(|e| self.fail(e))?;
            return Ok(true);
        }
    }
}

/// Fills `buf` as far as the input goes; returns the bytes read.
fn read_full(input: &mut dyn BufRead, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The format of a trace given without `--trace-format`: lcs by its magic,
/// libCacheSim's formats by their extension, text by its first line's
/// fields (7: Twitter; 5 or 10: Meta KV).
fn detect(path: &Path, input: &mut Box<dyn BufRead + Send>) -> Result<TraceFormat, OpenError> {
    let head = input.fill_buf().map_err(OpenError::Head)?;
    if head.len() >= 8 && head[..8] == binary::LCS_MAGIC.to_le_bytes() {
        return Ok(TraceFormat::Lcs);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase());
    let name = name.unwrap_or_default();
    let name = name.strip_suffix(".zst").unwrap_or(&name);
    if name.ends_with(".lcs") {
        return Ok(TraceFormat::Lcs);
    }
    if name.ends_with("opns") || name.ends_with("opns.bin") {
        return Ok(TraceFormat::OracleGeneralOpns);
    }
    if [".oraclegeneral", ".oraclegeneralbin", ".oraclegeneral.bin"]
        .iter()
        .any(|ext| name.ends_with(ext))
    {
        return Ok(TraceFormat::OracleGeneral);
    }
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let first = &head[..line_end];
    let unknown = || OpenError::Undetected;
    if first.is_empty() || first.iter().any(|&b| b == 0 || b >= 0x80) {
        return Err(unknown());
    }
    match first.iter().filter(|&&b| b == b',').count() {
        6 => Ok(TraceFormat::Twitter),
        4 | 9 => Ok(TraceFormat::MetaKv),
        _ => Err(unknown()),
    }
}
