//! The client's own CPU use, from the OS.

/// User and system CPU time of the whole process, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
}

impl CpuTimes {
    /// The process's CPU times so far (all threads).
    pub fn process() -> Self {
        // SAFETY: getrusage writes into the struct we pass; RUSAGE_SELF is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
        CpuTimes {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
        }
    }

    /// CPU time spent between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
        }
    }

    pub fn total_ns(self) -> u64 {
        self.user_ns + self.sys_ns
    }
}

/// CPU time of the calling thread, ns (user + system).
pub fn thread_cpu_ns() -> u64 {
    crate::os::clock_of(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Peak resident set size of this process image, bytes: `VmHWM` from
/// /proc. (`getrusage`'s maxrss survives `exec`, so a child of a large
/// process would report its parent's size.) 0 where /proc is missing.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
