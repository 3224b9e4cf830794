//! Authentication, once per connection before any request: what each
//! protocol sends, and what its reply means.

use crate::{ascii, binary, line, resp, ParseError, Protocol};

/// What the server made of the credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthOutcome {
    /// The connection is authenticated (binary status 0, `STORED`, `+OK`).
    Accepted,
    /// Binary status 0x20: wrong user or password.
    Refused,
    /// Binary status 0x21: the mechanism wants another step (never for
    /// `PLAIN`).
    Continue,
    /// Any other binary status, e.g. 0x81 from a server started without `-S`.
    Other(u16),
    /// A text or RESP reply other than acceptance, as the server wrote it.
    Declined(String),
}

impl Protocol {
    /// Appends the authentication request: SASL PLAIN (binary), memcached
    /// `-Y` text authentication (ascii, meta: a `set` of "user password"),
    /// `AUTH` (RESP).
    pub fn encode_auth(self, out: &mut Vec<u8>, user: &[u8], password: &[u8]) {
        match self {
            Protocol::Binary => binary::sasl_auth_plain(out, user, password),
            Protocol::Ascii | Protocol::Meta => ascii::auth(out, user, password),
            Protocol::Resp => resp::auth(out, user, password),
        }
    }

    /// The reply to [`Protocol::encode_auth`] from the front of `buf`: the
    /// outcome and the bytes it took, `Ok(None)` if incomplete.
    pub fn parse_auth(self, buf: &[u8]) -> Result<Option<(AuthOutcome, usize)>, ParseError> {
        match self {
            Protocol::Binary => binary::parse_auth(buf),
            Protocol::Ascii | Protocol::Meta => text_auth(buf, b"STORED"),
            Protocol::Resp => text_auth(buf, b"+OK"),
        }
    }
}

/// One reply line: `accepted` is success, anything else is declined.
fn text_auth(buf: &[u8], accepted: &[u8]) -> Result<Option<(AuthOutcome, usize)>, ParseError> {
    let Some(reply) = line::next_line(buf)? else {
        return Ok(None);
    };
    let outcome = if reply == accepted {
        AuthOutcome::Accepted
    } else {
        AuthOutcome::Declined(String::from_utf8_lossy(reply).into_owned())
    };
    Ok(Some((outcome, reply.len() + 2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_resp_replies_decide() {
        for (p, ok, no) in [
            (
                Protocol::Ascii,
                &b"STORED\r\n"[..],
                &b"CLIENT_ERROR authentication failure\r\n"[..],
            ),
            (
                Protocol::Meta,
                b"STORED\r\n",
                b"CLIENT_ERROR authentication failure\r\n",
            ),
            (
                Protocol::Resp,
                b"+OK\r\n",
                b"-WRONGPASS invalid username-password pair\r\n",
            ),
        ] {
            assert_eq!(
                p.parse_auth(ok),
                Ok(Some((AuthOutcome::Accepted, ok.len())))
            );
            let (outcome, used) = p.parse_auth(no).unwrap().unwrap();
            assert!(
                matches!(outcome, AuthOutcome::Declined(line) if no.starts_with(line.as_bytes()))
            );
            assert_eq!(used, no.len());
            assert_eq!(p.parse_auth(&ok[..ok.len() - 1]), Ok(None));
        }
    }
}
