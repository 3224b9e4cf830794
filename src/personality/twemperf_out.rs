//! twemperf mcperf's statistics block (Total, Connection, Request,
//! Response, Errors, CPU, Net I/O), on stderr as mcperf prints it, from
//! mcbench's result. Percentiles are read from the kept histograms.

use crate::report::RenderError;

use crate::app::Presenter;
use crate::report::Exporter;
use crate::result::{Quantiles, RunResult, SizeSummary};
use hdrhistogram::Histogram;
use std::fmt::Write;

pub struct Twemperf {
    /// `-H`: the response-time histogram in 1 ms bins.
    pub histogram: bool,
}

impl Presenter for Twemperf {
    fn interval(&mut self, _s: &crate::stats::IntervalSummary) {}

    fn text(&self) -> Box<dyn Exporter> {
        Box::new(Block {
            histogram: self.histogram,
        })
    }

    fn to_stderr(&self) -> bool {
        true
    }
}

struct Block {
    histogram: bool,
}

impl Exporter for Block {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let r = runs.first().ok_or(RenderError::NoRun)?;
        let mut out = String::new();
        let delta = r.duration_s.max(1e-9);
        let c = &r.connections;
        let requests = c.request_size.count;
        let quiet = quiet(r);
        let rsp = |k: &str| r.responses.get(k).copied().unwrap_or(0);
        // With -q only errors are answered (mcbench's fences are its own).
        let error_replies = rsp("error") + rsp("client_error") + rsp("server_error");
        let responses = if quiet {
            error_replies
        } else {
            c.response_size.count
        };
        let _ = writeln!(
            out,
            "\nTotal: connections {} requests {requests} responses {responses} test-duration {:.3} s",
            c.connects, r.duration_s
        );
        if c.connects > 0 {
            let _ = writeln!(
                out,
                "\nConnection rate: {:.1} conn/s ({:.1} ms/conn <= {} concurrent connections)",
                c.connects as f64 / delta,
                1e3 * delta / c.connects as f64,
                c.max_open
            );
            ms_line(&mut out, "Connection time [ms]", &c.lifetime_us);
            ms_line(&mut out, "Connect time [ms]", &c.connect_time_us);
        }
        if requests > 0 {
            let _ = writeln!(
                out,
                "\nRequest rate: {:.1} req/s ({:.1} ms/req)",
                requests as f64 / delta,
                1e3 * delta / requests as f64
            );
            size_line(&mut out, "Request size [B]", &c.request_size);
        }
        if quiet {
            quiet_lines(&mut out, r, requests, error_replies)?;
        } else if responses > 0 {
            self.responses(&mut out, r, delta)?;
        }
        errors(&mut out, r);
        let (user, sys) = (r.client.cpu_user_s, r.client.cpu_sys_s);
        let _ = writeln!(
            out,
            "\nCPU time [s]: user {user:.2} system {sys:.2} (user {:.1}% system {:.1}% total {:.1}%)",
            100.0 * user / delta,
            100.0 * sys / delta,
            100.0 * (user + sys) / delta
        );
        net_io(&mut out, r, delta);
        out.push('\n');
        Ok(out.into_bytes())
    }
}

impl Block {
    fn responses(&self, out: &mut String, r: &RunResult, delta: f64) -> Result<(), RenderError> {
        let c = &r.connections;
        let n = c.response_size.count;
        let _ = writeln!(
            out,
            "\nResponse rate: {:.1} rsp/s ({:.1} ms/rsp)",
            n as f64 / delta,
            1e3 * delta / n as f64
        );
        size_line(out, "Response size [B]", &c.response_size);
        ms_line(out, "Response time [ms]", &r.total.latency_us);
        let h = r.total.latency_hdr.decode()?;
        if self.histogram {
            histogram(out, &h);
        }
        let p = |q: f64| crate::result::percentile_us(&h, q) / 1e3;
        let _ = writeln!(
            out,
            "Response time [ms]: p25 {:.1} p50 {:.1} p75 {:.1}",
            p(25.0),
            p(50.0),
            p(75.0)
        );
        let _ = writeln!(
            out,
            "Response time [ms]: p95 {:.1} p99 {:.1} p999 {:.1}",
            p(95.0),
            p(99.0),
            p(99.9)
        );
        out.push_str(
            "  (mcbench's percentiles are exact; mcperf's own are whole 1 ms bins, \
             never below 1.0, and its p75 is the 70th)\n",
        );
        let rsp = |k: &str| r.responses.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "Response type: stored {} not_stored {} exists {} not_found {}",
            rsp("stored"),
            rsp("not_stored"),
            rsp("exists"),
            rsp("not_found")
        );
        let _ = writeln!(
            out,
            "Response type: num {} deleted {} end {} value {}",
            rsp("num"),
            rsp("deleted"),
            rsp("end"),
            rsp("value")
        );
        error_types(out, r);
        Ok(())
    }
}

/// mcperf's line of error replies by type.
fn error_types(out: &mut String, r: &RunResult) {
    let rsp = |k: &str| r.responses.get(k).copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "Response type: error {} client_error {} server_error {}",
        rsp("error"),
        rsp("client_error"),
        rsp("server_error")
    );
}

/// `-q` with a method that has a quiet form: the server answers none of
/// its requests, so, as mcperf, none is counted as a response.
fn quiet(r: &RunResult) -> bool {
    let spec = &r.spec;
    spec.request.noreply
        && crate::workload::OpKind::ALL
            .iter()
            .filter(|op| spec.workload.mix.share_of(**op) > 0.0)
            .all(|op| spec.target.protocol.supports_noreply(op.cmd()))
}

/// What `-q` leaves to say: the requests no reply came for, timed by
/// mcbench to a fence (mcperf cannot time them), and the errors the server
/// still sent.
fn quiet_lines(
    out: &mut String,
    r: &RunResult,
    requests: u64,
    errors: u64,
) -> Result<(), RenderError> {
    let h = r.total.latency_hdr.decode()?;
    let p = |q: f64| crate::result::percentile_us(&h, q) / 1e3;
    let _ = writeln!(
        out,
        "\nNoreply: {} requests without a reply; timed to a fence [ms]: avg {:.1} p50 {:.1} p99 {:.1} max {:.1}",
        requests.saturating_sub(errors),
        r.total.latency_us.mean / 1e3,
        p(50.0),
        p(99.0),
        r.total.latency_us.max / 1e3
    );
    if errors > 0 {
        error_types(out, r);
    }
    Ok(())
}

fn ms_line(out: &mut String, what: &str, q: &Quantiles) {
    let _ = writeln!(
        out,
        "{what}: avg {:.1} min {:.1} max {:.1} stddev {:.2}",
        q.mean / 1e3,
        q.min / 1e3,
        q.max / 1e3,
        q.stdev / 1e3
    );
}

fn size_line(out: &mut String, what: &str, s: &SizeSummary) {
    let _ = writeln!(
        out,
        "{what}: avg {:.1} min {:.1} max {:.1} stddev {:.2}",
        s.mean, s.min as f64, s.max as f64, s.stdev
    );
}

/// mcperf's `-H`: each non-empty 1 ms bin (latency rounded to the nearest
/// ms) as "start count", a ':' line before a bin after a gap, and one at
/// the end.
fn histogram(out: &mut String, h: &Histogram<u64>) {
    let mut bins: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for v in h.iter_recorded() {
        let ms = (h.median_equivalent(v.value_iterated_to()) as f64 / 1e6).round() as u64;
        *bins.entry(ms).or_default() += v.count_at_value();
    }
    let _ = writeln!(out, "Response time histogram [ms]:");
    let mut prev: Option<u64> = None;
    for (&ms, &count) in &bins {
        if ms > 0 && prev != Some(ms - 1) {
            let _ = writeln!(out, "{:>14}", ':');
        }
        let _ = writeln!(out, "{:16.1} {count}", ms as f64);
        prev = Some(ms);
    }
    let _ = writeln!(out, "{:>14}", ':');
}

fn errors(out: &mut String, r: &RunResult) {
    let e = |k: &str| r.connections.errors.get(k).copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "\nErrors: total {} client-timo {} socket-timo {} connrefused {} connreset {}",
        r.connections.failures(),
        e("client_timo"),
        e("socket_timo"),
        e("connrefused"),
        e("connreset")
    );
    let _ = writeln!(
        out,
        "Errors: fd-unavail {} ftab-full {} addrunavail {} other {}",
        e("fd_unavail"),
        e("ftab_full"),
        e("addrunavail"),
        e("other")
    );
}

fn net_io(out: &mut String, r: &RunResult, delta: f64) {
    let total = (r.bytes.tx + r.bytes.rx) as f64;
    if total == 0.0 {
        return;
    }
    const KB: f64 = 1024.0;
    let (scaled, unit) = match total {
        t if t <= KB => (t, "B"),
        t if t <= KB * KB => (t / KB, "KB"),
        t if t <= KB * KB * KB => (t / KB / KB, "MB"),
        t => (t / KB / KB / KB, "GB"),
    };
    let _ = writeln!(
        out,
        "Net I/O: bytes {scaled:.1} {unit} rate {:.1} KB/s ({:.1}*10^6 bps)",
        total / delta / KB,
        8e-6 * total / delta
    );
}
