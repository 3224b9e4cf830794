//! Parsing of human-written quantities: durations and counts.

use super::SpecError;

use std::time::Duration;

/// Parses `30s`, `2m`, `1h`, `500ms`, `250us`, `1.5s`; a bare number is
/// seconds (mutilate's `-t 5`).
pub fn parse_duration(text: &str) -> Result<Duration, SpecError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| SpecError::Duration(text.into()))?;
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(SpecError::DurationUnit {
                text: text.into(),
                unit: other.into(),
            })
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 1e9 {
        return Err(SpecError::DurationRange(text.into()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `text` without `_` and its k/M/G suffix, and the suffix's multiplier.
fn split_suffix(text: &str) -> (String, u64) {
    let t = text.trim().replace('_', "");
    let mult = match t.chars().last() {
        Some('k' | 'K') => 1_000,
        Some('M') => 1_000_000,
        Some('G') => 1_000_000_000,
        _ => return (t, 1),
    };
    (t[..t.len() - 1].to_string(), mult)
}

/// Parses a count that may carry a k/M/G suffix (`10k`, `1M`) or use `_`.
pub fn parse_count(text: &str) -> Result<u64, SpecError> {
    let (num, mult) = split_suffix(text);
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| SpecError::Count(text.into()))
}

/// Parses a rate in ops/s: a number, or a count with a suffix (`4k`,
/// `1.5M`), as `--keys` and `--ops` take them.
pub fn parse_rate(text: &str) -> Result<f64, SpecError> {
    let (num, mult) = split_suffix(text);
    num.parse::<f64>()
        .ok()
        .map(|n| n * mult as f64)
        .filter(|r| r.is_finite())
        .ok_or_else(|| SpecError::Rate(text.into()))
}

/// Serde helper: a `Duration` as floating-point seconds.
pub mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

/// Serde helper: an optional `Duration` as floating-point seconds.
pub mod seconds_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|secs| Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("5x")
            .unwrap_err()
            .to_string()
            .contains("unknown unit 'x'"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("ten").is_err());
        assert!(parse_count("99999999999G").is_err());
    }
}
