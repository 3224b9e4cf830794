//! Text from outside (an agent's host name or message, a server's stat
//! names and values) as it may be printed: a terminal's escape sequences
//! never reach it.

/// The longest such text shown, characters.
const MAX_SHOWN: usize = 512;

/// `text` with control characters escaped (`\u{1b}`), cut to
/// `MAX_SHOWN` characters (with `…`).
pub fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_SHOWN)
        .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
            if c.is_control() {
                Box::new(c.escape_default())
            } else {
                Box::new(std::iter::once(c))
            }
        })
        .collect();
    if text.chars().count() > MAX_SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_escaped_and_long_text_cut() {
        assert_eq!(shown("a\u{1b}[2Jb\r"), "a\\u{1b}[2Jb\\r");
        assert_eq!(shown(&"a".repeat(600)).chars().count(), MAX_SHOWN + 1);
        assert_eq!(shown("µs ok"), "µs ok");
    }
}
