//! The command line's own documentation: help by heading, man pages that
//! render, completions that load, and a README whose layout table names
//! every folder of `src/`.

use crate::support;

use std::process::Command;
use support::*;

const HEADINGS: &[&str] = &[
    "Target",
    "Load and schedule",
    "Workload",
    "Keys and values",
    "Protocol",
    "Connections",
    "Trace replay",
    "Checks",
    "Outputs",
    "Server stats and replication",
    "Measurement connections",
    "Agents",
];

/// Each option line of a help text (`  -s, --server ...`, `      --rate ...`)
/// with the heading it sits under.
fn options_by_heading(help: &str) -> Vec<(String, String)> {
    let mut heading = String::new();
    let mut out = Vec::new();
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            heading = line.trim_end_matches(':').to_string();
        } else if let Some(flag) = line
            .trim_start()
            .split([' ', ','])
            .find(|w| w.starts_with("--"))
            .filter(|_| line.trim_start().starts_with('-'))
        {
            out.push((heading.clone(), flag.to_string()));
        }
    }
    out
}

#[test]
fn run_s_short_help_is_a_few_screens_under_headings_and_the_long_has_every_flag() {
    let short = mcbench(&["run", "-h"]);
    assert_eq!(short.status.code(), Some(0));
    let text = stdout(&short);
    let lines = text.lines().count();
    assert!(lines <= 120, "`run -h` is {lines} lines:\n{text}");
    for h in HEADINGS {
        assert!(text.contains(&format!("\n{h}:\n")), "no heading {h} in -h");
    }
    // Seed-tool knobs are in --help only.
    assert!(!text.contains("--moderate") && !text.contains("--delete90"));
    let long = stdout(&mcbench(&["run", "--help"]));
    let options = options_by_heading(&long);
    assert!(options.len() > 90, "{} options in --help", options.len());
    for (heading, flag) in &options {
        // Only clap's own --help sits under the default heading.
        assert!(
            heading != "Options" || flag == "--help",
            "{flag} has no heading"
        );
    }
    for flag in ["--moderate", "--delete90", "--rate", "--protocol"] {
        assert!(
            options.iter().any(|(_, f)| f == flag),
            "{flag} not in --help"
        );
    }
}

/// Text as a terminal shows it: man's overstrike (`x\x08x` for bold,
/// `_\x08x` for underline) taken out.
fn plain(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn man_pages_render_with_every_flag() {
    let dir = tempfile::tempdir().unwrap();
    for page in [None, Some("run"), Some("search"), Some("report")] {
        let mut args = vec!["man"];
        args.extend(page);
        let out = mcbench(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let file = dir.path().join("page.1");
        std::fs::write(&file, &out.stdout).unwrap();
        let shown = Command::new("man")
            .args(["-E", "ascii", "-l", "-P", "cat"])
            .arg(&file)
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(shown.status.success(), "{}", stderr(&shown));
        let text = plain(&String::from_utf8_lossy(&shown.stdout));
        match page {
            None => {
                assert!(text.contains("NAME") && text.contains("mcbench"), "{text}");
                assert!(text.contains("search"), "subcommands listed");
            }
            Some("run") => {
                for flag in ["--protocol", "--rate", "--moderate", "--num-conns"] {
                    assert!(text.contains(flag), "{flag} not in `man run`:\n{text}");
                }
            }
            Some(_) => assert!(text.contains("OPTIONS"), "{text}"),
        }
    }
    let unknown = mcbench(&["man", "nope"]);
    assert_usage_error(&unknown, "man pages exist for");
}

#[test]
fn bash_completion_loads_and_completes_run_s_flags() {
    let script = stdout(&mcbench(&["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcbench.bash");
    std::fs::write(&file, script).unwrap();
    let probe = format!(
        "source {}; complete -p mcbench; \
         COMP_WORDS=(mcbench run --pro); COMP_CWORD=2; COMP_LINE='mcbench run --pro'; \
         COMP_POINT=${{#COMP_LINE}}; _mcbench mcbench --pro run; echo \"${{COMPREPLY[*]}}\"",
        file.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-F _mcbench mcbench"), "{text}");
    let offered = text.lines().last().unwrap_or("");
    assert!(
        offered.contains("--protocol") && offered.contains("--profile"),
        "offered: {offered}"
    );
    for shell in ["zsh", "fish"] {
        let out = mcbench(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains("--protocol"), "{shell}");
    }
}

#[test]
fn the_readme_is_short_and_its_layout_names_every_folder() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 220, "the README is {lines} lines");
    let mut folders: Vec<String> = std::fs::read_dir(format!("{root}/src"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert!(folders.len() > 10, "{folders:?}");
    for f in folders {
        assert!(
            readme.contains(&format!("| `src/{f}/` |")),
            "the README's layout table does not name src/{f}/"
        );
    }
}
