//! Output files written whole or not at all. Each is created as a
//! temporary file beside its path before any traffic (so an unwritable
//! path is found up front, and an older file of that name is not emptied
//! by a run that then fails), and renamed over the path once complete.
//!
//! A path that is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO)
//! is written in place: renaming over it would replace the device or pipe
//! with a plain file.
//!
//! A temporary file is named for its path and the process that writes it
//! (`.NAME.mcbench-PID.tmp`). One left behind by a process that no longer
//! runs (killed by SIGKILL, which no cleanup survives) is removed when the
//! same path is next written.

use super::OutputError;
use std::fs::File;
use std::path::{Path, PathBuf};

pub struct StagedFile {
    path: PathBuf,
    /// The temporary file (`None`: written in place).
    tmp: Option<PathBuf>,
    committed: bool,
}

impl StagedFile {
    /// Creates the temporary file for `path`; `flag` names the output in
    /// messages.
    pub fn create(flag: &str, path: &Path) -> Result<(StagedFile, File), OutputError> {
        if path.is_dir() {
            return Err(OutputError::IsDirectory {
                flag: flag.into(),
                path: path.into(),
            });
        }
        // A symlink (`/dev/stdout`) is written through, never replaced.
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = std::fs::metadata(path).ok();
        if link || target.as_ref().is_some_and(|m| !m.is_file()) {
            let file =
                open_in_place(path, target.is_some_and(|m| m.is_file())).map_err(|source| {
                    OutputError::Open {
                        flag: flag.into(),
                        path: path.into(),
                        source,
                    }
                })?;
            let staged = StagedFile {
                path: path.to_path_buf(),
                tmp: None,
                committed: true,
            };
            return Ok((staged, file));
        }
        let name = path.file_name().ok_or_else(|| OutputError::NotFileName {
            flag: flag.into(),
            path: path.into(),
        })?;
        let prefix = format!(".{}.mcbench-", name.to_string_lossy());
        remove_orphans(path, &prefix);
        let tmp = path.with_file_name(format!("{prefix}{}.tmp", std::process::id()));
        let file = File::create(&tmp).map_err(|source| OutputError::Create {
            flag: flag.into(),
            path: path.into(),
            source,
        })?;
        let staged = StagedFile {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            committed: false,
        };
        Ok((staged, file))
    }

    /// Puts the finished file in place (its contents must be flushed).
    pub fn commit(mut self) -> std::io::Result<()> {
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.path)?;
        }
        self.committed = true;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the temporaries beside `path` named `{prefix}PID.tmp` whose
/// process is gone. A live one (a run writing the same path now) is left.
fn remove_orphans(path: &Path, prefix: &str) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<i32>().ok());
        if pid.is_some_and(|pid| pid > 0 && !process_alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (a signal 0 reaches it, or would but for
/// permission).
fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 sends nothing; it only checks the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Opens an existing `path` for writing where it is: a regular file
/// (through a symlink) emptied; a FIFO without a reader refused (ENXIO)
/// rather than waited for.
fn open_in_place(path: &Path, regular: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(regular)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => std::io::Error::other("a pipe with no reader"),
            _ => e,
        })?;
    // Writes block as usual once open.
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}

/// The file `path` names, for telling two names of one file apart from
/// two files: its folder resolved, then its name.
pub fn identity(path: &Path) -> PathBuf {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default();
    std::fs::canonicalize(parent)
        .unwrap_or_else(|_| parent.to_path_buf())
        .join(name)
}

/// Refuses two outputs (or an output and an input) that are one file.
pub fn refuse_same_file(paths: &[(&str, &Path)]) -> Result<(), OutputError> {
    for (i, (flag_a, a)) in paths.iter().enumerate() {
        for (flag_b, b) in &paths[..i] {
            if *a != Path::new("-") && identity(a) == identity(b) {
                return Err(OutputError::SameFile {
                    first: flag_b.to_string(),
                    second: flag_a.to_string(),
                    path: a.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// A file created now and written whole at the end (`mcbench ab --json`):
/// `-` is stdout.
pub struct OneFile {
    staged: Option<(StagedFile, File)>,
}

impl OneFile {
    pub fn create(flag: &str, path: &Path) -> Result<OneFile, OutputError> {
        if path == Path::new("-") {
            return Ok(OneFile { staged: None });
        }
        Ok(OneFile {
            staged: Some(StagedFile::create(flag, path)?),
        })
    }

    pub fn write(self, bytes: &[u8]) -> Result<(), OutputError> {
        use std::io::Write;
        match self.staged {
            None => std::io::stdout()
                .lock()
                .write_all(bytes)
                .map_err(OutputError::Stdout),
            Some((staged, mut file)) => {
                let what = staged.path().display().to_string();
                file.write_all(bytes)
                    .and_then(|()| file.flush())
                    .and_then(|()| staged.commit())
                    .map_err(|source| OutputError::Write { what, source })
            }
        }
    }
}
