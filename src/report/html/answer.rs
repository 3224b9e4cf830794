//! The page's first screen: what was run, whether its numbers measure the
//! server, and the numbers (ok/s, err/s, p50, p99, p99.9 with their 95 %
//! intervals). Several runs: one table, a column per run, each figure
//! with its ratio to the first run's.

use crate::report::RenderError;

use super::{esc, label};
use crate::precision::Estimate;
use crate::result::{percentile_label, RunResult};
use std::fmt::Write;

/// The headline's percentiles.
const PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

pub fn write(page: &mut String, runs: &[RunResult]) -> Result<(), RenderError> {
    page.push_str("<section id=\"answer\">\n");
    match runs {
        [r] => one(page, r),
        _ => several(page, runs),
    }
    for (i, r) in runs.iter().enumerate() {
        for w in &r.warnings {
            let who = if runs.len() > 1 {
                format!("{}: ", label(i, r))
            } else {
                String::new()
            };
            let _ = writeln!(
                page,
                "<p class=\"warn\">{}WARNING: {}</p>",
                esc(&who),
                esc(&w.to_string())
            );
        }
    }
    page.push_str("</section>\n");
    Ok(())
}

fn one(page: &mut String, r: &RunResult) {
    let name = r
        .spec
        .recording
        .label
        .as_ref()
        .map_or(String::new(), |_| format!("{} · ", label(0, r)));
    let _ = writeln!(
        page,
        "<p class=\"identity\">{}{}</p>",
        esc(&name),
        esc(&identity(r))
    );
    let (ok, words) = verdict(r);
    let _ = writeln!(
        page,
        "<p class=\"verdict {}\">{}</p>",
        if ok { "ok" } else { "bad" },
        esc(&words)
    );
    page.push_str("<div class=\"figures\">\n");
    let t = &r.total;
    figure(page, "ok_rate", "ok/s", &format!("{:.1}", t.ok_rate), None);
    figure(
        page,
        "error_rate",
        "errors/s",
        &format!("{:.1}", t.error_rate),
        None,
    );
    for p in PERCENTILES {
        let (_, text, below) = percentile(r, p);
        let name = format!("{} µs", percentile_label(p));
        figure(page, &percentile_label(p), &name, &text, below.as_deref());
    }
    page.push_str("</div>\n");
}

fn figure(page: &mut String, key: &str, name: &str, value: &str, below: Option<&str>) {
    let below = below.map_or(String::new(), |b| format!("<small>{}</small>", esc(b)));
    let _ = writeln!(
        page,
        "<div class=\"figure\" data-key=\"{key}\"><div class=\"name\">{}</div><div class=\"value\">{value}</div>{below}</div>",
        esc(name)
    );
}

/// Runs side by side: a row per figure, a column per run, and each
/// figure's ratio to the first run's.
fn several(page: &mut String, runs: &[RunResult]) {
    page.push_str("<div class=\"scroll\"><table class=\"headline\">\n<tr><th></th>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(page, "<th>{}</th>", esc(&label(i, r)));
    }
    page.push_str("</tr>\n");
    type Value = (f64, String, Option<String>);
    let mut row = |key: &str, name: &str, value: &dyn Fn(&RunResult) -> Value| {
        let _ = write!(page, "<tr data-key=\"{key}\"><td>{}</td>", esc(name));
        let first = value(&runs[0]).0;
        for (i, r) in runs.iter().enumerate() {
            let (v, text, below) = value(r);
            let ratio = if i > 0 && first > 0.0 {
                format!(" <small>({:.2}×)</small>", v / first)
            } else {
                String::new()
            };
            let below = below.map_or(String::new(), |b| format!("<br><small>{}</small>", esc(&b)));
            let _ = write!(
                page,
                "<td><span class=\"value\">{}</span>{ratio}{below}</td>",
                esc(&text)
            );
        }
        page.push_str("</tr>\n");
    };
    let plain = |v: f64| (v, format!("{v:.1}"), None);
    row("ok_rate", "ok/s", &|r| plain(r.total.ok_rate));
    row("error_rate", "errors/s", &|r| plain(r.total.error_rate));
    for p in PERCENTILES {
        let key = percentile_label(p);
        row(&key, &format!("{key} µs"), &|r| percentile(r, p));
    }
    page.push_str("<tr><td>verdict</td>");
    for r in runs {
        let (ok, words) = verdict(r);
        let class = if ok { "" } else { " class=\"warn\"" };
        let _ = write!(page, "<td{class}>{}</td>", esc(&words));
    }
    page.push_str("</tr>\n<tr><td>run</td>");
    for r in runs {
        let _ = write!(page, "<td>{}</td>", esc(&identity(r)));
    }
    page.push_str("</tr>\n</table></div>\n");
}

/// A total-latency percentile, µs: the value, as printed, and its 95 %
/// interval when the run has one. The estimate's where there is one
/// (censored samples counted): a percentile among requests never
/// answered is only known to be at least its lower bound.
fn percentile(r: &RunResult, p: f64) -> (f64, String, Option<String>) {
    let estimate: Option<&Estimate> = r.total.latency_ci.iter().find(|e| e.percentile == p);
    match estimate {
        Some(e) if e.censored => (
            e.lower_us,
            format!("≥ {:.1}", e.lower_us),
            Some("among requests never answered".into()),
        ),
        Some(e) => (
            e.value_us,
            format!("{:.1}", e.value_us),
            Some(format!("95 %: {}", e.interval_text())),
        ),
        None => {
            let q = &r.total.latency_us;
            let v = match p {
                50.0 => q.p50,
                99.0 => q.p99,
                _ => q.p999,
            };
            (v, format!("{v:.1}"), None)
        }
    }
}

/// Did the numbers measure the server? The same verdict as the text
/// report's, in a sentence.
fn verdict(r: &RunResult) -> (bool, String) {
    if let Some(sig) = &r.stopped_by {
        return (false, format!("Stopped by {sig}: partial results."));
    }
    match &r.failure {
        Some(why) => (
            false,
            format!("The run failed ({why}): these numbers measure no server's capacity."),
        ),
        None if r.client.client_bound => (
            false,
            "The client was the bottleneck: these numbers measure mcbench, not the server.".into(),
        ),
        None if !r.completed => (false, "The run did not complete.".into()),
        None => (
            true,
            "The client kept up: these numbers measure the server.".into(),
        ),
    }
}

/// `127.0.0.1:11211 · ascii over TCP · open loop at 20000 ops/s, 4
/// connections × depth 1 · 10.0 s measured · 2026-11-27 17:36:14 UTC`.
fn identity(r: &RunResult) -> String {
    let s = &r.spec;
    let servers = match (&r.embedded_server, r.servers.is_empty()) {
        (Some(v), _) => format!("{} (embedded {v})", r.servers.join(", ")),
        (None, true) => "embedded memcached".into(),
        (None, false) => r.servers.join(", "),
    };
    let mut parts = vec![servers, format!("protocol {}", s.target.protocol.name())];
    if let Some(t) = &r.tls {
        parts.push(match &t.version {
            Some(v) => format!("over {v}"),
            None => "over TLS".into(),
        });
    }
    let conns = format!(
        "{} connection(s)/server × depth {}",
        s.load.connections, s.load.depth
    );
    parts.push(match s.rate() {
        Some(rate) => format!("open loop at {rate} ops/s, {conns}"),
        None if s.open_loop() => format!("open loop at the trace's times, {conns}"),
        None => format!("closed loop, {conns}"),
    });
    parts.push(format!("{:.1} s measured", r.duration_s));
    if r.started_unix_s > 0.0 {
        parts.push(utc(r.started_unix_s));
    }
    parts.join(" · ")
}

/// `2026-11-27 17:36:14 UTC` from Unix seconds (the civil calendar from a
/// day count, after Howard Hinnant's `civil_from_days`: one function,
/// where a date crate would add a dependency for one line).
fn utc(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn unix_seconds_read_as_the_utc_date() {
        assert_eq!(super::utc(0.0), "1970-01-01 00:00:00 UTC");
        // `date -u -d @1795797374`.
        assert_eq!(super::utc(1_795_797_374.0), "2026-11-27 16:36:14 UTC");
        assert_eq!(super::utc(951_782_400.0), "2000-02-29 00:00:00 UTC");
    }
}
