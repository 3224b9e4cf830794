//! `mcbench run`'s flags under "Measurement connections".

use crate::spec::units::parse_rate;
use crate::spec::MeasureGroup;
use clap::Args;

/// A group of connections apart from the load that only measures.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Measurement connections")]
pub struct MeasureArgs {
    /// Measurement connections per server beside the load (mutilate's -C).
    ///
    /// Measurement connections per server beside the load (mutilate's
    /// -C): their own open loop at --measure-rate, their latency reported
    /// apart, free of the load's client-side queueing.
    #[arg(long, alias = "measure_connections", value_name = "N")]
    pub measure_connections: Option<usize>,

    /// The measurement connections' rate, ops/s over all of them
    /// (mutilate's -Q) [default: 1000]
    #[arg(
        hide_short_help = true,
        long,
        alias = "measure_qps",
        value_parser = parse_rate,
        value_name = "R",
        requires = "measure_connections"
    )]
    pub measure_rate: Option<f64>,

    /// Requests in flight per measurement connection (mutilate's -D)
    /// [default: 1]
    #[arg(
        hide_short_help = true,
        long,
        alias = "measure_depth",
        value_name = "D",
        requires = "measure_connections"
    )]
    pub measure_depth: Option<usize>,
}

impl MeasureArgs {
    /// `--measure-connections` and its rate and depth (clap refuses these
    /// alone).
    pub(super) fn group(&self) -> Option<MeasureGroup> {
        Some(MeasureGroup {
            connections: self.measure_connections?,
            rate: self.measure_rate.unwrap_or(1000.0),
            depth: self.measure_depth.unwrap_or(1),
        })
    }
}
