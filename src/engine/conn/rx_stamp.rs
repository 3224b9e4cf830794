//! Kernel receive timestamps (`SO_TIMESTAMPNS`) for answers read after
//! they came: an open loop that reads at its next arrival's wake-up, or a
//! closed loop that pauses before reading (`--read-delay`), times each
//! answer by when the kernel received it, not by when it was read.
//!
//! Over `libc` because neither rustix nor socket2 wraps the option or its
//! control message.
//!
//! What a stamp is: the kernel's `CLOCK_REALTIME` when the last segment a
//! `recvmsg` returns reached the socket (a merged segment keeps the later
//! one's). In order, answers read together are timed by the last of them:
//! late by at most the gap between them. Out of order (a lost segment
//! retransmitted after later ones waited), the last segment may be one
//! that came before the rest: the caller bounds a stamp below by what it
//! knows (`Stamps::arrived_after`, the request's send), which need not
//! cover a whole retransmission wait: after a loss an answer may be timed
//! early by up to that wait.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// Asks the kernel to stamp what `socket` receives.
pub fn enable(socket: &OwnedFd) -> io::Result<()> {
    set_socket_option(socket, libc::SO_TIMESTAMPNS, 1)
}

/// Sets the `SOL_SOCKET` option `name`, an int, to `value`.
pub(super) fn set_socket_option(
    socket: &OwnedFd,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a valid socket and an int option of the right size.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            std::ptr::addr_of!(value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Waits, once per process and at most 100 ms, until the kernel stamps
/// what loopback receives. Call it with a socket of the run's already
/// stamping (`enable`): the kernel turns stamping on in deferred work when
/// its first socket asks, so answers could otherwise come unstamped in a
/// run's first moments, and be timed when read. Best effort: without a
/// loopback (a namespace whose `lo` is down) it returns at once.
pub fn wait_until_stamping() {
    static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let _ = stamps_seen_within(std::time::Duration::from_millis(100));
    });
}

/// Sends a byte to itself over loopback until one comes stamped.
fn stamps_seen_within(limit: std::time::Duration) -> io::Result<bool> {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let client = std::net::TcpStream::connect(listener.local_addr()?)?;
    let (mut server, _) = listener.accept()?;
    let client = OwnedFd::from(client);
    enable(&client)?;
    let deadline = std::time::Instant::now() + limit;
    let mut buf = [0u8; 64];
    while std::time::Instant::now() < deadline {
        server.write_all(b"x")?;
        std::thread::sleep(std::time::Duration::from_millis(1));
        // SAFETY: `buf` is writable for its length.
        match unsafe { recv(&client, buf.as_mut_ptr(), buf.len()) } {
            Ok((_, Some(_))) => return Ok(true),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// One `recvmsg` of up to `len` bytes into `buf`: the bytes read, and the
/// kernel's stamp of the newest of them (`CLOCK_REALTIME`, ns) if it gave
/// one.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
pub unsafe fn recv(socket: &OwnedFd, buf: *mut u8, len: usize) -> io::Result<(usize, Option<u64>)> {
    // Room for one `timespec` message; u64s keep it aligned for cmsghdr.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.cast(),
        iov_len: len,
    };
    // SAFETY: an all-zero msghdr is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: the iovec points at the caller's buffer, the control buffer
    // lives on this frame, and the kernel writes within both lengths.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `msg` is the header the kernel just filled in.
    Ok((n as usize, unsafe { stamp_of(&msg) }))
}

/// The `SCM_TIMESTAMPNS` message of a received header, in ns.
///
/// # Safety
/// `msg` must be a header `recvmsg` filled in, its control buffer alive.
unsafe fn stamp_of(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY (whole loop): the CMSG_* walk stays within msg_controllen,
    // and the data of an SCM_TIMESTAMPNS message is one timespec.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        let header = unsafe { &*cmsg };
        if header.cmsg_level == libc::SOL_SOCKET && header.cmsg_type == libc::SCM_TIMESTAMPNS {
            let ts: libc::timespec =
                unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast()) };
            return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
        }
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    None
}

/// Where a stamp falls on the engine's clock (`CLOCK_MONOTONIC`), and
/// that clock now: now less the stamp's age, taken on the clock that
/// stamped it. Only the age crosses clocks, so their offset does not
/// matter. The realtime clock is read first: time lost between the two
/// reads then makes the answer later, never earlier. A stamp from the
/// future (a clock step back) is taken as now.
pub fn arrival(stamp: u64, clock: impl Fn() -> u64) -> (u64, u64) {
    let age = realtime_ns().saturating_sub(stamp);
    let now = clock();
    (now.saturating_sub(age), now)
}

fn realtime_ns() -> u64 {
    crate::net::clock_of(libc::CLOCK_REALTIME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::OwnedFd;
    use std::time::Duration;

    /// A stamp read 30 ms after the bytes came dates them 30 ms back, not
    /// at the read; a socket without the option gives none.
    #[test]
    fn a_late_read_is_dated_by_when_the_bytes_came() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let client = OwnedFd::from(client);
        enable(&client).unwrap();
        wait_until_stamping();
        server.write_all(b"END\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let mut buf = [0u8; 64];
        let (n, stamp) = unsafe { recv(&client, buf.as_mut_ptr(), buf.len()) }.unwrap();
        assert_eq!(&buf[..n], b"END\r\n");
        let (came, read_at) = arrival(stamp.expect("a stamp"), crate::net::clock_ns);
        let age = read_at - came;
        assert!((29_000_000..1_000_000_000).contains(&age), "age {age} ns");

        let plain = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut other, _) = listener.accept().unwrap();
        other.write_all(b"END\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let plain = OwnedFd::from(plain);
        let (_, stamp) = unsafe { recv(&plain, buf.as_mut_ptr(), buf.len()) }.unwrap();
        assert_eq!(stamp, None);
    }
}
