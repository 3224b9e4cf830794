//! `mcbench memcache-perf`: memcache-perf's flags over the ones it shares
//! with mutilate (`mutilate::Common`), and its predefined profiles.

use super::mutilate::{command, Common, Keys};
use super::{refused, PersonalityError, Tool, ToolCommand, Translation};
use clap::Args;

/// memcache-perf's flags.
#[derive(Debug, Args)]
pub struct MemcachePerfArgs {
    #[command(flatten)]
    common: Common,
    /// One of memcache-perf's predefined profiles (1-4).
    #[arg(long = "profile", value_name = "INT")]
    profile: Option<u8>,
    /// Selection of keys (a distribution) [default: none]. mcbench: only
    /// none (uniform); `mcbench run --key-popularity` has the others.
    #[arg(long = "keyorder", value_name = "STRING")]
    keyorder: Option<String>,
    /// Send start_trace/stop_trace around the measured phase.
    #[arg(short = 'e', long = "trace")]
    trace: bool,
    /// Keys per multiget [default: 100].
    #[arg(short = 'G', long = "getq_size", value_name = "INT")]
    getq_size: Option<usize>,
    /// Percentage of gets sent as multigets [default: 0.0].
    #[arg(short = 'g', long = "getq_freq", value_name = "FLOAT")]
    getq_freq: Option<f64>,
    /// Cached key capacity. mcbench: no effect (keys are drawn as sent).
    #[arg(long = "keycache_capacity", value_name = "INT")]
    keycache_capacity: Option<u64>,
    /// Key cache reuse. mcbench: no effect.
    #[arg(long = "keycache_reuse", value_name = "INT")]
    keycache_reuse: Option<u64>,
    /// Key cache regeneration. mcbench: no effect.
    #[arg(long = "keycache_regen", value_name = "INT")]
    keycache_regen: Option<u64>,
    /// Agent polling frequency. mcbench: no effect (agents stream).
    #[arg(short = 'm', long = "poll_freq", value_name = "INT")]
    poll_freq: Option<u64>,
    /// Agent polling timeout. mcbench: refused (its own rule drops a
    /// silent agent).
    #[arg(short = 'M', long = "poll_max", value_name = "INT")]
    poll_max: Option<u64>,
}

impl ToolCommand for MemcachePerfArgs {
    fn command(tool: Tool, cmd: clap::Command) -> clap::Command {
        command(tool, cmd)
    }
}

impl MemcachePerfArgs {
    pub fn translate(self) -> Result<Translation, PersonalityError> {
        if self.poll_max.is_some() {
            return Err(refused(
                "-M/--poll_max",
                "mcbench drops an agent silent for 3 intervals and the request timeout, plus 10 s",
            ));
        }
        let c = &self.common;
        if c.agentmode {
            return c.agent();
        }
        let keys = if self.profile.is_some() {
            Keys::Profile
        } else {
            Keys::Generated
        };
        let mut t = c.translate(false, keys, 0)?;
        if self.poll_freq.is_some() {
            t.note("-m/--poll_freq has no effect: agents stream each interval as it closes");
        }
        if let Some(p) = self.profile {
            if !(1..=4).contains(&p) {
                return Err(PersonalityError::Invalid(format!(
                    "--profile must be 1, 2, 3 or 4, got {p}"
                )));
            }
            t.flag("--profile", format!("mcperf-{p}"));
            self.profile_size(&mut t, p);
        }
        match self.keyorder.as_deref() {
            None | Some("none") => {}
            Some(k) => {
                return Err(refused(
                    &format!("--keyorder {k}"),
                    "mcbench draws keys uniformly here; `mcbench run --key-popularity` \
                     has zipf, hotspot, sequential and latest",
                ))
            }
        }
        if self.trace {
            t.switch("--trace-commands");
        }
        if let Some(g) = self.getq_size {
            t.flag("--getq-size", g);
        }
        if let Some(g) = self.getq_freq {
            t.flag("--getq-freq", g);
        }
        if self.keycache_capacity.is_some()
            || self.keycache_reuse.is_some()
            || self.keycache_regen.is_some()
        {
            t.note("--keycache_* have no effect: mcbench draws each key as it sends it");
        }
        c.finish(&mut t, Tool::MemcachePerf);
        Ok(t)
    }
}

/// memcache-perf's profiles' least connections to the server (over every
/// thread), profile 1 first, as its `mc_profiles` table sets them...
const MCPERF_LEAST_CONNECTIONS: [usize; 4] = [4000, 1000, 1, 100];
/// ...and the records every one of them holds.
const MCPERF_RECORDS: u64 = 1_000_000;

impl MemcachePerfArgs {
    /// A profile's connections and records, as memcache-perf sets them:
    /// `-c` raised to the profile's least over the threads and servers,
    /// and its records in place of `-r`'s.
    fn profile_size(&self, t: &mut Translation, profile: u8) {
        let least = MCPERF_LEAST_CONNECTIONS[usize::from(profile - 1)];
        let c = &self.common;
        let servers = t.native.iter().filter(|a| *a == "--server").count().max(1);
        let threads = c.threads.unwrap_or(1);
        let per_thread = c
            .connections
            .unwrap_or(1)
            .max(least.div_ceil(servers * threads));
        t.flag("--connections", per_thread * threads);
        t.flag("--keys", MCPERF_RECORDS / servers as u64);
        if c.records.is_some() {
            t.note(
                "-r has no effect with --profile: memcache-perf's profiles hold 1,000,000 records",
            );
        }
    }
}
