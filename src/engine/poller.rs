//! A minimal level-triggered epoll wrapper with nanosecond timeouts.
//!
//! Written over `libc` rather than `mio` because the engine needs two things
//! mio does not give: `epoll_pwait2` (sub-millisecond timeouts for the
//! open-loop schedule, one syscall per wait) and full control over when
//! interest changes, so that no request costs an `epoll_ctl`.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

pub const READABLE: u32 = libc::EPOLLIN as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;
pub const HANGUP: u32 = (libc::EPOLLHUP | libc::EPOLLERR | libc::EPOLLRDHUP) as u32;

/// Set once `epoll_pwait2` is found missing (kernels before 5.11).
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

pub struct Poller {
    epfd: RawFd,
    events: Vec<libc::epoll_event>,
}

/// One readiness event: the token given at registration and the flags.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub token: u64,
    pub flags: u32,
}

impl Poller {
    pub fn new(capacity: usize) -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked.
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let empty = libc::epoll_event { events: 0, u64: 0 };
        Ok(Poller {
            epfd,
            events: vec![empty; capacity.max(1)],
        })
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest | libc::EPOLLRDHUP as u32,
            u64: token,
        };
        // SAFETY: ev lives for the call; fds are owned by the caller.
        if unsafe { libc::epoll_ctl(self.epfd, op, fd, &mut ev) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout_ns` (0 polls without blocking) and returns the
    /// ready events. An interrupted wait returns no events.
    pub fn wait(&mut self, timeout_ns: u64) -> io::Result<impl Iterator<Item = Event> + '_> {
        let n = self.wait_raw(timeout_ns)?;
        Ok(self.events[..n].iter().map(|e| Event {
            token: e.u64,
            flags: e.events,
        }))
    }

    fn wait_raw(&mut self, timeout_ns: u64) -> io::Result<usize> {
        let max = self.events.len() as libc::c_int;
        let ptr = self.events.as_mut_ptr();
        let rc = if NO_PWAIT2.load(Ordering::Relaxed) {
            // Round up so that we never wake early and spin.
            let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as libc::c_int;
            // SAFETY: the buffer holds `max` events.
            unsafe { libc::epoll_wait(self.epfd, ptr, max, ms) }
        } else {
            let ts = libc::timespec {
                tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout, sigmask, sigsetsize).
            unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.epfd,
                    ptr,
                    max,
                    &ts as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                ) as libc::c_int
            }
        };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => Ok(0),
            Some(libc::ENOSYS) => {
                NO_PWAIT2.store(true, Ordering::Relaxed);
                self.wait_raw(timeout_ns)
            }
            _ => Err(err),
        }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        // SAFETY: we own epfd.
        unsafe { libc::close(self.epfd) };
    }
}
