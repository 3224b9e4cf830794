//! PLACEHOLDER: being written.

use crate::{Cmd, Expect, ParseError, Progress, Request, Response};

pub fn encode(_out: &mut Vec<u8>, _req: &Request) {}

pub fn parse(
    _buf: &[u8],
    _progress: &mut Progress,
    _expect: Expect,
) -> Result<Option<(Response, usize)>, ParseError> {
    Err(ParseError::UnknownReply)
}

pub fn supports(_cmd: Cmd) -> bool {
    false
}

pub fn supports_noreply(_cmd: Cmd) -> bool {
    false
}
