//! The HTML report's charts, drawn as inline SVG by plotters: no script,
//! no font file, nothing fetched. Each chart scales to the page's width
//! (a `viewBox`); its legend is the page's (`super::figure`), outside the
//! plotted area, so that it never hides a line.

use crate::report::RenderError;

use plotters::prelude::*;

/// How a line is drawn: its colour and its dash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    pub color: RGBColor,
    pub dash: Dash,
}

/// A line's dash, set on the SVG as `stroke-dasharray` (plotters draws
/// solid lines only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    LongShort,
}

impl Dash {
    const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::LongShort];

    /// The SVG `stroke-dasharray`, in the chart's pixels.
    pub fn array(self) -> Option<&'static str> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some("9 5"),
            Dash::Dotted => Some("2 4"),
            Dash::LongShort => Some("12 4 3 4"),
        }
    }
}

/// One line of a chart: its legend, style and points.
pub struct Series {
    pub label: String,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
}

/// Series colours (Tableau 10).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// The style of line `k` of run `run` among `runs`. One run: a colour and
/// a dash per line (lighter colours past the palette's eight). Several:
/// every line of a run in the run's hue, lighter or darker line by line,
/// told apart by its dash too. Distinct up to 16 lines a run.
pub fn style(run: usize, k: usize, runs: usize) -> Style {
    let dash = Dash::ALL[k % Dash::ALL.len()];
    if runs <= 1 {
        let lighter = [0.0, 0.5][(k / PALETTE.len()) % 2];
        return Style {
            color: mix(PALETTE[k % PALETTE.len()], 255.0, lighter),
            dash,
        };
    }
    // Toward white (+) or black (−), by how much.
    const SHADES: [f64; 16] = [
        0.0, 0.45, -0.35, 0.7, 0.25, -0.2, 0.58, -0.5, 0.12, 0.35, -0.1, 0.8, -0.28, 0.64, -0.42,
        0.52,
    ];
    let shade = SHADES[k % SHADES.len()];
    let toward = if shade < 0.0 { 0.0 } else { 255.0 };
    Style {
        color: mix(PALETTE[run % PALETTE.len()], toward, shade.abs()),
        dash,
    }
}

/// `c` moved `share` of the way toward the grey level `toward`.
fn mix(c: RGBColor, toward: f64, share: f64) -> RGBColor {
    let m = |v: u8| (f64::from(v) + (toward - f64::from(v)) * share).round() as u8;
    RGBColor(m(c.0), m(c.1), m(c.2))
}

const SIZE: (u32, u32) = (960, 420);
const FONT: u32 = 17;

/// The latency percentile spectrum: x is 1/(1−p) on a log axis (labelled
/// as percentiles up to p99.999), y is µs on a log axis. `shade_from`
/// greys the percentiles beyond every line's samples; `slo` draws a
/// (1/(1−p), µs) bound.
pub fn spectrum(
    series: &[Series],
    shade_from: Option<f64>,
    slo: Option<(f64, f64)>,
) -> Result<String, RenderError> {
    let (lo, hi) = y_range(series, true);
    let (lo, hi) = match slo {
        Some((_, b)) => (lo.min(b / 1.5), hi.max(b * 1.5)),
        None => (lo, hi),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d((1f64..1e5f64).log_scale(), (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("µs")
            .label_style(("sans-serif", FONT))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.18))
            .y_labels(8)
            .x_label_formatter(&|x| percentile_name(*x))
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(err)?;
        if let Some(x) = shade_from.filter(|x| *x < 1e5) {
            chart
                .draw_series([Rectangle::new(
                    [(x, lo), (1e5, hi)],
                    BLACK.mix(0.08).filled(),
                )])
                .map_err(err)?;
        }
        if let Some((x, b)) = slo {
            let thin = BLACK.mix(0.7).stroke_width(1);
            chart
                .draw_series([
                    PathElement::new(vec![(1.0, b), (1e5, b)], thin),
                    PathElement::new(vec![(x, lo), (x, hi)], thin),
                ])
                .map_err(err)?;
        }
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(finish(svg, series))
}

/// A value over the run's time: s on x, from 0 to `t_end` (every chart of
/// a page on one time axis).
pub fn over_time(y_desc: &str, series: &[Series], t_end: f64) -> Result<String, RenderError> {
    let (_, hi) = y_range(series, false);
    let t_end = series
        .iter()
        .flat_map(|s| finite(&s.points).map(|p| p.0))
        .fold(if t_end < 1e15 { t_end.max(1e-3) } else { 1e-3 }, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, SIZE.1 * 3 / 4)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..t_end, 0f64..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time, s")
            .y_desc(y_desc)
            .y_label_formatter(&|y| tick(*y))
            .label_style(("sans-serif", FONT))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.18))
            .y_labels(8)
            .draw()
            .map_err(err)?;
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(finish(svg, series))
}

/// Latency (µs, log axis) against achieved throughput (ops/s): the
/// latency–throughput curve, each point marked; `bound` draws an SLO.
pub fn curve(series: &[Series], bound: Option<f64>) -> Result<String, RenderError> {
    let (lo, hi) = y_range(series, true);
    let (lo, hi) = match bound {
        Some(b) => (lo.min(b / 1.5), hi.max(b * 1.5)),
        None => (lo, hi),
    };
    let x_end = series
        .iter()
        .flat_map(|s| finite(&s.points).map(|p| p.0))
        .fold(1.0, f64::max)
        * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..x_end, (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("achieved throughput, ops/s")
            .y_desc("µs")
            .label_style(("sans-serif", FONT))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.18))
            .y_labels(8)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(err)?;
        if let Some(b) = bound {
            chart
                .draw_series([PathElement::new(
                    vec![(0.0, b), (x_end, b)],
                    BLACK.mix(0.7).stroke_width(1),
                )])
                .map_err(err)?;
        }
        for s in series {
            let color = s.style.color;
            chart
                .draw_series(finite(&s.points).map(|p| Circle::new(p, 4, color.filled())))
                .map_err(err)?;
        }
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(finish(svg, series))
}

/// Data lines are 2.5 px wide; every other line of a chart is thinner,
/// which is how `finish` finds them.
const DATA_WIDTH: u32 = 3;

fn draw<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    series: &[Series],
) -> Result<(), RenderError>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for s in series {
        chart
            .draw_series(LineSeries::new(
                finite(&s.points),
                s.style.color.stroke_width(DATA_WIDTH),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// The SVG as the page embeds it: `class="plot"` on the root (it scales
/// with the page), and each data line's dash. plotters draws a series
/// with points as one polyline of `DATA_WIDTH`, in the series' order, and
/// nothing for one without: the n-th such polyline is the n-th drawn
/// series.
fn finish(svg: String, series: &[Series]) -> String {
    let svg = svg.replacen("<svg ", "<svg class=\"plot\" role=\"img\" ", 1);
    let marker = format!("stroke-width=\"{DATA_WIDTH}\" points=");
    let mut drawn = series.iter().filter(|s| finite(&s.points).next().is_some());
    let mut parts = svg.split(&marker);
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let dash = drawn.next().and_then(|s| s.style.dash.array());
        if let Some(array) = dash {
            out.push_str(&format!("stroke-dasharray=\"{array}\" "));
        }
        out.push_str(&marker);
        out.push_str(part);
    }
    out
}

/// The points a chart can place: finite, and within what any figure of a
/// run can be (a saved result may hold anything).
fn finite(points: &[(f64, f64)]) -> impl Iterator<Item = (f64, f64)> + '_ {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && x.abs() < 1e15 && y.abs() < 1e15)
}

/// An axis label without trailing zeros: `5000`, `2.5`, `0.25`.
fn tick(v: f64) -> String {
    let s = match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 1.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    };
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => s,
    }
}

/// `x` = 1/(1−p) as the percentile it stands for: 10 → `p90`.
fn percentile_name(x: f64) -> String {
    crate::result::percentile_label(100.0 * (1.0 - 1.0 / x.max(1.0)))
}

/// The y range that holds every point (log: positive, with a margin).
fn y_range(series: &[Series], log: bool) -> (f64, f64) {
    let ys = series.iter().flat_map(|s| finite(&s.points).map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if log {
        let lo = if lo.is_finite() { lo.max(1e-3) } else { 1.0 };
        (lo / 1.5, hi.max(lo * 10.0) * 1.5)
    } else {
        (0.0, if hi > 0.0 { hi * 1.1 } else { 1.0 })
    }
}

fn err(e: impl std::fmt::Debug) -> RenderError {
    RenderError::Chart(format!("{e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_chart_differs_in_colour_and_a_runs_lines_in_dash() {
        for runs in 1..=8 {
            let lines = if runs == 1 { 16 } else { 8 };
            let styles: Vec<Style> = (0..runs)
                .flat_map(|run| (0..lines).map(move |k| style(run, k, runs)))
                .collect();
            for (i, a) in styles.iter().enumerate() {
                for b in &styles[i + 1..] {
                    assert_ne!(a.color, b.color, "{runs} runs");
                }
            }
            for run in 0..runs {
                let dashes: Vec<Dash> = (0..4).map(|k| style(run, k, runs).dash).collect();
                assert_eq!(dashes, Dash::ALL, "run {run} of {runs}");
            }
        }
    }

    #[test]
    fn a_dashed_line_carries_its_dash_into_the_svg() {
        let line = |k| Series {
            label: format!("{k}"),
            style: style(0, k, 1),
            points: vec![(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)],
        };
        let svg = over_time("µs", &[line(0), line(1)], 3.0).unwrap();
        assert!(svg.starts_with("<svg class=\"plot\""));
        assert_eq!(svg.matches("stroke-dasharray=\"9 5\"").count(), 1, "{svg}");
    }
}
