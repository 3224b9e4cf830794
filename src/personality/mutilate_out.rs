//! mutilate's and memcache-perf's final table: `read`, `update` and
//! `op_q` rows, QPS, misses, RX/TX, and memcache-perf's machine CPU use,
//! from mcbench's histograms.

use crate::report::RenderError;

use super::Tool;
use crate::app::Presenter;
use crate::report::Exporter;
use crate::result::{Curve, CurveKind, OpSummary, RunResult};
use crate::spec::LoadMode;
use crate::stats::Hdr;
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::rc::Rc;

/// The ops each row reads.
const READ: [&str; 3] = ["get", "mget", "gets"];
const UPDATE: [&str; 2] = ["set", "fill"];

pub struct Table {
    tool: Tool,
    /// `-S`: mutilate prints its skips only then.
    skip: bool,
    cpu: Rc<RefCell<MachineCpu>>,
}

impl Table {
    pub fn new(tool: Tool, skip: bool) -> Self {
        // Started now for a scan or search, whose runs call no `begin`.
        let mut cpu = MachineCpu::default();
        cpu.start();
        Table {
            tool,
            skip,
            cpu: Rc::new(RefCell::new(cpu)),
        }
    }
}

impl Presenter for Table {
    fn begin(&mut self, _spec: &crate::spec::RunSpec) {
        self.cpu.borrow_mut().start();
    }

    fn interval(&mut self, _s: &crate::stats::IntervalSummary) {
        self.cpu.borrow_mut().sample();
    }

    fn text(&self) -> Box<dyn Exporter> {
        Box::new(Render {
            tool: self.tool,
            skip: self.skip,
            cpu: self.cpu.clone(),
        })
    }
}

struct Render {
    tool: Tool,
    skip: bool,
    cpu: Rc<RefCell<MachineCpu>>,
}

impl Exporter for Render {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let r = runs.first().ok_or(RenderError::NoRun)?;
        // Both tools print nothing after --loadonly.
        if r.spec.key_space.preload == LoadMode::LoadOnly {
            return Ok(Vec::new());
        }
        let mut out = self.header("");
        self.rows(&mut out, r)?;
        // The master's probe connections are requests too (mutilate
        // counts the master's and every agent's).
        // Error replies are no throughput: QPS counts answered requests.
        let probe = |ops: &[&str]| r.measure.as_ref().map_or(0, |m| answered(&m.ops, ops));
        let gets = answered(&r.ops, &READ) + probe(&READ);
        let sets = answered(&r.ops, &UPDATE) + probe(&UPDATE);
        self.totals(&mut out, r, gets, sets);
        Ok(out.into_bytes())
    }

    fn takes_curve(&self) -> bool {
        true
    }

    /// `--scan`: the header with QPS and target, then each rate's read row
    /// with its achieved QPS and the rate asked for. `--search`: the
    /// table of the answer's last run, as the tools print their last.
    fn render_curve(&self, curve: &Curve) -> Result<Vec<u8>, RenderError> {
        let mut out = String::new();
        match curve.kind {
            CurveKind::Scan => {
                out = self.header(&format!(" {:>8} {:>8}", "QPS", "target"));
                // A failed run measured nothing to print (the error says why).
                let measured = curve.points.iter().zip(&curve.runs);
                for (p, r) in measured.filter(|(_, r)| r.failure.is_none()) {
                    let read = sum(&r.ops, &READ)?;
                    let (cols, _) = self.columns();
                    row(
                        &mut out,
                        "read",
                        &read,
                        1e3,
                        cols,
                        self.tool == Tool::MemcachePerf,
                    );
                    out.pop();
                    let _ = writeln!(out, " {:8.1} {:8}", p.achieved_rate, p.offered_rate as u64);
                }
                if self.tool == Tool::MemcachePerf {
                    self.cpu_line(&mut out);
                }
            }
            CurveKind::Search => {
                let answer = curve.answer.and_then(|a| {
                    curve
                        .points
                        .iter()
                        .zip(&curve.runs)
                        .rev()
                        .find(|(p, _)| p.offered_rate == a)
                });
                if let Some((_, r)) = answer {
                    return self.render(std::slice::from_ref(r));
                }
            }
        }
        Ok(out.into_bytes())
    }
}

impl Render {
    /// The percentiles of a row, and the header's labels.
    fn columns(&self) -> (&'static [f64], &'static [&'static str]) {
        if self.tool == Tool::MemcachePerf {
            (
                &[
                    5.0, 10.0, 50.0, 67.0, 75.0, 80.0, 85.0, 90.0, 95.0, 99.0, 99.9, 99.99,
                ],
                &[
                    "#type", "avg", "std", "min", "p5", "p10", "p50", "p67", "p75", "p80", "p85",
                    "p90", "p95", "p99", "p999", "p9999",
                ],
            )
        } else {
            (
                &[1.0, 5.0, 10.0, 90.0, 95.0, 99.0],
                &[
                    "#type", "avg", "min", "1st", "5th", "10th", "90th", "95th", "99th",
                ],
            )
        }
    }

    /// The header line, with `extra` columns after the tool's.
    fn header(&self, extra: &str) -> String {
        let (_, labels) = self.columns();
        let mut out = format!("{:<7}", labels[0]);
        for l in &labels[1..] {
            let _ = write!(out, " {l:>7}");
        }
        out.push_str(extra);
        out.push('\n');
        out
    }

    /// The read, update and op_q rows: latencies in µs, op_q in requests.
    /// With probe connections (-C/-Q/-D), the latencies are theirs, as
    /// mutilate's are its master's.
    fn rows(&self, out: &mut String, r: &RunResult) -> Result<(), RenderError> {
        let (cols, _) = self.columns();
        let std = self.tool == Tool::MemcachePerf;
        let ops = r.measure.as_ref().map_or(&r.ops, |m| &m.ops);
        row(out, "read", &sum(ops, &READ)?, 1e3, cols, std);
        row(out, "update", &sum(ops, &UPDATE)?, 1e3, cols, std);
        let op_q = r.client.op_queue_hdr.decode()?;
        row(out, "op_q", &op_q, 1.0, cols, std);
        Ok(())
    }

    fn cpu_line(&self, out: &mut String) {
        let mut cpu = self.cpu.borrow_mut();
        cpu.sample();
        let (avg, min, max) = cpu.summary();
        let _ = writeln!(
            out,
            "CPU Usage Stats (avg/min/max): {avg:.2}%,{min:.2}%,{max:.2}%"
        );
    }
}

impl Render {
    fn totals(&self, out: &mut String, r: &RunResult, gets: u64, sets: u64) {
        let secs = r.duration_s.max(1e-9);
        let total = gets + sets;
        let qps = |out: &mut String, name: &str, n: u64| {
            let _ = writeln!(
                out,
                "{name} = {:.1} ({n} / {:.1}s)\n",
                n as f64 / secs,
                r.duration_s
            );
        };
        qps(out, "\nTotal QPS", total);
        // mutilate counts an error reply as a get or set done: its figure,
        // named, beside mcbench's (which leaves them out).
        let replied: u64 = ["error", "client_error", "server_error", "auth_error"]
            .iter()
            .filter_map(|k| r.responses.get(*k))
            .sum();
        if replied > 0 {
            let name = "Total QPS with error replies, as mutilate counts them";
            qps(out, name, total + replied);
        }
        let looked_up = r.gets.hits + r.gets.misses;
        let _ = writeln!(
            out,
            "Misses = {} ({:.1}%)",
            r.gets.misses,
            percent(r.gets.misses, looked_up)
        );
        // Arrivals never sent (dropped as too many waited, or still
        // waiting at -t) are skipped transactions, not server errors.
        let class = |name: &str| r.errors.get(name).copied().unwrap_or(0);
        let dropped = class("client_overload");
        let skipped = r.client.skips + dropped + class("unsent");
        // Neither tool has a line for errors: one in their style, only
        // when there were any (the counts are mcbench's `errors`).
        let errors = (r.total.errors + r.measure.as_ref().map_or(0, |m| m.total.errors))
            .saturating_sub(dropped);
        if errors > 0 {
            let _ = writeln!(
                out,
                "Errors = {errors} ({:.1}%)",
                percent(errors, errors + total)
            );
        }
        if self.tool == Tool::MemcachePerf || self.skip || skipped > 0 {
            let _ = writeln!(
                out,
                "Skipped TXs = {skipped} ({:.1}%)",
                percent(skipped, skipped + total)
            );
        }
        out.push('\n');
        for (what, bytes) in [("RX", r.bytes.rx), ("TX", r.bytes.tx)] {
            let _ = writeln!(
                out,
                "{what} {bytes:10} bytes : {:6.1} MB/s",
                bytes as f64 / 1024.0 / 1024.0 / secs
            );
        }
        if self.tool == Tool::MemcachePerf {
            self.cpu_line(out);
        }
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The requests of `ops` answered without an error reply.
fn answered(summaries: &BTreeMap<String, OpSummary>, ops: &[&str]) -> u64 {
    ops.iter()
        .filter_map(|op| summaries.get(*op))
        .map(|o| o.ok)
        .sum()
}

/// The latency histograms of `ops`, added.
fn sum(
    summaries: &BTreeMap<String, OpSummary>,
    ops: &[&str],
) -> Result<Histogram<u64>, RenderError> {
    Ok(Hdr::sum(
        ops.iter()
            .filter_map(|op| summaries.get(*op))
            .map(|o| &o.latency_hdr),
    )?)
}

/// One row: avg, (std,) min, then the percentiles, each `h`'s value
/// divided by `unit`; zeros for an empty histogram, as the tools print.
fn row(out: &mut String, tag: &str, h: &Histogram<u64>, unit: f64, cols: &[f64], std: bool) {
    let mut values = vec![h.mean() / unit];
    if std {
        values.push(h.stdev() / unit);
    }
    values.push(h.min() as f64 / unit);
    for p in cols {
        values.push(h.value_at_quantile(p / 100.0) as f64 / unit);
    }
    let _ = write!(out, "{tag:<7}");
    for v in values {
        let v = if h.is_empty() { 0.0 } else { v };
        let _ = write!(out, " {v:7.1}");
    }
    out.push('\n');
}

/// memcache-perf's CPU figure: the whole machine's busy share (from
/// /proc/stat's first line), per sample since the previous one, %.
#[derive(Default)]
struct MachineCpu {
    last: Option<(u64, u64)>,
    samples: Vec<f64>,
}

impl MachineCpu {
    /// Samples from now on.
    fn start(&mut self) {
        self.samples.clear();
        self.last = read_proc_stat();
    }

    fn sample(&mut self) {
        let Some((busy, all)) = read_proc_stat() else {
            return;
        };
        if let Some((b0, a0)) = self.last {
            if all > a0 {
                self.samples
                    .push(100.0 * (busy - b0.min(busy)) as f64 / (all - a0) as f64);
            }
        }
        self.last = Some((busy, all));
    }

    fn summary(&self) -> (f64, f64, f64) {
        if self.samples.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let avg = self.samples.iter().sum::<f64>() / self.samples.len() as f64;
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.samples.iter().copied().fold(0.0, f64::max);
        (avg, min, max)
    }
}

/// (user + nice + system, user + nice + system + idle) jiffies, as
/// memcache-perf reads them.
fn read_proc_stat() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(4)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let busy = f.first()? + f.get(1)? + f.get(2)?;
    Some((busy, busy + f.get(3)?))
}
