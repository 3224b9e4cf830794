//! Files named by the user: a regular file (a FIFO, a device or
//! `/dev/zero` could block or never end), opened without blocking, and read
//! up to the bound its kind holds.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::FileError;

/// What a file may hold at most, by what it is.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// A token or a PEM certificate or key: 64 KiB.
    Secret,
    /// A configuration, profile or memaslap `-F` file: 1 MiB.
    Config,
    /// A saved result: 64 MiB (an hour at 1 s intervals is ~20 MB).
    Result,
}

impl Bound {
    pub fn max_bytes(self) -> u64 {
        match self {
            Bound::Secret => 64 << 10,
            Bound::Config => 1 << 20,
            Bound::Result => 64 << 20,
        }
    }

    fn shown(self) -> String {
        match self.max_bytes() {
            b if b >= 1 << 20 => format!("{} MiB", b >> 20),
            b => format!("{} KiB", b >> 10),
        }
    }
}

/// Opens `path` if it is a regular file, without blocking on a FIFO; its
/// size as it was opened.
pub fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), FileError> {
    let unreadable = |source| FileError::Read {
        path: path.into(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular { path: path.into() });
    }
    Ok((file, meta))
}

/// The bytes of the regular file `path`, refused above `bound`; `what`
/// names what it should be in the message.
pub fn read_bytes(path: &Path, bound: Bound, what: &str) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    read_opened(file, meta.len(), path, bound, what)
}

/// The text of the regular file `path`, a secret (a token): as ssh asks of
/// a private key, its mode must give group and others no access, judged
/// on the file opened (not on a path that may have changed since).
pub fn read_private_text(path: &Path, what: &str) -> Result<String, FileError> {
    let bytes = read_private_bytes(path, what)?;
    String::from_utf8(bytes).map_err(|_| not_text(path, what))
}

/// The bytes of a secret file (a private key): `read_private_text`'s rule
/// on its mode.
pub fn read_private_bytes(path: &Path, what: &str) -> Result<Vec<u8>, FileError> {
    use std::os::unix::fs::PermissionsExt;
    let (file, meta) = open_regular(path)?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(FileError::NotPrivate {
            path: path.into(),
            mode,
            what: what.into(),
        });
    }
    read_opened(file, meta.len(), path, Bound::Secret, what)
}

/// Reads `file` (`path`, `len` bytes when opened) within `bound`.
fn read_opened(
    file: File,
    len: u64,
    path: &Path,
    bound: Bound,
    what: &str,
) -> Result<Vec<u8>, FileError> {
    let max = bound.max_bytes();
    let too_large = || FileError::TooLarge {
        path: path.into(),
        bound: bound.shown(),
        what: what.into(),
    };
    if len > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Read {
            path: path.into(),
            source,
        })?;
    // It may have grown since it was opened.
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The text of the regular file `path`, as `read_bytes`.
pub fn read_text(path: &Path, bound: Bound, what: &str) -> Result<String, FileError> {
    String::from_utf8(read_bytes(path, bound, what)?).map_err(|_| not_text(path, what))
}

fn not_text(path: &Path, what: &str) -> FileError {
    FileError::NotText {
        path: path.into(),
        what: what.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_large_files_are_refused_without_reading() {
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let e = read_bytes(Path::new(dev), Bound::Secret, "a token").unwrap_err();
            assert!(matches!(e, FileError::NotRegular { .. }), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would wait for ever.
        let e = read_text(&fifo, Bound::Config, "a configuration").unwrap_err();
        assert!(matches!(e, FileError::NotRegular { .. }), "{e}");
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(Bound::Secret.max_bytes() + 1)
            .unwrap();
        let e = read_bytes(&big, Bound::Secret, "a PEM file").unwrap_err();
        assert!(
            e.to_string().contains("larger than 64 KiB: not a PEM file"),
            "{e}"
        );
        std::fs::write(&big, b"token").unwrap();
        assert_eq!(read_text(&big, Bound::Secret, "a token").unwrap(), "token");
    }
}
