//! `mcbench run`'s flags under "Connections".

use crate::spec::churn::{parse_buffer, parse_source_addrs};
use crate::spec::units::parse_count;
use crate::spec::{Churn, Gaps, SocketOptions};
use clap::Args;

/// The connections' lives and sockets: churn (twemperf's --num-conns), socket options, UDP beside TCP, source addresses and reconnects.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Connections")]
pub struct ConnectionArgs {
    /// Open and close this many connections over the run (twemperf's --num-
    /// conns).
    ///
    /// twemperf's connection generator: open N connections over the run instead
    /// of holding `-c`, at rate R: `1000` per second, `0` (default) each after
    /// the previous closes, or intervals `dT` (fixed), `eT` (exponential, mean
    /// T), `uT1,T2` (uniform) in seconds or with a unit (`e1ms`). Servers and
    /// `--source-addrs` are taken in turn. The run ends when every connection
    /// has closed, or at `-t`. The `-c` connections only preload and close
    /// before measuring.
    #[arg(value_name = "N", long, value_parser = parse_count)]
    pub num_conns: Option<u64>,

    /// How connections are opened, twemperf's syntax: R per second, 0 for
    /// each after the previous closes, or dT, eT, uT1,T2 (intervals in s).
    #[arg(hide_short_help = true, long, value_name = "R", value_parser = Gaps::parse, requires = "num_conns")]
    pub conn_rate: Option<Gaps>,

    /// Requests each connection sends before it closes (--num-conns).
    ///
    /// Requests per connection before it closes (default 1), and their pace in
    /// `--conn-rate`'s syntax (`0`, the default: each after the previous
    /// answer). A connection's first call is intended when the connection was:
    /// the connect is part of its latency.
    #[arg(value_name = "N", hide_short_help = true, long, value_parser = parse_count, requires = "num_conns")]
    pub num_calls: Option<u64>,

    /// How a connection's requests follow each other, in --conn-rate's
    /// syntax: 0 (the default) sends each after the previous answer.
    #[arg(hide_short_help = true, long, value_name = "R", value_parser = Gaps::parse, requires = "num_conns")]
    pub call_rate: Option<Gaps>,

    /// SO_LINGER on close, s: 0 resets the connection (no TIME_WAIT).
    ///
    /// SO_LINGER on every TCP connection: closing waits up to S s for unsent
    /// data; `0` resets the connection, leaving no TIME_WAIT.
    #[arg(hide_short_help = true, long, value_name = "S")]
    pub linger: Option<u32>,

    /// SO_SNDBUF of each connection, bytes (4096, 16k).
    ///
    /// SO_SNDBUF, SO_RCVBUF (`16k`) of every TCP connection; leave Nagle on
    /// (TCP_NODELAY off; twemperf `-D`, memcache-perf `--no_nodelay`)
    #[arg(hide_short_help = true, long, value_name = "BYTES", value_parser = parse_buffer)]
    pub send_buffer: Option<usize>,

    /// SO_RCVBUF of each connection, bytes.
    #[arg(hide_short_help = true, long, value_name = "BYTES", value_parser = parse_buffer)]
    pub recv_buffer: Option<usize>,

    /// Leave Nagle's algorithm on (TCP_NODELAY off; twemperf's -D).
    #[arg(hide_short_help = true, long, alias = "no_nodelay")]
    pub no_nodelay: bool,

    /// memaslap's facebook test: retrievals over UDP, everything else over TCP,
    /// to the same HOST:PORT servers (memaslap's --facebook).
    ///
    /// memaslap's facebook test (`-a`, `-n`): each connection to a `HOST:PORT`
    /// server is a UDP socket for the retrievals (with `--multiget N`,
    /// memaslap's `--division`) and N TCP connections (default 1) for
    /// everything else, refilled as one closed loop. The server must listen for
    /// UDP on the same port number. Refused with `--rate`, `--num-conns`,
    /// `--source-addrs` and the socket buffers (its UDP socket keeps a 4 MiB
    /// receive buffer)
    #[arg(hide_short_help = true, long)]
    pub facebook: bool,

    /// With --facebook: TCP connections beside each connection's UDP
    /// socket (memaslap's --conn_sock).
    #[arg(
        hide_short_help = true,
        long,
        alias = "conn_sock",
        value_name = "N",
        default_value_t = 1
    )]
    pub conn_sock: usize,

    /// Local addresses to bind connections to, in turn, each with its own
    /// ephemeral ports (127.0.0.2,127.0.0.3): past one address's ports.
    ///
    /// Bind each TCP connection to these local addresses in turn before
    /// connecting (IP_BIND_ADDRESS_NO_PORT: the port is picked per
    /// destination): each adds a range of ephemeral ports (below)
    #[arg(hide_short_help = true, long, value_name = "ADDRS")]
    pub source_addrs: Option<String>,

    /// Open a lost connection again instead of running on without it
    /// (memaslap's -R).
    ///
    /// memaslap's: open a lost connection again (after 0.1 s, doubling to 1.6 s
    /// while it keeps failing); a worker with no connection up for `--timeout`
    /// gives up. Without it the run goes on with the rest and ends when none is
    /// left; with keys placed on several servers, a client that lost one
    /// server's socket is done, so a server that dies ends the run (exit 1)
    /// unless `--reconnect` is given: then its keys fail as `no_connection`
    /// until it is back. Reopening blocks the worker for the connect and
    /// authentication (at most 0.25 s each)
    #[arg(short = 'R', long)]
    pub reconnect: bool,
}

impl ConnectionArgs {
    /// twemperf's connection churn, with `--num-conns`.
    pub(super) fn churn(&self) -> Option<Churn> {
        Some(Churn {
            conns: self.num_conns?,
            conn_gaps: self.conn_rate.unwrap_or(Gaps::AfterPrevious),
            calls: self.num_calls.unwrap_or(1),
            call_gaps: self.call_rate.unwrap_or(Gaps::AfterPrevious),
        })
    }

    /// Every connection's socket options.
    pub(super) fn socket_options(&self) -> Result<SocketOptions, crate::spec::SpecError> {
        Ok(SocketOptions {
            linger_s: self.linger,
            send_buffer: self.send_buffer,
            recv_buffer: self.recv_buffer,
            no_nodelay: self.no_nodelay,
            source_addrs: self
                .source_addrs
                .as_deref()
                .map(parse_source_addrs)
                .transpose()?
                .unwrap_or_default(),
        })
    }
}
