//! The text formats: Prometheus's exposition format 0.0.4, what any
//! Prometheus, `promtool check metrics` and `curl` read, and OpenMetrics
//! 1.0.0, which a Prometheus without native histograms asks for first.
//! They differ here only in a counter family's name (OpenMetrics names it
//! without `_total`, its samples keep it), the help's escapes and the
//! closing `# EOF`. Native histograms have no text form: their classic
//! buckets stand for them.

use super::family::{Family, Kind, Value};
use std::fmt::Write;

/// Which text format is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Prometheus's text format, version 0.0.4.
    Prometheus,
    /// OpenMetrics text, version 1.0.0.
    OpenMetrics,
}

impl Dialect {
    /// The `Content-Type` of its text.
    pub fn content_type(self) -> &'static str {
        match self {
            Dialect::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Dialect::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

pub fn render(families: &[Family], dialect: Dialect) -> String {
    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        header(&mut out, f, dialect);
        for s in &f.samples {
            match s.value {
                Value::Number(v) => line(&mut out, f.name, "", &s.labels, None, v),
                Value::Histogram(b, bounds) => {
                    for (bound, n) in bounds.iter().zip(b.cumulative()) {
                        let le = number(*bound);
                        line(&mut out, f.name, "_bucket", &s.labels, Some(&le), n as f64);
                    }
                    line(
                        &mut out,
                        f.name,
                        "_bucket",
                        &s.labels,
                        Some("+Inf"),
                        b.count() as f64,
                    );
                    line(&mut out, f.name, "_sum", &s.labels, None, b.sum());
                    line(
                        &mut out,
                        f.name,
                        "_count",
                        &s.labels,
                        None,
                        b.count() as f64,
                    );
                }
            }
        }
    }
    if dialect == Dialect::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// A family's `# HELP` and `# TYPE` lines.
fn header(out: &mut String, f: &Family, dialect: Dialect) {
    let kind = match f.kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "histogram",
    };
    let (name, help) = match dialect {
        Dialect::Prometheus => (f.name, escape_help(f.help)),
        Dialect::OpenMetrics => {
            let name = match f.kind {
                Kind::Counter => f.name.strip_suffix("_total").unwrap_or(f.name),
                _ => f.name,
            };
            (name, escape_value(f.help))
        }
    };
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn line(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: &[(&str, String)],
    le: Option<&str>,
    value: f64,
) {
    let _ = write!(out, "{name}{suffix}{{");
    let le = le.map(|le| ("le", le.to_owned()));
    for (i, (k, v)) in labels.iter().chain(le.iter()).enumerate() {
        let comma = if i == 0 { "" } else { "," };
        let _ = write!(out, "{comma}{k}=\"{}\"", escape_value(v));
    }
    let _ = writeln!(out, "}} {}", number(value));
}

/// A sample value or bound as Go's `strconv.FormatFloat(v, 'g', -1, 64)`
/// would write it closely enough for any parser: Rust's shortest
/// round-trip form, with Prometheus's spelling of the infinities.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v:?}")
    }
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A help text: backslash and line feed escaped.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::histogram::Buckets;

    #[test]
    fn a_counter_and_a_histogram_as_the_format_spells_them() {
        let mut c = Family::new("x_total", Kind::Counter, "Things.\nMore");
        c.push(vec![("run", "a\"b\\c\nd".into())], Value::Number(3.0));
        let mut b = Buckets::new(2);
        let mut h = crate::stats::new_histogram();
        h.record(1_500).unwrap();
        b.add_ns(&h, &[1e-6, 1e-5]);
        let bounds = [1e-6, 1e-5];
        let mut hist = Family::new("y_seconds", Kind::Histogram, "Y.");
        hist.push(vec![("op", "get".into())], Value::Histogram(&b, &bounds));
        let text = render(&[c, hist], Dialect::Prometheus);
        let want = "# HELP x_total Things.\\nMore\n# TYPE x_total counter\n\
            x_total{run=\"a\\\"b\\\\c\\nd\"} 3.0\n\
            # HELP y_seconds Y.\n# TYPE y_seconds histogram\n\
            y_seconds_bucket{op=\"get\",le=\"1e-6\"} 0.0\n\
            y_seconds_bucket{op=\"get\",le=\"1e-5\"} 1.0\n\
            y_seconds_bucket{op=\"get\",le=\"+Inf\"} 1.0\n\
            y_seconds_sum{op=\"get\"} 1.5e-6\n\
            y_seconds_count{op=\"get\"} 1.0\n";
        assert_eq!(text, want);
    }

    #[test]
    fn openmetrics_names_a_counter_family_without_total_and_ends() {
        let mut c = Family::new("x_total", Kind::Counter, "A \"thing\".");
        c.push(vec![("run", "a".into())], Value::Number(3.0));
        let text = render(&[c], Dialect::OpenMetrics);
        let want = "# HELP x A \\\"thing\\\".\n# TYPE x counter\n\
            x_total{run=\"a\"} 3.0\n# EOF\n";
        assert_eq!(text, want);
    }

    #[test]
    fn a_family_without_samples_is_left_out() {
        let none = [Family::new("z", Kind::Gauge, "Z.")];
        assert_eq!(render(&none, Dialect::Prometheus), "");
        assert_eq!(render(&none, Dialect::OpenMetrics), "# EOF\n");
    }
}
