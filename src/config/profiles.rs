//! Named workload profiles: each is a list of flags, applied beneath the
//! config file and the command line.

/// A profile: its name, what it models, and the flags it sets.
pub struct Profile {
    pub name: &'static str,
    pub about: &'static str,
    pub args: &'static [&'static str],
}

pub const PROFILES: &[Profile] = &[
    Profile {
        name: "etc",
        about: "Facebook ETC (Atikoglu et al., SIGMETRICS 2012): GEV key sizes, discrete+GPareto value sizes, GPareto gaps, get:set 30:1",
        args: &["--key-size", "fb_key", "--value-size", "fb_value", "--arrival", "fb_ia", "--mix", "get=30,set=1"],
    },
    Profile {
        name: "mcperf-1",
        about: "memcache-perf profile 1, web serving (SLO p95 20 ms): Facebook key/value/gap shapes, 4000 connections",
        args: &["--key-size", "fb_key", "--value-size", "fb_value", "--arrival", "fb_ia", "--connections", "4000"],
    },
    Profile {
        name: "mcperf-2",
        about: "memcache-perf profile 2, application back ends (SLO p99 10 ms): 32 B keys, 1000 B values, uniform gaps, 1000 connections",
        args: &["--key-size", "32", "--value-size", "1000", "--arrival", "uniform:0,2", "--connections", "1000"],
    },
    Profile {
        name: "mcperf-3",
        about: "memcache-perf profile 3, low latency (SLO p99.9): 32 B keys, 200 B values, uniform gaps, 100,000 ops/s",
        args: &["--key-size", "32", "--value-size", "200", "--arrival", "uniform:0,2", "--rate", "100000"],
    },
    Profile {
        name: "mcperf-4",
        about: "memcache-perf profile 4 (SLO p99.9 1 ms): 32 B keys, values uniform on 100..1000 B",
        args: &["--key-size", "32", "--value-size", "uniform:100,1000"],
    },
    Profile {
        name: "ycsb-a",
        about: "YCSB A, update heavy: 50 % reads, 50 % updates, zipfian keys, 1000 B values",
        args: &["--mix", "get=50,set=50", "--key-popularity", "zipf:0.99", "--value-size", "1000"],
    },
    Profile {
        name: "ycsb-b",
        about: "YCSB B, read mostly: 95 % reads, 5 % updates, zipfian keys, 1000 B values",
        args: &["--mix", "get=95,set=5", "--key-popularity", "zipf:0.99", "--value-size", "1000"],
    },
    Profile {
        name: "ycsb-c",
        about: "YCSB C, read only: zipfian keys, 1000 B values",
        args: &["--mix", "get=100,set=0", "--key-popularity", "zipf:0.99", "--value-size", "1000"],
    },
    Profile {
        name: "ycsb-d",
        about: "YCSB D, read latest: 95 % reads of recently written keys, 5 % writes, 1000 B values",
        args: &["--mix", "get=95,set=5", "--key-popularity", "latest:0.99", "--value-size", "1000"],
    },
    Profile {
        name: "ycsb-f",
        about: "YCSB F, read-modify-write: 50 % reads + 50 % read-then-write on the wire = get:set 2:1, zipfian keys",
        args: &["--mix", "get=2,set=1", "--key-popularity", "zipf:0.99", "--value-size", "1000"],
    },
];

/// The latency objective memcache-perf states for its profile `name`
/// (what `mcbench search` bounds when no `--slo` is given).
pub fn slo(name: &str) -> Result<crate::result::Slo, super::ConfigError> {
    let slo = match name {
        "mcperf-1" => "p95:20ms",
        "mcperf-2" => "p99:10ms",
        "mcperf-3" => return Err(super::ConfigError::NoBound),
        "mcperf-4" => "p99.9:1ms",
        _ => return Err(super::ConfigError::NoSlo(name.into())),
    };
    Ok(slo.parse()?)
}

/// The flags of profile `name`, or why there is none.
pub fn lookup(name: &str) -> Result<&'static Profile, super::ConfigError> {
    if name == "ycsb-e" {
        return Err(super::ConfigError::RangeScans);
    }
    PROFILES.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        super::ConfigError::UnknownProfile {
            name: name.into(),
            names: names.join(", "),
        }
    })
}

/// The `mcbench profiles` listing.
pub fn listing() -> String {
    let mut out = String::new();
    for p in PROFILES {
        out.push_str(&format!(
            "{:<10} {}\n{:<10}   sets: {}\n",
            p.name,
            p.about,
            "",
            p.args.join(" ")
        ));
    }
    out.push_str(
        "ycsb-e     not available: YCSB E needs range scans, which memcached does not have\n",
    );
    out
}
