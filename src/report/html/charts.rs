//! The HTML report's charts, drawn as inline SVG by plotters: no script,
//! no font file, nothing fetched.

use plotters::prelude::*;

/// One line of a chart: its legend and its points.
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// Series colours, one per run (Tableau 10).
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

const SIZE: (u32, u32) = (760, 380);

/// The latency percentile spectrum: x is 1/(1−p) on a log axis (labelled
/// as percentiles up to p99.999), y is µs on a log axis.
pub fn spectrum(title: &str, series: &[Series]) -> Result<String, String> {
    let (lo, hi) = y_range(series, true);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((1f64..1e5f64).log_scale(), (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("latency, µs")
            .x_label_formatter(&|x| percentile_name(*x))
            .draw()
            .map_err(err)?;
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A value over the run's time, s on x.
pub fn over_time(title: &str, y_desc: &str, series: &[Series]) -> Result<String, String> {
    let (_, hi) = y_range(series, false);
    let t_end = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1e-3, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..t_end, 0f64..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time, s")
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Latency (µs, log axis) against achieved throughput (ops/s): the
/// latency–throughput curve, each point marked; `bound` draws an SLO.
pub fn curve(title: &str, series: &[Series], bound: Option<f64>) -> Result<String, String> {
    let (lo, hi) = y_range(series, true);
    let (lo, hi) = match bound {
        Some(b) => (lo.min(b / 1.5), hi.max(b * 1.5)),
        None => (lo, hi),
    };
    let x_end = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max)
        * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_end, (lo..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("achieved throughput, ops/s")
            .y_desc("latency, µs")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(err)?;
        if let Some(b) = bound {
            chart
                .draw_series(LineSeries::new(
                    [(0.0, b), (x_end, b)],
                    BLACK.mix(0.6).stroke_width(1),
                ))
                .map_err(err)?
                .label(format!("SLO {b} µs"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.6)));
        }
        for s in series {
            let color = s.color;
            chart
                .draw_series(s.points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(err)?;
        }
        draw(&mut chart, series)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    series: &[Series],
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for s in series {
        let color = s.color;
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

/// `x` = 1/(1−p) as the percentile it stands for: 10 → `p90`.
fn percentile_name(x: f64) -> String {
    crate::result::percentile_label(100.0 * (1.0 - 1.0 / x.max(1.0)))
}

/// The y range that holds every point (log: positive, with a margin).
fn y_range(series: &[Series], log: bool) -> (f64, f64) {
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if log {
        let lo = if lo.is_finite() { lo.max(1e-3) } else { 1.0 };
        (lo / 1.5, hi.max(lo * 10.0) * 1.5)
    } else {
        (0.0, if hi > 0.0 { hi * 1.1 } else { 1.0 })
    }
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing a chart: {e:?}")
}
