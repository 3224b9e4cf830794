//! memaslap's configuration file (`-F`, `~/.memaslap.cnf`): `key`, `value`
//! and `cmd` sections of `start end proportion` / `type proportion` rows,
//! `#` comments. Read into mcbench flags.

/// The flags a memaslap config file stands for.
pub fn to_args(text: &str, origin: &str) -> Result<Vec<String>, String> {
    let mut section = None;
    let (mut keys, mut values, mut cmds) = (Vec::new(), Vec::new(), Vec::new());
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{origin}:{}: '{}'", n + 1, raw.trim());
        match line {
            "key" | "value" | "cmd" => {
                section = Some(line);
                continue;
            }
            _ => {}
        }
        let fields: Vec<f64> = line
            .split_whitespace()
            .map(|f| {
                f.parse::<f64>()
                    .map_err(|_| format!("{}: '{f}' is not a number", at()))
            })
            .collect::<Result<_, _>>()?;
        match (section, fields.as_slice()) {
            (Some("key"), &[lo, hi, p]) => {
                keys.push(size_row(lo, hi, p, 1.0, 250.0).map_err(|e| format!("{}: {e}", at()))?)
            }
            (Some("value"), &[lo, hi, p]) => values.push(
                size_row(lo, hi, p, 1.0, 1024.0 * 1024.0).map_err(|e| format!("{}: {e}", at()))?,
            ),
            (Some("cmd"), &[kind, p])
                if (kind == 0.0 || kind == 1.0) && (0.0..=1.0).contains(&p) =>
            {
                cmds.push((if kind == 0.0 { "set" } else { "get" }, p));
            }
            (Some("cmd"), _) => {
                return Err(format!(
                    "{}: expected 'TYPE PROPORTION' with TYPE 0 (set) or 1 (get)",
                    at()
                ))
            }
            (Some(_), _) => return Err(format!("{}: expected 'START END PROPORTION'", at())),
            (None, _) => {
                return Err(format!(
                    "{}: a row before any 'key', 'value' or 'cmd' section",
                    at()
                ))
            }
        }
    }
    let mut args = Vec::new();
    for (flag, rows, what) in [
        ("--key-size", &keys, "key"),
        ("--value-size", &values, "value"),
    ] {
        if !rows.is_empty() {
            check_total(rows.iter().map(|r: &(f64, f64, f64)| r.2), origin, what)?;
            let table: Vec<String> = rows
                .iter()
                .map(|(lo, hi, p)| format!("{lo}-{hi}:{p}"))
                .collect();
            args.extend([flag.to_string(), format!("empirical:{}", table.join(","))]);
        }
    }
    if !cmds.is_empty() {
        check_total(cmds.iter().map(|c| c.1), origin, "cmd")?;
        let mix: Vec<String> = cmds.iter().map(|(op, p)| format!("{op}={p}")).collect();
        args.extend(["--mix".to_string(), mix.join(",")]);
    }
    Ok(args)
}

fn size_row(lo: f64, hi: f64, p: f64, min: f64, max: f64) -> Result<(f64, f64, f64), String> {
    if lo.fract() != 0.0 || hi.fract() != 0.0 || lo < min || hi > max || lo > hi {
        return Err(format!(
            "sizes must be whole numbers with {min} <= START <= END <= {max}"
        ));
    }
    if !(0.0..=1.0).contains(&p) {
        return Err("the proportion must be between 0 and 1".into());
    }
    Ok((lo, hi, p))
}

fn check_total(shares: impl Iterator<Item = f64>, origin: &str, what: &str) -> Result<(), String> {
    let total: f64 = shares.sum();
    if (total - 1.0).abs() > 0.001 {
        return Err(format!(
            "{origin}: the {what} proportions sum to {total}, not 1"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#comments should start with '#'\nkey\n16 100 0.8\n101 200 0.1\n201 249 0.1\n\
        value\n1 1000 0.8   # trailing comment\n1001 10000 0.1\n10001 100000 0.1\ncmd\n0    0.1\n1.0 0.9\n";

    #[test]
    fn the_manual_sample_reads_as_flags() {
        let args = to_args(SAMPLE, "cfg").unwrap();
        assert_eq!(
            args,
            [
                "--key-size",
                "empirical:16-100:0.8,101-200:0.1,201-249:0.1",
                "--value-size",
                "empirical:1-1000:0.8,1001-10000:0.1,10001-100000:0.1",
                "--mix",
                "set=0.1,get=0.9"
            ]
        );
    }

    /// Sizes drawn from what the file says follow its proportions (1 %).
    #[test]
    fn three_key_and_three_value_ranges_keep_their_proportions() {
        use crate::workload::Distribution;
        use rand::SeedableRng;
        let args = to_args(SAMPLE, "cfg").unwrap();
        let tables = [
            (
                &args[1],
                [(16.0, 100.0, 0.8), (101.0, 200.0, 0.1), (201.0, 249.0, 0.1)],
            ),
            (
                &args[3],
                [
                    (1.0, 1000.0, 0.8),
                    (1001.0, 10000.0, 0.1),
                    (10001.0, 100000.0, 0.1),
                ],
            ),
        ];
        for (text, ranges) in tables {
            let d: Distribution = text.parse().unwrap();
            let mut rng = rand::rngs::SmallRng::seed_from_u64(8);
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
            for (lo, hi, p) in ranges {
                let share = xs.iter().filter(|&&x| lo <= x && x <= hi).count() as f64 / n as f64;
                assert!((share - p).abs() <= 0.01 * p, "{text} [{lo},{hi}]: {share}");
            }
        }
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, needle) in [
            ("key\n16 x 1\n", "cfg:2: '16 x 1'"),
            ("key\n0 20 1\n", "cfg:2: '0 20 1'"),
            ("value\n1 100\n", "cfg:2: '1 100'"),
            ("cmd\n2 1\n", "cfg:2: '2 1'"),
            ("16 20 1\n", "cfg:1: '16 20 1'"),
            ("key\n16 20 0.5\n", "sum to 0.5"),
        ] {
            let err = to_args(text, "cfg").unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
