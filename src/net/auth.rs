//! Authentication, once per connection before the run: SASL PLAIN over the
//! binary protocol, memcached's `-Y` text authentication over ascii and
//! meta, `AUTH` over RESP. Blocking, bounded by the socket timeouts the
//! connection was opened with.

use super::blocking::{read_more, send_all, Broken};
use super::Link;
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
) -> Result<(), String> {
    let mut request = Vec::new();
    protocol.encode_auth(&mut request, user.as_bytes(), password.as_bytes());
    send_all(socket, &request).map_err(|e| format!("sending the credentials: {e}"))?;
    let mut reply = Vec::new();
    loop {
        let parsed = protocol
            .parse_auth(&reply)
            .map_err(|e| format!("malformed authentication reply: {e}"))?;
        if let Some((outcome, _)) = parsed {
            return verdict(outcome);
        }
        if reply.len() > MAX_REPLY {
            return Err("authentication reply too long".into());
        }
        read_more(socket, &mut reply).map_err(|e| match e {
            Broken::Closed => "the server closed the connection during authentication".into(),
            Broken::TimedOut => "no authentication reply within --timeout".into(),
            Broken::Stopped => "stopped during authentication".into(),
            Broken::Io(e) => format!("reading the authentication reply: {e}"),
        })?;
    }
}

fn verdict(outcome: AuthOutcome) -> Result<(), String> {
    match outcome {
        AuthOutcome::Accepted => Ok(()),
        AuthOutcome::Refused => Err("authentication failed (SASL PLAIN refused)".into()),
        AuthOutcome::Continue => {
            Err("the server asked for another SASL step; only PLAIN is supported".into())
        }
        AuthOutcome::Other(status) => Err(format!(
            "authentication failed: binary status {status:#06x} (is the server started with -S?)"
        )),
        AuthOutcome::Declined(line) => Err(format!(
            "authentication failed: the server replied '{line}'"
        )),
    }
}
