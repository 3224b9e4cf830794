//! The numbers behind the charts: per op type, count, rates, every
//! percentile with its 95 % interval, max and errors by class; the client
//! (CPU, send lag, TLS); and the verdict on precision.

use crate::report::RenderError;

use super::{esc, label, section};
use crate::result::{percentile_label, percentile_us, RunResult};
use crate::stats::max_us;
use std::fmt::Write;

pub fn write(page: &mut String, runs: &[RunResult]) -> Result<(), RenderError> {
    section(page, "tables", "Tables");
    summary(page, runs)?;
    client(page, runs);
    for (i, r) in runs.iter().enumerate() {
        verdict(page, &label(i, r), r);
    }
    page.push_str("</section>\n");
    Ok(())
}

/// Per run and op type: count, ok/s, the run's percentiles, max, errors.
fn summary(page: &mut String, runs: &[RunResult]) -> Result<(), RenderError> {
    let pcts = &runs[0].percentiles;
    page.push_str(
        "<h3>Latency (intended send → response), µs</h3>\n<div class=\"scroll\"><table class=\"summary\">\n\
         <tr><th>run</th><th>op</th><th>requests</th><th>ok/s</th>",
    );
    for p in pcts {
        let _ = write!(page, "<th>{}</th>", percentile_label(*p));
    }
    page.push_str("<th>max</th><th>errors</th></tr>\n");
    for (i, r) in runs.iter().enumerate() {
        let measure = r.measure.iter().flat_map(|m| {
            m.ops
                .iter()
                .map(|(op, s)| (format!("measure: {op}"), s))
                .chain([("measure: total".to_string(), &m.total)])
        });
        let rows = r
            .ops
            .iter()
            .filter(|(_, s)| s.count > 0)
            .map(|(op, s)| (op.clone(), s))
            .chain([("total".to_string(), &r.total)])
            .chain(measure);
        for (op, s) in rows {
            let h = s.latency_hdr.decode()?;
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td>",
                esc(&label(i, r)),
                esc(&op),
                s.count,
                s.ok_rate
            );
            for (j, p) in pcts.iter().enumerate() {
                // The value, then its 95 % interval beneath it.
                let ci = s
                    .latency_ci
                    .get(j)
                    .filter(|e| e.percentile == *p)
                    .map_or(String::new(), |e| {
                        format!("<br><small>{}</small>", esc(&e.interval_text()))
                    });
                let _ = write!(page, "<td>{:.1}{ci}</td>", percentile_us(&h, *p));
            }
            let _ = writeln!(page, "<td>{:.1}</td><td>{}</td></tr>", max_us(&h), s.errors);
        }
    }
    page.push_str(
        "</table></div>\n<p><small>Under each percentile: its 95 % interval (order statistics, \
         their ranks those of the samples' worth in independent ones where the run's batches \
         show the tail clustered or drifting); ≥ X: no finite upper bound.</small></p>\n",
    );
    Ok(())
}

/// The client's side: errors by class, CPU, send lag, TLS.
fn client(page: &mut String, runs: &[RunResult]) {
    page.push_str(
        "<h3>The client</h3>\n<div class=\"scroll\"><table class=\"client\">\n<tr><th>run</th>\
         <th>errors by class</th><th>CPU, ns/op</th><th>send lag p99, µs</th><th>TLS</th></tr>\n",
    );
    for (i, r) in runs.iter().enumerate() {
        let errors: Vec<String> = r
            .errors
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(class, n)| format!("{class} {n}"))
            .collect();
        let lag = if r.client.open_loop {
            format!("{:.1}", r.client.send_lag_us.p99)
        } else {
            "closed loop".into()
        };
        let tls = crate::report::text_settings::tls_line(r).unwrap_or_else(|| "no".into());
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{:.0}</td><td>{lag}</td><td>{}</td></tr>",
            esc(&label(i, r)),
            esc(&if errors.is_empty() {
                "none".into()
            } else {
                errors.join(", ")
            }),
            r.client.cpu_ns_per_op,
            esc(&tls)
        );
    }
    page.push_str("</table></div>\n");
}

/// The verdict on precision: one line per judged percentile, then
/// stationarity.
fn verdict(page: &mut String, run: &str, r: &RunResult) {
    let Some(v) = &r.verdict else { return };
    let _ = writeln!(
        page,
        "<h3>{}: verdict on precision</h3>\n<div class=\"scroll\"><table>\n<tr><th>percentile</th><th>µs</th><th>95 % interval</th><th>± share</th><th>target</th><th>tail</th><th>met</th></tr>",
        esc(run)
    );
    for c in &v.checks {
        let e = &c.estimate;
        let met = if c.met {
            "yes".to_string()
        } else {
            let why: Vec<&str> = c.short_of.iter().map(|s| s.text()).collect();
            format!("NO ({})", why.join(", "))
        };
        let tail = match e.episodes {
            Some(n) => format!("{} samples in {n} episodes", e.tail_samples),
            None => format!(
                "{} samples, worth {:.0} independent",
                e.tail_samples,
                e.independent_tail()
            ),
        };
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>±{:.0} %</td><td>{}</td><td>{}</td></tr>",
            percentile_label(e.percentile),
            e.value_us,
            esc(&e.interval_text()),
            c.relative_half_width
                .map_or("—".to_string(), |h| format!("{:.1} %", h * 100.0)),
            c.target * 100.0,
            esc(&tail),
            esc(&met)
        );
    }
    page.push_str("</table></div>\n");
    let st = &v.stationarity;
    let _ = writeln!(
        page,
        "<p>Stationarity over {} intervals: {}. {}</p>",
        st.intervals,
        match st.stationary {
            Some(true) => "no trend, halves agree",
            Some(false) => "NOT stationary",
            None => "too few intervals to judge",
        },
        if v.long_enough {
            "Long enough."
        } else {
            "NOT long enough."
        }
    );
}
