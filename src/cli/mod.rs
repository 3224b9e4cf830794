//! Command-line definitions of the native subcommands: `run` (and its
//! mapping onto a `RunSpec`) in `run`, the server tools' in `tools`, the
//! saved results' here.
// The doc comments of flags are clap's help text, written for a terminal
// (`HOST:PORT[:WEIGHT]`, `N<ttl>`), not rustdoc's markdown.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod curve;
mod error;
mod run;
mod tools;

pub use curve::{ScanArgs, SearchArgs};
pub use error::CliError;
pub use run::RunArgs;
#[cfg(feature = "agents")]
pub use tools::AgentArgs;
pub use tools::{RouteArgs, ServersArgs, StatsArgs, TopArgs, TraceStatArgs};

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mcbench",
    version,
    about = "Load generator and latency-measurement tool for memcached",
    args_override_self = true,
    long_about = "Load generator and latency-measurement tool for memcached.\n\n\
        Latency is measured from each request's intended send time (no coordinated \
        omission); the tool reports when it, not the server, is the bottleneck."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive get/set load at memcached servers and report throughput and latency.
    Run(Box<RunArgs>),
    /// Find the highest open-loop rate whose latency percentile meets an
    /// SLO (--slo p99:1ms): bracket, bisect, confirm. Takes run's flags.
    Search(Box<SearchArgs>),
    /// One open-loop run per rate (--rates 10k:200k:10k): the
    /// latency–throughput curve. Takes run's flags.
    Scan(Box<ScanArgs>),
    /// List the workload profiles `run --profile` accepts, with what each sets.
    Profiles,
    /// Render saved results (`run --json`) again: text, HTML, CSV, HdrHistogram log.
    Report(ReportArgs),
    /// Compare saved results side by side, each with its ratio to the first.
    Compare(CompareArgs),
    /// Run two run files in turn, A B A B ... (--repeat times each), and
    /// report each change from A to B with its bootstrap interval against
    /// A's own noise floor.
    Ab(AbArgs),
    /// Print the server each key goes to under a distribution (ketama,
    /// modula, ...), as a client library or proxy would place it.
    Route(RouteArgs),
    /// Print servers' `stats`, or `stats GROUP` (slabs, items, settings,
    /// conns, sizes), sorted, as memcached-tool's stats mode does.
    Stats(StatsArgs),
    /// memcached-tool's display: each slab class with pages, its item size,
    /// age, count, whether it is full, evictions and OOM.
    Slabs(ServersArgs),
    /// A live view of servers' stats with memcache-top's columns, its
    /// rates and hit ratio over the measured interval.
    Top(TopArgs),
    /// What a trace file holds (records, ops, span, its recorded hit
    /// ratio), read as a replay reads it, and how fast.
    TraceStat(TraceStatArgs),
    /// Serve a master's `run --agent`: run its share of the load and
    /// stream the histograms back (gRPC, token required).
    #[cfg(feature = "agents")]
    Agent(AgentArgs),
    /// memaslap's command line and output (also as a link named memaslap
    /// or memslap); `mcbench memaslap --help` for its flags.
    Memaslap(ToolArgs),
    /// twemperf's mcperf command line and output (also as a link named
    /// mcperf); `mcbench mcperf --help` for its flags.
    Mcperf(ToolArgs),
    /// memcache-perf's command line and output (its binary is also called
    /// mcperf; here that name is twemperf's).
    MemcachePerf(ToolArgs),
    /// The mutilate fork's command line and output (also as a link named
    /// mutilate).
    Mutilate(ToolArgs),
    /// Print a man page (roff): mcbench's, or a subcommand's with all its
    /// flags (`mcbench man run | man -l -`).
    Man(ManArgs),
    /// Print a shell's completion script (`source <(mcbench completions
    /// bash)`).
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (run, search, report, ...);
    /// without it, mcbench's own page.
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// A seed tool's own flags, parsed by its personality
/// (`crate::personality`), not here.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ToolArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// Where results go, for `run` and `report`.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write the results as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write one CSV row per interval per op type to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write a self-contained HTML report with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write the latency histograms as an HdrHistogram interval log to FILE.
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,

    /// Percentiles to print, e.g. 50,99,99.9 (default 50,90,99,99.9,99.99).
    ///
    /// The text report, the live line and the CSV print them; any other is
    /// read from the kept histograms later (`mcbench report --percentiles`).
    #[arg(long, value_name = "LIST")]
    pub percentiles: Option<Percentiles>,

    /// Print the text report in full, every section.
    ///
    /// Each interval's bounds in a table of its own, service time beside
    /// latency, replies, bytes, the client's CPU and the precision verdict
    /// percentile by percentile. (The default report leads with the answer
    /// on one screen; the JSON holds all.)
    #[arg(long)]
    pub details: bool,
}

impl OutputArgs {
    /// The files asked for, with their formats.
    pub fn files(&self) -> Vec<(crate::report::Format, &std::path::Path)> {
        use crate::report::Format;
        [
            (Format::Json, &self.json),
            (Format::Csv, &self.csv),
            (Format::Html, &self.html),
            (Format::HdrLog, &self.hdr_log),
        ]
        .into_iter()
        .filter_map(|(f, p)| p.as_deref().map(|p| (f, p)))
        .collect()
    }
}

/// A list of percentiles, each above 0 and at most 100.
#[derive(Debug, Clone)]
pub struct Percentiles(pub Vec<f64>);

impl std::str::FromStr for Percentiles {
    type Err = CliError;

    fn from_str(text: &str) -> Result<Self, CliError> {
        let list = text
            .split(',')
            .map(|p| match p.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
                _ => Err(CliError::Percentile(p.to_string())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Percentiles(list))
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results written by `mcbench run --json`.
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,

    /// Merge the runs into one, as if one process had recorded every
    /// request (runs of several processes or machines at the same time).
    #[arg(long)]
    pub merge: bool,

    /// With --merge, merge runs whose workloads differ (by default they
    /// are refused, naming the fields).
    #[arg(long, requires = "merge")]
    pub force: bool,

    #[command(flatten)]
    pub outputs: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results written by `mcbench run --json`; the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,

    /// Compare even when the runs' workloads differ.
    #[arg(long)]
    pub force: bool,

    /// Percentiles to compare (default: the first run's).
    #[arg(long, value_name = "LIST")]
    pub percentiles: Option<Percentiles>,

    /// Also draw the runs on one HTML page: the headline side by side
    /// with ratios to the first, every chart shared, a colour per run.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// The baseline: a TOML run file (`run --config`'s).
    #[arg(value_name = "A.toml")]
    pub a: PathBuf,

    /// The other configuration, a run file too.
    #[arg(value_name = "B.toml")]
    pub b: PathBuf,

    /// Runs of each; 4 or more give the A/A noise floor.
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=500))]
    pub repeat: u32,

    /// A shell command run before each run but the first (restart the
    /// server); a failure stops the comparison.
    #[arg(long, value_name = "CMD")]
    pub between: Option<String>,

    /// Write both sets and the differences here (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The spec `mcbench run ARGS` makes (tests of the parts below the CLI).
#[cfg(test)]
pub fn run_spec(args: &[&str]) -> crate::spec::RunSpec {
    try_run_spec(args).unwrap()
}

/// The spec `mcbench run ARGS` makes, or why the flags are refused: ARGS
/// alone, whatever the environment holds (`MEMCACHED_SERVERS`,
/// `MCBENCH_USER`, ... are not read).
pub fn try_run_spec(args: &[&str]) -> Result<crate::spec::RunSpec, CliError> {
    use clap::{CommandFactory, FromArgMatches};
    let command =
        Cli::command().mut_subcommand("run", |run| run.mut_args(|a| a.env(None::<&'static str>)));
    let argv = ["mcbench", "run"].iter().chain(args);
    let matches = command.try_get_matches_from(argv)?;
    match Cli::from_arg_matches(&matches)?.command {
        Command::Run(a) => a.to_spec(),
        _ => Err(CliError::NotARun),
    }
}

/// `mcbench run` with no flags: what reports take as the defaults.
pub fn default_run_spec() -> Result<crate::spec::RunSpec, CliError> {
    try_run_spec(&[])
}

/// The flags of `mcbench run` as its definitions spell them, for reports
/// to write settings in (`report::settings::know_flags`).
pub fn run_flags() -> Vec<crate::report::settings::Flag> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .filter_map(|a| {
            let typed = match (a.get_short(), a.get_long()) {
                (Some(c), _) => format!("-{c}"),
                (None, Some(long)) => format!("--{long}"),
                (None, None) => return None,
            };
            Some(crate::report::settings::Flag {
                id: a.get_id().to_string(),
                typed,
                takes_value: a.get_action().takes_values(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// clap's own checks of the command tree (a flag defined twice, a bad
    /// default), which release builds skip at run time.
    #[test]
    fn the_command_tree_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
