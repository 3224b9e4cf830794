//! `--trace-commands` (memcache-perf's `-e`): `start_trace` before the
//! measured phase and `stop_trace` after it, sent to every server on a
//! connection of its own, for memcached builds that trace server-side
//! activity between them. A server that does not know them answers
//! `ERROR`: a warning, not a failed run.

use super::EngineError;
use crate::net::blocking::{exchange, Wait};
use crate::net::connect_blocking;
use crate::net::Target;
use crate::spec::RunSpec;
use crate::warnings::Warning;
use mcbench_proto::trace::{self, TraceCommand};
use std::sync::atomic::AtomicUsize;

/// Longest reply read to a trace command, bytes.
const REPLY_LIMIT: usize = 1024;

/// Sends `command` to each server; the refusals (an error reply, or no
/// reply at all), as warnings. After a signal (`stop`), each server gets a
/// moment to answer.
pub fn send(
    spec: &RunSpec,
    addrs: &[Target],
    command: TraceCommand,
    stop: &AtomicUsize,
) -> Vec<Warning> {
    addrs
        .iter()
        .filter_map(|addr| {
            let reply = match ask(spec, addr, command, stop) {
                Ok((_, false)) => return None,
                Ok((line, true)) => line,
                Err(e) => e.to_string(),
            };
            Some(Warning::TraceRefused {
                server: addr.to_string(),
                command: command.name().to_string(),
                reply,
            })
        })
        .collect()
}

/// The server's reply line, and whether it refused the command.
fn ask(
    spec: &RunSpec,
    addr: &Target,
    command: TraceCommand,
    stop: &AtomicUsize,
) -> Result<(String, bool), EngineError> {
    let mut link = connect_blocking(addr, spec, spec.connect_timeout(), 0, Some(stop))?;
    let wait = Wait {
        timeout: spec.load.timeout,
        stop: Some(stop),
    };
    let mut reply = Vec::new();
    let mut answer = None;
    exchange(
        &mut link,
        &command.encode(),
        &mut reply,
        REPLY_LIMIT,
        wait,
        |got| match trace::parse(got).map_err(|e| e.to_string())? {
            Some((len, line, refused)) => {
                answer = Some((line, refused));
                Ok(Some(len))
            }
            None => Ok(None),
        },
    )?;
    answer.ok_or(EngineError::NoReply)
}
