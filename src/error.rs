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
}

/// An error that ends the program with a message and an exit code.
#[derive(Debug)]
pub enum Failure {
    /// The configuration is invalid; nothing was sent.
    Usage(String),
    /// The run could not be done or could not finish.
    Run(String),
}

impl Failure {
    pub fn usage(msg: impl Into<String>) -> Self {
        Failure::Usage(msg.into())
    }

    pub fn run(msg: impl Into<String>) -> Self {
        Failure::Run(msg.into())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => exit::USAGE,
            Failure::Run(_) => exit::FAILED,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Run(m) => f.write_str(m),
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
pub fn to_stdout(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}
