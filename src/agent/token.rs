//! The shared token every call carries (`authorization: Bearer TOKEN`).

use super::AgentError;
use std::path::Path;
use tonic::metadata::MetadataValue;
use tonic::{Request, Status};

/// Shortest token accepted: a guessable one protects nothing.
const MIN_LEN: usize = 16;

/// The token in `path`: its first line, trimmed; at least 16 bytes. As
/// ssh with a private key, a file that group or others may read (or
/// write) is refused: the token is the agent's only lock.
pub fn read(path: &Path) -> Result<String, AgentError> {
    let text =
        crate::untrusted::read_private_text(path, "a token file").map_err(AgentError::TokenFile)?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    let refused = |why: String| AgentError::Token {
        path: path.to_path_buf(),
        why,
    };
    if token.len() < MIN_LEN {
        return Err(refused(format!(
            "at least {MIN_LEN} characters on its first line"
        )));
    }
    if !token.chars().all(|c| c.is_ascii_graphic()) {
        return Err(refused("printable ASCII without spaces".into()));
    }
    Ok(token)
}

/// Adds the token to each outgoing call.
#[derive(Clone)]
pub struct Attach {
    header: MetadataValue<tonic::metadata::Ascii>,
}

impl Attach {
    pub fn new(token: &str) -> Result<Self, AgentError> {
        let header = format!("Bearer {token}")
            .parse()
            .map_err(|_| AgentError::TokenHeader)?;
        Ok(Attach { header })
    }
}

impl tonic::service::Interceptor for Attach {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut()
            .insert("authorization", self.header.clone());
        Ok(req)
    }
}

/// Refuses calls without the token, and says so on stderr with the
/// caller's address.
#[derive(Clone)]
pub struct Check {
    expected: String,
}

impl Check {
    pub fn new(token: &str) -> Self {
        Check {
            expected: format!("Bearer {token}"),
        }
    }
}

impl tonic::service::Interceptor for Check {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let gate = super::door::gate_of(&req);
        if given.is_some_and(|g| constant_time_eq(g.as_bytes(), self.expected.as_bytes())) {
            if let Some(gate) = gate {
                gate.admit();
            }
            return Ok(req);
        }
        let from = gate
            .map(|g| g.peer)
            .or_else(|| req.remote_addr())
            .map_or("an unknown address".to_string(), |a| a.to_string());
        log_refusal(&from);
        Err(Status::unauthenticated("wrong or missing token"))
    }
}

/// Logs a refused call, at most once a second with the count of those
/// left unsaid: a stranger's calls must not flood the agent's log.
fn log_refusal(from: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST_S: AtomicU64 = AtomicU64::new(0);
    static UNSAID: AtomicU64 = AtomicU64::new(0);
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if LAST_S.swap(now_s, Ordering::Relaxed) == now_s {
        UNSAID.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let unsaid = UNSAID.swap(0, Ordering::Relaxed);
    let more = match unsaid {
        0 => String::new(),
        n => format!(" ({n} more refused calls not logged)"),
    };
    crate::stderr_line!("mcbench agent: refused a call from {from}: wrong or missing token{more}");
}

/// Compares without stopping at the first difference, so that the time
/// taken says nothing of how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::untrusted::FileError;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn short_or_spaced_tokens_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, "short\n").unwrap();
        let loose = read(&p).unwrap_err();
        assert!(
            matches!(&loose, AgentError::TokenFile(FileError::NotPrivate { .. })),
            "{loose}"
        );
        assert!(loose.to_string().contains("chmod 600"), "{loose}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read(&p).unwrap_err().to_string().contains("at least 16"));
        std::fs::write(&p, "with a space in it here\n").unwrap();
        assert!(read(&p).unwrap_err().to_string().contains("printable"));
        std::fs::write(&p, "0123456789abcdef0123\nsecond line\n").unwrap();
        assert_eq!(read(&p).unwrap(), "0123456789abcdef0123");
    }
}
