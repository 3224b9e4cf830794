//! Kernel transmit timestamps (`SO_TIMESTAMPING`, software, `OPT_ID`):
//! when each write's last byte left the socket layer for the device,
//! read back from the socket's error queue.
//!
//! Over `libc` because neither rustix nor socket2 wraps the option, the
//! error queue or its control messages.
//!
//! What a stamp is: `CLOCK_REALTIME` when the device (loopback, veth or a
//! NIC's driver) took the segment holding the last byte of one `send`.
//! On TCP, `OPT_ID` numbers it by that byte: the bytes sent on the socket
//! since stamping began, less one, in 32 bits (`Offsets` widens them).
//! `OPT_TSONLY` keeps the sent bytes out of the queue: a stamp costs a
//! few dozen bytes of the receive buffer until read.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// `SCM_TSTAMP_SND`: the stamp of a segment handed to the device
/// (`linux/errqueue.h`; not in `libc`).
const SCM_TSTAMP_SND: u32 = 0;

/// Asks the kernel to report transmit stamps of `socket`'s writes: of
/// each write (`every_write`), or of those sent by `send_stamped` alone.
/// Call it before the socket's first byte is written: offsets count from
/// the bytes written by then (`OPT_ID_TCP`, Linux 6.2; before it, from
/// the bytes acknowledged, the same on a socket that has sent nothing).
pub fn enable(socket: &OwnedFd, every_write: bool) -> io::Result<()> {
    let mut base = libc::SOF_TIMESTAMPING_SOFTWARE
        | libc::SOF_TIMESTAMPING_OPT_ID
        | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    if every_write {
        base |= libc::SOF_TIMESTAMPING_TX_SOFTWARE;
    }
    match set_flags(socket, base | libc::SOF_TIMESTAMPING_OPT_ID_TCP) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => set_flags(socket, base),
        done => done,
    }
}

/// `send(2)` of `buf` (no `SIGPIPE`) asking the kernel to stamp this
/// write alone as transmitted: `SO_TIMESTAMPING`'s per-write control
/// message, which a socket `enable`d without every write takes. The
/// stamp is numbered as any (`OPT_ID`, by its last byte).
pub fn send_stamped(socket: &OwnedFd, buf: &[u8]) -> io::Result<usize> {
    // One control message holding a u32; u64s keep it aligned.
    let mut control = [0u64; 4];
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    // SAFETY (block): CMSG_SPACE(4) is 24 of the buffer's 32 bytes, so
    // the first header and its u32 lie within it.
    unsafe {
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SO_TIMESTAMPING;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        let flags: u32 = libc::SOF_TIMESTAMPING_TX_SOFTWARE;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<u32>(), flags);
    }
    // SAFETY: `msg` points at `iov` (over `buf`) and `control`, alive here.
    let n = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn set_flags(socket: &OwnedFd, flags: libc::c_uint) -> io::Result<()> {
    // The flags are bits under 2^17: an int as the option wants.
    super::rx_stamp::set_socket_option(socket, libc::SO_TIMESTAMPING, flags as libc::c_int)
}

/// Reads the transmit stamps waiting on `socket`, oldest first:
/// `each(id, stamp)` with the `OPT_ID` of the write and its stamp
/// (`CLOCK_REALTIME` ns), until the queue is empty or `each` says every
/// write is covered (`false`): that spares the syscall that would find
/// the queue empty. Returns how many were read.
pub fn drain(socket: &OwnedFd, mut each: impl FnMut(u32, u64) -> bool) -> io::Result<usize> {
    let mut read = 0;
    loop {
        // SAFETY: `socket` is a valid socket.
        match unsafe { next(socket) } {
            Ok(Some(Some((id, stamp)))) => {
                read += 1;
                if !each(id, stamp) {
                    return Ok(read);
                }
            }
            // A message that is not a transmit stamp: skipped.
            Ok(Some(None)) => {}
            Ok(None) => return Ok(read),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// One message of the error queue: `None` when it is empty, `Some(None)`
/// for a message that carries no transmit stamp.
///
/// # Safety
/// `socket` must be a valid socket.
unsafe fn next(socket: &OwnedFd) -> io::Result<Option<Option<(u32, u64)>>> {
    // Room for SCM_TIMESTAMPING (3 timespecs) and IP(V6)_RECVERR (the
    // extended error and the offender's address); u64s keep it aligned.
    let mut control = [0u64; 32];
    // SAFETY: an all-zero msghdr is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: no data buffer; the control buffer lives on this frame.
    let n = unsafe {
        libc::recvmsg(
            socket.as_raw_fd(),
            &mut msg,
            libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock => Ok(None),
            _ => Err(e),
        };
    }
    // SAFETY: `msg` is the header the kernel just filled in.
    Ok(Some(unsafe { stamp_of(&msg) }))
}

/// The software stamp and `OPT_ID` of an error-queue message, if it is a
/// transmit stamp.
///
/// # Safety
/// `msg` must be a header `recvmsg` filled in, its control buffer alive.
unsafe fn stamp_of(msg: &libc::msghdr) -> Option<(u32, u64)> {
    let mut stamp = None;
    let mut id = None;
    // SAFETY (whole loop): the CMSG_* walk stays within msg_controllen;
    // SCM_TIMESTAMPING holds three timespecs (software first), and
    // IP(V6)_RECVERR starts with a sock_extended_err.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        let header = unsafe { &*cmsg };
        let data = unsafe { libc::CMSG_DATA(cmsg) };
        match (header.cmsg_level, header.cmsg_type) {
            (libc::SOL_SOCKET, libc::SCM_TIMESTAMPING) => {
                let ts: libc::timespec = unsafe { std::ptr::read_unaligned(data.cast()) };
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            (libc::SOL_IP, libc::IP_RECVERR) | (libc::SOL_IPV6, libc::IPV6_RECVERR) => {
                let err: libc::sock_extended_err = unsafe { std::ptr::read_unaligned(data.cast()) };
                let is_stamp = err.ee_errno == libc::ENOMSG as u32
                    && err.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
                    && err.ee_info == SCM_TSTAMP_SND;
                id = is_stamp.then_some(err.ee_data);
            }
            _ => {}
        }
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    Some((id?, stamp.filter(|&s| s > 0)?))
}

/// Widens a socket's 32-bit stamp ids into byte counts on the
/// connection's own count of bytes written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offsets {
    /// The connection's bytes written when stamping began on this socket.
    base: u64,
    /// The bytes through the newest stamp, counted from `base`.
    through: u64,
}

impl Offsets {
    /// Stamping begins on a socket when `written` bytes were written on
    /// the connection before it.
    pub fn new(written: u64) -> Offsets {
        Offsets {
            base: written,
            through: 0,
        }
    }

    /// The connection's bytes written through the newest stamp read (the
    /// bytes before stamping began, before any).
    pub fn last(&self) -> u64 {
        self.base + self.through
    }

    /// The connection's bytes written through the write stamped `id`: a
    /// request is sent by it when its last byte is within them.
    /// `stamped`: the connection's bytes through its newest stamped write.
    /// A stamp is of a write at or before that one and less than 4 GiB
    /// before it (stamps are read each loop turn), so the one count at or
    /// below `stamped` whose last byte has id `id` is it, however far
    /// apart a sample's stamps are. A stamp at or behind the newest read
    /// (a segment sent again) moves nothing.
    pub fn through(&mut self, id: u32, stamped: u64) -> u64 {
        let s = stamped.saturating_sub(self.base);
        // Ids number the last byte of a write from 0: (s - 1 - id) mod 2^32
        // bytes lie between it and the newest stamped byte.
        let behind = u64::from(((s.wrapping_sub(1)) as u32).wrapping_sub(id));
        if s > behind {
            self.through = self.through.max(s - behind);
        }
        self.base + self.through
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn ids_widen_past_four_gibibytes_and_across_far_samples() {
        let mut o = Offsets::new(1_000);
        assert_eq!(o.through(99, 1_200), 1_100);
        assert_eq!(o.through(199, 1_200), 1_200);
        // Writes of 1 GiB, each stamped: past 4 GiB the id has wrapped.
        let mut last = 199u64;
        for _ in 0..5 {
            last += 1 << 30;
            assert_eq!(o.through(last as u32, 1_000 + last + 1), 1_000 + last + 1);
        }
        assert!(last > 1 << 32);
        // A sample's next stamp 3 GiB on (beyond the 2 GiB a step from
        // the last read could tell), with 1 GiB more stamped after it.
        let far = last + 3 * (1 << 30);
        let newest = 1_000 + far + 1 + (1 << 30);
        assert_eq!(o.through(far as u32, newest), 1_000 + far + 1);
        // A retransmitted write's stamp, behind the newest read.
        assert_eq!(o.through((far - 50) as u32, newest), 1_000 + far + 1);
        // Nothing stamped yet: nothing moves.
        let mut fresh = Offsets::new(7);
        assert_eq!(fresh.through(3, 7), 7);
    }

    /// Two writes on a loopback connection come back as two stamps, ids
    /// at their last bytes, each after the write began.
    #[test]
    fn each_write_is_stamped_at_its_last_byte() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let socket = OwnedFd::from(client.try_clone().unwrap());
        enable(&socket, true).unwrap();
        let before = crate::net::clock_of(libc::CLOCK_REALTIME);
        client.write_all(b"get a\r\n").unwrap();
        client.write_all(b"get bb\r\n").unwrap();
        let mut stamps = Vec::new();
        for _ in 0..100 {
            drain(&socket, |id, at| {
                stamps.push((id, at));
                true
            })
            .unwrap();
            if stamps.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let ids: Vec<u32> = stamps.iter().map(|s| s.0).collect();
        assert_eq!(ids, [6, 14]);
        assert!(stamps.iter().all(|s| s.1 >= before), "{stamps:?} {before}");
        let mut o = Offsets::new(0);
        assert_eq!((o.through(6, 15), o.through(14, 15)), (7, 15));
    }

    /// Enabled without every write, only the write sent with its control
    /// message comes back stamped, numbered by its own last byte.
    #[test]
    fn only_the_write_that_asks_is_stamped() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let socket = OwnedFd::from(client.try_clone().unwrap());
        enable(&socket, false).unwrap();
        client.write_all(b"get a\r\n").unwrap();
        assert_eq!(send_stamped(&socket, b"get bb\r\n").unwrap(), 8);
        client.write_all(b"get ccc\r\n").unwrap();
        let mut ids = Vec::new();
        for _ in 0..100 {
            drain(&socket, |id, _| {
                ids.push(id);
                true
            })
            .unwrap();
            if !ids.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // On loopback a write's stamp is queued before its send returns:
        // a stamp of the third write would be there by now.
        drain(&socket, |id, _| {
            ids.push(id);
            true
        })
        .unwrap();
        assert_eq!(ids, [14]);
    }
}
