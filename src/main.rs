use clap::Parser;
use mcbench::cli::{Cli, Command};
use mcbench::personality::{self, Tool};
use std::ffi::OsString;

fn main() {
    // Past `ulimit -f`, a write fails with EFBIG and is reported like any
    // other failed write; SIGXFSZ's default would kill the process and
    // lose every output.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    // Reports write settings as run's flags, and name those that differ
    // from these.
    mcbench::report::settings::know_flags(mcbench::cli::run_flags());
    if let Ok(defaults) = mcbench::cli::default_run_spec() {
        mcbench::report::settings::know_defaults(&defaults);
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    // A link named for a seed tool, or `mcbench TOOL ARGS`: that tool's
    // own flags, which clap's `Cli` does not know.
    let program = args.first().map(|a| a.to_string_lossy().into_owned());
    if let Some(tool) = program.as_deref().and_then(Tool::from_program) {
        std::process::exit(personality::main(tool, args));
    }
    if let Some(tool) = args
        .get(1)
        .and_then(|a| a.to_str())
        .and_then(Tool::from_name)
    {
        std::process::exit(personality::main(tool, args[1..].to_vec()));
    }
    let argv = match mcbench::config::expand(args) {
        Ok(a) => a,
        Err(e) => {
            mcbench::stderr_line!("mcbench: error: {e}");
            std::process::exit(mcbench::error::exit::USAGE);
        }
    };
    let cli = Cli::parse_from(argv);
    let code = match cli.command {
        Command::Run(args) => mcbench::app::run(&args),
        Command::Search(args) => mcbench::app::search(&args),
        Command::Scan(args) => mcbench::app::scan(&args),
        Command::Report(args) => mcbench::app::report(&args),
        Command::Compare(args) => mcbench::app::compare(&args),
        Command::Ab(args) => mcbench::app::ab(&args),
        Command::Route(args) => mcbench::app::route(&args),
        Command::Stats(args) => mcbench::app::stats(&args),
        Command::Slabs(args) => mcbench::app::slabs(&args),
        Command::Top(args) => mcbench::app::top(&args),
        Command::TraceStat(args) => mcbench::app::trace_stat(&args),
        Command::Man(args) => mcbench::app::man(&args),
        Command::Completions(args) => mcbench::app::completions(&args),
        #[cfg(feature = "agents")]
        Command::Agent(args) => mcbench::app::agent(&args),
        Command::Profiles => match mcbench::error::to_stdout(&mcbench::config::profiles::listing())
        {
            Ok(()) => mcbench::error::exit::OK,
            Err(e) => {
                mcbench::stderr_line!("mcbench: error: {e}");
                mcbench::error::exit::FAILED
            }
        },
        Command::Memaslap(_)
        | Command::Mcperf(_)
        | Command::MemcachePerf(_)
        | Command::Mutilate(_) => unreachable!("personalities are dispatched above"),
    };
    std::process::exit(code);
}
