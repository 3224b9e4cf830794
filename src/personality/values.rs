//! The seed tools' value syntaxes, read as each tool reads them.

use super::PersonalityError;
use std::time::Duration;

/// memaslap's times (`-t`, `-S`): a number with s, m, h or d; bare is s.
pub fn memaslap_time(text: &str) -> Result<Duration, PersonalityError> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_lowercase()),
        _ => (t, 's'),
    };
    let secs_per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(PersonalityError::Time(text.into())),
    };
    num.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .and_then(|n| n.checked_mul(secs_per))
        .map(Duration::from_secs)
        .ok_or_else(|| PersonalityError::Time(text.into()))
}

/// memaslap's counts with a K or M suffix (`-w 40k`, `-P 40k`, `-x`):
/// K is 1024 and M 1024² as memaslap reads them.
pub fn memaslap_size(text: &str) -> Result<u64, PersonalityError> {
    let t = text.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&t[..t.len() - 1], 1024),
        Some('m') => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| PersonalityError::Number(text.into()))
}

pub use crate::spec::with_default_port as with_port;

/// A host and a port as one address (`[v6]:port` for IPv6).
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A proportion between 0 and 1 (memaslap's `-v`, `-e`, `-o`).
pub fn proportion(text: &str) -> Result<f64, PersonalityError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| PersonalityError::Proportion(text.into()))
}

/// twemperf's `-z` sizes, `[D]R1[,R2]`: `d1` (or `1`) fixed, `uA,B` uniform
/// (A..B after twemperf's rounding), `eM` exponential with mean M
/// (mcbench floors where twemperf rounds: half a byte less on average);
/// as an mcbench distribution.
pub fn twemperf_sizes(text: &str) -> Result<String, PersonalityError> {
    let bad = || PersonalityError::Sizes(text.into());
    let t = text.trim();
    let (kind, rest) = match t.chars().next() {
        Some(c @ ('d' | 'u' | 'e')) => (c, &t[1..]),
        Some(_) => ('d', t),
        None => return Err(bad()),
    };
    let nums: Vec<f64> = rest
        .split(',')
        .map(|n| n.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let positive = |x: f64| x.is_finite() && x >= 1.0;
    match (kind, nums.as_slice()) {
        ('d', &[n]) if positive(n) => Ok(format!("{}", n.round())),
        // twemperf sends lrint(A + (B - A) u), u in [0, 1): A..B, the ends
        // half as likely. mcbench floors its draws, and floor(U[A+½, B+½))
        // is the same.
        ('u', &[a, b]) if positive(a) && b > a => {
            Ok(format!("uniform:{},{}", a.round() + 0.5, b.round() + 0.5))
        }
        ('u', &[a, b]) if positive(a) && b == a => Ok(format!("{}", a.round())),
        ('e', &[mean]) if positive(mean) => Ok(format!("exponential:{}", 1.0 / mean)),
        _ => Err(bad()),
    }
}

/// mutilate's `normal:MEAN,SD` draws `MEAN + SD·√(−2 ln U)·cos(2πU)`,
/// one uniform U for both of Box–Muller's (its `V = U`): no normal, never
/// below MEAN − 1.18 SD, with a long right tail; mutilate truncates each
/// to whole bytes. The same sizes as mcbench's `empirical:` table of
/// `ROWS` equally likely ranges of that function's quantiles. `None` for
/// any other distribution.
pub fn mutilate_normal(text: &str) -> Option<String> {
    const GRID: usize = 100_000;
    const ROWS: usize = 50;
    let (m, s) = text.strip_prefix("normal:")?.split_once(',')?;
    let (m, s): (f64, f64) = (m.trim().parse().ok()?, s.trim().parse().ok()?);
    let mut sizes: Vec<f64> = (0..GRID)
        .map(|i| {
            let u = (i as f64 + 0.5) / GRID as f64;
            let draw = m + s * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * u).cos();
            draw.max(0.0).trunc()
        })
        .collect();
    sizes.sort_by(f64::total_cmp);
    let rows: Vec<String> = (0..ROWS)
        .map(|k| {
            let (lo, hi) = (sizes[k * GRID / ROWS], sizes[(k + 1) * GRID / ROWS - 1]);
            format!("{lo:.0}-{hi:.0}:{}", 1.0 / ROWS as f64)
        })
        .collect();
    Some(format!("empirical:{}", rows.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mutilate's `normal:500,100` as the real one left it on memcached:
    /// values 379 to 927 bytes, median 499 (never a normal's 130 or so).
    #[test]
    fn mutilates_normal_is_its_own() {
        let table = mutilate_normal("normal:500,100").unwrap();
        let d: crate::workload::Distribution = table.parse().unwrap();
        let (lo, hi) = d.support();
        assert_eq!(lo, 379.0, "{table}");
        assert!((900.0..1100.0).contains(&hi), "{table}");
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
        let mut v: Vec<f64> = (0..10_000).map(|_| d.sample(&mut rng)).collect();
        v.sort_by(f64::total_cmp);
        assert!((480.0..520.0).contains(&v[5_000]), "median {}", v[5_000]);
        assert_eq!(mutilate_normal("exponential:1"), None);
    }

    #[test]
    fn memaslap_times_and_sizes() {
        assert_eq!(memaslap_time("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(memaslap_time("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(memaslap_time("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(memaslap_time("30"), Ok(Duration::from_secs(30)));
        assert!(memaslap_time("2x").is_err());
        assert!(memaslap_time("0s").is_err());
        assert_eq!(memaslap_size("10k"), Ok(10 * 1024));
        assert_eq!(memaslap_size("40K"), Ok(40 * 1024));
        assert_eq!(memaslap_size("2m"), Ok(2 * 1024 * 1024));
        assert_eq!(memaslap_size("100000"), Ok(100_000));
        assert!(memaslap_size("ten").is_err());
    }

    #[test]
    fn servers_get_a_port() {
        assert_eq!(with_port("localhost", 11211), "localhost:11211");
        assert_eq!(with_port("10.0.0.1:1234", 11211), "10.0.0.1:1234");
        assert_eq!(with_port("::1", 11211), "[::1]:11211");
        assert_eq!(with_port("[::1]", 11211), "[::1]:11211");
        assert_eq!(with_port("[::1]:5", 11211), "[::1]:5");
        assert_eq!(host_port("::1", 7), "[::1]:7");
        assert_eq!(host_port("127.0.0.1", 7), "127.0.0.1:7");
    }

    #[test]
    fn twemperf_size_specs() {
        assert_eq!(twemperf_sizes("d1").unwrap(), "1");
        assert_eq!(twemperf_sizes("1").unwrap(), "1");
        assert_eq!(twemperf_sizes("u1,16").unwrap(), "uniform:1.5,16.5");
        assert_eq!(
            twemperf_sizes("u1024,10240").unwrap(),
            "uniform:1024.5,10240.5"
        );
        assert_eq!(twemperf_sizes("e100").unwrap(), "exponential:0.01");
        assert_eq!(twemperf_sizes("u64,64").unwrap(), "64");
        assert!(twemperf_sizes("u16,1").is_err());
        assert!(twemperf_sizes("x5").is_err());
        assert!(twemperf_sizes("d0").is_err());
    }
}
