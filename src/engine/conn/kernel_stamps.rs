//! A connection stamped by the kernel at both ends (`tx_stamp`,
//! `rx_stamp`): each request's transmit time found by byte offset, so
//! that its latency can be taken apart and its send lag timed.

use super::{rx_stamp, tx_stamp, Conn};
use std::io;

/// A request the kernel stamped as transmitted.
#[derive(Debug, Clone, Copy)]
pub struct StampedSend {
    /// Its send lag to the transmit stamp (`InFlight::send_lag`), ns.
    pub lag_ns: u64,
    pub tx_ns: u64,
    pub measured: bool,
}

/// What the kernel stamps of one socket, and what its stamps said.
#[derive(Default)]
pub struct Stamps {
    /// The kernel stamps what the socket receives (`stamp_arrivals`), and
    /// answers are timed by it.
    pub(super) rx: bool,
    /// The kernel stamps what the socket sends and receives
    /// (`stamp_kernel`), to take each latency apart.
    pub(super) kernel: bool,
    /// The stamp of the last read (`CLOCK_REALTIME` ns), if it had one.
    pub(super) last: Option<u64>,
    /// Widens the transmit stamps' ids into bytes written.
    pub(super) tx_offsets: tx_stamp::Offsets,
    /// Requests newly stamped as transmitted (`take_tx_stamps`), for the
    /// worker to record: their send lag, transmit time and whether
    /// measured.
    pub sends: Vec<StampedSend>,
    /// A stamping worker's bound on this read: what it reads was not
    /// readable before this instant (ns; 0: no bound). A stamp earlier
    /// than it is wrong (TCP gives a reordered read the stamp of a later
    /// segment that had waited out of order) and is raised to it.
    pub arrived_after: u64,
}

impl Conn {
    /// From now on, has the kernel stamp each write as transmitted and
    /// each read as received, so that every answer's latency is taken
    /// apart (`stats::parts`). TCP without TLS only, before anything is
    /// written on the socket.
    pub fn stamp_kernel(&mut self) -> io::Result<()> {
        if let Some(stream) = &self.stream {
            rx_stamp::enable(stream)?;
            tx_stamp::enable(stream)?;
            rx_stamp::wait_until_stamping();
        }
        self.stamps.tx_offsets = tx_stamp::Offsets::new(self.written_bytes);
        self.stamps.kernel = true;
        Ok(())
    }

    pub fn kernel_stamped(&self) -> bool {
        self.stamps.kernel
    }

    /// Reads the transmit stamps waiting and gives each request they
    /// cover its `tx_ns`; those are also listed in `stamped_sends`.
    /// Requests are stamped in order: those a stamp covers are the ones
    /// after the last stamped whose last byte it reaches.
    pub fn take_tx_stamps(&mut self, clock: impl Fn() -> u64) -> io::Result<()> {
        let Some(stream) = self.stream.as_ref().filter(|_| self.stamps.kernel) else {
            return Ok(());
        };
        let (offsets, in_flight, sends, written) = (
            &mut self.stamps.tx_offsets,
            &mut self.in_flight,
            &mut self.stamps.sends,
            self.written_bytes,
        );
        tx_stamp::drain(stream, |id, stamp| {
            let through = offsets.through(id);
            let (at, _) = rx_stamp::arrival(stamp, &clock);
            let first = in_flight.partition_point(|r| r.tx_ns != 0);
            for req in in_flight.range_mut(first..) {
                if req.end_byte > through {
                    break;
                }
                if req.tx_ns != 0 {
                    continue;
                }
                req.tx_ns = at.max(1);
                sends.push(StampedSend {
                    lag_ns: req.send_lag(req.tx_ns),
                    tx_ns: req.tx_ns,
                    measured: req.measured,
                });
            }
            // Every byte written is stamped: the queue holds no more.
            through < written
        })?;
        Ok(())
    }
}
