//! The reading half of a connection: what the socket holds, read into
//! the shared buffer (or after the unparsed tail), timed by the clock or
//! the kernel's stamp, parsed and matched to the requests in flight.

use super::{rx_stamp, Conn, InFlight, ReadOutcome};
use mcbench_proto::Response;
use rustix::net::RecvFlags;
use std::io;
use std::os::fd::OwnedFd;

impl Conn {
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

    /// When a read stamped `stamp` came, and now, on `clock`: memory's
    /// stamps are on the worker's clock already, the kernel's on
    /// `CLOCK_REALTIME`.
    #[inline]
    fn arrival(&self, stamp: u64, clock: &impl Fn() -> u64) -> (u64, u64) {
        #[cfg(test)]
        if self.memory.is_some() {
            let now = clock();
            return (stamp.min(now), now);
        }
        rx_stamp::arrival(stamp, clock)
    }

    /// When the read just made happened, by the clock (`read_at`, also
    /// kept), and by the kernel's receive stamp: the time its answers are
    /// timed by where reads wait on purpose (`stamped`), and the stamp kept
    /// for the latency's parts (`rx_ns`, 0 without). A read without a
    /// stamp (none asked for, or the kernel gave none) is timed when it is
    /// read.
    #[inline]
    fn time_read(&mut self, clock: &impl Fn() -> u64) -> (u64, Option<u64>, u64) {
        let (read_at, came) = match self.stamps.last {
            Some(stamp) => {
                let (came, now) = self.arrival(stamp, clock);
                (now, Some(came.max(self.stamps.arrived_after)))
            }
            None => (clock(), None),
        };
        self.read_at = read_at;
        let stamped = came.filter(|_| self.stamps.rx);
        let rx_ns = came.filter(|_| self.stamps.kernel).unwrap_or(0);
        if self.stamps.tx_pending() {
            // A stamp that came after the last flush's look.
            let _ = self.take_tx_stamps(clock, false);
        }
        (read_at, stamped, rx_ns)
    }

    /// One read: into `scratch` when nothing is pending, else appended to
    /// the pending tail so that the response is contiguous.
    fn read(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        #[cfg(test)]
        if let Some(pipe) = &self.memory {
            let (n, came) = match pipe.recv(scratch) {
                Ok(read) => read,
                Err(e) => {
                    self.unread = false;
                    return Err(e);
                }
            };
            // As the kernel's, the stamp of the last bytes read.
            let stamped = self.stamps.rx || self.stamps.kernel;
            self.stamps.last = stamped.then_some(came);
            if !self.partial.is_empty() {
                self.partial.extend_from_slice(&scratch[..n]);
            }
            self.unread = n == scratch.len();
            return Ok(n);
        }
        let Some(stream) = self.stream.as_ref() else {
            return Ok(0);
        };
        let stamped = self.stamps.rx || self.stamps.kernel;
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
                    self.stamps.last = stamp;
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
                unsafe { read_into(stream, scratch.as_mut_ptr(), scratch.len(), self.stamps.rx) };
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
            self.stamps.last = stamp;
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
}

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
