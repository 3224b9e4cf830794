//! memaslap's configuration file (`-F`, `~/.memaslap.cnf`): `key`, `value`
//! and `cmd` sections of `start end proportion` / `type proportion` rows,
//! `#` comments. Read into mcbench flags.
//!
//! Read as memaslap reads it (libmemcached's `ms_parse_cfg_file`): a line
//! starting `key`, `value` or `cmd` opens that section; a line that is not
//! one of its section's rows (its manual's own sample has comment lines
//! wrapped onto lines of their own) is skipped, and so is every row after
//! it until the next section. mcbench says which lines it skipped. A row
//! that reads but asks for what memaslap refuses (a key under 16 bytes, a
//! proportion above 1) is refused.

use super::ConfigError;

/// What a memaslap config file stands for: mcbench flags, and a note per
/// line skipped as memaslap skips it (or read otherwise than it reads).
pub struct MemaslapConfig {
    pub args: Vec<String>,
    pub skipped: Vec<String>,
    /// Read as memaslap: its set and get proportions as it holds (and
    /// prints) them, 0 where the file gives none.
    pub proportions: Option<(f64, f64)>,
}

/// How `cmd` rows are read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reading {
    /// As they mean (mcbench's `-F`): `1.0 0.9` is type 1 at 0.9, each
    /// proportion that of its row's type, summing to 1.
    Sane,
    /// As memaslap reads them (`mcbench memaslap`, which puts memaslap's
    /// load on the server): `sscanf("%d %lf")`, so `1.0 0.9` is type 1 at
    /// `.0`; the first row's proportion is the sets', the second's the
    /// gets', whatever their types; no sum is checked.
    AsMemaslap,
}

/// memaslap's `PROP_ERROR`: a proportion under it is none.
const PROP_ERROR: f64 = 0.001;

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Key,
    Value,
    Cmd,
}

impl Section {
    /// memaslap's `ms_get_conf_type`: the line's first letters.
    fn of(line: &str) -> Option<Section> {
        [
            ("key", Section::Key),
            ("value", Section::Value),
            ("cmd", Section::Cmd),
        ]
        .into_iter()
        .find(|(name, _)| line.starts_with(name))
        .map(|(_, s)| s)
    }
}

/// The first `N` whitespace-separated fields of `line`, if each reads as
/// its number (later fields are ignored, as `sscanf` ignores them).
fn fields<const N: usize>(line: &str) -> Option<[&str; N]> {
    let mut it = line.split_whitespace();
    let mut out = [""; N];
    for f in &mut out {
        *f = it.next()?;
    }
    Some(out)
}

/// A size row, `START END PROPORTION`, if it reads as one.
fn size_fields(line: &str) -> Option<(u64, u64, f64)> {
    let [lo, hi, p] = fields::<3>(line)?;
    Some((lo.parse().ok()?, hi.parse().ok()?, p.parse().ok()?))
}

/// A cmd row, `TYPE PROPORTION`, if it reads as one. `1.0` is type 1
/// here; memaslap's `sscanf("%d %lf")` stops at the dot and reads the
/// proportion as `.0`, which would leave its own sample with no gets:
/// mcbench reads what the sample means.
fn cmd_fields(line: &str) -> Option<(i64, f64)> {
    let [kind, p] = fields::<2>(line)?;
    let kind = kind.parse::<i64>().ok().or_else(|| {
        kind.parse::<f64>()
            .ok()
            .filter(|k| k.fract() == 0.0)
            .map(|k| k as i64)
    })?;
    Some((kind, p.parse().ok()?))
}

/// The flags a memaslap config file stands for.
pub fn to_args(text: &str, origin: &str, reading: Reading) -> Result<MemaslapConfig, ConfigError> {
    let rows = Rows::read(text, origin, reading)?;
    let mut args = rows.size_args(origin)?;
    // memaslap's table starts zeroed: a file without cmd rows leaves no
    // set share at all, so gets only.
    let cmds = &rows.cmds;
    let proportions = (reading == Reading::AsMemaslap).then(|| {
        let at = |i: usize| cmds.get(i).map_or(0.0, |c: &(&str, f64)| c.1);
        (at(0), at(1))
    });
    if cmds.is_empty() && reading == Reading::AsMemaslap {
        args.extend(["--mix".to_string(), "get=1".to_string()]);
    }
    if !cmds.is_empty() {
        if reading == Reading::Sane {
            check_total(cmds.iter().map(|c| c.1), origin, "cmd")?;
        }
        // memaslap picks by the ratio of the two; one under PROP_ERROR is
        // none (no set share at all: gets only).
        let kept: Vec<&(&str, f64)> = cmds.iter().filter(|c| c.1 >= PROP_ERROR).collect();
        let mix: Vec<String> = match kept.is_empty() {
            true => vec!["get=1".to_string()],
            false => kept.iter().map(|(op, p)| format!("{op}={p}")).collect(),
        };
        args.extend(["--mix".to_string(), mix.join(",")]);
    }
    Ok(MemaslapConfig {
        args,
        skipped: rows.skipped,
        proportions,
    })
}

/// A config file's rows, by section, and the lines passed over.
#[derive(Default)]
struct Rows {
    /// Key sizes: first, last, proportion.
    keys: Vec<(u64, u64, f64)>,
    /// Value sizes: first, last, proportion.
    values: Vec<(u64, u64, f64)>,
    /// Commands and their proportions.
    cmds: Vec<(&'static str, f64)>,
    /// Why each line passed over was.
    skipped: Vec<String>,
}

impl Rows {
    /// Reads every line as memaslap (or sanely, by `reading`) would.
    fn read(text: &str, origin: &str, reading: Reading) -> Result<Rows, ConfigError> {
        // `None`: before any section, or skipping after a line that was none
        // of its section's rows, until the next section.
        let mut section = None;
        let mut rows = Rows::default();
        let mut data = false;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            data = true;
            let at = || format!("{origin}:{}: '{}'", n + 1, raw.trim());
            let row = match section {
                Some(Section::Key | Section::Value) => size_fields(line).map(Ok),
                Some(Section::Cmd) if reading == Reading::AsMemaslap => scanf_cmd(line).map(Err),
                Some(Section::Cmd) => cmd_fields(line).map(Err),
                None => None,
            };
            match (section, row) {
                (Some(Section::Key), Some(Ok((lo, hi, p)))) => rows
                    .keys
                    .push(size_row(lo, hi, p, 1, 250).map_err(|e| e.at(at()))?),
                (Some(Section::Value), Some(Ok((lo, hi, p)))) => rows
                    .values
                    .push(size_row(lo, hi, p, 1, 1024 * 1024).map_err(|e| e.at(at()))?),
                (Some(Section::Cmd), Some(Err((kind, p)))) => {
                    rows.cmd(kind, p, line, &at(), reading)?
                }
                _ => {
                    // memaslap compares a header with the line's first bytes.
                    section = Section::of(raw);
                    if section.is_none() {
                        rows.skipped.push(format!(
                            "{}: skipped, as memaslap skips it and the rows after it until a 'key', 'value' or 'cmd' line",
                            at()
                        ));
                    }
                }
            }
        }
        if !data {
            return Err(ConfigError::Empty(origin.into()));
        }
        Ok(rows)
    }

    /// A cmd row of command type `kind` and proportion `p`, `at` where.
    fn cmd(
        &mut self,
        kind: i64,
        p: f64,
        line: &str,
        at: &str,
        reading: Reading,
    ) -> Result<(), ConfigError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(ConfigError::Proportion.at(at));
        }
        if reading == Reading::AsMemaslap {
            if let Some(note) = memaslap_row(&mut self.cmds, kind, p, line, at)? {
                self.skipped.push(note);
            }
            return Ok(());
        }
        match kind {
            0 => self.cmds.push(("set", p)),
            1 => self.cmds.push(("get", p)),
            // memaslap passes over command types it lacks.
            _ => self.skipped.push(format!(
                "{at}: skipped: command type {kind} is neither 0 (set) nor 1 (get)"
            )),
        }
        Ok(())
    }

    /// `--key-size` and `--value-size` as empirical tables, for the
    /// sections that have rows (each totalling 1).
    fn size_args(&self, origin: &str) -> Result<Vec<String>, ConfigError> {
        let mut args = Vec::new();
        for (flag, rows, what) in [
            ("--key-size", &self.keys, "key"),
            ("--value-size", &self.values, "value"),
        ] {
            if !rows.is_empty() {
                check_total(rows.iter().map(|r| r.2), origin, what)?;
                let table: Vec<String> = rows
                    .iter()
                    .map(|(lo, hi, p)| format!("{lo}-{hi}:{p}"))
                    .collect();
                args.extend([flag.to_string(), format!("empirical:{}", table.join(","))]);
            }
        }
        Ok(args)
    }
}

/// A cmd row as memaslap's `sscanf(line, "%d %lf")` reads it: a decimal
/// integer, then (after any spaces) the longest prefix that reads as a
/// number, from where the integer stopped (`1.0 0.9` gives 1 and `.0`).
fn scanf_cmd(line: &str) -> Option<(i64, f64)> {
    let digits_end = |t: &str| {
        let sign = usize::from(t.starts_with(['+', '-']));
        sign + t[sign..].bytes().take_while(u8::is_ascii_digit).count()
    };
    let end = digits_end(line);
    let kind = line[..end].parse().ok()?;
    let rest = line[end..].trim_start();
    // strtod's longest prefix: try every end, longest first (rows are short).
    let p = (1..=rest.len().min(64))
        .rev()
        .filter(|&n| rest.is_char_boundary(n))
        .find_map(|n| {
            rest[..n]
                .parse::<f64>()
                .ok()
                .filter(|_| !rest[..n].contains(['i', 'n', 'I', 'N']))
        })?;
    Some((kind, p))
}

/// One cmd row read as memaslap reads it, into `cmds` by its position
/// (memaslap's table is indexed by row, read back as set, get); a note
/// where the row would read otherwise, or is passed over.
fn memaslap_row(
    cmds: &mut Vec<(&'static str, f64)>,
    kind: i64,
    p: f64,
    line: &str,
    at: &str,
) -> Result<Option<String>, ConfigError> {
    // memaslap passes over types it lacks, without a place in the table.
    if kind >= 2 {
        return Ok(Some(format!(
            "{at}: skipped: command type {kind} is neither 0 (set) nor 1 (get)"
        )));
    }
    let op = match cmds.len() {
        0 => "set",
        1 => "get",
        _ => return Err(ConfigError::ThirdCmd.at(at)),
    };
    cmds.push((op, p));
    let sane = cmd_fields(line);
    let note = match sane {
        Some((k, q)) if q != p => Some(format!(
            "{at}: memaslap reads this row's proportion as {p} (its %d stops at the '.', and \
             the rest is the proportion); mcbench does as memaslap does. For {q}, write \
             '{k} {q}'"
        )),
        _ if (kind == 0) != (op == "set") => Some(format!(
            "{at}: memaslap takes row {} of cmd as the {op} share, whatever its type {kind}; \
             mcbench does as memaslap does: list set (0) first, then get (1)",
            cmds.len()
        )),
        _ => None,
    };
    Ok(note)
}

fn size_row(lo: u64, hi: u64, p: f64, min: u64, max: u64) -> Result<(u64, u64, f64), ConfigError> {
    if lo < min || hi > max || lo > hi {
        return Err(ConfigError::Sizes { min, max });
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(ConfigError::Proportion);
    }
    Ok((lo, hi, p))
}

fn check_total(
    shares: impl Iterator<Item = f64>,
    origin: &str,
    what: &'static str,
) -> Result<(), ConfigError> {
    let total: f64 = shares.sum();
    if (total - 1.0).abs() > 0.001 {
        return Err(ConfigError::Total {
            origin: origin.into(),
            what,
            total,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#comments should start with '#'\nkey\n16 100 0.8\n101 200 0.1\n201 249 0.1\n\
        value\n1 1000 0.8   # trailing comment\n1001 10000 0.1\n10001 100000 0.1\ncmd\n0    0.1\n1.0 0.9\n";

    /// memaslap(1)'s "sample configuration file", as the man page prints
    /// it: two comment lines wrapped onto lines without a `#`.
    const MANUAL: &str = "#comments should start with '#'\n#key\n#start_len end_len proportion\n\
        #proportion: indicates keys generated from one range accounts for the total\n\
        generated keys\n#\n#          16 100 0.8\nkey\n128 128 1\n#value\n\
        #proportion: indicates values generated from one range accounts for the\n\
        total generated values\n#\n#          128 128 1\nvalue\n2048 2048 1\n#cmd\n\
        #cmd_type cmd_proportion\ncmd\n0    0.1\n1.0 0.9\n";

    #[test]
    fn the_manual_sample_reads_as_flags() {
        let cfg = to_args(SAMPLE, "cfg", Reading::Sane).unwrap();
        assert_eq!(
            cfg.args,
            [
                "--key-size",
                "empirical:16-100:0.8,101-200:0.1,201-249:0.1",
                "--value-size",
                "empirical:1-1000:0.8,1001-10000:0.1,10001-100000:0.1",
                "--mix",
                "set=0.1,get=0.9"
            ]
        );
        assert!(cfg.skipped.is_empty(), "{:?}", cfg.skipped);
    }

    /// As memaslap reads the manual's sample: `1.0 0.9` is a get share of
    /// `.0` (the real memaslap sent only sets: get 0 / set 156,413), said
    /// with the line and how to write 0.9.
    #[test]
    fn as_memaslap_the_samples_get_row_reads_as_zero() {
        let cfg = to_args(SAMPLE, "cfg", Reading::AsMemaslap).unwrap();
        assert_eq!(cfg.args[4..], ["--mix", "set=0.1"]);
        assert_eq!(cfg.skipped.len(), 1, "{:?}", cfg.skipped);
        let note = &cfg.skipped[0];
        assert!(
            note.starts_with("cfg:12: '1.0 0.9': memaslap reads this row's proportion as 0"),
            "{note}"
        );
        assert!(note.contains("write '1 0.9'"), "{note}");
        // Written `1 0.9`, both read; no sum is checked, the ratio counts.
        let cfg = to_args("cmd\n0 0.1\n1 0.9\n", "cfg", Reading::AsMemaslap).unwrap();
        assert_eq!(cfg.args, ["--mix", "set=0.1,get=0.9"]);
        assert!(cfg.skipped.is_empty());
        let cfg = to_args("cmd\n0 0.2\n1 0.2\n", "cfg", Reading::AsMemaslap).unwrap();
        assert_eq!(cfg.args, ["--mix", "set=0.2,get=0.2"]);
        // Rows by position: a get row first is the set share.
        let cfg = to_args("cmd\n1 0.9\n0 0.1\n", "cfg", Reading::AsMemaslap).unwrap();
        assert_eq!(cfg.args, ["--mix", "set=0.9,get=0.1"]);
        assert!(
            cfg.skipped[0].contains("row 1 of cmd as the set share"),
            "{:?}",
            cfg.skipped
        );
        // No set share: gets only; a third row would overrun its table.
        let cfg = to_args("cmd\n0 0\n1 1\n", "cfg", Reading::AsMemaslap).unwrap();
        assert_eq!(cfg.args, ["--mix", "get=1"]);
        assert!(to_args("cmd\n0 0.1\n1 0.8\n1 0.1\n", "cfg", Reading::AsMemaslap).is_err());
        assert_eq!(scanf_cmd("1.0 0.9"), Some((1, 0.0)));
        assert_eq!(scanf_cmd("0    0.1"), Some((0, 0.1)));
        assert_eq!(scanf_cmd("1 0.9x"), Some((1, 0.9)));
        assert_eq!(scanf_cmd("x 0.9"), None);
        assert_eq!(scanf_cmd("1 nan"), None);
    }

    /// The wrapped comment lines are skipped as memaslap skips them, and
    /// said to be; the rows under each section are read.
    #[test]
    fn the_man_pages_wrapped_comments_are_skipped_and_named() {
        let cfg = to_args(MANUAL, "cfg", Reading::Sane).unwrap();
        assert_eq!(
            cfg.args,
            [
                "--key-size",
                "empirical:128-128:1",
                "--value-size",
                "empirical:2048-2048:1",
                "--mix",
                "set=0.1,get=0.9"
            ]
        );
        assert_eq!(cfg.skipped.len(), 2, "{:?}", cfg.skipped);
        assert!(cfg.skipped[0].starts_with("cfg:5: 'generated keys': skipped"));
        assert!(cfg.skipped[1].starts_with("cfg:12: 'total generated values': skipped"));
    }

    /// A row after a skipped line is skipped too, until the next section:
    /// memaslap reads nothing there.
    #[test]
    fn rows_after_a_skipped_line_wait_for_a_section() {
        let cfg = to_args("key\n16 x 1\n20 20 1\nkey\n30 30 1\n", "cfg", Reading::Sane).unwrap();
        assert_eq!(cfg.args, ["--key-size", "empirical:30-30:1"]);
        assert_eq!(cfg.skipped.len(), 2, "{:?}", cfg.skipped);
        let cfg = to_args("cmd\n2 1\n0 1\n", "cfg", Reading::Sane).unwrap();
        assert_eq!(cfg.args, ["--mix", "set=1"]);
        assert!(
            cfg.skipped[0].contains("command type 2"),
            "{:?}",
            cfg.skipped
        );
    }

    /// Sizes drawn from what the file says follow its proportions (1 %).
    #[test]
    fn three_key_and_three_value_ranges_keep_their_proportions() {
        use crate::workload::Distribution;
        use rand::SeedableRng;
        let args = to_args(SAMPLE, "cfg", Reading::Sane).unwrap().args;
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
            ("# only a comment\n\n", "no configuration"),
            ("key\n0 20 1\n", "cfg:2: '0 20 1'"),
            ("key\n16 300 1\n", "cfg:2: '16 300 1'"),
            ("cmd\n0 2\n", "cfg:2: '0 2'"),
            ("key\n16 20 0.5\n", "sum to 0.5"),
        ] {
            let err = to_args(text, "cfg", Reading::Sane).err().unwrap();
            assert!(err.to_string().contains(needle), "{text:?}: {err}");
        }
    }
}
