//! Charts of `baton bench` results as PNG files, drawn with plotters on its
//! bitmap backend:
//!
//! * [`write_bar_chart`]: TFLOP/s per shape, one bar per implementation
//!   (ours first), with a title, shape labels, a TFLOP/s axis, a legend and
//!   a note (the ratio) above each group;
//! * [`write_heatmap`]: one cell per (row, column) of a sweep, coloured and
//!   labelled by its value (ours/reference), grey where the shape was
//!   skipped.
//!
//! Text uses the DejaVu Sans font bundled in `crates/baton-cli/assets`
//! (its license beside it), registered with plotters' `ab_glyph` text
//! backend, so charts render the same on machines without system fonts.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// DejaVu Sans (Bitstream Vera license: `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family name the bundled font is registered under.
pub const FONT_FAMILY: &str = "baton-dejavu-sans";

/// Bar colours of the series, in order: ours (blue), the first reference
/// (grey), a second reference (orange), then more.
pub const SERIES_COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(150, 150, 150),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

/// Why a chart was not written.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The bundled font did not parse (a corrupt build).
    #[error("the bundled chart font ({FONT_FAMILY}) is not a valid TrueType font")]
    Font,
    /// The chart has nothing to draw.
    #[error("chart {path}: no {what} to draw")]
    Empty {
        /// The file that was not written.
        path: PathBuf,
        /// What was missing (`groups`, `rows`, `columns`).
        what: &'static str,
    },
    /// Drawing or encoding the PNG failed.
    #[error("chart {path}: {source}")]
    Draw {
        /// The file that was not written.
        path: PathBuf,
        /// plotters' error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn register_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_ok()
    });
    if ok { Ok(()) } else { Err(ChartError::Font) }
}

fn font(size: u32) -> TextStyle<'static> {
    (FONT_FAMILY, size).into_font().color(&BLACK)
}

/// One group of bars: a shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BarGroup {
    /// The label under the group (e.g. `8192×8192×8192`).
    pub label: String,
    /// One value per series (TFLOP/s), in series order.
    pub values: Vec<f64>,
    /// Printed above the group (e.g. `1.02×`), if any.
    pub note: Option<String>,
}

/// A grouped bar chart: series (ours, references) × groups (shapes).
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// The title.
    pub title: String,
    /// The series' names, for the legend (ours first).
    pub series: Vec<String>,
    /// The groups, left to right.
    pub groups: Vec<BarGroup>,
    /// The value axis' label.
    pub y_label: String,
    /// What the notes above the groups are (e.g. `baton / cuBLAS
    /// throughput`), printed at the top left.
    pub note_meaning: String,
}

/// Writes `chart` to `path` as a PNG.
///
/// ```
/// use baton_cli::chart::{BarChart, BarGroup, write_bar_chart};
/// let chart = BarChart {
///     title: "BF16 GEMM".into(),
///     series: vec!["baton".into(), "cuBLAS".into()],
///     groups: vec![BarGroup { label: "4096³".into(), values: vec![700.0, 720.0], note: Some("0.97×".into()) }],
///     y_label: "TFLOP/s".into(),
///     note_meaning: "above the bars: baton / cuBLAS".into(),
/// };
/// let path = std::env::temp_dir().join("baton-bar-chart-doc.png");
/// write_bar_chart(&path, &chart)?;
/// assert!(std::fs::read(&path)?.starts_with(b"\x89PNG"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_bar_chart(path: &Path, chart: &BarChart) -> Result<(), ChartError> {
    register_font()?;
    if chart.groups.is_empty() {
        return Err(ChartError::Empty {
            path: path.into(),
            what: "groups",
        });
    }
    let width = (150 * chart.groups.len() as u32 + 160).max(900);
    let height = 600;
    let draw_err = |e: Box<dyn std::error::Error + Send + Sync>| ChartError::Draw {
        path: path.into(),
        source: e,
    };
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    draw_bars(&root, chart).map_err(draw_err)?;
    root.present().map_err(|e| draw_err(Box::new(e)))
}

type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn draw_bars(root: &DrawingArea<BitMapBackend<'_>, Shift>, chart: &BarChart) -> DrawResult {
    root.fill(&WHITE)?;
    let n = chart.groups.len();
    let top = chart
        .groups
        .iter()
        .flat_map(|g| g.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max)
        * 1.35;
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, font(24))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..n as f64, 0f64..top)?;
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(chart.y_label.as_str())
        .axis_desc_style(font(18))
        .label_style(font(15))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    let series = chart.series.len().max(1);
    let bar = 0.8 / series as f64;
    for (j, name) in chart.series.iter().enumerate() {
        let colour = SERIES_COLOURS[j % SERIES_COLOURS.len()];
        ctx.draw_series(chart.groups.iter().enumerate().filter_map(|(i, g)| {
            let v = *g.values.get(j)?;
            let x0 = i as f64 + 0.1 + j as f64 * bar;
            v.is_finite()
                .then(|| Rectangle::new([(x0, 0.0), (x0 + bar * 0.92, v)], colour.filled()))
        }))?
        .label(name.as_str())
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()));
    }
    // Notes above each group, labels under it.
    let note_style = font(16).pos(Pos::new(HPos::Center, VPos::Bottom));
    ctx.draw_series(chart.groups.iter().enumerate().filter_map(|(i, g)| {
        let note = g.note.clone()?;
        let peak = g
            .values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Some(Text::new(
            note,
            (i as f64 + 0.5, peak + top * 0.01),
            note_style.clone(),
        ))
    }))?;
    let (mx, my) = ctx.backend_coord(&(0.0, top));
    root.draw(&Text::new(
        chart.note_meaning.clone(),
        (mx + 12, my + 10),
        font(15).pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    let label_style = font(14).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, g) in chart.groups.iter().enumerate() {
        let (px, py) = ctx.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(
            g.label.clone(),
            (px, py + 8),
            label_style.clone(),
        ))?;
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(font(15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// A heatmap: `rows` × `columns` cells, each a value (ours/reference) or
/// `None` (not run: the reason goes in the caption of the run, not here).
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    /// The title.
    pub title: String,
    /// What the rows are (e.g. `M`).
    pub row_axis: String,
    /// What the columns are (e.g. `N×K`).
    pub column_axis: String,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Column labels, left to right (a `\n` breaks a label into lines).
    pub columns: Vec<String>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<Option<f64>>>,
}

/// The colour of a ratio: red below 0.8, through yellow at 0.95 to white
/// at 1.0 and green from 1.1.
///
/// ```
/// use baton_cli::chart::ratio_colour;
/// use plotters::style::RGBColor;
/// assert_eq!(ratio_colour(1.0), RGBColor(255, 255, 255));
/// assert_eq!(ratio_colour(0.5), ratio_colour(0.8));
/// assert_ne!(ratio_colour(0.9), ratio_colour(1.1));
/// ```
pub fn ratio_colour(r: f64) -> RGBColor {
    let lerp = |a: (f64, f64, f64), b: (f64, f64, f64), t: f64| {
        let t = t.clamp(0.0, 1.0);
        RGBColor(
            (a.0 + (b.0 - a.0) * t).round() as u8,
            (a.1 + (b.1 - a.1) * t).round() as u8,
            (a.2 + (b.2 - a.2) * t).round() as u8,
        )
    };
    let red = (214.0, 39.0, 40.0);
    let yellow = (255.0, 221.0, 87.0);
    let white = (255.0, 255.0, 255.0);
    let green = (44.0, 160.0, 44.0);
    if !r.is_finite() {
        RGBColor(120, 120, 120)
    } else if r < 0.95 {
        lerp(red, yellow, (r - 0.8) / 0.15)
    } else if r < 1.0 {
        lerp(yellow, white, (r - 0.95) / 0.05)
    } else {
        lerp(white, green, (r - 1.0) / 0.1)
    }
}

/// Writes `map` to `path` as a PNG: one labelled cell per value, grey
/// `skipped` cells, a colour key.
///
/// ```
/// use baton_cli::chart::{Heatmap, write_heatmap};
/// let map = Heatmap {
///     title: "ours / cuBLAS".into(),
///     row_axis: "M".into(),
///     column_axis: "N×K".into(),
///     rows: vec!["1".into(), "4096".into()],
///     columns: vec!["4096×4096".into()],
///     cells: vec![vec![Some(0.93)], vec![None]],
/// };
/// let path = std::env::temp_dir().join("baton-heatmap-doc.png");
/// write_heatmap(&path, &map)?;
/// assert!(std::fs::read(&path)?.starts_with(b"\x89PNG"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_heatmap(path: &Path, map: &Heatmap) -> Result<(), ChartError> {
    register_font()?;
    for (what, empty) in [
        ("rows", map.rows.is_empty()),
        ("columns", map.columns.is_empty()),
    ] {
        if empty {
            return Err(ChartError::Empty {
                path: path.into(),
                what,
            });
        }
    }
    let (cell_w, cell_h) = (124u32, 34u32);
    let (left, top) = (110u32, 110u32);
    let width = left + cell_w * map.columns.len() as u32 + 150;
    let height = top + cell_h * map.rows.len() as u32 + 40;
    let draw_err = |e: Box<dyn std::error::Error + Send + Sync>| ChartError::Draw {
        path: path.into(),
        source: e,
    };
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    draw_heatmap(&root, map, (cell_w, cell_h), (left, top)).map_err(draw_err)?;
    root.present().map_err(|e| draw_err(Box::new(e)))
}

fn draw_heatmap(
    root: &DrawingArea<BitMapBackend<'_>, Shift>,
    map: &Heatmap,
    (cw, ch): (u32, u32),
    (left, top): (u32, u32),
) -> DrawResult {
    root.fill(&WHITE)?;
    let (cw, ch, left, top) = (cw as i32, ch as i32, left as i32, top as i32);
    let centre = |p| font(p).pos(Pos::new(HPos::Center, VPos::Center));
    let width = root.dim_in_pixel().0 as i32;
    root.draw(&Text::new(
        map.title.clone(),
        (width / 2, 22),
        font(22).pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    let grid_w = cw * map.columns.len() as i32;
    root.draw(&Text::new(
        map.column_axis.clone(),
        (left + grid_w / 2, top - 62),
        centre(17),
    ))?;
    root.draw(&Text::new(
        map.row_axis.clone(),
        (left - 55, top - 22),
        centre(17),
    ))?;
    for (j, c) in map.columns.iter().enumerate() {
        let x = left + cw * j as i32 + cw / 2;
        let lines: Vec<&str> = c.lines().collect();
        for (l, line) in lines.iter().enumerate() {
            let y = top - 14 - 18 * (lines.len() - 1 - l) as i32;
            root.draw(&Text::new(line.to_string(), (x, y), centre(14)))?;
        }
    }
    for (i, r) in map.rows.iter().enumerate() {
        let y = top + ch * i as i32;
        root.draw(&Text::new(
            r.clone(),
            (left - 12, y + ch / 2),
            font(14).pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
        for j in 0..map.columns.len() {
            let x = left + cw * j as i32;
            let cell = map
                .cells
                .get(i)
                .and_then(|row| row.get(j))
                .copied()
                .flatten();
            let (fill, text) = match cell {
                Some(v) => (ratio_colour(v), format!("{v:.3}")),
                None => (RGBColor(225, 225, 225), "skipped".to_string()),
            };
            root.draw(&Rectangle::new([(x, y), (x + cw, y + ch)], fill.filled()))?;
            root.draw(&Rectangle::new(
                [(x, y), (x + cw, y + ch)],
                RGBColor(255, 255, 255).stroke_width(1),
            ))?;
            let colour = match cell {
                // White on the saturated ends of the scale.
                Some(v) if !(0.87..=1.07).contains(&v) => WHITE,
                Some(_) => BLACK,
                None => RGBColor(110, 110, 110),
            };
            root.draw(&Text::new(
                text,
                (x + cw / 2, y + ch / 2),
                centre(14).color(&colour),
            ))?;
        }
    }
    // Colour key.
    let kx = left + grid_w + 40;
    let steps = [1.2, 1.1, 1.05, 1.0, 0.95, 0.9, 0.85, 0.8];
    root.draw(&Text::new("ours/ref", (kx + 20, top - 22), centre(14)))?;
    for (s, r) in steps.iter().enumerate() {
        let y = top + 24 * s as i32;
        root.draw(&Rectangle::new(
            [(kx, y), (kx + 22, y + 24)],
            ratio_colour(*r).filled(),
        ))?;
        root.draw(&Rectangle::new(
            [(kx, y), (kx + 22, y + 24)],
            RGBColor(160, 160, 160).stroke_width(1),
        ))?;
        root.draw(&Text::new(
            format!("{r:.2}"),
            (kx + 30, y + 12),
            font(13).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PNG's size from its IHDR chunk (after checking the signature).
    fn png_size(path: &Path) -> (u32, u32) {
        let bytes = std::fs::read(path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(&bytes[12..16], b"IHDR");
        let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        (w, h)
    }

    #[test]
    fn bar_chart_is_a_png_sized_by_its_groups() {
        let path = std::env::temp_dir().join(format!("baton-bars-{}.png", std::process::id()));
        let groups: Vec<BarGroup> = (0..8)
            .map(|i| BarGroup {
                label: format!("{i}x4096x4096"),
                values: vec![600.0 + i as f64, 650.0, f64::NAN],
                note: Some(format!("{:.2}×", 0.9 + i as f64 / 100.0)),
            })
            .collect();
        let chart = BarChart {
            title: "test".into(),
            series: vec!["ours".into(), "ref".into(), "ref2".into()],
            groups,
            y_label: "TFLOP/s".into(),
            note_meaning: "above: ours/ref".into(),
        };
        write_bar_chart(&path, &chart).unwrap();
        let (w, h) = png_size(&path);
        assert_eq!((w, h), (150 * 8 + 160, 600));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn empty_charts_are_refused_by_name() {
        let path = std::env::temp_dir().join("baton-empty-chart.png");
        let chart = BarChart {
            title: "t".into(),
            series: vec![],
            groups: vec![],
            y_label: "y".into(),
            note_meaning: String::new(),
        };
        let e = write_bar_chart(&path, &chart).unwrap_err();
        assert!(matches!(e, ChartError::Empty { what: "groups", .. }), "{e}");
        let map = Heatmap {
            title: "t".into(),
            row_axis: "M".into(),
            column_axis: "N".into(),
            rows: vec!["1".into()],
            columns: vec![],
            cells: vec![],
        };
        let e = write_heatmap(&path, &map).unwrap_err();
        assert!(
            matches!(
                e,
                ChartError::Empty {
                    what: "columns",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn heatmap_is_a_png_sized_by_its_cells() {
        let path = std::env::temp_dir().join(format!("baton-heat-{}.png", std::process::id()));
        let map = Heatmap {
            title: "t".into(),
            row_axis: "M".into(),
            column_axis: "N×K".into(),
            rows: (0..13).map(|i| format!("{}", 1 << i)).collect(),
            columns: (0..7).map(|i| format!("c{i}")).collect(),
            cells: (0..13)
                .map(|i| (0..7).map(|j| ((i + j) % 5 != 0).then_some(0.85)).collect())
                .collect(),
        };
        write_heatmap(&path, &map).unwrap();
        let (w, h) = png_size(&path);
        assert_eq!((w, h), (110 + 124 * 7 + 150, 110 + 34 * 13 + 40));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn ratio_colours_run_red_to_green() {
        assert_eq!(ratio_colour(0.8), RGBColor(214, 39, 40));
        assert_eq!(ratio_colour(0.95), RGBColor(255, 221, 87));
        assert_eq!(ratio_colour(1.1), RGBColor(44, 160, 44));
        assert_eq!(ratio_colour(2.0), ratio_colour(1.1));
        assert_eq!(ratio_colour(f64::NAN), RGBColor(120, 120, 120));
    }
}
