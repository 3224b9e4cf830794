//! `mcbench search` and `mcbench scan`: `run`'s flags, plus how the series
//! of open-loop rates is chosen.

use super::error::MAX_SCAN_POINTS;
use super::{CliError, RunArgs};
use crate::result::Slo;
use crate::spec::units::parse_rate;
use clap::Args;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The latency objective, PERCENTILE:BOUND: p99:1ms, 99.9:500us, or
    /// mutilate's 99:1000 (µs). Default: the --profile's own SLO. Each
    /// probe runs until the percentile's 95 % interval lies wholly under
    /// or over the bound (within -t; else it is undecided), and the answer
    /// is given as a range.
    #[arg(long, value_name = "P:BOUND")]
    pub slo: Option<Slo>,

    /// Narrow the bracket until its top is within this of its bottom
    /// (2%, or 0.02). (`--precision P:W` is run's: how precise each
    /// probe's percentiles must be before it ends.)
    #[arg(long, value_parser = parse_share, default_value = "2%", value_name = "SHARE")]
    pub bracket: f64,

    /// The first and lowest rate probed [default: --rate, else 1000]
    #[arg(long, value_parser = parse_rate, value_name = "R")]
    pub min_rate: Option<f64>,

    /// The highest rate probed: the search stops there if it still passes.
    #[arg(long, value_parser = parse_rate, value_name = "R")]
    pub max_rate: Option<f64>,

    /// Give up after this many probes.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub max_probes: usize,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The rates, MIN:MAX:STEP (10k:200k:10k, mutilate's --scan) or a
    /// list (1k,5k,20k).
    #[arg(long, value_parser = parse_rates, value_name = "RATES")]
    pub rates: Rates,

    /// Mark each point pass or fail against PERCENTILE:BOUND (p99:1ms):
    /// a point is decided by its 95 % interval (each run ends once decided,
    /// within -t), and is undecided when the interval straddles the bound.
    #[arg(long, value_name = "P:BOUND")]
    pub slo: Option<Slo>,

    /// Run the rates up, then down again, and flag each rate whose two
    /// 95 % intervals (the SLO's percentile, else p99) do not meet: the
    /// server kept a state from the higher load (hysteresis).
    #[arg(long)]
    pub updown: bool,

    /// Preload the key space before every rate, as each step of mutilate's
    /// --scan does, not once before the first.
    #[arg(long, conflicts_with = "no_load")]
    pub load_every_rate: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// The offered rates of a scan, ops/s, ascending or as given.
#[derive(Debug, Clone)]
pub struct Rates(pub Vec<f64>);

fn parse_rates(text: &str) -> Result<Rates, CliError> {
    let refused = |why| CliError::Rates {
        text: text.to_string(),
        why,
    };
    let parts: Vec<&str> = text.split(':').collect();
    let rates = match parts.as_slice() {
        [min, max, step] => {
            let (min, max, step) = (parse_rate(min)?, parse_rate(max)?, parse_rate(step)?);
            if step <= 0.0 {
                return Err(refused("STEP must be above 0"));
            }
            if max < min {
                return Err(refused("MAX is below MIN"));
            }
            let steps = ((max - min) / step + 1e-9).floor();
            if steps >= MAX_SCAN_POINTS as f64 {
                return Err(CliError::ScanPoints(text.to_string()));
            }
            let n = steps as usize + 1;
            (0..n).map(|i| min + i as f64 * step).collect()
        }
        [_] => text
            .split(',')
            .map(parse_rate)
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(refused(
                "give MIN:MAX:STEP (10k:200k:10k) or a list (1k,5k,20k)",
            ))
        }
    };
    if rates.iter().any(|r| *r <= 0.0) {
        return Err(refused("every rate must be above 0 ops/s"));
    }
    if rates.is_empty() || rates.len() > MAX_SCAN_POINTS {
        return Err(CliError::RateCount(text.to_string()));
    }
    Ok(Rates(rates))
}

/// `2%` or `0.02`: a share above 0 and below 1.
fn parse_share(text: &str) -> Result<f64, CliError> {
    let v = match text.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.trim().parse::<f64>(),
    }
    .map_err(|_| CliError::Share(text.to_string()))?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(CliError::Bracket(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_ranges_or_lists() {
        assert_eq!(parse_rates("10k:50k:10k").unwrap().0.len(), 5);
        assert_eq!(parse_rates("1k,5k").unwrap().0, vec![1000.0, 5000.0]);
        assert!(parse_rates("50k:10k:10k").is_err());
        assert!(parse_rates("1:1000000:1").is_err());
        assert!(parse_rates("1k:2k").is_err());
        assert!(parse_rates("0:10k:1k").is_err());
        assert!(parse_rates("1k:10k:0").is_err());
        assert_eq!(parse_share("2%").unwrap(), 0.02);
        assert!(parse_share("0").is_err());
    }
}
