//! memcache-perf's server tracing commands (`start_trace`, `stop_trace`),
//! which tracing builds of memcached take on the text protocol. A stock
//! memcached answers `ERROR`, as to any unknown command.

use crate::line::{error_reply, next_line};
use crate::ParseError;

/// The two commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceCommand {
    Start,
    Stop,
}

impl TraceCommand {
    pub fn name(self) -> &'static str {
        match self {
            TraceCommand::Start => "start_trace",
            TraceCommand::Stop => "stop_trace",
        }
    }

    pub fn encode(self) -> Vec<u8> {
        format!("{}\r\n", self.name()).into_bytes()
    }
}

/// The reply at the front of `buf`: its length and line, and whether it is
/// an error line (the command refused); `Ok(None)` until a whole line came.
pub fn parse(buf: &[u8]) -> Result<Option<(usize, String, bool)>, ParseError> {
    let Some(line) = next_line(buf)? else {
        return Ok(None);
    };
    let refused = error_reply(line).transpose()?.is_some();
    Ok(Some((
        line.len() + 2,
        String::from_utf8_lossy(line).into_owned(),
        refused,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_memcached_refuses_and_a_tracing_build_accepts() {
        assert_eq!(TraceCommand::Start.encode(), b"start_trace\r\n");
        assert_eq!(
            parse(b"ERROR\r\n").unwrap(),
            Some((7, "ERROR".into(), true))
        );
        assert_eq!(parse(b"OK\r\nrest").unwrap(), Some((4, "OK".into(), false)));
        assert_eq!(parse(b"OK").unwrap(), None);
        assert!(parse(b"OK\n").is_err());
    }
}
