//! The settings, last: those that differ from `mcbench run`'s defaults, as
//! the flags that set them, a column per run; every setting folded away
//! beneath.

use super::{esc, label, section};
use crate::report::settings::{self, Setting};
use crate::result::RunResult;
use std::fmt::Write;

pub fn write(page: &mut String, runs: &[RunResult]) {
    section(page, "settings", "Settings that differ from the defaults");
    let changed: Vec<Vec<Setting>> = runs.iter().map(|r| settings::changed(&r.spec)).collect();
    let keys = union(&changed);
    let _ = writeln!(
        page,
        "<p class=\"words\"><small>mcbench {} · the words of <code>mcbench run</code>'s command line.</small></p>",
        esc(&runs[0].version)
    );
    if keys.is_empty() {
        page.push_str("<p>None: every setting is mcbench run's default.</p>\n");
    } else {
        table(page, runs, "changed", &keys, &changed);
    }
    let every: Vec<Vec<Setting>> = runs.iter().map(|r| settings::all(&r.spec)).collect();
    let keys = union(&every);
    page.push_str("<details>\n<summary>Every setting</summary>\n");
    table(page, runs, "every", &keys, &every);
    page.push_str("</details>\n</section>\n");
}

/// Every run's keys, in the order they first come.
fn union(settings: &[Vec<Setting>]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for s in settings.iter().flatten() {
        if !keys.contains(&s.key.as_str()) {
            keys.push(&s.key);
        }
    }
    keys
}

/// A row per key, a cell per run: the flags, or `—` where the setting is
/// off (or, in the changed table, the default).
fn table(page: &mut String, runs: &[RunResult], class: &str, keys: &[&str], of: &[Vec<Setting>]) {
    let _ = write!(
        page,
        "<div class=\"scroll\"><table class=\"settings {class}\">\n<tr><th>setting</th>"
    );
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(page, "<th>{}</th>", esc(&label(i, r)));
    }
    page.push_str("</tr>\n");
    for key in keys {
        let _ = write!(page, "<tr><td>{}</td>", esc(&key.replace('_', " ")));
        for settings in of {
            let words = settings
                .iter()
                .find(|s| s.key == *key)
                .and_then(|s| s.words.as_deref())
                .unwrap_or("—");
            let _ = write!(page, "<td class=\"words\">{}</td>", esc(words));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table></div>\n");
}
