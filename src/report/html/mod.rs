//! `--html`: one self-contained page (no script, font or style from the
//! network), read top to bottom: the answer (throughput, tail, the
//! verdict), the percentile spectrum, the latency taken apart, the run
//! over time, the servers' own
//! view, the tables, and the settings that differ from the defaults.
//! Several runs (`report A.json B.json --html F`, `run --each`) share one
//! set of charts, a colour per run, and a headline side by side.

use crate::report::RenderError;

mod answer;
mod charts;
mod curve;
mod parts;
mod servers;
mod settings;
mod spectrum;
mod tables;
mod time;

use super::Exporter;
use crate::result::RunResult;
use charts::{Series, Style};
use std::fmt::Write;

pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn render(&self, runs: &[RunResult]) -> Result<Vec<u8>, RenderError> {
        let mut page = head("mcbench report");
        answer::write(&mut page, runs)?;
        section(&mut page, "spectrum", "Latency by percentile");
        spectrum::write(&mut page, runs)?;
        page.push_str("</section>\n");
        parts::write(&mut page, runs);
        let t_end = time::axis_end(runs);
        section(&mut page, "time", "Over time");
        time::write(&mut page, runs, t_end)?;
        page.push_str("</section>\n");
        servers::write(&mut page, runs, t_end)?;
        tables::write(&mut page, runs)?;
        settings::write(&mut page, runs);
        page.push_str("</body>\n</html>\n");
        Ok(page.into_bytes())
    }

    fn takes_several(&self) -> bool {
        true
    }

    fn render_curve(&self, curve: &crate::result::Curve) -> Result<Vec<u8>, RenderError> {
        curve::page(curve)
    }

    fn takes_curve(&self) -> bool {
        true
    }
}

/// The page's head and style: charts and tables fit the width of the
/// screen (a phone's too) and of the printed page.
const STYLE: &str = "\
body { font-family: system-ui, sans-serif; color: #222; margin: 0 auto; padding: 0.8em; max-width: 1180px; }\n\
h1 { font-size: 1.5em; margin: 0.2em 0; }\n\
h2 { font-size: 1.2em; margin: 1.4em 0 0.4em; border-bottom: 1px solid #ddd; }\n\
h3 { font-size: 1em; margin: 0.8em 0 0.2em; }\n\
.identity { color: #555; margin: 0.2em 0 0.8em; }\n\
.verdict { font-size: 1.15em; font-weight: 600; padding: 0.5em 0.8em; border-radius: 4px; margin: 0.4em 0; background: #f2f2f2; }\n\
.verdict.ok { background: #e8f4ea; } .verdict.bad { background: #fbe9e7; color: #8a1c12; }\n\
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(9em, 1fr)); gap: 0.6em; margin: 0.6em 0; }\n\
.figure { border: 1px solid #ddd; border-radius: 4px; padding: 0.4em 0.6em; }\n\
.figure .name { color: #555; font-size: 0.85em; }\n\
.figure .value { font-size: 1.6em; font-weight: 600; }\n\
.figure small { display: block; color: #555; }\n\
.scroll { overflow-x: auto; }\n\
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.9em; }\n\
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; vertical-align: top; }\n\
th:first-child, td:first-child { text-align: left; }\n\
td.words { text-align: left; font-family: ui-monospace, monospace; }\n\
figure.chart { margin: 0.6em 0 1.4em; break-inside: avoid; }\n\
figure.chart figcaption { font-weight: 600; }\n\
svg.plot { width: 100%; height: auto; display: block; }\n\
ul.legend { list-style: none; padding: 0; margin: 0.2em 0; display: flex; flex-wrap: wrap; gap: 0.2em 1.4em; font-size: 0.9em; }\n\
ul.legend svg { vertical-align: middle; margin-right: 0.3em; }\n\
.warn { color: #a00; }\n\
td.stack { width: 40%; min-width: 10em; }\n\
div.stack { display: flex; height: 1em; -webkit-print-color-adjust: exact; print-color-adjust: exact; }\n\
div.stack span { display: block; height: 100%; }\n\
p.note { color: #555; font-size: 0.9em; margin-top: -0.6em; }\n\
@media print { body { max-width: none; } .verdict { border: 1px solid #999; } }\n";

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
}

fn section(page: &mut String, id: &str, title: &str) {
    let _ = writeln!(page, "<section id=\"{id}\">\n<h2>{title}</h2>");
}

/// What the page calls run `i`: its `--label`, else its servers (an
/// embedded server's address otherwise), `run N` before it when several
/// runs could share a name.
fn label(i: usize, r: &RunResult) -> String {
    let name = match (&r.spec.recording.label, r.servers.is_empty()) {
        (Some(l), _) => l.clone(),
        (None, false) => r.servers.join(", "),
        (None, true) => "embedded memcached".to_string(),
    };
    if r.spec.recording.label.is_some() {
        name
    } else {
        format!("run {}: {name}", i + 1)
    }
}

/// A chart with its title and its legend (outside the plotted area).
fn figure(page: &mut String, title: &str, svg: &str, series: &[Series], extra: &[(&str, Swatch)]) {
    let _ = write!(
        page,
        "<figure class=\"chart\">\n<figcaption>{}</figcaption>\n<ul class=\"legend\">",
        esc(title)
    );
    for s in series {
        let _ = write!(
            page,
            "<li>{}{}</li>",
            swatch(Swatch::Line(s.style)),
            esc(&s.label)
        );
    }
    for (text, what) in extra {
        let _ = write!(page, "<li>{}{}</li>", swatch(*what), esc(text));
    }
    let _ = writeln!(page, "</ul>\n{svg}</figure>");
}

/// A legend's sample of what the chart draws.
#[derive(Clone, Copy)]
enum Swatch {
    Line(Style),
    /// A thin black line (an SLO).
    Rule,
    /// A grey area.
    Shade,
}

fn swatch(what: Swatch) -> String {
    let body = match what {
        Swatch::Line(s) => {
            let plotters::style::RGBColor(r, g, b) = s.color;
            let dash = s
                .dash
                .array()
                .map_or(String::new(), |a| format!(" stroke-dasharray=\"{a}\""));
            format!(
                "<line x1=\"0\" y1=\"6\" x2=\"34\" y2=\"6\" stroke=\"#{r:02X}{g:02X}{b:02X}\" stroke-width=\"3\"{dash}/>"
            )
        }
        Swatch::Rule => {
            "<line x1=\"0\" y1=\"6\" x2=\"34\" y2=\"6\" stroke=\"#444\" stroke-width=\"1\"/>".into()
        }
        Swatch::Shade => {
            "<rect x=\"0\" y=\"0\" width=\"34\" height=\"12\" fill=\"#EBEBEB\"/>".into()
        }
    };
    format!("<svg class=\"swatch\" width=\"34\" height=\"12\" aria-hidden=\"true\">{body}</svg>")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
