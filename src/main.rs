use clap::Parser;
use mcbench::cli::{Cli, Command};

fn main() {
    let argv = match mcbench::config::expand(std::env::args_os().collect()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcbench: error: {e}");
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
        Command::Route(args) => mcbench::app::route(&args),
        Command::Stats(args) => mcbench::app::stats(&args),
        Command::Slabs(args) => mcbench::app::slabs(&args),
        Command::Top(args) => mcbench::app::top(&args),
        Command::TraceStat(args) => mcbench::app::trace_stat(&args),
        Command::Profiles => {
            print!("{}", mcbench::config::profiles::listing());
            mcbench::error::exit::OK
        }
    };
    std::process::exit(code);
}
