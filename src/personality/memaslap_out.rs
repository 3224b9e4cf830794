//! memaslap's output: its configuration block, the Period/Global tables
//! every `-S`, and its final statistics, from mcbench's histograms.
//!
//! Where memaslap's code has bugs, the layout stays and the number is
//! right: Period and Global each show their own Net(M/s) (memaslap 1.0.18
//! swaps them), and latencies are mcbench's (from the intended send).

use crate::report::RenderError;

use crate::app::Presenter;
use crate::report::Exporter;
use crate::result::RunResult;
use crate::spec::RunSpec;
use crate::stats::{Hdr, IntervalSummary};
use hdrhistogram::Histogram;
use std::fmt::Write;
use std::time::Duration;

/// What memaslap prints before it starts.
pub struct Header {
    pub servers: String,
    pub threads: usize,
    pub concurrency: usize,
    pub run_time: Option<Duration>,
    pub execute_number: Option<u64>,
    pub window: u64,
    /// The set and get proportions as memaslap holds and prints them.
    pub proportions: (f64, f64),
}

/// The three tables memaslap keeps: gets, sets, both.
const KINDS: [(&str, &[&str]); 3] = [
    ("Get", &["get", "mget", "gets"]),
    ("Set", &["set"]),
    ("Total", &["total"]),
];

pub struct Memaslap {
    header: Header,
    /// Print the header and tables on stderr (`--mcbench-json -` has stdout).
    to_stderr: bool,
    stat_freq: Option<Duration>,
    /// memaslap's object size: mean key + mean value, bytes.
    object_size: f64,
    /// Since the start, per table: latencies (ns) and get misses.
    global: Vec<(Histogram<u64>, u64)>,
    elapsed_s: f64,
}

impl Memaslap {
    pub fn new(header: Header, stat_freq: Option<Duration>, to_stderr: bool) -> Self {
        Memaslap {
            header,
            to_stderr,
            stat_freq,
            object_size: 0.0,
            global: KINDS
                .iter()
                .map(|_| (crate::stats::new_histogram(), 0))
                .collect(),
            elapsed_s: 0.0,
        }
    }
}

impl Presenter for Memaslap {
    fn begin(&mut self, spec: &RunSpec) {
        self.object_size = spec.key_space.key_size.mean() + spec.key_space.value_size.mean();
        let h = &self.header;
        let mut out = format!(
            "servers : {}\nthreads count: {}\nconcurrency: {}\n",
            h.servers, h.threads, h.concurrency
        );
        match (h.run_time, h.execute_number) {
            (Some(t), _) => writeln!(out, "run time: {}s", t.as_secs()),
            (None, n) => writeln!(out, "execute number: {}", n.unwrap_or(0)),
        }
        .ok();
        let _ = write!(
            out,
            "windows size: {}k\nset proportion: set_prop={:.2}\nget proportion: get_prop={:.2}\n",
            h.window / 1024,
            h.proportions.0,
            h.proportions.1
        );
        emit(&out, self.to_stderr);
    }

    fn interval(&mut self, s: &IntervalSummary) {
        self.elapsed_s = s.time_s;
        // memaslap dumps only in time mode, with -S.
        if self.stat_freq.is_none() || self.header.run_time.is_none() {
            return;
        }
        let mut out = String::new();
        for (k, (name, ops)) in KINDS.iter().enumerate() {
            let (period, misses) = merged(s, ops);
            let (global, global_misses) = &mut self.global[k];
            global.add(&period).expect("same bounds");
            *global_misses += misses;
            if global.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{name} Statistics");
            let _ = writeln!(
                out,
                "{:<8} {:<8} {:<12} {:<12} {:<10} {:<10} {:<8} {:<10} {:<10} {:<10} {:<10}",
                "Type",
                "Time(s)",
                "Ops",
                "TPS(ops/s)",
                "Net(M/s)",
                "Get_miss",
                "Min(us)",
                "Max(us)",
                "Avg(us)",
                "Std_dev",
                "Geo_dist"
            );
            let rows = [
                ("Period", s.duration_s, &period, misses),
                ("Global", s.time_s, &*global, *global_misses),
            ];
            for (label, secs, h, miss) in rows {
                out.push_str(&row(self.object_size, label, secs, h, miss));
            }
            out.push('\n');
        }
        emit(&out, self.to_stderr);
    }

    fn text(&self) -> Box<dyn Exporter> {
        Box::new(Final {
            stat_freq: self.stat_freq.is_some(),
            object_size: self.object_size,
        })
    }

    fn to_stderr(&self) -> bool {
        self.to_stderr
    }
}

/// One Period or Global row. Net(M/s) is memaslap's: ops × mean object
/// size (`object_size`, bytes) per second, in MiB.
fn row(object_size: f64, label: &str, secs: f64, h: &Histogram<u64>, misses: u64) -> String {
    let n = h.len();
    let st = Micros::of(h);
    let secs_whole = secs.round().max(1.0);
    let net = n as f64 * object_size / 1024.0 / 1024.0 / secs.max(1e-9);
    let min = if n == 0 { -1 } else { st.min as i64 };
    format!(
        "{:<8} {:<8} {:<12} {:<12} {:<10.1} {:<10} {:<8} {:<10} {:<10} {:<10.2} {:.2}\n",
        label,
        secs_whole as u64,
        n,
        (n as f64 / secs.max(1e-9)) as u64,
        net,
        misses,
        min,
        st.max,
        st.avg,
        st.std,
        st.geo
    )
}

/// Prints on stdout; a closed stdout (`| head`) is not an error here,
/// the final report's write says so.
fn emit(text: &str, to_stderr: bool) {
    use std::io::Write as _;
    let _ = if to_stderr {
        std::io::stderr().lock().write_all(text.as_bytes())
    } else {
        let mut w = std::io::stdout().lock();
        w.write_all(text.as_bytes()).and_then(|()| w.flush())
    };
}

/// One table's histogram over the interval, and its get misses.
fn merged(s: &IntervalSummary, ops: &[&str]) -> (Histogram<u64>, u64) {
    let mut h = crate::stats::new_histogram();
    let mut misses = 0;
    for op in ops {
        if let Some(o) = s.ops.get(*op) {
            if let Ok(d) = o.latency_hdr.decode() {
                h.add(&d).expect("same bounds");
            }
            misses += o.misses;
        }
    }
    (h, misses)
}

/// memaslap's latency figures, in whole µs as it keeps them.
struct Micros {
    min: u64,
    max: u64,
    avg: u64,
    std: f64,
    geo: f64,
    /// Bucket i: 2^(i-1) < t ≤ 2^i µs (bucket 0: t ≤ 1).
    log2: [u64; 65],
}

impl Micros {
    fn of(h: &Histogram<u64>) -> Micros {
        let mut m = Micros {
            min: h.min() / 1000,
            max: h.max() / 1000,
            avg: 0,
            std: 0.0,
            geo: 0.0,
            log2: [0; 65],
        };
        let n = h.len();
        if n == 0 {
            return m;
        }
        let (mut sum, mut squares, mut logs) = (0.0, 0.0, 0.0);
        for v in h.iter_recorded() {
            let us = (h.median_equivalent(v.value_iterated_to()) / 1000) as f64;
            let c = v.count_at_value() as f64;
            sum += us * c;
            squares += us * us * c;
            logs += us.max(1.0).ln() * c;
            let bucket = (us.max(1.0).log2().ceil() as usize).min(64);
            m.log2[bucket] += v.count_at_value();
        }
        let nf = n as f64;
        m.avg = (sum / nf) as u64;
        let avg = m.avg as f64;
        m.std = if n > 1 {
            ((squares - nf * avg * avg) / (nf - 1.0)).max(0.0).sqrt()
        } else {
            0.0
        };
        m.geo = (logs / nf).exp();
        m
    }
}

/// The final statistics, after the run.
struct Final {
    stat_freq: bool,
    object_size: f64,
}

impl Exporter for Final {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let r = runs.first().ok_or(RenderError::NoRun)?;
        let mut out = String::new();
        if self.stat_freq {
            for (name, ops) in KINDS {
                let h = Hdr::sum(
                    ops.iter()
                        .filter_map(|op| lookup(r, op).map(|o| &o.latency_hdr)),
                )?;
                dump(&mut out, name, &h);
            }
        }
        // Sets the server took: one refused with an error reply (memcached's
        // out of memory) is not in its cmd_set, and is in `errors` below.
        let sets = r.ops.get("set").map_or(0, |o| o.ok);
        let _ = writeln!(out, "cmd_get: {}", r.gets.hits + r.gets.misses);
        let _ = writeln!(out, "cmd_set: {sets}");
        let _ = writeln!(out, "get_misses: {}", r.gets.misses);
        if r.spec.checks.verify > 0.0 {
            let _ = writeln!(out, "verify_misses: {}", r.checks.verify_misses);
            let _ = writeln!(out, "verify_failed: {}", r.checks.verify_failed);
        }
        if r.spec.checks.exp_verify > 0.0 {
            let _ = writeln!(out, "expired_get: {}", r.checks.expired_get);
            let _ = writeln!(out, "unexpired_unget: {}", r.checks.unexpired_unget);
        }
        // -b/--verbose: memaslap details each failed check; the first
        // ones, one per line.
        if r.spec.checks.verbose {
            for e in &r.checks.examples {
                let _ = writeln!(out, "\t{e}");
            }
        }
        // memaslap has no line for failed requests (error replies,
        // timeouts, lost connections): one in its style, only when there
        // were any; they are not in Ops or TPS.
        if r.total.errors > 0 {
            let _ = writeln!(out, "errors: {}", r.total.errors);
        }
        let _ = writeln!(out, "written_bytes: {}", r.bytes.tx);
        let _ = writeln!(out, "read_bytes: {}", r.bytes.rx);
        let _ = writeln!(
            out,
            "object_bytes: {}",
            (sets as f64 * self.object_size) as u64
        );
        if r.spec.conns.facebook
            || r.spec
                .target
                .servers
                .iter()
                .any(crate::spec::ServerAddr::is_udp)
        {
            let err = |k: &str| r.errors.get(k).copied().unwrap_or(0);
            let _ = writeln!(out, "packet_disorder: {}", err("packet_disorder"));
            let _ = writeln!(out, "packet_drop: {}", err("packet_drop"));
            let _ = writeln!(out, "udp_timeout: {}", err("udp_timeout"));
        }
        let sets_ok = r.ops.get("set").map_or(0, |o| o.ok);
        let ops = r.gets.hits + r.gets.misses + sets_ok;
        let secs = r.duration_s.max(1e-9);
        let _ = writeln!(
            out,
            "\nRun time: {:.1}s Ops: {} TPS: {:.0} Net_rate: {:.1}M/s",
            r.duration_s,
            ops,
            ops as f64 / secs,
            (r.bytes.tx + r.bytes.rx) as f64 / 1024.0 / 1024.0 / secs
        );
        Ok(out.into_bytes())
    }
}

fn lookup<'a>(r: &'a RunResult, op: &str) -> Option<&'a crate::result::OpSummary> {
    if op == "total" {
        Some(&r.total)
    } else {
        r.ops.get(op)
    }
}

/// One "NAME Statistics (N events)" block with its Log2 Dist.
fn dump(out: &mut String, name: &str, h: &Histogram<u64>) {
    let n = h.len();
    if n == 0 {
        return;
    }
    let m = Micros::of(h);
    let _ = writeln!(out, "{name} Statistics ({n} events)");
    let _ = writeln!(out, "   Min:  {:>8}", m.min);
    let _ = writeln!(out, "   Max:  {:>8}", m.max);
    let _ = writeln!(out, "   Avg:  {:>8}", m.avg);
    let _ = writeln!(out, "   Geo:  {:>8.2}", m.geo);
    if n > 1 {
        let _ = writeln!(out, "   Std:  {:>8.2}", m.std);
    }
    out.push_str("   Log2 Dist:");
    let last = m.log2.iter().rposition(|c| *c > 0).unwrap_or(0);
    let first = m.log2.iter().position(|c| *c > 0).unwrap_or(0) / 4 * 4;
    for i in first..=last {
        if i % 4 == 0 {
            let _ = write!(out, "\n      {i:2}:");
        }
        let _ = write!(out, "   {:6}", m.log2[i]);
    }
    out.push_str("\n\n");
}
