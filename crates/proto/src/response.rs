//! What a parsed response is, independent of the protocol that carried it.

use std::fmt;

/// The class of a response, as twemperf counts them. Every protocol maps its
/// replies onto these so that reports compare across protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseClass {
    Stored,
    NotStored,
    Exists,
    NotFound,
    /// The new value of an `incr`/`decr`.
    Num,
    Deleted,
    Touched,
    /// A retrieval that found none of its keys.
    End,
    /// A retrieval that found at least one of its keys.
    Value,
    /// `ERROR`: the server did not know the command.
    Error,
    ClientError,
    ServerError,
    /// The server refused the request for want of authentication (binary
    /// status 0x20/0x21; text `CLIENT_ERROR unauthenticated`).
    AuthError,
    /// A RESP error reply (`-ERR ...`, `-WRONGTYPE ...`).
    RespError,
}

impl ResponseClass {
    /// Every class, in report order.
    pub const ALL: [ResponseClass; 14] = [
        ResponseClass::Stored,
        ResponseClass::NotStored,
        ResponseClass::Exists,
        ResponseClass::NotFound,
        ResponseClass::Num,
        ResponseClass::Deleted,
        ResponseClass::Touched,
        ResponseClass::End,
        ResponseClass::Value,
        ResponseClass::Error,
        ResponseClass::ClientError,
        ResponseClass::ServerError,
        ResponseClass::AuthError,
        ResponseClass::RespError,
    ];

    /// Stable snake_case name, used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ResponseClass::Stored => "stored",
            ResponseClass::NotStored => "not_stored",
            ResponseClass::Exists => "exists",
            ResponseClass::NotFound => "not_found",
            ResponseClass::Num => "num",
            ResponseClass::Deleted => "deleted",
            ResponseClass::Touched => "touched",
            ResponseClass::End => "end",
            ResponseClass::Value => "value",
            ResponseClass::Error => "error",
            ResponseClass::ClientError => "client_error",
            ResponseClass::ServerError => "server_error",
            ResponseClass::AuthError => "auth_error",
            ResponseClass::RespError => "resp_error",
        }
    }

    /// Index into arrays laid out like [`ResponseClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for the replies that report a failure of the server or of the
    /// request itself (not a miss, which is a normal outcome).
    pub fn is_error(self) -> bool {
        matches!(
            self,
            ResponseClass::Error
                | ResponseClass::ClientError
                | ResponseClass::ServerError
                | ResponseClass::AuthError
                | ResponseClass::RespError
        )
    }
}

/// One complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub class: ResponseClass,
    /// Number of values a retrieval returned (its hits); 0 for other replies.
    pub values: u32,
    /// The cas unique of the last value returned, when the protocol sent
    /// one; 0 otherwise.
    pub cas: u64,
}

impl Response {
    pub const fn of(class: ResponseClass) -> Self {
        Response {
            class,
            values: 0,
            cas: 0,
        }
    }

    /// A retrieval's reply that returned `values` values.
    pub const fn hits(values: u32, cas: u64) -> Self {
        let class = if values > 0 {
            ResponseClass::Value
        } else {
            ResponseClass::End
        };
        Response { class, values, cas }
    }
}

/// How far an incomplete response was parsed: the complete parts (value
/// blocks, frames) at its front. Relative to the response's first byte, so
/// it stays valid when the bytes before that response are dropped from the
/// buffer. Lets a multiget of thousands of values spread over many reads
/// parse in linear time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the response already parsed.
    pub(crate) offset: usize,
    /// Values found in them.
    pub(crate) values: u32,
    /// The last cas unique seen in them.
    pub(crate) cas: u64,
    /// A reply seen before the fence of a quiet request.
    pub(crate) seen: Option<ResponseClass>,
    /// Where in the request's keys the next value's key is looked for
    /// (after the last one matched).
    pub(crate) key_pos: usize,
}

/// A response stream that cannot be parsed. The connection that produced it
/// cannot be trusted to stay in step with its requests and must be closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A line that is not any reply the protocol defines.
    UnknownReply,
    /// A reply line longer than the protocol allows, without its terminator.
    LineTooLong,
    /// A `VALUE` header whose fields do not parse.
    BadValueHeader,
    /// A value block not followed by `\r\n`.
    BadValueTerminator,
    /// A line ending in a bare `\n`, or with a `\r` in the middle.
    BadLineEnding,
    /// A binary frame with a bad magic byte or inconsistent lengths.
    BadFrame,
    /// A reply whose opaque is not the one its request carried.
    OpaqueMismatch,
    /// A well-formed reply that cannot answer the request in front.
    UnexpectedReply,
    /// A number field that does not parse.
    BadNumber,
    /// A value longer than any the caller can have stored
    /// (`Expect::max_value`): a hostile or confused server.
    ValueTooLong,
    /// A value for a key the request did not ask for, or asked for fewer
    /// times, or out of the order it asked (another request's answer).
    KeyMismatch,
    /// More values than the request asked keys for.
    TooManyValues,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            ParseError::UnknownReply => "unknown reply line",
            ParseError::LineTooLong => "reply line too long",
            ParseError::BadValueHeader => "malformed VALUE header",
            ParseError::BadValueTerminator => "value block not terminated by CRLF",
            ParseError::BadLineEnding => "line not terminated by CRLF",
            ParseError::BadFrame => "malformed binary frame",
            ParseError::OpaqueMismatch => "reply opaque does not match its request",
            ParseError::UnexpectedReply => "reply does not answer the request",
            ParseError::BadNumber => "malformed number",
            ParseError::ValueTooLong => "value longer than any the run stores",
            ParseError::KeyMismatch => "value for a key the request did not ask for",
            ParseError::TooManyValues => "more values than the request asked keys for",
        };
        f.write_str(what)
    }
}

impl std::error::Error for ParseError {}
