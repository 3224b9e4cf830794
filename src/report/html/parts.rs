//! The latency taken apart: per run and op type, one stacked bar per
//! percentile, its four parts (the mean over the requests at that
//! percentile) side by side in proportion, and their figures beside it.
//! Plain HTML and CSS: each bar is read and printed without a chart.

use super::{esc, label};
use crate::result::{percentile_label, LatencyParts, RunResult};
use crate::stats::parts::PART_LABELS;
use std::fmt::Write;

/// One colour per part: the client's own in warm colours, the network
/// and server in blue.
const COLOURS: [&str; 4] = ["#D62728", "#FF7F0E", "#1F77B4", "#9467BD"];

pub fn write(page: &mut String, runs: &[RunResult]) {
    super::section(page, "parts", "Latency taken apart");
    page.push_str(
        "<p>Where each request's time went, by the kernel's own stamps: \
         <b>client queue</b> (intended send to the send call), <b>send path</b> \
         (to the transmit stamp), <b>network + server</b> (to the receive stamp of the \
         answer's last byte) and <b>client receive</b> (to the answer parsed). Each bar is \
         the mean of each part over the requests at that percentile; the four add up to \
         their latency.</p>\n<ul class=\"legend\">",
    );
    for (label, colour) in PART_LABELS.iter().zip(COLOURS) {
        let _ = write!(
            page,
            "<li><svg class=\"swatch\" width=\"34\" height=\"12\" aria-hidden=\"true\">\
             <rect width=\"34\" height=\"12\" fill=\"{colour}\"/></svg>{label}</li>"
        );
    }
    page.push_str("</ul>\n");
    for (i, r) in runs.iter().enumerate() {
        run(page, i, r, runs.len());
    }
    page.push_str("</section>\n");
}

fn run(page: &mut String, i: usize, r: &RunResult, runs: usize) {
    let name = label(i, r);
    let Some(total) = &r.total.latency_parts else {
        let why = r
            .spec
            .latency_parts_blocker()
            .unwrap_or(match r.total.count {
                0 => "no request was answered",
                _ => "the kernel stamped none of the requests",
            });
        let _ = writeln!(page, "<p>{}: not measured ({}).</p>", esc(&name), esc(why));
        return;
    };
    let ops: Vec<(&str, &LatencyParts, u64)> = (r.ops.iter())
        .filter_map(|(n, s)| Some((n.as_str(), s.latency_parts.as_ref()?, s.count)))
        .collect();
    let shown = match ops.len() {
        1 => ops,
        _ => (ops.into_iter())
            .chain([("total", total, r.total.count)])
            .collect(),
    };
    for (op, parts, count) in shown {
        let title = match runs {
            1 => op.to_string(),
            _ => format!("{name} · {op}"),
        };
        table(page, &title, parts, (count, r.spec.stamp_every()));
    }
}

/// One op type's table: `count` its requests, of which the kernel stamped
/// those of one write in `every`.
fn table(page: &mut String, title: &str, parts: &LatencyParts, (count, every): (u64, u32)) {
    let _ = write!(
        page,
        "<h3>{}</h3>\n<div class=\"scroll\"><table class=\"parts\">\n<tr><th>percentile</th>\
         <th>latency, µs</th><th>made of</th>",
        esc(title)
    );
    for label in PART_LABELS {
        let _ = write!(page, "<th>{label}, µs</th>");
    }
    page.push_str("<th>requests</th></tr>\n");
    for at in &parts.at {
        let values = at.mean_us.values();
        let sum: f64 = values.iter().sum();
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{:.1}</td><td class=\"stack\"><div class=\"stack\">",
            percentile_label(at.percentile),
            at.latency_us
        );
        for ((v, colour), label) in values.iter().zip(COLOURS).zip(PART_LABELS) {
            let width = if sum > 0.0 { 100.0 * v / sum } else { 0.0 };
            let _ = write!(
                page,
                "<span style=\"width:{width:.2}%;background:{colour}\" title=\"{label}: {v:.1} µs\"></span>"
            );
        }
        page.push_str("</div></td>");
        for v in values {
            let _ = write!(page, "<td>{v:.1}</td>");
        }
        let _ = writeln!(page, "<td>{}</td></tr>", at.requests);
    }
    let sampled = match every {
        1 => String::new(),
        n => format!(", those of 1 in {n} writes, at random"),
    };
    let _ = writeln!(
        page,
        "</table></div>\n<p class=\"note\">{} of {count} requests stamped{sampled}.</p>",
        parts.requests
    );
}
