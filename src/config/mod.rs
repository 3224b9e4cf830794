//! Layers of flags beneath the command line: a profile, then a TOML run
//! file, then a memaslap config file, then the flags typed. Each layer is
//! turned into flags and put before the typed ones, so a later layer wins
//! (clap keeps the last value of a flag) and every layer accepts exactly
//! what the command line does.

mod memaslap;
pub mod profiles;
mod run_file;

use std::ffi::OsString;

/// `argv` with the layers its `run` command names expanded in place.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let args: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(run_at) = args.iter().position(|a| a == "run") else {
        return Ok(argv);
    };
    let typed = &args[run_at + 1..];
    let mut layered = Vec::new();
    if let Some(name) = value_of(typed, &["--profile"]) {
        layered.extend(profiles::lookup(&name)?.args.iter().map(|a| a.to_string()));
    }
    if let Some(path) = value_of(typed, &["--config"]) {
        layered.extend(run_file::to_args(&read(&path)?, &path)?);
    }
    if let Some(path) = value_of(typed, &["-F", "--cfg-cmd"]) {
        layered.extend(memaslap::to_args(&read(&path)?, &path)?);
    }
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

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
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
