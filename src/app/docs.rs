//! `mcbench man` and `mcbench completions`: the man pages and shell
//! completions, generated from the clap definitions that parse the flags,
//! so that neither can drift from what the command line accepts.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::exit;
use clap::CommandFactory;

/// Writes a man page in roff to stdout: mcbench's own (its subcommands
/// listed), or one subcommand's with every flag under its heading.
pub fn man(args: &ManArgs) -> i32 {
    let cli = Cli::command();
    let page = match &args.command {
        None => clap_mangen::Man::new(cli),
        Some(name) => match cli.find_subcommand(name) {
            Some(sub) => clap_mangen::Man::new(sub.clone()).title(format!("mcbench-{name}")),
            None => {
                let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
                crate::stderr_line!(
                    "mcbench: error: no subcommand {name:?}; man pages exist for: {}",
                    names.join(", ")
                );
                return exit::USAGE;
            }
        },
    };
    let mut roff = Vec::new();
    if let Err(e) = page.render(&mut roff) {
        crate::stderr_line!("mcbench: error: cannot render the man page: {e}");
        return exit::FAILED;
    }
    written(crate::error::to_stdout(&String::from_utf8_lossy(&roff)))
}

/// Writes the completion script for a shell to stdout.
pub fn completions(args: &CompletionsArgs) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "mcbench", &mut script);
    written(crate::error::to_stdout(&String::from_utf8_lossy(&script)))
}

fn written(result: Result<(), crate::error::StdoutError>) -> i32 {
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            exit::FAILED
        }
    }
}
