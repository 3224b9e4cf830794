//! A connection stamped by the kernel at both ends (`tx_stamp`,
//! `rx_stamp`): each request's transmit time found by byte offset, so
//! that its latency can be taken apart and its send lag timed.
//!
//! Every write stamped, or a random one in N (`--kernel-stamps 1/N`):
//! reading a stamp back costs a syscall per stamped write, and a sample
//! drawn independently of what a write holds keeps the parts and the
//! send lag of the requests it carries unbiased.

use super::{rx_stamp, tx_stamp, Conn};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::io;
use std::os::fd::OwnedFd;

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
    /// Which writes are stamped: `None` every one (the socket stamps
    /// them all), else one in N drawn at random.
    pub(super) sample: Option<Sample>,
    /// The connection's bytes written through its last stamped write:
    /// while the stamps read stop short of it, more are to come.
    pub(super) stamped_through: u64,
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

/// One write in `every` stamped, drawn by a seeded generator.
pub(super) struct Sample {
    every: u32,
    rng: SmallRng,
}

impl Stamps {
    /// Transmit stamps of stamped writes are still to be read.
    pub(super) fn tx_pending(&self) -> bool {
        self.kernel && self.tx_offsets.last() < self.stamped_through
    }

    /// Asks `socket` for the kernel's stamps, its bytes counted from the
    /// connection's `written`.
    pub(super) fn enable(&mut self, socket: Option<&OwnedFd>, written: u64) -> io::Result<()> {
        if let Some(socket) = socket {
            rx_stamp::enable(socket)?;
            tx_stamp::enable(socket, self.sample.is_none())?;
        }
        self.tx_offsets = tx_stamp::Offsets::new(written);
        self.stamped_through = written;
        Ok(())
    }
}

impl Conn {
    /// From now on, has the kernel stamp writes as transmitted (each
    /// one with `every` 1, else one in `every` drawn with `seed`) and
    /// each read as received, so that the stamped requests' latencies are
    /// taken apart (`stats::parts`). TCP without TLS only, before
    /// anything is written on the socket.
    pub fn stamp_kernel(&mut self, every: u32, seed: u64) -> io::Result<()> {
        self.stamps.sample = (every > 1).then(|| Sample {
            every,
            rng: SmallRng::seed_from_u64(seed),
        });
        self.stamps
            .enable(self.stream.as_ref(), self.written_bytes)?;
        if self.stream.is_some() {
            rx_stamp::wait_until_stamping();
        }
        self.stamps.kernel = true;
        Ok(())
    }

    pub fn kernel_stamped(&self) -> bool {
        self.stamps.kernel
    }

    /// The kernel stamps every write (not a sample of them).
    pub fn stamps_every_write(&self) -> bool {
        self.stamps.kernel && self.stamps.sample.is_none()
    }

    /// Whether the kernel is to stamp the next write: each one where it
    /// stamps them all, else one in N at random (a draw per call).
    pub fn stamps_next_write(&mut self) -> bool {
        match (&mut self.stamps.sample, self.stamps.kernel) {
            (_, false) => false,
            (None, true) => true,
            (Some(s), true) => s.rng.gen_ratio(1, s.every),
        }
    }

    /// Reads the transmit stamps waiting and gives each stamped request
    /// they cover its `tx_ns`; those are also listed in `stamps.sends`.
    /// Stamps come in order: the requests one covers are those whose last
    /// byte lies after the previous stamp's and within its own, and were
    /// written by a stamped write (`tx_wanted`).
    /// `whole`: read the queue to its end (its wake-up: a message left
    /// there, a stamp sent again, would wake every poll), else only until
    /// every stamped write's stamp is in.
    pub fn take_tx_stamps(&mut self, clock: impl Fn() -> u64, whole: bool) -> io::Result<()> {
        let wanted = self.stamps.kernel && (whole || self.stamps.tx_pending());
        let Some(stream) = self.stream.as_ref().filter(|_| wanted) else {
            return Ok(());
        };
        let (stamps, in_flight) = (&mut self.stamps, &mut self.in_flight);
        tx_stamp::drain(stream, |id, stamp| {
            let from = stamps.tx_offsets.last();
            let stamped = stamps.stamped_through;
            let through = stamps.tx_offsets.through(id, stamped);
            let (at, _) = rx_stamp::arrival(stamp, &clock);
            let first = in_flight.partition_point(|r| r.end_byte <= from);
            for req in in_flight.range_mut(first..) {
                if req.end_byte > through {
                    break;
                }
                if !req.tx_wanted || req.tx_ns != 0 {
                    continue;
                }
                req.tx_ns = at.max(1);
                stamps.sends.push(StampedSend {
                    lag_ns: req.send_lag(req.tx_ns),
                    tx_ns: req.tx_ns,
                    measured: req.measured,
                });
            }
            // Every stamped write's stamp read: the queue holds no more.
            whole || through < stamped
        })?;
        Ok(())
    }
}
