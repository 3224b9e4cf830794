//! A scan's or a search's page: the points' table and the latency–
//! throughput curve (p50, p99, p99.9 and the SLO's percentile against the
//! achieved rate), then the first run's settings.

use crate::report::RenderError;

use super::charts::{self, style, Series};
use super::{esc, figure, head, Swatch};
use crate::result::{percentile_label, Curve, CurveKind};
use std::fmt::Write;

pub fn page(curve: &Curve) -> Result<Vec<u8>, RenderError> {
    let mut page = head(match curve.kind {
        CurveKind::Scan => "mcbench scan",
        CurveKind::Search => "mcbench search",
    });
    let _ = writeln!(
        page,
        "<section id=\"answer\">\n<p class=\"verdict\">{}</p>\n</section>",
        esc(&curve.outcome)
    );
    let lines = series(curve);
    let bound = curve.slo.map(|s| s.bound_us);
    let svg = charts::curve(&lines, bound)?;
    let extra: &[(&str, Swatch)] = match bound {
        Some(_) => &[("the SLO", Swatch::Rule)],
        None => &[],
    };
    super::section(&mut page, "curve", "Latency against throughput");
    figure(
        &mut page,
        "Latency against achieved throughput",
        &svg,
        &lines,
        extra,
    );
    points_table(&mut page, curve);
    page.push_str("</section>\n");
    if !curve.runs.is_empty() {
        super::settings::write(&mut page, &curve.runs[..1]);
    }
    page.push_str("</body>\n</html>\n");
    Ok(page.into_bytes())
}

fn points_table(page: &mut String, curve: &Curve) {
    page.push_str(
        "<h3>Points</h3>\n<div class=\"scroll\"><table>\n<tr><th>#</th><th>offered ops/s</th>\
         <th>achieved ops/s</th><th>latency of</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th>",
    );
    if let Some(p) = curve.extra_percentile() {
        let _ = write!(page, "<th>{} µs</th>", percentile_label(p));
    }
    page.push_str("<th>errors</th><th>verdict</th></tr>\n");
    for (i, p) in curve.points.iter().enumerate() {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td>",
            i + 1,
            p.offered_rate,
            p.achieved_rate,
            esc(&p.group),
            p.p50_us,
            p.p99_us,
            p.p999_us
        );
        if curve.extra_percentile().is_some() {
            let _ = write!(page, "<td>{:.1}</td>", p.slo_us.unwrap_or(f64::NAN));
        }
        let verdict = p.verdict.map_or("-".to_string(), |v| v.to_string());
        let why = p.why.as_deref().map_or(String::new(), |w| format!(": {w}"));
        let repeat = if p.repeat { " (repeat)" } else { "" };
        let _ = writeln!(
            page,
            "<td>{}</td><td>{}{repeat}{}</td></tr>",
            p.errors,
            verdict,
            esc(&why)
        );
    }
    page.push_str("</table></div>\n");
}

/// p50, p99, p99.9 (and the SLO's percentile when it is another) against
/// the achieved rate, in the order of the offered rates: past saturation
/// the line turns back, as the achieved rate falls while latency grows.
fn series(curve: &Curve) -> Vec<Series> {
    let mut points: Vec<_> = curve.points.iter().collect();
    points.sort_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate));
    let mut out: Vec<Series> = [("p50", 0), ("p99", 1), ("p99.9", 2)]
        .into_iter()
        .map(|(name, i)| Series {
            label: name.to_string(),
            style: style(0, i, 1),
            points: points
                .iter()
                .map(|p| {
                    let y = [p.p50_us, p.p99_us, p.p999_us][i];
                    (p.achieved_rate, y.max(1e-3))
                })
                .collect(),
        })
        .collect();
    if let Some(percentile) = curve.extra_percentile() {
        out.push(Series {
            label: percentile_label(percentile),
            style: style(0, 3, 1),
            points: points
                .iter()
                .filter_map(|p| p.slo_us.map(|y| (p.achieved_rate, y.max(1e-3))))
                .collect(),
        });
    }
    out
}
