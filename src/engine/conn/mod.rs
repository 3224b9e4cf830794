//! One connection: its socket, its outgoing bytes, its requests in flight
//! and the unparsed tail of its incoming bytes. Knows sockets and ordering,
//! and hands raw bytes to the codec; knows nothing of workloads.

mod asked;
mod datagram;
mod kernel_stamps;
mod rx_stamp;
mod tx_stamp;

pub use datagram::{UdpState, UDP_TIMEOUT_NS};
pub use kernel_stamps::StampedSend;

use crate::net::tls::Session;
use crate::net::Link;
use crate::workload::OpKind;
use mcbench_proto::{Expect, Progress, Protocol, Response};
use rustix::net::RecvFlags;
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// A request that was sent (or is about to be) and awaits its response.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    pub op: OpKind,
    /// The (first) key asked for.
    pub key: u64,
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
    /// The kernel stamps what the socket receives (`stamp_arrivals`), and
    /// answers are timed by it.
    rx_stamped: bool,
    /// The stamp of the last read (`CLOCK_REALTIME` ns), if it had one.
    last_stamp: Option<u64>,
    /// The kernel stamps what the socket sends and receives
    /// (`stamp_kernel`), to take each latency apart.
    kernel_stamped: bool,
    /// Widens the transmit stamps' ids into bytes written.
    tx_offsets: tx_stamp::Offsets,
    /// Requests newly stamped as transmitted (`take_tx_stamps`), for the
    /// worker to record: their send lag, transmit time and whether
    /// measured.
    pub stamped_sends: Vec<StampedSend>,
    /// A stamping worker's bound on this read: what it reads was not
    /// readable before this instant (ns; 0: no bound). A stamp earlier
    /// than it is wrong (TCP gives a reordered read the stamp of a later
    /// segment that had waited out of order) and is raised to it.
    pub arrived_after: u64,
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
            rx_stamped: false,
            last_stamp: None,
            kernel_stamped: false,
            tx_offsets: tx_stamp::Offsets::default(),
            stamped_sends: Vec::new(),
            arrived_after: 0,
            #[cfg(test)]
            memory: None,
            read_at: 0,
        }
    }

    /// A connection over an in-memory pipe (unit tests).
    #[cfg(test)]
    pub fn in_memory(
        pipe: crate::engine::transport::memory::Pipe,
        protocol: Protocol,
        server: usize,
        depth: usize,
        max_pending: usize,
    ) -> Self {
        let mut conn = Conn::new(None, protocol, false, server, depth, max_pending);
        conn.memory = Some(pipe);
        conn.alive = true;
        conn
    }

    /// Its in-memory pipe, if it is one.
    #[cfg(test)]
    pub fn memory_pipe(&self) -> Option<&crate::engine::transport::memory::Pipe> {
        self.memory.as_ref()
    }

    /// Takes `pipe` as this (closed) connection's new one.
    #[cfg(test)]
    pub fn reopen_memory(&mut self, pipe: crate::engine::transport::memory::Pipe) {
        self.memory = Some(pipe);
        self.alive = true;
    }

    /// From now on, times each answer by when the kernel received it
    /// rather than by when it is read: for a worker that reads late or
    /// after a pause (`RunSpec::stamps_answers`).
    pub fn stamp_arrivals(&mut self) -> io::Result<()> {
        if let Some(stream) = &self.stream {
            rx_stamp::enable(stream)?;
            rx_stamp::wait_until_stamping();
        }
        self.rx_stamped = true;
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

    /// Writes what is pending. Returns the bytes written; a full kernel
    /// buffer is not an error (`has_output` stays true).
    pub fn flush(&mut self, now_ns: u64) -> io::Result<usize> {
        if self.udp.is_some() {
            return self.flush_datagrams(now_ns);
        }
        #[cfg(test)]
        if let Some(pipe) = &self.memory {
            let n = pipe.send(&self.out[self.out_pos..]);
            self.out_pos += n;
            return Ok(self.wrote(n, now_ns));
        }
        let Some(stream) = self.stream.as_ref() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if self.tls.is_some() {
            return self.flush_sealed(now_ns);
        }
        let mut written = 0;
        while self.out_pos < self.out.len() {
            match send(stream, &self.out[self.out_pos..]) {
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
        Ok(self.wrote(written, now_ns))
    }

    /// `written` more bytes of `out` went to the kernel at `now_ns`.
    fn wrote(&mut self, written: usize, now_ns: u64) -> usize {
        self.written_bytes += written as u64;
        self.mark_sent(now_ns);
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
        self.mark_sent(now_ns);
        Ok(written)
    }

    /// Requests whose last byte has now been written were sent at `now_ns`.
    fn mark_sent(&mut self, now_ns: u64) {
        while self.unsent > 0 {
            let i = self.in_flight.len() - self.unsent;
            if self.in_flight[i].end_byte > self.written_bytes {
                break;
            }
            self.in_flight[i].sent_ns = now_ns;
            self.unsent -= 1;
        }
    }

    /// Reads what the socket has and hands each complete response, with the
    /// request it answers and its bytes, to `done`. `clock` is read once, after the read.
    pub fn receive(
        &mut self,
        scratch: &mut [u8],
        clock: impl Fn() -> u64,
        bytes_rx: &mut u64,
        mut done: impl FnMut(InFlight, Response, &[u8], u64),
    ) -> ReadOutcome {
        if self.udp.is_some() {
            return self.receive_datagrams(scratch, clock, bytes_rx, done);
        }
        let n = match self.read(scratch) {
            Ok(0) => return ReadOutcome::Closed,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ReadOutcome::Open,
            Err(_) => return ReadOutcome::Closed,
        };
        *bytes_rx += n as u64;
        let (read_at, stamped, rx_ns) = self.time_read(&clock);
        let buf: &[u8] = if self.partial.is_empty() {
            &scratch[..n]
        } else {
            &self.partial
        };
        let mut used = 0;
        let outcome = loop {
            if used == buf.len() {
                break ReadOutcome::Open;
            }
            let Some(&req) = self.in_flight.front() else {
                break ReadOutcome::Broken;
            };
            let asked = self.asked.get(req.asked);
            match self
                .protocol
                .parse(&buf[used..], &mut self.progress, req.expect, asked)
            {
                Ok(Some((resp, len))) => {
                    let Some(mut req) = self.in_flight.pop_front() else {
                        break ReadOutcome::Broken;
                    };
                    self.asked.release(req.asked);
                    let at = answered_at(stamped, read_at, req.sent_ns);
                    req.rx_ns = rx_ns;
                    done(req, resp, &buf[used..used + len], at);
                    used += len;
                }
                Ok(None) => break ReadOutcome::Open,
                Err(_) => break ReadOutcome::Broken,
            }
        };
        // A server may answer before a request's last byte arrives (memcached
        // rejects an oversized set at its header): the answered request was
        // then still counted as unwritten. Unwritten ones are the newest, so
        // at most what is left in flight.
        self.unsent = self.unsent.min(self.in_flight.len());
        if self.partial.is_empty() {
            self.partial.extend_from_slice(&scratch[used..n]);
        } else {
            self.partial.drain(..used);
        }
        if self.partial.len() > self.max_pending {
            return ReadOutcome::Broken;
        }
        outcome
    }

    /// When the read just made happened, by the clock (`read_at`, also
    /// kept), and by the kernel's receive stamp: the time its answers are
    /// timed by where reads wait on purpose (`stamped`), and the stamp kept
    /// for the latency's parts (`rx_ns`, 0 without). A read without a
    /// stamp (none asked for, or the kernel gave none) is timed when it is
    /// read.
    #[inline]
    fn time_read(&mut self, clock: &impl Fn() -> u64) -> (u64, Option<u64>, u64) {
        let (read_at, came) = match self.last_stamp {
            Some(stamp) => {
                let (came, now) = rx_stamp::arrival(stamp, clock);
                (now, Some(came.max(self.arrived_after)))
            }
            None => (clock(), None),
        };
        self.read_at = read_at;
        let stamped = came.filter(|_| self.rx_stamped);
        let rx_ns = came.filter(|_| self.kernel_stamped).unwrap_or(0);
        if self.kernel_stamped && self.in_flight.front().is_some_and(|r| r.tx_ns == 0) {
            // A stamp that came after the last flush's look.
            let _ = self.take_tx_stamps(clock);
        }
        (read_at, stamped, rx_ns)
    }

    /// One read: into `scratch` when nothing is pending, else appended to
    /// the pending tail so that the response is contiguous.
    fn read(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        #[cfg(test)]
        if let Some(pipe) = &self.memory {
            let n = match pipe.recv(scratch) {
                Ok(n) => n,
                Err(e) => {
                    self.unread = false;
                    return Err(e);
                }
            };
            self.last_stamp = None;
            if !self.partial.is_empty() {
                self.partial.extend_from_slice(&scratch[..n]);
            }
            self.unread = n == scratch.len();
            return Ok(n);
        }
        let Some(stream) = self.stream.as_ref() else {
            return Ok(0);
        };
        let stamped = self.rx_stamped || self.kernel_stamped;
        if self.tls.is_some() {
            return self.read_sealed(scratch);
        }
        loop {
            let (buf, room) = if self.partial.is_empty() {
                (scratch.as_mut_ptr(), scratch.len())
            } else {
                // Append into spare capacity: no zero-filling per read.
                self.partial.reserve(scratch.len());
                let spare = self.partial.spare_capacity_mut();
                (spare.as_mut_ptr().cast::<u8>(), spare.len())
            };
            // SAFETY: `buf` is `scratch` or the spare capacity of
            // `partial`, writable for `room` bytes.
            let r = unsafe { read_into(stream, buf, room, stamped) };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.unread = false;
                    return Err(e);
                }
                Ok((n, stamp)) => {
                    if !self.partial.is_empty() {
                        // SAFETY: the kernel initialised `n` spare bytes.
                        unsafe { self.partial.set_len(self.partial.len() + n) };
                    }
                    self.last_stamp = stamp;
                    self.unread = n == room;
                    return Ok(n);
                }
            }
        }
    }

    /// `read` over TLS: the records read into `scratch` are opened into
    /// `partial`; the kernel's stamp is that of the read that completed
    /// them. Bytes that open into no plaintext yet read as `WouldBlock`.
    fn read_sealed(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        let (Some(tls), Some(stream)) = (self.tls.as_deref_mut(), self.stream.as_ref()) else {
            return Ok(0);
        };
        loop {
            // SAFETY: `scratch` is writable for its length.
            let r =
                unsafe { read_into(stream, scratch.as_mut_ptr(), scratch.len(), self.rx_stamped) };
            let (n, stamp) = match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.unread = false;
                    return Err(e);
                }
                Ok(read) => read,
            };
            self.unread = n == scratch.len();
            if n == 0 {
                return Ok(0);
            }
            self.last_stamp = stamp;
            let plain = tls.open(&scratch[..n], &mut self.partial)?;
            // The alert of a refused record, or a key update's answer.
            if tls.has_output() {
                tls.send(stream)?;
            }
            return match plain {
                0 => Err(io::ErrorKind::WouldBlock.into()),
                n => Ok(n),
            };
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
        if self.rx_stamped {
            rx_stamp::enable(&link.socket)?;
        }
        if self.kernel_stamped {
            rx_stamp::enable(&link.socket)?;
            tx_stamp::enable(&link.socket)?;
            self.tx_offsets = tx_stamp::Offsets::new(self.written_bytes);
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

use crate::net::send_raw as send;

/// When an answer read at `read_at` came: its stamp, unless the stamp
/// falls before the request was even sent (a clock stepped forward while
/// it waited, a stamp that is not a receive time), then when it was read:
/// a wrong stamp may make latency later, never earlier.
fn answered_at(stamped: Option<u64>, read_at: u64, sent_ns: u64) -> u64 {
    match stamped {
        Some(at) if at >= sent_ns => at,
        _ => read_at.max(sent_ns),
    }
}

/// One read of up to `len` bytes into `buf`, with the kernel's stamp when
/// `stamped`: `recvmsg` then, plain `recv` otherwise.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
unsafe fn read_into(
    stream: &OwnedFd,
    buf: *mut u8,
    len: usize,
    stamped: bool,
) -> io::Result<(usize, Option<u64>)> {
    if stamped {
        return unsafe { rx_stamp::recv(stream, buf, len) };
    }
    // SAFETY: the caller's buffer, as a slice of possibly uninitialised
    // bytes, which recv only writes.
    let spare: &mut [std::mem::MaybeUninit<u8>] =
        unsafe { std::slice::from_raw_parts_mut(buf.cast(), len) };
    rustix::net::recv(stream, spare, RecvFlags::empty())
        .map(|((read, _), _)| (read.len(), None))
        .map_err(io::Error::from)
}

use crate::net::recv_raw as recv;
