//! Thin wrappers over the OS calls mcbench needs beyond std: clocks, CPU
//! affinity, timer slack, the open-file limit, the ephemeral port range.

use std::io;

/// The clock `id` in ns: `CLOCK_MONOTONIC` and `CLOCK_REALTIME` from the
/// vDSO, `CLOCK_THREAD_CPUTIME_ID` (the thread's CPU time) by a syscall.
#[inline]
pub fn clock_of(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET bounds-checks against its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "CPU number too large",
            ));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as above; sched_getaffinity fills the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) != 0 {
            return vec![0];
        }
        (0..8 * std::mem::size_of::<libc::cpu_set_t>())
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Sets the calling thread's timer slack to 1 ns, so that a timed wait
/// wakes when asked rather than up to 50 µs later (the default slack).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Puts the calling thread in `SCHED_IDLE`: it then runs only when no
/// other thread wants its CPU, and a thread that wakes takes the CPU from
/// it at once. A thread cannot leave it again without privilege.
pub fn run_only_when_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    match unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Whether the hard open-file limit leaves room for `needed` descriptors;
/// an error that says what to raise when it does not. Changes nothing.
pub fn fd_limit_allows(needed: u64) -> Result<(), FdLimitError> {
    match fd_limit() {
        Some(lim) if lim.rlim_max < needed => Err(FdLimitError::HardLimit {
            needed,
            hard: lim.rlim_max,
        }),
        _ => Ok(()),
    }
}

/// The open-file limit too low for a run's descriptors.
#[derive(Debug, thiserror::Error)]
pub enum FdLimitError {
    #[error(
        "this run needs {needed} file descriptors but the hard limit is {hard}; \
         raise it (ulimit -Hn {needed}, or LimitNOFILE) or use fewer connections"
    )]
    HardLimit { needed: u64, hard: u64 },
    #[error("this run needs {needed} file descriptors and raising the limit failed: {source}")]
    Raise {
        needed: u64,
        #[source]
        source: io::Error,
    },
}

/// Raises the soft open-file limit to at least `needed` descriptors (the
/// hard limit allowing, as `fd_limit_allows` said), and toward `needed +
/// extra` as far as it allows.
pub fn claim_fds((needed, extra): (u64, u64)) -> Result<(), FdLimitError> {
    fd_limit_allows(needed)?;
    if let Some(lim) = fd_limit().filter(|l| l.rlim_cur < needed) {
        set_soft_fd_limit(lim, needed).map_err(|source| FdLimitError::Raise { needed, source })?;
    }
    if extra > 0 {
        raise_fd_limit_toward(needed.saturating_add(extra));
    }
    Ok(())
}

/// Raises the soft open-file limit toward `wanted`, as far as the hard
/// limit allows; never fails (what is left is counted when it runs out).
fn raise_fd_limit_toward(wanted: u64) {
    if let Some(lim) = fd_limit().filter(|l| l.rlim_cur < wanted) {
        let _ = set_soft_fd_limit(lim, wanted.min(lim.rlim_max));
    }
}

/// The open-file limits, if they can be read.
fn fd_limit() -> Option<libc::rlimit> {
    // SAFETY: getrlimit writes the struct we pass.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0).then_some(lim)
}

/// Sets the soft open-file limit of `lim` to `soft`.
fn set_soft_fd_limit(mut lim: libc::rlimit, soft: u64) -> io::Result<()> {
    lim.rlim_cur = soft;
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// How many ephemeral ports the kernel hands out (`ip_local_port_range`).
pub fn ephemeral_ports() -> Option<u32> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut bounds = text.split_whitespace().map(|n| n.parse::<u32>());
    match (bounds.next(), bounds.next()) {
        (Some(Ok(lo)), Some(Ok(hi))) if hi >= lo => Some(hi - lo + 1),
        _ => None,
    }
}

/// The process's stop flag: 0, or the number of the signal (SIGINT,
/// SIGTERM or SIGHUP) that asked it to stop. The handlers that set it,
/// instead of killing the process, are installed on first use, once: every
/// wait of every command looks at this one flag, so that a signal ends
/// any of them within a moment, its results so far written and no
/// temporary file left.
pub fn stop_flag() -> io::Result<std::sync::Arc<std::sync::atomic::AtomicUsize>> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, OnceLock};
    static FLAG: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let flag = FLAG.get_or_init(|| Arc::new(AtomicUsize::new(0))).clone();
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if !*installed {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            signal_hook::flag::register_usize(sig, flag.clone(), sig as usize)?;
        }
        *installed = true;
    }
    Ok(flag)
}

/// The signal that asked the process to stop (0: none, or no handler was
/// ever installed).
pub fn stop_requested() -> usize {
    stop_flag().map_or(0, |f| f.load(std::sync::atomic::Ordering::Relaxed))
}
