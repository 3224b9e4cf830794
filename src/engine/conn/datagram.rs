//! A connection over UDP: each request is one datagram behind memcached's
//! 8-byte frame header; replies are matched by request id (they may be
//! lost or come out of order), reassembled when they span datagrams, and
//! given up on after `UDP_TIMEOUT_NS`.

use super::{recv, send, Conn, InFlight, ReadOutcome};
use mcbench_proto::udp::{self, Fed, Reassembly};
use mcbench_proto::Progress;
use rustix::net::{sendmmsg, MMsgHdr, SendAncillaryBuffer, SendFlags};
use std::io::{self, IoSlice};

/// Datagrams one `sendmmsg` sends at most (a turn's requests on one
/// socket: more than this go in the next call of the same flush). Its
/// message headers live on the stack: no allocation per flush.
const SEND_BATCH: usize = 16;

/// How long a request over UDP waits for its reply before it counts as
/// lost (`udp_timeout`), ns. Loopback answers in microseconds; a second
/// is memaslap's order of magnitude and leaves no doubt.
pub const UDP_TIMEOUT_NS: u64 = 1_000_000_000;

/// What UDP adds to a connection: the reply being reassembled and the
/// losses seen, which the worker drains into its recorder.
#[derive(Default)]
pub struct UdpState {
    reassembly: Reassembly,
    /// Datagrams missing from replies that never completed.
    pub packet_drop: u64,
    /// Replies whose datagrams came out of order.
    pub packet_disorder: u64,
    /// Measured requests given up on after `UDP_TIMEOUT_NS`.
    pub udp_timeout: u64,
    /// Datagrams or replies that did not parse.
    pub garbled: u64,
    /// Datagrams still missing from the reply being reassembled.
    partial_missing: u64,
    /// Replies begun but not yet whole (at most one per request in
    /// flight), and emptied buffers to reuse.
    partials: Vec<Partial>,
    spare: Vec<Vec<u8>>,
}

/// The first pieces of one request's reply, and how far they parsed.
struct Partial {
    id: u16,
    bytes: Vec<u8>,
    progress: Progress,
}

impl UdpState {
    /// Forgets the replies in progress (their connection closed), counting
    /// what they were missing as dropped; the loss counts stay to be
    /// drained.
    pub fn forget_replies(&mut self) {
        self.packet_drop += self.partial_missing + self.partials.len() as u64;
        self.partial_missing = 0;
        self.reassembly = Reassembly::default();
        while let Some(i) = self.partials.len().checked_sub(1) {
            self.finish_partial(i);
        }
    }

    fn partial(&self, id: u16) -> Option<usize> {
        self.partials.iter().position(|p| p.id == id)
    }

    /// Keeps `bytes`, the incomplete start of request `id`'s reply.
    fn begin_partial(&mut self, id: u16, bytes: &[u8], progress: Progress) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.extend_from_slice(bytes);
        self.partials.push(Partial {
            id,
            bytes: buf,
            progress,
        });
    }

    /// Partial `i` is whole: its bytes, for the caller to `recycle`.
    fn finish_partial(&mut self, i: usize) -> Vec<u8> {
        self.partials.swap_remove(i).bytes
    }

    /// A reply buffer is done with: it goes back for reuse.
    fn recycle(&mut self, mut bytes: Vec<u8>) {
        bytes.clear();
        self.spare.push(bytes);
    }
}

impl Conn {
    /// Writes each pending request as its own datagram, up to
    /// `SEND_BATCH` of them in one `sendmmsg`.
    pub(super) fn flush_datagrams(&mut self, now_ns: u64) -> io::Result<usize> {
        let mut written = 0;
        let mut lens = [0usize; SEND_BATCH];
        while self.unsent > 0 {
            let first = self.in_flight.len() - self.unsent;
            let batch = self.unsent.min(SEND_BATCH);
            let mut end = self.written_bytes;
            for (k, len) in lens[..batch].iter_mut().enumerate() {
                let next = self.in_flight[first + k].end_byte;
                *len = (next - end) as usize;
                end = next;
            }
            let count = match self.send_batch(&lens[..batch]) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // The server's port is closed (ICMP): the datagram is lost,
                // as UDP loses datagrams; its timeout will count it.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => 1,
                Err(e) => return Err(e),
            };
            for (k, &len) in lens[..count].iter().enumerate() {
                self.out_pos += len;
                self.written_bytes += len as u64;
                written += len;
                self.in_flight[first + k].sent_ns = now_ns;
            }
            self.unsent -= count;
        }
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        Ok(written)
    }

    /// Sends the datagrams of `lens` bytes that start at `out_pos`: one
    /// with `send`, several with one `sendmmsg`. Returns how many went.
    fn send_batch(&self, lens: &[usize]) -> io::Result<usize> {
        let Some(stream) = self.stream.as_ref() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if let [len] = lens {
            let datagram = &self.out[self.out_pos..self.out_pos + len];
            return loop {
                match send(stream, datagram) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other.map(|_| 1),
                }
            };
        }
        let mut iovs = [IoSlice::new(&[]); SEND_BATCH];
        let mut at = self.out_pos;
        for (iov, &len) in iovs.iter_mut().zip(lens) {
            *iov = IoSlice::new(&self.out[at..at + len]);
            at += len;
        }
        let mut controls: [SendAncillaryBuffer; SEND_BATCH] = Default::default();
        let mut control = controls.iter_mut();
        let mut msgs: [MMsgHdr; SEND_BATCH] = std::array::from_fn(|i| {
            let control = control.next().expect("one control buffer per header");
            MMsgHdr::new(std::slice::from_ref(&iovs[i]), control)
        });
        loop {
            match sendmmsg(stream, &mut msgs[..lens.len()], SendFlags::NOSIGNAL) {
                Err(rustix::io::Errno::INTR) => continue,
                other => return other.map_err(io::Error::from),
            }
        }
    }

    /// Reads one datagram and hands the reply it completes, if any, with
    /// the request it answers, to `done`. One read per readiness event, as
    /// on a stream: epoll is level-triggered and reports the socket again
    /// while datagrams wait, so reading on until `EAGAIN` would only add a
    /// failing `recv` per wake-up.
    pub(super) fn receive_datagrams(
        &mut self,
        scratch: &mut [u8],
        clock: impl Fn() -> u64,
        bytes_rx: &mut u64,
        mut done: impl FnMut(InFlight, mcbench_proto::Response, &[u8], u64),
    ) -> ReadOutcome {
        let n = loop {
            let Some(stream) = self.stream.as_ref() else {
                return ReadOutcome::Closed;
            };
            match recv(stream, scratch) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ReadOutcome::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // An ICMP error for an earlier datagram: not fatal for UDP.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return ReadOutcome::Open,
                Err(_) => return ReadOutcome::Closed,
            }
        };
        *bytes_rx += n as u64;
        let now = clock();
        self.read_at = now;
        self.on_datagram(&scratch[..n], now, &mut done);
        ReadOutcome::Open
    }

    fn on_datagram(
        &mut self,
        datagram: &[u8],
        now: u64,
        done: &mut impl FnMut(InFlight, mcbench_proto::Response, &[u8], u64),
    ) {
        let Ok((header, payload)) = udp::parse_header(datagram) else {
            self.udp_mut().garbled += 1;
            return;
        };
        // memcached 1.6 sends each part of a reply (each VALUE) as its own
        // message, "1 of 1" or numbered datagrams when a value is larger
        // than one, and an empty part (a multiget's miss) as a bare header
        // "0 of 0"; older servers number the datagrams of the whole reply.
        // Either way the messages are joined until they parse.
        if payload.is_empty() {
            return;
        }
        if header.total == 1 {
            self.accumulate(header.request_id, payload, now, done);
            return;
        }
        if self.sent_position(header.request_id).is_none() {
            return; // a late datagram of a request given up on
        }
        let state = self.udp_mut();
        let mut fed = state.reassembly.push(datagram);
        if let Ok(Fed::Stray(id)) = fed {
            // A new reply began: what is missing of the last one is lost.
            state.packet_drop += state.partial_missing;
            state.partial_missing = u64::from(header.total);
            state.reassembly.start(id);
            fed = state.reassembly.push(datagram);
        }
        if matches!(fed, Ok(Fed::Partial | Fed::Complete)) {
            state.partial_missing = state.partial_missing.saturating_sub(1);
        }
        match fed {
            Ok(Fed::Partial) => {}
            Ok(Fed::Complete) => {
                state.partial_missing = 0;
                if state.reassembly.disordered() {
                    state.packet_disorder += 1;
                }
                // Lent out while the reply is handled, then put back. It
                // starts again for the same id: memcached 1.6 numbers the
                // datagrams of each value of a multiget afresh ("0 of 2",
                // "1 of 2", then "0 of 2" again for the next value).
                let mut whole = std::mem::take(&mut state.reassembly);
                self.accumulate(header.request_id, whole.payload(), now, done);
                whole.start(header.request_id);
                self.udp_mut().reassembly = whole;
            }
            Ok(_) => {}
            Err(_) => state.garbled += 1,
        }
    }

    /// Where request `id` is in flight, if it was sent and is unanswered.
    fn sent_position(&self, id: u16) -> Option<usize> {
        let sent = self.in_flight.len() - self.unsent;
        self.in_flight
            .iter()
            .take(sent)
            .position(|r| r.expect.opaque as u16 == id)
    }

    /// Adds `bytes` to request `id`'s reply; once it parses as a whole
    /// reply, hands it over with its request. A reply in one piece (the
    /// common case) is parsed where it lies; only an incomplete one is
    /// copied, and resumes where its last parse stopped. Bytes for a
    /// request no longer in flight (given up on) are dropped.
    fn accumulate(
        &mut self,
        id: u16,
        bytes: &[u8],
        now: u64,
        done: &mut impl FnMut(InFlight, mcbench_proto::Response, &[u8], u64),
    ) {
        let Some(pos) = self.sent_position(id) else {
            return;
        };
        let expect = self.in_flight[pos].expect;
        let asked_slot = self.in_flight[pos].asked;
        let state = self.udp.as_deref_mut().expect("datagram connection");
        // The reply's bytes: where they lie, or the partial they were
        // gathered in (recycled once the reply is handed over).
        let mut gathered = None;
        let outcome = match state.partial(id) {
            None => {
                let mut progress = Progress::default();
                let asked = self.asked.get(asked_slot);
                match self.protocol.parse(bytes, &mut progress, expect, asked) {
                    Ok(None) => return state.begin_partial(id, bytes, progress),
                    Ok(Some((resp, len))) if len == bytes.len() => Some(resp),
                    _ => None,
                }
            }
            Some(i) => {
                let part = &mut state.partials[i];
                part.bytes.extend_from_slice(bytes);
                let parsed = if part.bytes.len() > self.max_pending {
                    Err(mcbench_proto::ParseError::LineTooLong)
                } else {
                    let asked = self.asked.get(asked_slot);
                    self.protocol
                        .parse(&part.bytes, &mut part.progress, expect, asked)
                };
                let whole = part.bytes.len();
                let outcome = match parsed {
                    Ok(None) => return,
                    Ok(Some((resp, len))) if len == whole => Some(resp),
                    _ => None,
                };
                gathered = Some(state.finish_partial(i));
                outcome
            }
        };
        let Some(req) = self.in_flight.remove(pos) else {
            return;
        };
        self.asked.release(req.asked);
        match outcome {
            Some(resp) => done(req, resp, gathered.as_deref().unwrap_or(bytes), now),
            None => self.udp_mut().garbled += 1,
        }
        if let Some(buf) = gathered {
            self.udp_mut().recycle(buf);
        }
    }

    /// Gives up on requests unanswered for `UDP_TIMEOUT_NS`; returns how
    /// many (the measured ones are counted in `udp_timeout`).
    pub fn expire_datagrams(&mut self, now: u64) -> usize {
        let mut expired = 0;
        let mut i = 0;
        // Only written requests wait for a reply; the unwritten are last.
        while i < self.in_flight.len() - self.unsent {
            if now.saturating_sub(self.in_flight[i].sent_ns) < UDP_TIMEOUT_NS {
                i += 1;
                continue;
            }
            if let Some(lost) = self.in_flight.remove(i) {
                self.asked.release(lost.asked);
                let state = self.udp_mut();
                if lost.measured {
                    state.udp_timeout += 1;
                }
                // Part of its reply came: the rest was lost on the way.
                if let Some(part) = state.partial(lost.expect.opaque as u16) {
                    state.packet_drop += 1;
                    state.finish_partial(part);
                }
                expired += 1;
            }
        }
        expired
    }

    fn udp_mut(&mut self) -> &mut UdpState {
        self.udp.as_mut().expect("datagram connection")
    }
}
