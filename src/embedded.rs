//! The embedded default: with no server named, start a `memcached` from
//! PATH on a free loopback port for the run, and stop it afterwards.

use crate::error::Failure;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How many free ports to try.
const START_ATTEMPTS: usize = 3;
/// How long memcached gets to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(5);

/// What the embedded server must accommodate.
pub struct Sizing {
    pub connections: usize,
    /// Approximate bytes of the key space.
    pub data_bytes: u64,
    /// The largest item, bytes.
    pub max_item_bytes: usize,
}

/// The embedded memcached's connection limit (`-c`) for `connections`.
pub fn max_conns(connections: usize) -> usize {
    (connections + 64).max(1024)
}

/// A memcached this process started; stopped (by its PID) on drop.
pub struct EmbeddedMemcached {
    child: Child,
    pub addr: SocketAddr,
    pub version: String,
}

/// Why the embedded memcached did not start: a failed run (exit 1).
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("cannot find a free port: {0}")]
    FreePort(#[source] std::io::Error),
    #[error("cannot start {binary}: {source}")]
    Spawn {
        binary: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the embedded memcached exited at start ({0})")]
    Exited(std::process::ExitStatus),
    #[error("the embedded memcached did not listen on {0} within 5 s")]
    NotListening(SocketAddr),
}

impl EmbeddedMemcached {
    /// Starts memcached sized for the run. No `memcached` on PATH is a
    /// usage error (exit 2, with how to install it); one that will not
    /// start is a failed run (exit 1).
    pub fn start(size: &Sizing) -> Result<Self, Failure> {
        let binary = find_on_path("memcached").ok_or_else(|| {
            Failure::usage(
                "no server given (-s/--server or MEMCACHED_SERVERS) and no `memcached` on PATH \
                 to start one for the run; install it (Debian/Ubuntu: apt-get install memcached) \
                 or name a server with -s HOST:PORT",
            )
        })?;
        // The free port is found by binding and releasing it, so another
        // process may take it first: try a few.
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            match Self::start_on_free_port(&binary, size) {
                Ok(server) => return Ok(server),
                Err(e) => last = Some(e),
            }
        }
        Err(Failure::run(last.map_or(String::new(), |e| e.to_string())))
    }

    fn start_on_free_port(binary: &Path, size: &Sizing) -> Result<Self, StartError> {
        let port = free_port().map_err(StartError::FreePort)?;
        // Twice the data plus slab overhead, at least memcached's default 64 MiB.
        let memory_mb = (size.data_bytes * 2 / (1 << 20) + 64).max(64);
        let memory_mb = memory_mb.max(4 * size.max_item_bytes.div_ceil(1 << 20) as u64);
        // memcached's item size limit, in whole MiB (it must divide into
        // 512 KiB slab chunks): its default 1 MiB unless values need more.
        let item_limit_mb = size.max_item_bytes.div_ceil(1 << 20).max(1);
        let mut cmd = Command::new(binary);
        die_with_parent(&mut cmd);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-u", "root"]); // memcached refuses to run as root otherwise
        }
        let child = cmd
            .args(["-l", "127.0.0.1", "-U", "0"])
            .args(["-p", &port.to_string()])
            .args(["-c", &max_conns(size.connections).to_string()])
            .args(["-m", &memory_mb.to_string()])
            .args(["-I", &format!("{item_limit_mb}m")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| StartError::Spawn {
                binary: binary.to_path_buf(),
                source,
            })?;
        let mut server = EmbeddedMemcached {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            version: version_of(binary),
        };
        server.wait_listening()?;
        Ok(server)
    }

    fn wait_listening(&mut self) -> Result<(), StartError> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(StartError::Exited(status));
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(100)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(StartError::NotListening(self.addr))
    }
}

impl Drop for EmbeddedMemcached {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the PID of the child we spawned and still own.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server gets SIGTERM when this process dies, however it dies
/// (SIGKILL, a crash): no memcached is left behind. The signal follows
/// the thread that spawns it, which runs the whole run.
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: prctl and getppid are async-signal-safe; the closure touches
    // nothing else between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "mcbench exited while starting memcached",
                ));
            }
            Ok(())
        });
    }
}

fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A port that was free a moment ago (the kernel picks it).
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn version_of(binary: &std::path::Path) -> String {
    Command::new(binary)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "memcached".into())
}
