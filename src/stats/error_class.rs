//! The classes of failure a run counts apart from its answers.

use mcbench_proto::ResponseClass;

/// Failures that are not a normal reply, by class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// `ERROR`: the server did not know the command.
    Error,
    ClientError,
    ServerError,
    /// The server refused a request for want of authentication.
    Auth,
    /// A RESP error reply (`-ERR`, `-WRONGTYPE`, ...).
    Resp,
    /// A reply that does not parse or does not fit the request.
    Protocol,
    /// A request lost because its connection closed.
    ConnectionLost,
    /// A request unanswered for `--timeout` (or still unanswered when the
    /// run stopped waiting).
    Timeout,
    /// A request whose server had no live connection left.
    NoConnection,
    /// An open-loop arrival dropped because too many already waited in the
    /// client: the client could not keep up with the rate.
    ClientOverload,
    /// UDP: datagrams missing from a reply that never completed.
    PacketDrop,
    /// UDP: replies whose datagrams arrived out of order (reassembled, so
    /// not a failed request; counted as memaslap does).
    PacketDisorder,
    /// UDP: a request whose reply did not come within a second.
    UdpTimeout,
    /// A request still unanswered when a signal stopped the run: no
    /// latency, and no failure of the server's either.
    CutOff,
    /// An open-loop arrival still waiting for a connection when sending
    /// stopped at `-t`: never sent, so neither a latency nor a failure.
    Unsent,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 15] = [
        ErrorClass::Error,
        ErrorClass::ClientError,
        ErrorClass::ServerError,
        ErrorClass::Auth,
        ErrorClass::Resp,
        ErrorClass::Protocol,
        ErrorClass::ConnectionLost,
        ErrorClass::Timeout,
        ErrorClass::NoConnection,
        ErrorClass::ClientOverload,
        ErrorClass::PacketDrop,
        ErrorClass::PacketDisorder,
        ErrorClass::UdpTimeout,
        ErrorClass::CutOff,
        ErrorClass::Unsent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Error => "error",
            ErrorClass::ClientError => "client_error",
            ErrorClass::ServerError => "server_error",
            ErrorClass::Auth => "auth",
            ErrorClass::Resp => "resp_error",
            ErrorClass::Protocol => "protocol",
            ErrorClass::ConnectionLost => "connection_lost",
            ErrorClass::Timeout => "timeout",
            ErrorClass::NoConnection => "no_connection",
            ErrorClass::ClientOverload => "client_overload",
            ErrorClass::PacketDrop => "packet_drop",
            ErrorClass::PacketDisorder => "packet_disorder",
            ErrorClass::UdpTimeout => "udp_timeout",
            ErrorClass::CutOff => "cut_off",
            ErrorClass::Unsent => "unsent",
        }
    }

    /// Whether a request of the class had a latency that was never
    /// measured, longer than any it waited: it timed out, lost its
    /// connection or was cut off. Percentiles count them as censored
    /// samples above every recorded one.
    pub fn censors_latency(self) -> bool {
        matches!(
            self,
            ErrorClass::Timeout
                | ErrorClass::UdpTimeout
                | ErrorClass::ConnectionLost
                | ErrorClass::CutOff
        )
    }

    /// Whether the class counts a failed request. UDP's `packet_drop` and
    /// `packet_disorder` count datagrams: the request itself is counted
    /// once, as `udp_timeout` if it never completed.
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            ErrorClass::PacketDisorder
                | ErrorClass::PacketDrop
                | ErrorClass::CutOff
                | ErrorClass::Unsent
        )
    }

    /// Whether the class counts error replies (a reply came).
    pub fn is_reply(self) -> bool {
        matches!(
            self,
            ErrorClass::Error
                | ErrorClass::ClientError
                | ErrorClass::ServerError
                | ErrorClass::Auth
                | ErrorClass::Resp
        )
    }

    /// The error class of a reply, if it is one.
    pub fn of_reply(class: ResponseClass) -> Option<ErrorClass> {
        match class {
            ResponseClass::Error => Some(ErrorClass::Error),
            ResponseClass::ClientError => Some(ErrorClass::ClientError),
            ResponseClass::ServerError => Some(ErrorClass::ServerError),
            ResponseClass::AuthError => Some(ErrorClass::Auth),
            ResponseClass::RespError => Some(ErrorClass::Resp),
            _ => None,
        }
    }
}
