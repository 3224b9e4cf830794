//! A run's settings in the words of the command line (`-q 20000`,
//! `--mix get=9,set=1`), and which of them differ from `mcbench run`'s
//! defaults: the HTML report's settings table.
//!
//! Read from the spec's JSON, so that a saved result of any version
//! renders. A key is written with the flag of `mcbench run` that sets it,
//! as the CLI's own definitions spell it (`know_flags`); the keys made of
//! several flags have a rule each; a key no flag sets is written
//! `key=value` with its parts spelled out, never as raw JSON.

use crate::spec::RunSpec;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One setting: the spec's key, and its flags as typed (None: off, or
/// implied by another setting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    pub words: Option<String>,
}

/// The keys a reader looks for first, in this order; the others follow
/// alphabetically.
const FIRST: [&str; 14] = [
    "label",
    "servers",
    "protocol",
    "threads",
    "connections",
    "depth",
    "rate",
    "arrival",
    "stop",
    "warmup",
    "mix",
    "keys",
    "key_size",
    "value_size",
];

/// Keys written as part of another's words (`servers`' weights,
/// `interval`'s live line, `kernel_stamps`' sample).
const FOLDED: [&str; 3] = ["weights", "live", "stamp_sample"];

/// One flag of `mcbench run`, as the CLI defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// Its id: the spec key it sets, where one does.
    pub id: String,
    /// As typed: `-T`, or `--kernel-stamps` where it has no short form.
    pub typed: String,
    /// Whether it takes a value (`--kernel-stamps on`), not only its name.
    pub takes_value: bool,
}

/// The flags of `mcbench run` by id, from the CLI (a layer above).
static FLAGS: OnceLock<HashMap<String, Flag>> = OnceLock::new();

/// Tells reports the flags of `mcbench run`; the first call holds. Call
/// it before `know_defaults`, whose words it spells.
pub fn know_flags(flags: Vec<Flag>) {
    let _ = FLAGS.set(flags.into_iter().map(|f| (f.id.clone(), f)).collect());
}

/// The flag that sets spec key `key`; `None` where none does (or no one
/// said the flags).
fn flag_of(key: &str) -> Option<&'static Flag> {
    let id = match key {
        "popularity" => "key_popularity",
        key => key,
    };
    FLAGS.get()?.get(id)
}

/// Keys that hold seconds (JSON keeps durations as seconds, a number).
const SECONDS: [&str; 5] = ["warmup", "wait", "coalesce", "time_limit", "read_delay"];

/// Every setting of `spec`: the principal ones first.
pub fn all(spec: &RunSpec) -> Vec<Setting> {
    let map = as_map(spec);
    let rank = |k: &str| FIRST.iter().position(|f| *f == k).unwrap_or(FIRST.len());
    let mut keys: Vec<&String> = map
        .keys()
        .filter(|k| !FOLDED.contains(&k.as_str()))
        .collect();
    keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    keys.into_iter()
        .map(|key| Setting {
            key: key.clone(),
            words: words(key, &map[key], &map),
        })
        .collect()
}

/// The settings of `mcbench run` with no flags, as the CLI makes them: a
/// layer above this one, so it says them here once (`know_defaults`).
static DEFAULTS: OnceLock<Vec<Setting>> = OnceLock::new();

/// Tells reports what `mcbench run` with no flags makes; the first call
/// holds.
pub fn know_defaults(spec: &RunSpec) {
    let _ = DEFAULTS.set(all(spec));
}

/// The keys whose words differ from those of `mcbench run` with no flags
/// (every setting with words, when no one said them).
pub fn changed(spec: &RunSpec) -> Vec<Setting> {
    let defaults = DEFAULTS.get().map_or(&[][..], Vec::as_slice);
    all(spec)
        .into_iter()
        .filter(|s| {
            let default = defaults.iter().find(|d| d.key == s.key);
            s.words != default.and_then(|d| d.words.clone())
        })
        .collect()
}

/// The words of every changed setting, as one command line after `run`.
pub fn command_line(spec: &RunSpec) -> Vec<String> {
    changed(spec).into_iter().filter_map(|s| s.words).collect()
}

fn as_map(spec: &RunSpec) -> Map<String, Value> {
    match serde_json::to_value(spec) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn words(key: &str, v: &Value, spec: &Map<String, Value>) -> Option<String> {
    match key {
        // Folded into another setting's words, or never written down.
        "weights" | "live" | "stamp_sample" | "password" => None,
        "kernel_stamps" => kernel_stamps(v, spec.get("stamp_sample")),
        "servers" => servers(v, spec.get("weights")),
        "stop" => stop(v),
        "interval" => interval(v, spec.get("live")),
        "timeout" | "connect_timeout" | "drain_timeout" => timeouts(key, spec),
        "client" => client(v),
        "mix" => mix(v),
        "multiget" => multiget(v, spec.get("mix")),
        "load" => load(v),
        "churn" => churn(v),
        "socket" => socket(v),
        "tls" => tls(v),
        "distribution" => distribution(v),
        "replication" => replication(v),
        "measure" => measure(v),
        "trace" => trace(v, spec),
        "precision" => precision(v),
        "decide" => decide(v),
        "save_rate" => save(v),
        _ => match flag_of(key) {
            Some(f) => typed(f, key, v),
            None => spelled(key, v),
        },
    }
}

/// A key one flag sets, in that flag's words.
fn typed(f: &Flag, key: &str, v: &Value) -> Option<String> {
    let name = f.typed.as_str();
    match v {
        Value::Bool(_) if f.takes_value => on_off(name, v),
        Value::Bool(_) => flag(name, v),
        Value::Number(_) if SECONDS.contains(&key) => seconds(name, v),
        Value::Number(_) => number(name, v),
        Value::String(_) => text(name, v),
        Value::Array(_) => list(name, v),
        _ => spelled(key, v),
    }
}

/// `--kernel-stamps on|off`, or `all` and `1/N` where a sample was said.
fn kernel_stamps(v: &Value, sample: Option<&Value>) -> Option<String> {
    match (v.as_bool()?, sample.and_then(Value::as_u64)) {
        (true, Some(1)) => Some("--kernel-stamps all".into()),
        (true, Some(n)) => Some(format!("--kernel-stamps 1/{n}")),
        _ => on_off("--kernel-stamps", v),
    }
}

/// `--FLAG on` or `--FLAG off`, for a setting that is neither by default.
fn on_off(flag: &str, v: &Value) -> Option<String> {
    let on = v.as_bool()?;
    Some(format!("{flag} {}", if on { "on" } else { "off" }))
}

/// `-s a:11211,b:11211`, with `:WEIGHT` where any weight is not 1.
fn servers(v: &Value, weights: Option<&Value>) -> Option<String> {
    let servers: Vec<&str> = v.as_array()?.iter().filter_map(Value::as_str).collect();
    if servers.is_empty() {
        return None;
    }
    let weights: Vec<u64> = weights
        .and_then(Value::as_array)
        .map(|w| w.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let weighted = weights.len() == servers.len() && weights.iter().any(|w| *w != 1);
    let list: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| match weighted {
            true => format!("{s}:{}", weights[i]),
            false => s.to_string(),
        })
        .collect();
    Some(format!("-s {}", quoted(&list.join(","))))
}

fn stop(v: &Value) -> Option<String> {
    if let Some(d) = v.get("duration") {
        return seconds("-t", d);
    }
    // A schedule's or a trace's end is implied by --num-conns or --trace.
    v.get("ops").and_then(|n| number("-x", n))
}

/// `-i D` when the live line is on (the interval is still kept without).
fn interval(v: &Value, live: Option<&Value>) -> Option<String> {
    match live.and_then(Value::as_bool) {
        Some(false) if v.as_f64() == Some(1.0) => None,
        _ => seconds("-i", v),
    }
}

/// `--timeout` sets all three; a part that differs is written alone.
fn timeouts(key: &str, spec: &Map<String, Value>) -> Option<String> {
    let get = |k: &str| spec.get(k).and_then(Value::as_f64);
    let request = get("timeout");
    let same = get("connect_timeout") == request && get("drain_timeout") == request;
    match (key, same) {
        ("timeout", true) => seconds("--timeout", spec.get("timeout")?),
        ("timeout", false) => seconds("--request-timeout", spec.get("timeout")?),
        (_, true) => None,
        (other, false) => seconds(&format!("--{}", other.replace('_', "-")), spec.get(other)?),
    }
}

fn client(v: &Value) -> Option<String> {
    let (i, n) = (v.get("index")?.as_u64()?, v.get("of")?.as_u64()?);
    Some(format!("--client {i}/{n}"))
}

/// `--mix get=9,set=1`: the shares as the smallest whole weights that
/// give them, else as they are.
fn mix(v: &Value) -> Option<String> {
    let shares: Vec<(&str, f64)> = v
        .get("shares")?
        .as_array()?
        .iter()
        .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_f64()?)))
        .collect();
    let whole = (1..=1000u32).find(|k| {
        shares.iter().all(|(_, s)| {
            let w = s * f64::from(*k);
            (w - w.round()).abs() < 1e-6 * w.max(1.0)
        })
    });
    let parts: Vec<String> = shares
        .iter()
        .map(|(op, s)| match whole {
            Some(k) => format!("{op}={}", (s * f64::from(k)).round()),
            None => format!("{op}={}", plain(*s)),
        })
        .collect();
    Some(format!("--mix {}", parts.join(",")))
}

/// Every get a multiget of N keys, a share of them, or mget's size.
fn multiget(v: &Value, mix: Option<&Value>) -> Option<String> {
    let (share, keys) = (v.get("share")?.as_f64()?, v.get("keys")?.as_u64()?);
    let mget = mix
        .and_then(|m| m.get("shares")?.as_array().cloned())
        .is_some_and(|shares| shares.iter().any(|p| p.get(0) == Some(&"mget".into())));
    match share {
        s if s >= 1.0 => Some(format!("--multiget {keys}")),
        _ if mget && keys != 1 => Some(format!("--multiget {keys}")),
        _ if mget => None,
        s if s > 0.0 || keys != 1 => Some(format!(
            "--getq-freq {} --getq-size {keys}",
            plain(s * 100.0)
        )),
        _ => None,
    }
}

fn load(v: &Value) -> Option<String> {
    Some(format!("--{}", v.as_str()?.replace('_', "-")))
}

fn churn(v: &Value) -> Option<String> {
    Some(format!(
        "--num-conns {} --conn-rate {} --num-calls {} --call-rate {}",
        v.get("conns")?.as_u64()?,
        gaps(v.get("conn_gaps")?)?,
        v.get("calls")?.as_u64()?,
        gaps(v.get("call_gaps")?)?
    ))
}

/// httperf's gap syntax: `0` one after another, `dT` fixed, `eT`
/// exponential, `uT1,T2` uniform (seconds).
fn gaps(v: &Value) -> Option<String> {
    let s = |k: &str| v.get(k).and_then(Value::as_f64).map(plain);
    match v.get("kind")?.as_str()? {
        "after_previous" => Some("0".into()),
        "fixed" => Some(format!("d{}", s("interval_s")?)),
        "exponential" => Some(format!("e{}", s("mean_s")?)),
        "uniform" => Some(format!("u{},{}", s("min_s")?, s("max_s")?)),
        _ => None,
    }
}

fn socket(v: &Value) -> Option<String> {
    let mut out = Vec::new();
    out.extend(number("--linger", v.get("linger_s")?));
    out.extend(number("--send-buffer", v.get("send_buffer")?));
    out.extend(number("--recv-buffer", v.get("recv_buffer")?));
    out.extend(flag("--no-nodelay", v.get("no_nodelay")?));
    out.extend(list("--source-addrs", v.get("source_addrs")?));
    joined(out)
}

fn tls(v: &Value) -> Option<String> {
    let mut out = vec!["--tls".to_string()];
    out.extend(text("--tls-ca", v.get("ca")?));
    out.extend(text("--tls-cert", v.get("cert")?));
    out.extend(text("--tls-key", v.get("key")?));
    out.extend(text("--tls-server-name", v.get("server_name")?));
    out.extend(flag("--tls-insecure", v.get("insecure")?));
    if v.get("resume")?.as_bool() == Some(false) {
        out.push("--tls-resume off".into());
    }
    joined(out)
}

/// `modula/md5` is `--distribution modula --hash md5`.
fn distribution(v: &Value) -> Option<String> {
    match v.as_str()?.split_once('/') {
        Some((name, hash)) => Some(format!("--distribution {name} --hash {hash}")),
        None => text("--distribution", v),
    }
}

fn replication(v: &Value) -> Option<String> {
    Some(format!(
        "--rep-write {} --rep-lag-rate {} --rep-lag-poll {}",
        v.get("writers")?.as_u64()?,
        plain(v.get("lag_rate")?.as_f64()?),
        duration(v.get("lag_poll")?.as_f64()?)
    ))
}

fn measure(v: &Value) -> Option<String> {
    Some(format!(
        "--measure-connections {} --measure-rate {} --measure-depth {}",
        v.get("connections")?.as_u64()?,
        plain(v.get("rate")?.as_f64()?),
        v.get("depth")?.as_u64()?
    ))
}

/// The replay, with `--trace-timing ignore` where a timed format was
/// replayed without its timestamps (the spec then has no speed).
fn trace(v: &Value, spec: &Map<String, Value>) -> Option<String> {
    let format = v.get("format")?.as_str()?;
    let mut out = vec![format!(
        "--trace {} --trace-format {format}",
        quoted(v.get("path")?.as_str()?),
    )];
    out.extend(flag("--trace-clients", v.get("clients")?));
    let timed = format
        .parse::<crate::trace::TraceFormat>()
        .is_ok_and(|f| f.timed());
    if timed && !spec.contains_key("trace_speed") {
        out.push("--trace-timing ignore".into());
    }
    joined(out)
}

/// `--precision p99:5%,p99.9:10%`.
fn precision(v: &Value) -> Option<String> {
    let targets: Vec<String> = v
        .as_array()?
        .iter()
        .filter_map(|t| {
            let p = t.get("percentile")?.as_f64()?;
            let w = t.get("relative")?.as_f64()?;
            Some(format!("p{}:{}%", plain(p), plain(w * 100.0)))
        })
        .collect();
    (!targets.is_empty()).then(|| format!("--precision {}", targets.join(",")))
}

/// `--save`, whose file the result does not keep (`FILE`).
fn save(v: &Value) -> Option<String> {
    match v.as_f64()? {
        share if share >= 1.0 => Some("--save FILE".into()),
        share => Some(format!("--save FILE --save-rate {}", plain(share))),
    }
}

/// `search`'s and `scan`'s SLO, which decides each probe.
fn decide(v: &Value) -> Option<String> {
    let p = v.get("percentile")?.as_f64()?;
    let bound = v.get("bound_us")?.as_f64()?;
    Some(format!("--slo p{}:{}", plain(p), duration(bound / 1e6)))
}

fn flag(name: &str, v: &Value) -> Option<String> {
    v.as_bool()?.then(|| name.to_string())
}

fn number(name: &str, v: &Value) -> Option<String> {
    Some(format!("{name} {}", plain(v.as_f64()?)))
}

/// `--flag VALUE`, or `--flag=VALUE` for a value a parser would take for
/// a flag.
fn text(name: &str, v: &Value) -> Option<String> {
    let value = v.as_str()?;
    match value.starts_with('-') {
        true => Some(format!("{name}={}", quoted(value))),
        false => Some(format!("{name} {}", quoted(value))),
    }
}

fn seconds(name: &str, v: &Value) -> Option<String> {
    Some(format!("{name} {}", duration(v.as_f64()?)))
}

fn list(name: &str, v: &Value) -> Option<String> {
    let items: Vec<String> = v.as_array()?.iter().filter_map(scalar).collect();
    (!items.is_empty()).then(|| format!("{name} {}", quoted(&items.join(","))))
}

fn joined(parts: Vec<String>) -> Option<String> {
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// A value no rule knows: `key=value`, objects as `key.part=value`, nulls
/// and empty lists left out.
fn spelled(key: &str, v: &Value) -> Option<String> {
    let mut parts = Vec::new();
    spell(key, v, &mut parts);
    joined(parts)
}

fn spell(path: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Null => {}
        Value::Object(m) => {
            for (k, inner) in m {
                spell(&format!("{path}.{k}"), inner, out);
            }
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().filter_map(scalar).collect();
            if !items.is_empty() {
                out.push(format!("{path}={}", items.join(",")));
            }
        }
        other => out.extend(scalar(other).map(|s| format!("{path}={s}"))),
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) => v.as_f64().map(plain),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A number as typed: `20000`, `0.25`; a fraction to 12 significant
/// digits, so that `7.000000000000001` (0.07 × 100) reads `7`.
fn plain(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let rounded: f64 = format!("{x:.11e}").parse().unwrap_or(x);
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded}")
    }
}

/// Seconds in the largest unit that keeps them whole: `5s`, `250ms`,
/// `100us`, `20ns`, else fractional seconds.
fn duration(secs: f64) -> String {
    if secs == 0.0 {
        return "0s".into();
    }
    for (scale, unit) in [(1.0, "s"), (1e3, "ms"), (1e6, "us"), (1e9, "ns")] {
        let n = secs * scale;
        if n.abs() >= 1.0 && (n - n.round()).abs() < 1e-6 * n.abs() {
            return format!("{}{unit}", plain(n.round()));
        }
    }
    format!("{}s", plain(secs))
}

/// Single-quoted for a POSIX shell when it holds anything but
/// `[A-Za-z0-9_./:=,@%+-]`.
fn quoted(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::{kernel_stamps, spelled};
    use serde_json::json;

    #[test]
    fn a_sample_of_stamps_is_written_as_typed() {
        let words =
            |on, sample: Option<u64>| kernel_stamps(&json!(on), sample.map(|n| json!(n)).as_ref());
        assert_eq!(words(true, Some(8)).unwrap(), "--kernel-stamps 1/8");
        assert_eq!(words(true, Some(1)).unwrap(), "--kernel-stamps all");
        assert_eq!(words(true, None).unwrap(), "--kernel-stamps on");
        assert_eq!(words(false, None).unwrap(), "--kernel-stamps off");
    }

    #[test]
    fn an_unknown_key_is_spelled_out() {
        let v = serde_json::json!({"a": null, "b": {"c": 1.5, "d": [1, 2]}, "e": true});
        assert_eq!(spelled("x", &v).unwrap(), "x.b.c=1.5 x.b.d=1,2 x.e=true");
    }
}
