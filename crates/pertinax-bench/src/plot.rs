//! Figures: SVG line plots drawn from the JSON rows of [`crate::rows`].
//!
//! [`figures`] turns rows into [`Figure`]s (what to draw: axes, series,
//! points); [`draw`] renders one with plotters' SVG backend (text is SVG
//! `<text>`, so no font library is needed). pertinax and Open MPI share
//! each figure's axes: pertinax's series are solid lines with dots, Open
//! MPI's dashed lines with crosses. The figures, each drawn only when the
//! rows hold its data:
//!
//! | file | rows | x | y | series |
//! |------|------|---|---|--------|
//! | `pingpong-latency.svg`, `pingping-latency.svg` | `pingpong`, `pingping` | bytes (log; 0 B left out) | median µs (log) | impl |
//! | `pingpong-bandwidth.svg`, `pingping-bandwidth.svg` | same | bytes (log) | GB/s | impl |
//! | `launch.svg` | `launch` | ranks | median ms | impl |
//! | `coll-<op>.svg` | `coll` | ranks | median µs (log) | impl, bytes |
//! | `ft-detection.svg`, `ft-recovery.svg` | `ft` | ranks | median detection, kill → first collective ms | impl, mode |
//! | `ft-replace.svg` | `ft-replace` | ranks | kill → replacement's allreduce ms | variant |
//! | `propagate.svg` | `propagate` | ranks | median propagation µs | impl |
//! | `offload-<case>.svg` | `offload` | masters | median ms | config |
//! | `msglog-overhead.svg` | `msglog` overhead | mode (plain, transactional, logged) | time / plain | app, class, ranks |
//! | `msglog-rollback.svg` | `msglog` rollback | crash iteration | recomputed iterations | app, policy |
//!
//! When saved rows from several runs give one point twice, the last row
//! wins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use serde_json::Value;

/// One line: its legend and its points, sorted by x.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend.
    pub name: String,
    /// (x, y), sorted by x, one y per x.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// Open MPI's series are drawn dashed.
    fn is_ompi(&self) -> bool {
        self.name.starts_with("ompi") || self.name.starts_with("Open MPI")
    }
}

/// One figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// File name without `.svg`.
    pub file: String,
    /// The caption.
    pub title: String,
    /// Axis titles.
    pub x_desc: String,
    /// Axis titles.
    pub y_desc: String,
    /// Logarithmic axes.
    pub log_x: bool,
    /// Logarithmic axes.
    pub log_y: bool,
    /// Names of the x values 1, 2, ... (a categorical axis), or empty.
    pub x_names: Vec<String>,
    /// The lines.
    pub series: Vec<Series>,
}

/// Draws every figure the rows hold into `dir` (created if missing);
/// returns the files written.
///
/// # Errors
/// When the directory or a file cannot be written, or plotters fails.
pub fn all(rows: &[Value], dir: &Path) -> Result<Vec<PathBuf>> {
    let figs = figures(rows);
    if figs.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for f in figs {
        let path = dir.join(format!("{}.svg", f.file));
        let svg = draw(&f)?;
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Points gathered per series, keyed by legend, in first-seen order.
#[derive(Default)]
struct Gather {
    order: Vec<String>,
    points: BTreeMap<String, BTreeMap<u64, (f64, f64)>>,
}

impl Gather {
    fn add(&mut self, name: String, x: Option<f64>, y: Option<f64>) {
        let (Some(x), Some(y)) = (x, y) else { return };
        if !x.is_finite() || !y.is_finite() {
            return;
        }
        if !self.order.contains(&name) {
            self.order.push(name.clone());
        }
        self.points
            .entry(name)
            .or_default()
            .insert(x.to_bits(), (x, y));
    }

    fn series(self) -> Vec<Series> {
        let mut points = self.points;
        self.order
            .into_iter()
            .filter_map(|name| {
                let mut p: Vec<(f64, f64)> = points.remove(&name)?.into_values().collect();
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
                Some(Series { name, points: p })
            })
            .collect()
    }
}

fn f(row: &Value, key: &str) -> Option<f64> {
    row.get(key).and_then(Value::as_f64)
}

/// A number field as text (`8`), or empty.
fn s_num(row: &Value, key: &str) -> String {
    row.get(key)
        .filter(|v| v.is_number())
        .map_or(String::new(), Value::to_string)
}

fn s<'a>(row: &'a Value, key: &str) -> &'a str {
    row.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A figure from the rows that pass `keep`; `point` gives each row's
/// (series, x, y). `None` when no row gives a point.
#[allow(clippy::too_many_arguments)]
fn figure(
    rows: &[Value],
    keep: impl Fn(&Value) -> bool,
    point: impl Fn(&Value) -> (String, Option<f64>, Option<f64>),
    file: &str,
    title: &str,
    (x_desc, log_x): (&str, bool),
    (y_desc, log_y): (&str, bool),
) -> Option<Figure> {
    let mut g = Gather::default();
    for r in rows.iter().filter(|r| keep(r)) {
        let (name, x, y) = point(r);
        let positive = |v: Option<f64>, log: bool| v.filter(|v| !log || *v > 0.0);
        g.add(name, positive(x, log_x), positive(y, log_y));
    }
    let series = g.series();
    (!series.is_empty()).then(|| Figure {
        file: file.into(),
        title: title.into(),
        x_desc: x_desc.into(),
        y_desc: y_desc.into(),
        log_x,
        log_y,
        x_names: Vec::new(),
        series,
    })
}

/// The figures the rows hold (see the module docs).
pub fn figures(rows: &[Value]) -> Vec<Figure> {
    let mut out = Vec::new();
    let bench = |name: &'static str| move |r: &Value| s(r, "bench") == name;
    let with_impl =
        |name: &'static str| move |r: &Value| s(r, "bench") == name && r.get("impl").is_some();
    for p in ["pingpong", "pingping"] {
        out.extend(figure(
            rows,
            with_impl(p),
            |r| (s(r, "impl").into(), f(r, "bytes"), f(r, "median_us")),
            &format!("{p}-latency"),
            &format!("{p}: latency, 2 ranks"),
            ("message size, bytes", true),
            ("median time, µs", true),
        ));
        out.extend(figure(
            rows,
            with_impl(p),
            |r| (s(r, "impl").into(), f(r, "bytes"), f(r, "bw_GBps")),
            &format!("{p}-bandwidth"),
            &format!("{p}: bandwidth, 2 ranks"),
            ("message size, bytes", true),
            ("bandwidth (median), GB/s", false),
        ));
    }
    out.extend(figure(
        rows,
        with_impl("launch"),
        |r| (s(r, "impl").into(), f(r, "ranks"), f(r, "median_ms")),
        "launch",
        "launch: init + finalize, whole command",
        ("ranks", false),
        ("median wall time, ms", false),
    ));
    let mut ops: Vec<&str> = rows
        .iter()
        .filter(|r| with_impl("coll")(r))
        .map(|r| s(r, "op"))
        .collect();
    ops.dedup();
    ops.sort_unstable();
    ops.dedup();
    for op in ops {
        out.extend(figure(
            rows,
            |r| with_impl("coll")(r) && s(r, "op") == op,
            |r| {
                let name = if op == "barrier" {
                    s(r, "impl").to_string()
                } else {
                    let b = f(r, "bytes").unwrap_or(0.0) as u64;
                    format!("{} {}", s(r, "impl"), crate::report::bytes(b))
                };
                (name, f(r, "ranks"), f(r, "median_us"))
            },
            &format!("coll-{op}"),
            &format!("{op}: latency versus ranks"),
            ("ranks", false),
            ("median time per call, µs", true),
        ));
    }
    let ft_name = |r: &Value| format!("{} {}", s(r, "impl"), s(r, "mode"));
    out.extend(figure(
        rows,
        with_impl("ft"),
        |r| (ft_name(r), f(r, "ranks"), f(r, "det_med_ms")),
        "ft-detection",
        "failure detection versus ranks",
        ("ranks", false),
        ("kill → detection, median over ranks, ms", false),
    ));
    out.extend(figure(
        rows,
        with_impl("ft"),
        |r| (ft_name(r), f(r, "ranks"), f(r, "e2e_med_ms")),
        "ft-recovery",
        "recovery versus ranks (revoke, shrink, first collective)",
        ("ranks", false),
        ("kill → first collective done, median, ms", false),
    ));
    out.extend(figure(
        rows,
        bench("ft-replace"),
        |r| (s(r, "variant").into(), f(r, "ranks"), f(r, "repl_e2e_ms")),
        "ft-replace",
        "non-shrinking recovery versus ranks (pertinax)",
        ("ranks", false),
        ("kill → replacement's allreduce done, ms", false),
    ));
    out.extend(figure(
        rows,
        with_impl("propagate"),
        |r| {
            let med = r.get("propagation_us").and_then(|p| f(p, "med"));
            (s(r, "impl").into(), f(r, "ranks"), med)
        },
        "propagate",
        "error propagation versus ranks",
        ("ranks", false),
        ("propagation, median, µs", false),
    ));
    let mut cases: Vec<&str> = rows
        .iter()
        .filter(|r| bench("offload")(r))
        .map(|r| s(r, "case"))
        .collect();
    cases.sort_unstable();
    cases.dedup();
    for case in cases {
        out.extend(figure(
            rows,
            |r| bench("offload")(r) && s(r, "case") == case,
            |r| (s(r, "config").into(), f(r, "masters"), f(r, "median_ms")),
            &format!("offload-{case}"),
            &format!("offload {case}: run time per configuration (pertinax)"),
            ("masters", false),
            ("median run time, ms", false),
        ));
    }
    // Message logging without failure: one line per app, class and rank
    // count across the three modes, as a multiple of the plain run.
    let overhead = |r: &Value| s(r, "bench") == "msglog" && s(r, "case") == "overhead";
    let mut g = Gather::default();
    for r in rows.iter().filter(|r| overhead(r)) {
        let name = format!(
            "{} {}, {} ranks",
            s(r, "app"),
            s(r, "class"),
            s_num(r, "ranks")
        );
        let plain = f(r, "plain_s").filter(|p| *p > 0.0);
        for (i, key) in ["plain_s", "transactional_s", "logged_s"]
            .iter()
            .enumerate()
        {
            let y = plain.and_then(|p| f(r, key).map(|t| t / p));
            g.add(name.clone(), Some(i as f64 + 1.0), y);
        }
    }
    let series = g.series();
    if !series.is_empty() {
        out.push(Figure {
            file: "msglog-overhead".into(),
            title: "message logging without failure: run time against plain (pertinax)".into(),
            x_desc: "mode".into(),
            y_desc: "median run time / plain run time".into(),
            log_x: false,
            log_y: false,
            x_names: vec!["plain".into(), "transactional".into(), "logged".into()],
            series,
        });
    }
    out.extend(figure(
        rows,
        |r| s(r, "bench") == "msglog" && s(r, "case") == "rollback",
        |r| {
            let name = format!("{} {} {}", s(r, "app"), s(r, "class"), s(r, "policy"));
            (name, f(r, "crash_iter"), f(r, "recomputed"))
        },
        "msglog-rollback",
        "message logging: rollback after a kill (pertinax)",
        ("iteration at which a rank is killed", false),
        ("recomputed iterations (all ranks)", false),
    ));
    out
}

/// The x or y range to show: a margin around the data, from 0 on a
/// linear axis whose values are all positive.
fn bounds(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (if log { 0.1 } else { 0.0 }, 1.0);
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let lo = lo.min(0.0);
        let span = (hi - lo).max(hi.abs() * 0.1).max(1e-9);
        (lo, hi + 0.08 * span)
    }
}

/// A tick label: short, no trailing zeros.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1_048_576.0 && (v / 1_048_576.0).fract() == 0.0 {
        format!("{}M", v / 1_048_576.0)
    } else if a >= 1024.0 && (v / 1024.0).fract() == 0.0 {
        format!("{}K", v / 1024.0)
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        let t = format!("{v:.3}");
        t.trim_end_matches('0').to_string()
    }
}

/// An x tick label: the name of a categorical value, else [`tick`].
fn x_tick(names: &[String], v: f64) -> String {
    if names.is_empty() {
        return tick(v);
    }
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 1.0 {
        names.get(i as usize - 1).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// The figure as SVG text.
///
/// # Errors
/// When plotters fails.
pub fn draw(fig: &Figure) -> Result<String> {
    let xs = fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = if fig.x_names.is_empty() {
        bounds(xs, fig.log_x)
    } else {
        (0.7, fig.x_names.len() as f64 + 0.3)
    };
    let (y0, y1) = bounds(ys, fig.log_y);
    let corner = emptiest_corner(fig, (x0, x1), (y0, y1));
    let mut svg = String::new();
    match (fig.log_x, fig.log_y) {
        (false, false) => chart(fig, corner, &mut svg, x0..x1, y0..y1)?,
        (true, false) => chart(fig, corner, &mut svg, (x0..x1).log_scale(), y0..y1)?,
        (false, true) => chart(fig, corner, &mut svg, x0..x1, (y0..y1).log_scale())?,
        (true, true) => {
            let (x, y) = ((x0..x1).log_scale(), (y0..y1).log_scale());
            chart(fig, corner, &mut svg, x, y)?
        }
    }
    Ok(svg)
}

/// Where the legend goes: the corner whose quarter of the plot holds the
/// fewest points (upper left when tied), so it hides as little as it can.
fn emptiest_corner(fig: &Figure, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Corner {
    let unit = |v: f64, lo: f64, hi: f64, log: bool| {
        if log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    let mut count = [0usize; 4]; // upper left, upper right, lower left, lower right
    for (x, y) in fig.series.iter().flat_map(|s| s.points.iter().copied()) {
        let right = unit(x, x0, x1, fig.log_x) > 0.5;
        let lower = unit(y, y0, y1, fig.log_y) < 0.5;
        count[usize::from(lower) * 2 + usize::from(right)] += 1;
    }
    let best = (0..4).min_by_key(|&i| count[i]).unwrap_or(0);
    [
        Corner::UpperLeft,
        Corner::UpperRight,
        Corner::LowerLeft,
        Corner::LowerRight,
    ][best]
}

/// A corner of the plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Corner {
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

/// Colours: pertinax's series and Open MPI's counterpart by order.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

fn chart<X, Y>(fig: &Figure, corner: Corner, svg: &mut String, x: X, y: Y) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", fig.file);
    {
        let root = SVGBackend::with_string(svg, (860, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut c = ChartBuilder::on(&root)
            .caption(&fig.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y)
            .map_err(|x| e(&x))?;
        c.configure_mesh()
            .x_desc(fig.x_desc.as_str())
            .y_desc(fig.y_desc.as_str())
            .x_label_formatter(&|v| x_tick(&fig.x_names, *v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|x| e(&x))?;
        // Open MPI's series take the colour of the pertinax series they
        // pair with: the n-th of each kind share one.
        let (mut mine, mut theirs) = (0, 0);
        for series in &fig.series {
            let k = if series.is_ompi() {
                theirs += 1;
                theirs - 1
            } else {
                mine += 1;
                mine - 1
            };
            let colour = COLOURS[k % COLOURS.len()];
            let style = colour.stroke_width(2);
            let pts = series.points.clone();
            if series.is_ompi() {
                c.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                    .map_err(|x| e(&x))?
                    .label(series.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], style));
                c.draw_series(pts.into_iter().map(|p| Cross::new(p, 4, style)))
                    .map_err(|x| e(&x))?;
            } else {
                c.draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(|x| e(&x))?
                    .label(series.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                c.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))
                    .map_err(|x| e(&x))?;
            }
        }
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .position(match corner {
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            })
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows() -> Vec<Value> {
        let mut rows = Vec::new();
        for (imp, k) in [("pertinax", 1.0), ("ompi", 1.3)] {
            for b in [0u64, 8, 1024, 65536, 1 << 20] {
                rows.push(json!({
                    "bench": "pingpong", "impl": imp, "bytes": b,
                    "median_us": k * (0.2 + b as f64 / 1e4),
                    "bw_GBps": if b >= 1024 { json!(b as f64 / 1e4 / k) } else { json!(null) },
                }));
            }
            for n in [2, 4, 8] {
                rows.push(
                    json!({"bench": "coll", "impl": imp, "op": "bcast", "bytes": 8,
                    "ranks": n, "median_us": k * n as f64}),
                );
                rows.push(
                    json!({"bench": "ft", "impl": imp, "mode": "recv", "ranks": n,
                    "det_med_ms": k * 10.0, "e2e_med_ms": k * 20.0 + n as f64}),
                );
            }
        }
        rows.push(
            json!({"bench": "msglog", "case": "overhead", "app": "cg", "class": "A",
            "ranks": 8, "plain_s": 2.0, "transactional_s": 2.2, "logged_s": 3.0}),
        );
        // A ratio row (no impl) must not become a series.
        rows.push(json!({"bench": "pingpong", "bytes": 8, "ratio": 0.8}));
        rows
    }

    #[test]
    fn rows_become_figures() {
        let figs = figures(&rows());
        let names: Vec<&str> = figs.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(
            names,
            [
                "pingpong-latency",
                "pingpong-bandwidth",
                "coll-bcast",
                "ft-detection",
                "ft-recovery",
                "msglog-overhead"
            ]
        );
        let m = &figs[5];
        assert_eq!(m.series[0].name, "cg A, 8 ranks");
        assert_eq!(m.series[0].points, [(1.0, 1.0), (2.0, 1.1), (3.0, 1.5)]);
        let lat = &figs[0];
        assert_eq!(lat.series.len(), 2);
        assert_eq!(lat.series[0].name, "pertinax");
        // 0 B has no place on a log axis.
        assert_eq!(lat.series[0].points.len(), 4);
        assert_eq!(figs[1].series[1].points.len(), 3);
        assert_eq!(figs[2].series[1].name, "ompi 8");
        assert_eq!(figs[3].series[0].name, "pertinax recv");
        assert!(figures(&[json!({"bench": "other"})]).is_empty());
    }

    #[test]
    fn figures_are_svg_with_every_series() {
        let dir = std::env::temp_dir().join(format!("pertinax-bench-plot-{}", std::process::id()));
        let written = all(&rows(), &dir).unwrap();
        assert_eq!(written.len(), 6);
        let svg = std::fs::read_to_string(dir.join("pingpong-latency.svg")).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        // plotters writes each text on a line of its own.
        let text = |svg: &str, t: &str| svg.lines().any(|l| l.trim() == t);
        assert!(text(&svg, "pertinax") && text(&svg, "ompi"), "legend");
        assert!(text(&svg, "pingpong: latency, 2 ranks"));
        // Two lines (one dashed: drawn as several segments) and their marks.
        assert!(svg.matches("<polyline").count() >= 2);
        assert!(svg.matches("<circle").count() >= 4);
        let coll = std::fs::read_to_string(dir.join("coll-bcast.svg")).unwrap();
        assert!(text(&coll, "pertinax 8") && text(&coll, "ompi 8"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(all(&[], &dir).unwrap().is_empty());
        assert!(!dir.exists(), "no rows, no directory");
    }

    #[test]
    fn ticks_and_bounds() {
        assert_eq!(tick(1024.0), "1K");
        assert_eq!(tick(4.0 * 1048576.0), "4M");
        assert_eq!(tick(16.0), "16");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.25), "0.25");
        let names = ["plain".to_string(), "logged".to_string()];
        assert_eq!(x_tick(&names, 2.0), "logged");
        assert_eq!(x_tick(&names, 1.5), "");
        assert_eq!(x_tick(&names, 3.0), "");
        assert_eq!(x_tick(&[], 3.0), "3");
        assert_eq!(bounds([2.0, 16.0].into_iter(), false).0, 0.0);
        let (lo, hi) = bounds([2.0, 16.0].into_iter(), true);
        assert!(lo < 2.0 && lo > 0.0 && hi > 16.0);
        assert_eq!(bounds(std::iter::empty(), true), (0.1, 1.0));
        let fig = |points: Vec<(f64, f64)>| Figure {
            file: "f".into(),
            title: "t".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            log_x: false,
            log_y: false,
            x_names: Vec::new(),
            series: vec![Series {
                name: "s".into(),
                points,
            }],
        };
        let rising = fig(vec![(1.0, 1.0), (2.0, 2.0), (9.0, 9.0)]);
        assert_eq!(
            emptiest_corner(&rising, (0.0, 10.0), (0.0, 10.0)),
            Corner::UpperLeft
        );
        let high = fig(vec![(1.0, 9.0), (9.0, 9.0), (8.0, 9.0), (2.0, 1.0)]);
        assert_eq!(
            emptiest_corner(&high, (0.0, 10.0), (0.0, 10.0)),
            Corner::LowerRight
        );
    }
}
