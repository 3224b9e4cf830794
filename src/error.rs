//! Failures the user sees, each tied to the exit code it produces.

use std::fmt;

/// Exit codes (clap's convention for usage errors).
pub mod exit {
    /// The run completed.
    pub const OK: i32 = 0;
    /// The run failed: server unreachable, every connection lost.
    pub const FAILED: i32 = 1;
    /// Bad usage or an invalid configuration, found before any traffic.
    pub const USAGE: i32 = 2;
    /// Stopped by SIGINT (128 + 2).
    pub const SIGINT: i32 = 130;
    /// Stopped by SIGTERM (128 + 15).
    pub const SIGTERM: i32 = 143;
    /// Stopped by SIGHUP (128 + 1): the terminal went away.
    pub const SIGHUP: i32 = 129;

    /// The exit code of a command stopped by the signal `sig` (its number,
    /// as the stop flag holds it).
    pub fn of_signal(sig: usize) -> i32 {
        match super::signal_name(sig) {
            "SIGTERM" => SIGTERM,
            "SIGHUP" => SIGHUP,
            _ => SIGINT,
        }
    }

    /// The exit code of a result stopped by the signal named `name`.
    pub fn of_signal_name(name: &str) -> i32 {
        match name {
            "SIGTERM" => SIGTERM,
            "SIGHUP" => SIGHUP,
            _ => SIGINT,
        }
    }
}

/// The stop signals' names, as results and messages give them: SIGINT,
/// SIGTERM or SIGHUP (any other number reads as SIGINT).
pub fn signal_name(sig: usize) -> &'static str {
    match sig as i32 {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "SIGINT",
    }
}

/// The signal a stop flag holds, by name; None while it holds none.
pub fn stopped_by(stop: &std::sync::atomic::AtomicUsize) -> Option<String> {
    match stop.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        sig => Some(signal_name(sig).to_string()),
    }
}

/// An error that ends the program with a message and an exit code.
#[derive(Debug)]
pub enum Failure {
    /// The configuration is invalid; nothing was sent.
    Usage(String),
    /// The run could not be done or could not finish.
    Run(String),
    /// A signal (its number) stopped the command: what it had was
    /// written, what it had not was dropped whole.
    Stopped(usize),
}

impl Failure {
    /// A usage failure (exit 2) with `msg`'s text: a message or any
    /// layer's typed error.
    pub fn usage(msg: impl fmt::Display) -> Self {
        Failure::Usage(msg.to_string())
    }

    /// A failed run (exit 1) with `msg`'s text.
    pub fn run(msg: impl fmt::Display) -> Self {
        Failure::Run(msg.to_string())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => exit::USAGE,
            Failure::Run(_) => exit::FAILED,
            Failure::Stopped(sig) => exit::of_signal(*sig),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Run(m) => f.write_str(m),
            Failure::Stopped(sig) => write!(f, "stopped by {}", signal_name(*sig)),
        }
    }
}

impl std::error::Error for Failure {}

/// `eprintln!` that never panics: a failing stderr (a closed pipe, a full
/// disk) must not stop a run or lose its files, so its error is dropped.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// Writes `text` to stdout and flushes it; the error names stdout, for an
/// exit 1 once the files are written (`println!` would panic instead).
pub fn to_stdout(text: &str) -> Result<(), StdoutError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// Stdout that cannot be written (a closed pipe, a full disk).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout: {0}")]
pub struct StdoutError(#[source] pub std::io::Error);
