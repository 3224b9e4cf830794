//! Authentication, once per connection before the run: SASL PLAIN over the
//! binary protocol, memcached's `-Y` text authentication over ascii and
//! meta, `AUTH` over RESP. Blocking, bounded by the socket timeouts the
//! connection was opened with.

use super::blocking::{read_more, send_all, Broken};
use super::{AuthError, Link};
use mcbench_proto::{AuthOutcome, Protocol};

/// The most bytes an authentication reply may take.
const MAX_REPLY: usize = 4096;

/// Authenticates `socket` as `user`; the error says why it was refused.
/// What to send and what the reply means are the codec's.
pub fn authenticate(
    socket: &mut Link,
    protocol: Protocol,
    user: &str,
    password: &str,
) -> Result<(), AuthError> {
    let mut request = Vec::new();
    protocol.encode_auth(&mut request, user.as_bytes(), password.as_bytes());
    send_all(socket, &request).map_err(AuthError::Send)?;
    let mut reply = Vec::new();
    loop {
        let parsed = protocol
            .parse_auth(&reply)
            .map_err(|e| AuthError::Malformed(e.to_string()))?;
        if let Some((outcome, _)) = parsed {
            return verdict(outcome);
        }
        if reply.len() > MAX_REPLY {
            return Err(AuthError::TooLong);
        }
        read_more(socket, &mut reply).map_err(|e| match e {
            Broken::Closed => AuthError::Closed,
            Broken::TimedOut => AuthError::TimedOut,
            Broken::Stopped => AuthError::Stopped,
            Broken::Io(e) => AuthError::Read(e),
        })?;
    }
}

fn verdict(outcome: AuthOutcome) -> Result<(), AuthError> {
    match outcome {
        AuthOutcome::Accepted => Ok(()),
        AuthOutcome::Refused => Err(AuthError::Refused),
        AuthOutcome::Continue => Err(AuthError::AnotherStep),
        AuthOutcome::Other(status) => Err(AuthError::Status(status)),
        AuthOutcome::Declined(line) => Err(AuthError::Declined(line)),
    }
}
