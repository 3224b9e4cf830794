use clap::Parser;
use mcbench::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => mcbench::app::run(&args),
    };
    std::process::exit(code);
}
