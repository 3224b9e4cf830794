//! A minimal level-triggered epoll wrapper with nanosecond timeouts.
//!
//! Over `rustix` rather than `mio` because the engine needs what mio does
//! not give: `epoll_pwait2` (sub-millisecond timeouts for the open-loop
//! schedule, in the one syscall that waits) and full control over interest
//! changes, so that no request costs an `epoll_ctl`. rustix issues raw
//! syscalls, without libc's errno and cancellation bookkeeping.

use rustix::buffer::spare_capacity;
use rustix::event::epoll::{self, CreateFlags, Event as RawEvent, EventData, EventFlags};
use rustix::event::Timespec;
use rustix::fd::{BorrowedFd, OwnedFd, RawFd};
use rustix::io::Errno;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

pub const READABLE: u32 = EventFlags::IN.bits();
pub const WRITABLE: u32 = EventFlags::OUT.bits();
/// The socket's error queue holds something (a transmit stamp), or it
/// failed.
pub const ERROR: u32 = EventFlags::ERR.bits();
pub const HANGUP: u32 = EventFlags::HUP.bits() | EventFlags::ERR.bits() | EventFlags::RDHUP.bits();

/// Set once `epoll_pwait2` is found missing (kernels before 5.11); waits
/// then round up to whole milliseconds.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

pub struct Poller {
    epoll: OwnedFd,
    events: Vec<RawEvent>,
}

/// One readiness event: the token given at registration and the flags.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub token: u64,
    pub flags: u32,
}

impl Poller {
    pub fn new(capacity: usize) -> io::Result<Self> {
        Ok(Poller {
            epoll: epoll::create(CreateFlags::CLOEXEC)?,
            events: Vec::with_capacity(capacity.max(1)),
        })
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        Ok(epoll::add(
            &self.epoll,
            borrow(fd),
            EventData::new_u64(token),
            flags(interest),
        )?)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        Ok(epoll::modify(
            &self.epoll,
            borrow(fd),
            EventData::new_u64(token),
            flags(interest),
        )?)
    }

    /// Waits up to `timeout_ns` (0 polls without blocking) and returns the
    /// ready events. An interrupted wait returns no events.
    pub fn wait(&mut self, timeout_ns: u64) -> io::Result<impl Iterator<Item = Event> + '_> {
        self.events.clear();
        let result = if NO_PWAIT2.load(Ordering::Relaxed) {
            self.wait_millis(timeout_ns)
        } else {
            let ts = Timespec {
                tv_sec: (timeout_ns / 1_000_000_000) as _,
                tv_nsec: (timeout_ns % 1_000_000_000) as _,
            };
            match epoll::wait(&self.epoll, spare_capacity(&mut self.events), Some(&ts)) {
                Err(Errno::NOSYS) => {
                    NO_PWAIT2.store(true, Ordering::Relaxed);
                    self.wait_millis(timeout_ns)
                }
                other => other.map(|_| ()),
            }
        };
        match result {
            Ok(()) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(self.events.iter().map(|e| {
            let (data, flags) = ({ e.data }, { e.flags }); // copies out of the packed struct
            Event {
                token: data.u64(),
                flags: flags.bits(),
            }
        }))
    }

    /// The pre-5.11 path: plain `epoll_wait`, rounding up so that a wait
    /// never ends early and spins.
    fn wait_millis(&mut self, timeout_ns: u64) -> rustix::io::Result<()> {
        let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as libc::c_int;
        let max = self.events.capacity() as libc::c_int;
        // SAFETY: the Vec has room for `max` events, which have the kernel's
        // epoll_event layout; we set its length to what the kernel wrote.
        let n =
            unsafe { libc::epoll_wait(raw(&self.epoll), self.events.as_mut_ptr().cast(), max, ms) };
        if n < 0 {
            return Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO));
        }
        unsafe { self.events.set_len(n as usize) };
        Ok(())
    }
}

fn flags(interest: u32) -> EventFlags {
    EventFlags::from_bits_retain(interest) | EventFlags::RDHUP
}

fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: the engine registers only sockets it owns and keeps open while
    // registered; closing a socket removes it from the epoll set.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

fn raw(fd: &OwnedFd) -> RawFd {
    use rustix::fd::AsRawFd;
    fd.as_raw_fd()
}
