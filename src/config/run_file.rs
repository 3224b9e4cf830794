//! mcbench's TOML run file (`run --config FILE`): keys are the long flag
//! names (`threads = 2`, `key-size = "fb_key"`, `server = ["a:11211"]`,
//! `getset = true`). Read into flags, so the file accepts exactly what the
//! command line does.

use super::ConfigError;

/// The flags a run file stands for.
pub fn to_args(text: &str, origin: &str) -> Result<Vec<String>, ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Toml {
            origin: origin.into(),
            message: e.message().into(),
        })?;
    let mut args = Vec::new();
    for (key, value) in table {
        if matches!(key.as_str(), "config" | "profile" | "cfg-cmd" | "json") {
            return Err(ConfigError::NotInRunFile {
                origin: origin.into(),
                key,
            });
        }
        let flag = format!("--{key}");
        match value {
            toml::Value::Boolean(true) => args.push(flag),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                for item in items {
                    args.extend([flag.clone(), scalar(&key, &item, origin)?]);
                }
            }
            other => args.extend([flag, scalar(&key, &other, origin)?]),
        }
    }
    Ok(args)
}

/// Parses each of the file's flags alone, so that a bad value is reported
/// with the file and the key that hold it, not as a flag the user never
/// typed.
pub fn check_values(args: &[String], origin: &str) -> Result<(), ConfigError> {
    use clap::Parser;
    let mut i = 0;
    while i < args.len() {
        let flag = &args[i];
        let value = args.get(i + 1).filter(|v| !v.starts_with("--"));
        let mut argv = vec!["mcbench", "run", flag.as_str()];
        argv.extend(value.map(String::as_str));
        i += 1 + usize::from(value.is_some());
        if let Err(e) = crate::cli::Cli::try_parse_from(&argv) {
            let first = e
                .to_string()
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            return Err(ConfigError::BadValue {
                origin: origin.into(),
                key: flag.trim_start_matches("--").into(),
                why: first,
            });
        }
    }
    Ok(())
}

fn scalar(key: &str, value: &toml::Value, origin: &str) -> Result<String, ConfigError> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        _ => Err(ConfigError::NotScalar {
            origin: origin.into(),
            key: key.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_flags() {
        let args = to_args("threads = 2\nkey-size = \"fb_key\"\nserver = [\"a:1\", \"b:2\"]\ngetset = true\nload = false\n", "f").unwrap();
        assert_eq!(
            args,
            [
                "--getset",
                "--key-size",
                "fb_key",
                "--server",
                "a:1",
                "--server",
                "b:2",
                "--threads",
                "2"
            ]
        );
    }

    #[test]
    fn bad_files_are_named() {
        assert!(to_args("threads = ", "f.toml")
            .unwrap_err()
            .to_string()
            .starts_with("f.toml:"));
        assert!(to_args("x = { a = 1 }", "f.toml")
            .unwrap_err()
            .to_string()
            .contains("'x'"));
        assert!(to_args("profile = \"etc\"", "f.toml")
            .unwrap_err()
            .to_string()
            .contains("'profile'"));
    }
}
