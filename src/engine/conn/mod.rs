//! One connection: its socket, its outgoing bytes, its requests in flight
//! and the unparsed tail of its incoming bytes. Knows sockets and ordering,
//! and hands raw bytes to the codec; knows nothing of workloads.

mod asked;
mod datagram;
#[cfg(test)]
mod in_memory;
mod kernel_stamps;
mod receive;
mod rx_stamp;
mod tx_stamp;

pub use datagram::{UdpState, UDP_TIMEOUT_NS};
pub use kernel_stamps::Stamps;

use crate::net::tls::Session;
use crate::net::Link;
use crate::workload::OpKind;
use mcbench_proto::{Expect, Progress, Protocol};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// A request that was sent (or is about to be) and awaits its response.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    pub op: OpKind,
    /// The (first) key or the trace record asked for.
    pub named: crate::workload::Named,
    /// What the reply must look like (keys asked for, quiet, opaque).
    pub expect: Expect,
    /// When the schedule wanted it sent, ns on the worker clock.
    pub intended_ns: u64,
    /// How long it waited in the client for a free connection, ns (every
    /// one was at its depth: the server's pace, not the client's).
    pub waited_ns: u64,
    /// When its bytes were handed to the kernel, ns; set at flush.
    pub sent_ns: u64,
    /// When the kernel transmitted its last byte (`tx_stamp`), ns on the
    /// worker clock; 0 until stamped.
    pub tx_ns: u64,
    /// Its last byte went out in a write the kernel stamps: its stamp is
    /// to come (set as it is sent).
    pub tx_wanted: bool,
    /// When the kernel received its answer's last byte, ns on the worker
    /// clock; 0 where unstamped. Set as the answer is handed over.
    pub rx_ns: u64,
    /// Whether it counts (sent after warm-up, within the phase).
    pub measured: bool,
    /// What its answer is checked for (`--verify`, `--exp-verify`).
    pub check: crate::workload::Check,
    /// The connection's byte count once this request is written: it has
    /// been sent when `written_bytes` reaches it.
    pub end_byte: u64,
    /// Where the connection keeps the keys it asked for (set by `queued`).
    pub asked: u32,
}

impl InFlight {
    /// The client's own lateness in sending, ns: intended send to `sent`
    /// (the transmit stamp, else the send call), less any wait for a free
    /// connection. A client late to notice an arrival is late however
    /// long the arrival then waits.
    pub fn send_lag(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.intended_ns)
            .saturating_sub(self.waited_ns)
    }
}

/// How a read ended.
pub enum ReadOutcome {
    /// Bytes arrived (possibly none); the connection stays open.
    Open,
    /// The peer closed or reset the connection.
    Closed,
    /// The stream did not parse, or a response came with nothing in flight.
    Broken,
}

pub struct Conn {
    /// `None` once closed (dropping the socket also removes it from epoll).
    stream: Option<OwnedFd>,
    /// Over `--tls`, the record layer: `out` is sealed into it, and what
    /// is read is opened into `partial`.
    tls: Option<Box<Session>>,
    protocol: Protocol,
    pub server: usize,
    /// Encoded requests not yet written, and how much of them was.
    out: Vec<u8>,
    out_pos: usize,
    /// Unparsed bytes of a response split across reads.
    partial: Vec<u8>,
    /// How far the response at the front of `partial` was parsed.
    progress: Progress,
    /// The most bytes one response may take before the stream is declared
    /// broken (a hostile or confused server cannot grow it without bound).
    max_pending: usize,
    pub in_flight: VecDeque<InFlight>,
    /// The keys of the requests in flight, for their replies' checks.
    asked: asked::AskedKeys,
    /// How many of the newest `in_flight` entries are not yet written.
    unsent: usize,
    /// Bytes written on this connection so far.
    written_bytes: u64,
    /// EPOLLOUT is armed because the kernel buffer was full.
    pub write_armed: bool,
    /// Listed in the worker's dirty list for the next flush.
    pub dirty: bool,
    pub alive: bool,
    /// UDP: framing and loss state; `None` on a stream.
    pub udp: Option<Box<UdpState>>,
    /// The last opaque a request carried (binary opaque, meta `O`, and over
    /// UDP, in its low 16 bits, the request id).
    opaque: u32,
    /// The last read filled its buffer: more may be waiting in the socket.
    pub unread: bool,
    /// A non-blocking connect is under way (`--num-conns`): the socket
    /// turns writable when it is done.
    pub connecting: bool,
    /// What the kernel stamps of this socket, and what its stamps said.
    pub stamps: Stamps,
    /// In unit tests, an in-memory connection in place of a socket.
    #[cfg(test)]
    memory: Option<crate::engine::transport::memory::Pipe>,
    /// When the last read returned (ns, worker clock): when its answers
    /// were seen, whenever they came.
    pub read_at: u64,
}

impl Conn {
    /// A connection over `link`; with none, a closed one (its server down
    /// at the start) for `reopen`.
    pub fn new(
        link: Option<Link>,
        protocol: Protocol,
        datagram: bool,
        server: usize,
        depth: usize,
        max_pending: usize,
    ) -> Self {
        let (stream, tls) = match link {
            Some(link) => (Some(link.socket), link.tls),
            None => (None, None),
        };
        Conn {
            alive: stream.is_some(),
            stream,
            tls,
            protocol,
            server,
            out: Vec::new(),
            out_pos: 0,
            partial: Vec::new(),
            progress: Progress::default(),
            max_pending,
            in_flight: VecDeque::with_capacity(depth),
            asked: asked::AskedKeys::default(),
            unsent: 0,
            written_bytes: 0,
            write_armed: false,
            dirty: false,
            udp: datagram.then(Box::default),
            opaque: 0,
            unread: false,
            connecting: false,
            stamps: Stamps::default(),
            #[cfg(test)]
            memory: None,
            read_at: 0,
        }
    }

    /// From now on, times each answer by when the kernel received it
    /// rather than by when it is read: for a worker that reads late or
    /// after a pause (`RunSpec::stamps_answers`).
    pub fn stamp_arrivals(&mut self) -> io::Result<()> {
        if let Some(stream) = &self.stream {
            rx_stamp::enable(stream)?;
            rx_stamp::wait_until_stamping();
        }
        self.stamps.rx = true;
        Ok(())
    }

    /// The opaque for the next request, never 0. Over UDP the caller
    /// writes the frame header with it before encoding the request.
    pub fn next_opaque(&mut self) -> u32 {
        self.opaque = self.opaque.wrapping_add(1).max(1);
        self.opaque
    }

    /// The socket, unless closed.
    pub fn socket(&self) -> Option<&OwnedFd> {
        self.stream.as_ref()
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_ref().map_or(-1, |s| s.as_raw_fd())
    }

    /// The buffer to encode the next request into; call `queued` after.
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Registers the request just encoded into `out()`, which asked for
    /// `keys` (as sent, space-separated): its reply must name no others.
    /// Only a retrieval's reply names keys: no other keeps them.
    pub fn queued(&mut self, mut req: InFlight, keys: &[u8]) {
        // Over TLS, bytes already sealed but not yet taken by the kernel
        // lie between what was written and `out`.
        let before = self.tls.as_ref().map_or(self.written_bytes, |t| t.pushed());
        req.end_byte = before + (self.out.len() - self.out_pos) as u64;
        req.asked = if req.expect.cmd.is_retrieval() {
            self.asked.keep(keys)
        } else {
            asked::NONE
        };
        self.in_flight.push_back(req);
        self.unsent += 1;
    }

    /// Ends the output with a fence when its last request went quiet
    /// without one (`WireOptions::fence_later`): every quiet request of
    /// the write is then told done by it, its one reply.
    pub fn fence_quiet(&mut self) {
        let Some(last) = self.in_flight.back_mut().filter(|r| r.expect.unfenced) else {
            return;
        };
        let before = self.out.len();
        self.protocol.encode_fence(&mut self.out);
        last.expect.unfenced = false;
        last.end_byte += (self.out.len() - before) as u64;
    }

    /// Requests queued whose last byte has not been written yet.
    pub fn unsent(&self) -> usize {
        self.unsent
    }

    pub fn has_output(&self) -> bool {
        self.out_pos < self.out.len() || self.tls.as_ref().is_some_and(|t| t.has_output())
    }

    /// Over TLS, the handshake is still under way.
    pub fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.is_handshaking())
    }

    /// Takes the TLS handshake as far as the socket allows: `Ok(true)`
    /// once done (and at once without TLS).
    pub fn handshake(&mut self, scratch: &mut [u8]) -> io::Result<bool> {
        match (self.tls.as_deref_mut(), self.stream.as_ref()) {
            (Some(tls), Some(stream)) => tls.handshake(stream, scratch),
            (None, _) => Ok(true),
            (_, None) => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Part of an answer has been read, the rest not yet.
    pub fn mid_answer(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Writes what is pending; where the kernel stamps a sample of writes,
    /// `stamped` asks it to stamp these (`stamps_next_write`). Returns the
    /// bytes written; a full kernel buffer is not an error (`has_output`
    /// stays true).
    pub fn flush(&mut self, now_ns: u64, stamped: bool) -> io::Result<usize> {
        if self.udp.is_some() {
            return self.flush_datagrams(now_ns);
        }
        #[cfg(test)]
        if let Some(pipe) = &self.memory {
            let n = pipe.send(&self.out[self.out_pos..]);
            self.out_pos += n;
            return Ok(self.wrote(n, now_ns, false));
        }
        let Some(stream) = self.stream.as_ref() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if self.tls.is_some() {
            return self.flush_sealed(now_ns);
        }
        let stamped = stamped && self.stamps.kernel;
        let each = self.stamps.sample.is_some() && stamped;
        let mut written = 0;
        while self.out_pos < self.out.len() {
            let pending = &self.out[self.out_pos..];
            let sent = match each {
                true => tx_stamp::send_stamped(stream, pending),
                false => send(stream, pending),
            };
            match sent {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out_pos += n;
                    written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(self.wrote(written, now_ns, stamped))
    }

    /// `written` more bytes of `out` went to the kernel at `now_ns`, in
    /// writes it stamps (`stamped`) or not.
    fn wrote(&mut self, written: usize, now_ns: u64, stamped: bool) -> usize {
        self.written_bytes += written as u64;
        if stamped && written > 0 {
            self.stamps.stamped_through = self.written_bytes;
        }
        self.mark_sent(now_ns, stamped);
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        written
    }

    /// `flush` over TLS: what is pending is sealed, and the records go to
    /// the kernel; a request is sent when the record holding its last
    /// byte is. Returns the plaintext bytes newly sent.
    fn flush_sealed(&mut self, now_ns: u64) -> io::Result<usize> {
        let (Some(tls), Some(stream)) = (self.tls.as_deref_mut(), self.stream.as_ref()) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if self.out_pos < self.out.len() {
            tls.push(&self.out[self.out_pos..])?;
            self.out.clear();
            self.out_pos = 0;
        }
        tls.send(stream)?;
        let written = (tls.plain_sent() - self.written_bytes) as usize;
        self.written_bytes = tls.plain_sent();
        self.mark_sent(now_ns, false);
        Ok(written)
    }

    /// Requests whose last byte has now been written were sent at `now_ns`,
    /// in a write the kernel stamps (`stamped`) or not.
    fn mark_sent(&mut self, now_ns: u64, stamped: bool) {
        while self.unsent > 0 {
            let i = self.in_flight.len() - self.unsent;
            let req = &mut self.in_flight[i];
            if req.end_byte > self.written_bytes {
                break;
            }
            req.sent_ns = now_ns;
            req.tx_wanted = stamped;
            self.unsent -= 1;
        }
    }

    /// Marks every request in flight as not measured (a phase ended before
    /// they were answered; their late answers must not count in the next).
    pub fn forget_in_flight(&mut self) {
        for req in &mut self.in_flight {
            req.measured = false;
        }
    }

    /// Closes the socket; returns the requests that will never be answered.
    pub fn close(&mut self) -> usize {
        self.alive = false;
        self.stream = None;
        self.tls = None;
        #[cfg(test)]
        {
            self.memory = None;
        }
        let lost = self.in_flight.len();
        self.in_flight.clear();
        self.asked.clear();
        self.out.clear();
        self.out_pos = 0;
        self.unsent = 0;
        self.partial.clear();
        self.progress = Progress::default();
        self.write_armed = false;
        self.unread = false;
        self.connecting = false;
        if let Some(udp) = self.udp.as_deref_mut() {
            udp.forget_replies();
        }
        lost
    }

    /// Takes `link` as this (closed) connection's new socket.
    pub fn reopen(&mut self, link: Link) -> io::Result<()> {
        if self.stamps.rx {
            rx_stamp::enable(&link.socket)?;
        }
        if self.stamps.kernel {
            self.stamps.enable(Some(&link.socket), self.written_bytes)?;
        }
        self.stream = Some(link.socket);
        // A new session counts its bytes from 0.
        if link.tls.is_some() {
            self.written_bytes = 0;
        }
        self.tls = link.tls;
        self.alive = true;
        Ok(())
    }
}

use crate::net::recv_raw as recv;
use crate::net::send_raw as send;
