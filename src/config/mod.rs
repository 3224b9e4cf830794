//! Layers of flags beneath the command line: a profile, then a TOML run
//! file, then a memaslap config file, then the flags typed. Each layer is
//! turned into flags and put before the typed ones, so a later layer wins
//! (clap keeps the last value of a flag) and every layer accepts exactly
//! what the command line does. Flags that exclude one another (`--duration`
//! and `--ops`, say) are refused when given together in one layer; a later
//! layer's choice replaces an earlier layer's (`EXCLUSIVE`).

mod memaslap;
pub mod profiles;
mod run_file;

/// The flags a TOML run file stands for (`origin` names it in messages).
pub fn run_file_flags(text: &str, origin: &str) -> Result<Vec<String>, String> {
    run_file::to_args(text, origin)
}

pub use memaslap::MemaslapConfig;

/// The flags a memaslap `-F` configuration file stands for, and the lines
/// skipped as memaslap skips them.
pub fn memaslap_flags(text: &str, origin: &str) -> Result<MemaslapConfig, String> {
    memaslap::to_args(text, origin)
}

use std::ffi::OsString;

/// `argv` with the layers its `run` (or `search`, `scan`) command names
/// expanded in place.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
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
        let cfg = memaslap::to_args(&read(&path)?, &path)?;
        for line in &cfg.skipped {
            crate::stderr_line!("mcbench: note: {line}");
        }
        layers.push(cfg.args);
    }
    for i in 0..layers.len() {
        let above: Vec<String> = layers[i + 1..]
            .concat()
            .into_iter()
            .chain(typed.iter().cloned())
            .collect();
        for group in EXCLUSIVE {
            if group.iter().any(|f| f.given_in(&above)) {
                for f in *group {
                    layers[i] = f.drop_from(std::mem::take(&mut layers[i]));
                }
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

/// A flag of an exclusive group: its names and whether it takes a value.
struct Flag {
    long: &'static str,
    short: Option<&'static str>,
    takes_value: bool,
}

impl Flag {
    const fn new(long: &'static str, short: Option<&'static str>, takes_value: bool) -> Flag {
        Flag {
            long,
            short,
            takes_value,
        }
    }

    /// Whether `args` (as typed: `--x V`, `--x=V`, `-xV`) give this flag.
    fn given_in(&self, args: &[String]) -> bool {
        args.iter().any(|a| {
            a == self.long
                || a.starts_with(&format!("{}=", self.long))
                || self.short.is_some_and(|s| {
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

/// Flags of which a run takes one: a later layer's replaces an earlier
/// layer's (a run file's `duration` and a typed `-x`), and clap refuses
/// two given in one layer.
const EXCLUSIVE: &[&[Flag]] = &[
    &[
        Flag::new("--duration", Some("-t"), true),
        Flag::new("--ops", Some("-x"), true),
    ],
    &[
        Flag::new("--protocol", None, true),
        Flag::new("--binary", Some("-B"), false),
    ],
    &[
        Flag::new("--load", None, false),
        Flag::new("--no-load", None, false),
        Flag::new("--load-only", None, false),
    ],
    &[
        Flag::new("--multiget", None, true),
        Flag::new("--getq-freq", None, true),
    ],
];

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
fn read(path: &str) -> Result<String, String> {
    crate::untrusted::read_text(
        std::path::Path::new(path),
        crate::untrusted::Bound::Config,
        "a configuration file",
    )
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
            .contains("unknown profile 'nope'"));
        assert!(expand(os(&["m", "run", "--profile", "ycsb-e"]))
            .unwrap_err()
            .contains("range scans"));
    }

    #[test]
    fn other_commands_pass_through() {
        assert_eq!(
            expand(os(&["m", "profiles"])).unwrap(),
            os(&["m", "profiles"])
        );
    }
}
