//! Colour for the words a reader must not miss (verdicts, NOT met,
//! CLIENT-BOUND). Reports always carry it; the writer to a terminal keeps
//! it, and strips it for a pipe, a file or `NO_COLOR` (`anstream`, as clap
//! does for its help).

use anstyle::{AnsiColor, Style};

/// What a word says of the numbers.
#[derive(Debug, Clone, Copy)]
pub enum Tone {
    /// They can be trusted as far as this goes.
    Good,
    /// Trust them less, or run longer.
    Caution,
    /// They do not measure the server, or the run failed.
    Bad,
}

/// `text` wrapped in its tone's colour and a reset.
pub fn paint(text: &str, tone: Tone) -> String {
    let style = match tone {
        Tone::Good => Style::new().fg_color(Some(AnsiColor::Green.into())),
        Tone::Caution => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
        Tone::Bad => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
    };
    format!("{style}{text}{style:#}")
}
