//! Layers of flags beneath the command line: a profile, then a TOML run
//! file, then a memaslap config file, then the flags typed. Each layer is
//! turned into flags and put before the typed ones, so a later layer wins
//! (clap keeps the last value of a flag) and every layer accepts exactly
//! what the command line does. Flags that exclude one another (`--duration`
//! and `--ops`, say) are refused when given together in one layer; a later
//! layer's choice replaces an earlier layer's. Which flags exclude which
//! is read from clap's own `conflicts_with` (`exclusive`), never kept by
//! hand.

mod error;
mod memaslap;
pub mod profiles;
mod run_file;

/// The flags a TOML run file stands for (`origin` names it in messages).
pub fn run_file_flags(text: &str, origin: &str) -> Result<Vec<String>, ConfigError> {
    run_file::to_args(text, origin)
}

pub use error::ConfigError;
pub use memaslap::{MemaslapConfig, Reading};

/// The flags a memaslap `-F` configuration file stands for, and the lines
/// skipped as memaslap skips them (or read otherwise than it reads them).
pub fn memaslap_flags(
    text: &str,
    origin: &str,
    reading: Reading,
) -> Result<MemaslapConfig, ConfigError> {
    memaslap::to_args(text, origin, reading)
}

use std::ffi::OsString;

/// `argv` with the layers its `run` (or `search`, `scan`) command names
/// expanded in place.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, ConfigError> {
    let args: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The first word that names a command taking run's flags.
    let Some(run_at) = args
        .iter()
        .position(|a| ["run", "search", "scan"].contains(&a.as_str()))
    else {
        return Ok(argv);
    };
    let typed = &args[run_at + 1..];
    // Beneath the typed flags, lowest first.
    let mut layers: Vec<Vec<String>> = Vec::new();
    if let Some(name) = value_of(typed, &["--profile"]) {
        layers.push(
            profiles::lookup(&name)?
                .args
                .iter()
                .map(|a| a.to_string())
                .collect(),
        );
    }
    if let Some(path) = value_of(typed, &["--config"]) {
        let file = run_file::to_args(&read(&path)?, &path)?;
        run_file::check_values(&file, &path)?;
        layers.push(file);
    }
    if let Some(path) = value_of(typed, &["-F", "--cfg-cmd"]) {
        let cfg = memaslap::to_args(&read(&path)?, &path, Reading::Sane)?;
        for line in &cfg.skipped {
            crate::stderr_line!("mcbench: note: {line}");
        }
        layers.push(cfg.args);
    }
    let exclusive = exclusive(&args[run_at]);
    for i in 0..layers.len() {
        let above: Vec<String> = layers[i + 1..]
            .concat()
            .into_iter()
            .chain(typed.iter().cloned())
            .collect();
        for (flag, others) in &exclusive {
            if others.iter().any(|o| o.given_in(&above)) {
                layers[i] = flag.drop_from(std::mem::take(&mut layers[i]));
            }
        }
    }
    let mut layered = layers.concat();
    // Servers accumulate; typed ones replace the layers' rather than add.
    if value_of(typed, &["-s", "--server"]).is_some() {
        layered = drop_flag(layered, "--server");
    }
    let mut out: Vec<OsString> = argv[..=run_at].to_vec();
    out.extend(layered.into_iter().map(OsString::from));
    out.extend(argv[run_at + 1..].iter().cloned());
    Ok(out)
}

/// The value of the last of `names` in `args` (`--x V`, `--x=V`, `-xV`).
fn value_of(args: &[String], names: &[&str]) -> Option<String> {
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        for name in names {
            if a == name {
                found = it.clone().next().cloned();
            } else if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                found = Some(v.to_string());
            } else if name.len() == 2 && a.starts_with(name) && a.len() > 2 && !a.starts_with("--")
            {
                found = Some(a[2..].to_string());
            }
        }
    }
    found
}

/// A flag as layers name it: `--long` (and `-s`), and whether it takes a
/// value.
#[derive(Debug, Clone, PartialEq)]
struct Flag {
    long: String,
    short: Option<String>,
    takes_value: bool,
}

impl Flag {
    /// The flag clap defines as `arg`, if it has a long name.
    fn of(arg: &clap::Arg) -> Option<Flag> {
        Some(Flag {
            long: format!("--{}", arg.get_long()?),
            short: arg.get_short().map(|c| format!("-{c}")),
            takes_value: arg.get_action().takes_values(),
        })
    }

    /// Whether `args` (as typed: `--x V`, `--x=V`, `-xV`) give this flag.
    fn given_in(&self, args: &[String]) -> bool {
        args.iter().any(|a| {
            *a == self.long
                || a.starts_with(&format!("{}=", self.long))
                || self.short.as_deref().is_some_and(|s| {
                    a == s || (self.takes_value && a.starts_with(s) && !a.starts_with("--"))
                })
        })
    }

    /// `args` (a layer, in `--long V` form) without this flag.
    fn drop_from(&self, args: Vec<String>) -> Vec<String> {
        let mut out = Vec::new();
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            if a == self.long {
                if self.takes_value {
                    it.next();
                }
            } else if !a.starts_with(&format!("{}=", self.long)) {
                out.push(a);
            }
        }
        out
    }
}

/// Each flag of `command` (`run`, `search`, `scan`) that excludes others,
/// with those it excludes: clap's `conflicts_with`, both ways. A later
/// layer's flag replaces an earlier layer's flags it excludes (a run
/// file's `duration` and a typed `-x`); clap refuses two given in one
/// layer.
fn exclusive(command: &str) -> Vec<(Flag, Vec<Flag>)> {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    let Some(cmd) = cli.find_subcommand(command) else {
        return Vec::new();
    };
    let mut pairs: Vec<(Flag, Flag)> = Vec::new();
    for arg in cmd.get_arguments() {
        for other in cmd.get_arg_conflicts_with(arg) {
            if let (Some(a), Some(b)) = (Flag::of(arg), Flag::of(other)) {
                pairs.push((a.clone(), b.clone()));
                pairs.push((b, a));
            }
        }
    }
    let mut table: Vec<(Flag, Vec<Flag>)> = Vec::new();
    for (a, b) in pairs {
        match table.iter_mut().find(|(f, _)| *f == a) {
            Some((_, others)) if !others.contains(&b) => others.push(b),
            Some(_) => {}
            None => table.push((a, vec![b])),
        }
    }
    table
}

fn drop_flag(args: Vec<String>, flag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == flag {
            it.next();
        } else {
            out.push(a);
        }
    }
    out
}

/// A configuration file (`untrusted::Bound::Config`).
fn read(path: &str) -> Result<String, ConfigError> {
    Ok(crate::untrusted::read_text(
        std::path::Path::new(path),
        crate::untrusted::Bound::Config,
        "a configuration file",
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn profile_goes_beneath_typed_flags() {
        let out = expand(os(&[
            "mcbench",
            "run",
            "--profile",
            "ycsb-b",
            "--mix",
            "get=1,set=1",
        ]))
        .unwrap();
        let text: Vec<String> = out
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let profile_mix = text.iter().position(|a| a == "get=95,set=5").unwrap();
        let typed_mix = text.iter().position(|a| a == "get=1,set=1").unwrap();
        assert!(profile_mix < typed_mix);
    }

    #[test]
    fn unknown_and_impossible_profiles_say_why() {
        assert!(expand(os(&["m", "run", "--profile=nope"]))
            .unwrap_err()
            .to_string()
            .contains("unknown profile 'nope'"));
        assert!(expand(os(&["m", "run", "--profile", "ycsb-e"]))
            .unwrap_err()
            .to_string()
            .contains("range scans"));
    }

    #[test]
    fn a_typed_flag_replaces_what_it_excludes_in_a_run_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.toml");
        std::fs::write(&file, "trace = \"t.csv\"\nduration = \"30s\"\n").unwrap();
        let file = file.to_str().unwrap();
        let expanded = |typed: &[&str]| -> Vec<String> {
            let mut argv = vec!["m", "run", "--config", file];
            argv.extend(typed);
            let out = expand(os(&argv)).unwrap();
            out.iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        // --read-file excludes --trace (clap's conflicts_with, which the
        // hand-kept table of before had missed); -x excludes -t.
        let out = expanded(&["--read-file", "r.txt", "-x", "5"]);
        assert!(!out.contains(&"--trace".to_string()), "{out:?}");
        assert!(!out.contains(&"--duration".to_string()), "{out:?}");
        // Untouched when nothing typed excludes them.
        let out = expanded(&[]);
        assert!(out.contains(&"--trace".to_string()), "{out:?}");
        assert!(out.contains(&"--duration".to_string()), "{out:?}");
    }

    #[test]
    fn every_exclusion_clap_declares_is_known_both_ways() {
        let table = exclusive("run");
        let excludes = |a: &str, b: &str| {
            table
                .iter()
                .any(|(f, o)| f.long == a && o.iter().any(|g| g.long == b))
        };
        for (a, b) in [
            ("--duration", "--ops"),
            ("--trace", "--read-file"),
            ("--binary", "--protocol"),
            ("--load", "--no-load"),
            ("--multiget", "--getq-freq"),
        ] {
            assert!(excludes(a, b) && excludes(b, a), "{a} and {b}");
        }
        assert!(!excludes("--duration", "--trace"));
    }

    #[test]
    fn other_commands_pass_through() {
        assert_eq!(
            expand(os(&["m", "profiles"])).unwrap(),
            os(&["m", "profiles"])
        );
    }
}
