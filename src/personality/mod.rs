//! The seed tools' command lines: `mcbench memaslap|mcperf|memcache-perf|
//! mutilate ARGS`, or the same through a link of that name (`argv[0]`).
//!
//! Each personality parses its tool's flags as the tool documents them,
//! with the tool's defaults, and translates them into `mcbench run`'s flags:
//! one validated `RunSpec`, one engine, no second code path for measuring.
//! It then prints the results in the tool's own layout from the same
//! result every other report reads. Flags with no meaning here are refused
//! (exit 2, naming the flag) or noted as having no effect.
//!
//! `mcperf` is twemperf's (as in the repcached guide). memcache-perf's
//! binary, also called mcperf, is `mcbench memcache-perf`.
//!
//! Not here: measuring (`engine`), checks of a run (`RunSpec::validate`).

mod error;
mod memaslap;
mod memaslap_out;
mod memcache_perf;
mod mutilate;
mod mutilate_agents;
mod mutilate_out;
mod twemperf;
mod twemperf_out;
mod values;

pub use error::PersonalityError;

use crate::app::Presenter;
use crate::cli::{Cli, Command};
use crate::error::exit;
use clap::{Args, FromArgMatches};
use std::ffi::OsString;
use std::path::PathBuf;

/// A seed tool mcbench speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// libmemcached's memaslap (also installed as memslap).
    Memaslap,
    /// twemperf's mcperf.
    Twemperf,
    /// memcache-perf (whose own binary is also called mcperf).
    MemcachePerf,
    /// The mutilate fork (a superset of mutilate's flags).
    Mutilate,
}

impl Tool {
    /// The tool a program name stands for: a link named `memaslap`,
    /// `memslap`, `mcperf`, `memcache-perf` or `mutilate`.
    pub fn from_program(argv0: &str) -> Option<Tool> {
        let name = std::path::Path::new(argv0).file_name()?.to_str()?;
        Self::from_name(name)
    }

    /// The tool a subcommand names.
    pub fn from_name(name: &str) -> Option<Tool> {
        match name {
            "memaslap" | "memslap" => Some(Tool::Memaslap),
            "mcperf" | "twemperf" => Some(Tool::Twemperf),
            "memcache-perf" => Some(Tool::MemcachePerf),
            "mutilate" => Some(Tool::Mutilate),
            _ => None,
        }
    }

    /// The name its messages and help go under.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memaslap => "memaslap",
            Tool::Twemperf => "mcperf",
            Tool::MemcachePerf => "memcache-perf",
            Tool::Mutilate => "mutilate",
        }
    }
}

/// mcbench's own flags, accepted by every personality.
#[derive(Debug, Clone, Default, Args)]
pub struct Extras {
    /// mcbench: also write mcbench's JSON result to FILE.
    #[arg(long = "mcbench-json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// mcbench: also write mcbench's HTML report to FILE.
    #[arg(long = "mcbench-html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// mcbench: end the measured phase after D at the latest (2s, 1m).
    #[arg(long = "mcbench-duration", value_name = "D", value_parser = crate::spec::units::parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// mcbench: serve Prometheus's /metrics on ADDR while running.
    #[arg(long = "mcbench-metrics-listen", value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// mcbench: with --mcbench-metrics-listen, serve beyond loopback.
    #[arg(long = "mcbench-metrics-allow-remote", requires = "metrics_listen")]
    pub metrics_allow_remote: bool,
    /// mcbench: with --mcbench-metrics-listen, after the run serve until a
    /// scrape has read its final counts, at most D.
    #[arg(long = "mcbench-metrics-hold", value_name = "D", requires = "metrics_listen", value_parser = crate::spec::units::parse_duration)]
    pub metrics_hold: Option<std::time::Duration>,
}

impl Extras {
    /// `--mcbench-json`/`--mcbench-html` and the endpoint as run's flags.
    fn outputs(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.json {
            out.extend(["--json".into(), p.display().to_string()]);
        }
        if let Some(p) = &self.html {
            out.extend(["--html".into(), p.display().to_string()]);
        }
        out.extend(self.telemetry());
        out
    }

    /// The extras given that an agent has no use for: the master writes
    /// the results and ends the run.
    fn unused_by_an_agent(&self) -> Vec<&'static str> {
        let given = [
            (self.json.is_some(), "--mcbench-json"),
            (self.html.is_some(), "--mcbench-html"),
            (self.duration.is_some(), "--mcbench-duration"),
        ];
        given.into_iter().filter(|g| g.0).map(|g| g.1).collect()
    }

    /// `--mcbench-metrics-*` as the native `--metrics-*` (an agent's too).
    fn telemetry(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = &self.metrics_listen {
            out.extend(["--metrics-listen".into(), a.to_string()]);
        }
        if self.metrics_allow_remote {
            out.push("--metrics-allow-remote".into());
        }
        if let Some(d) = &self.metrics_hold {
            out.extend(["--metrics-hold".into(), format!("{}s", d.as_secs_f64())]);
        }
        out
    }

    /// Every extra as run's flags, the duration cap as `--time-limit`.
    fn native(&self) -> Vec<String> {
        let mut out = self.outputs();
        if let Some(d) = &self.duration {
            out.extend(["--time-limit".into(), format!("{}s", d.as_secs_f64())]);
        }
        out
    }
}

/// What a personality's flags came to: `mcbench` flags, and one note per
/// flag that has no effect or works differently.
pub struct Translation {
    /// The native command (`run`, `scan`, `search`) and its flags.
    pub command: &'static str,
    pub native: Vec<String>,
    pub notes: Vec<String>,
    /// Prints the results in the tool's layout.
    pub presenter: Option<Box<dyn Presenter>>,
}

impl Translation {
    fn new(command: &'static str) -> Self {
        Translation {
            command,
            native: Vec::new(),
            notes: Vec::new(),
            presenter: None,
        }
    }

    /// Adds a native flag and its value.
    fn flag(&mut self, name: &str, value: impl ToString) {
        self.native.push(name.to_string());
        self.native.push(value.to_string());
    }

    /// Adds a native switch.
    fn switch(&mut self, name: &str) {
        self.native.push(name.to_string());
    }

    /// A flag accepted with no effect, said once on stderr.
    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }
}

/// A personality's own flags parsed, translated, run and reported; the
/// process exit code. `args` starts with the program name.
pub fn main(tool: Tool, args: Vec<OsString>) -> i32 {
    let translated = match tool {
        Tool::Memaslap => parse::<memaslap::MemaslapArgs>(tool, args).map(|a| a.translate()),
        Tool::Twemperf => parse::<twemperf::TwemperfArgs>(tool, args).map(|a| a.translate()),
        Tool::MemcachePerf => {
            parse::<memcache_perf::MemcachePerfArgs>(tool, args).map(|a| a.translate())
        }
        Tool::Mutilate => parse::<mutilate::MutilateArgs>(tool, args).map(|a| a.translate()),
    };
    let translation = match translated {
        Ok(Ok(t)) => t,
        Ok(Err(why)) => {
            crate::stderr_line!("mcbench {}: error: {why}", tool.name());
            return exit::USAGE;
        }
        Err(code) => return code,
    };
    run(tool, translation)
}

/// The tool's flags; `Err` is the exit code once clap has printed help,
/// the version or the usage error.
fn parse<A: Args + FromArgMatches + ToolCommand>(
    tool: Tool,
    args: Vec<OsString>,
) -> Result<A, i32> {
    // The tool's name and about go on after the flags, whose struct's
    // doc comment would otherwise stand for the about.
    let cmd = A::command(tool, A::augment_args(clap::Command::new(tool.name())));
    let hint = (tool == Tool::Twemperf)
        .then(|| twemperf::memcache_perf_hint(&args))
        .flatten();
    let matches = cmd.try_get_matches_from(args).map_err(|e| {
        let _ = e.print();
        if let Some(hint) = &hint {
            crate::stderr_line!("{hint}");
        }
        e.exit_code()
    })?;
    A::from_arg_matches(&matches).map_err(|e| {
        let _ = e.print();
        e.exit_code()
    })
}

/// The clap command a personality's flags hang on: its name, its help's
/// heading, and which of clap's own flags it keeps.
trait ToolCommand {
    fn command(tool: Tool, cmd: clap::Command) -> clap::Command;
}

fn run(tool: Tool, mut t: Translation) -> i32 {
    let name = tool.name();
    for note in &t.notes {
        crate::stderr_line!("mcbench {name}: note: {note}");
    }
    let mut argv: Vec<OsString> = vec!["mcbench".into(), t.command.into()];
    argv.extend(t.native.iter().map(OsString::from));
    crate::stderr_line!("mcbench {name}: runs as: {}", shell_words(&redacted(&argv)));
    let argv = match crate::config::expand(argv) {
        Ok(a) => a,
        Err(e) => {
            crate::stderr_line!("mcbench {name}: error: {e}");
            return exit::USAGE;
        }
    };
    let cli = match <Cli as clap::Parser>::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            // Our translation produced a native flag set clap refuses: a
            // usage error all the same, with clap's reason.
            crate::stderr_line!("mcbench {name}: error: {}", e.render().to_string().trim());
            return exit::USAGE;
        }
    };
    match cli.command {
        Command::Run(args) => {
            let presenter: Option<&mut dyn Presenter> = match &mut t.presenter {
                Some(p) => Some(&mut **p),
                None => None,
            };
            crate::app::run_presented(&args, presenter)
        }
        Command::Scan(args) => {
            crate::app::scan_presented(&args, t.presenter.as_ref().map(|p| p.text()))
        }
        Command::Search(args) => {
            crate::app::search_presented(&args, t.presenter.as_ref().map(|p| p.text()))
        }
        #[cfg(feature = "agents")]
        Command::Agent(args) => crate::app::agent(&args),
        _ => unreachable!("personalities translate into run, scan, search or agent"),
    }
}

/// `argv` with the password's value masked: a command line is shown,
/// a secret never is.
fn redacted(argv: &[OsString]) -> Vec<OsString> {
    const MASK: &str = "*****";
    let mut after_flag = false;
    argv.iter()
        .map(|a| {
            let text = a.to_string_lossy();
            let shown = if std::mem::take(&mut after_flag) {
                MASK.into()
            } else if text.starts_with("--password=") {
                format!("--password={MASK}").into()
            } else if text.starts_with("-P") && text.len() > 2 {
                format!("-P{MASK}").into()
            } else {
                a.clone()
            };
            after_flag = a == "--password" || a == "-P";
            shown
        })
        .collect()
}

/// The command as a shell would take it back.
fn shell_words(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:/,=@%+".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The message of a flag refused because mcbench lacks its capability.
fn refused(flag: &str, why: &str) -> PersonalityError {
    PersonalityError::Unsupported {
        flag: flag.into(),
        why: why.into(),
    }
}
