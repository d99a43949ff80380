//! The Load tab's figures, made once when a step ends (never per frame): a table row per step, its
//! cells written, a sentence that says the row in words from those same cells, and the curve's
//! points; then their drawing: latency against the step's level on a log scale (p50 and p99 from
//! the intended start, p99 from the actual start dashed in a colour of its own) with the knee as a
//! vertical line, the steps' table with every column in the tab's width, and the sentences.

use std::cell::RefCell;

use egui_extras::{Column, TableBuilder};
use egui_plot::{
    GridInput, GridMark, HoverPosition, Line, LineStyle, MarkerShape, Plot, PlotPoint, PlotPoints,
    PlotTransform, Points, VLine,
};

use super::log_axis;
use crate::app::theme;
use crate::load::{Model, StepLevel, StepResult};
use crate::text::{count, maybe_ms};

/// The table's columns: each heading, and what it means (its tooltip).
const COLUMNS: [(&str, &str); 11] = [
    (
        "step",
        "The step's level: requests a second asked (arrivals) or clients at once",
    ),
    ("achieved/s", "Requests that ended ok, per second"),
    (
        "p50",
        "Median latency from the intended start (corrected for coordinated omission)",
    ),
    ("p90", "90th percentile from the intended start"),
    ("p99", "99th percentile from the intended start"),
    ("p99.9", "99.9th percentile from the intended start"),
    ("max", "The longest request, from its intended start"),
    (
        "p99 actual",
        "99th percentile from the actual start: what a tool that waits for a free client before \
         it starts the clock reports (not corrected for coordinated omission)",
    ),
    ("errors", "Requests that failed (not in the percentiles)"),
    (
        "late",
        "Starts that began more than 2 ms after their intended time",
    ),
    (
        "dropped",
        "Starts never issued: the step ended while they waited for room in flight",
    ),
];

/// Where each figure sits in a row's cells (the sentence reads them there).
const P99_CELL: usize = 4;
const ACHIEVED_CELL: usize = 1;
const ERRORS_CELL: usize = 8;
const LATE_CELL: usize = 9;
const DROPPED_CELL: usize = 10;

/// The step column's width: `6400 req/s`, `concurrency 64`.
const STEP_COLUMN: f32 = 100.0;
/// The narrowest a figure's column gets before the table scrolls sideways.
const FIGURE_COLUMN_MIN: f32 = 50.0;

/// The colour of the p50 line.
const P50: egui::Color32 = egui::Color32::from_rgb(0x4c, 0x9a, 0xf0);
/// The colour of the p99 line from the intended start.
const P99: egui::Color32 = egui::Color32::from_rgb(0xf0, 0x7a, 0x4c);
/// The colour of the p99 line from the actual start (dashed): apart from the other p99's in hue
/// and lightness, so that where the two agree both are still seen.
const P99_ACTUAL: egui::Color32 = egui::Color32::from_rgb(0xc5, 0x86, 0xe8);

/// One line of the curve, as drawn: its name (in the legend), colour and whether it is dashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurveLine {
    /// Its name, in the legend as in the plot.
    pub name: &'static str,
    /// Its colour.
    pub colour: egui::Color32,
    /// Whether it is dashed.
    pub dashed: bool,
}

/// The curve's lines, in the order drawn (the dashed one last: on top where the two p99s agree).
pub const CURVE_LINES: [CurveLine; 3] = [
    CurveLine {
        name: "p50 from the intended start",
        colour: P50,
        dashed: false,
    },
    CurveLine {
        name: "p99 from the intended start",
        colour: P99,
        dashed: false,
    },
    CurveLine {
        name: "p99 from the actual start (dashed)",
        colour: P99_ACTUAL,
        dashed: true,
    },
];

/// One step's row of the table, its cells written once, and the row in words.
struct StepRow {
    cells: [String; COLUMNS.len()],
    sentence: String,
    /// Errors or dropped starts: the row says so in colour.
    trouble: bool,
}

/// A row in words, from its cells: `At 200 requests a second, p99 was 12.0 ms; 0 late, 0
/// dropped.` (`With 4 clients at once, ...` for the closed model, which has no schedule to be late
/// on, and says what the clients achieved instead).
/// A read-write run's requests are transactions, and ending ok is committing.
fn sentence(
    level: StepLevel,
    cells: &[String; COLUMNS.len()],
    errors: u64,
    transactions: bool,
) -> String {
    let (noun, ok) = if transactions {
        ("transactions", "committed")
    } else {
        ("requests", "ended ok")
    };
    let p99 = &cells[P99_CELL];
    let latency = if p99 == "–" {
        format!("no {} {ok}", &noun[..noun.len() - 1])
    } else {
        format!("p99 was {p99}")
    };
    let failed = if errors > 0 {
        format!(", {} failed", cells[ERRORS_CELL])
    } else {
        String::new()
    };
    match level {
        StepLevel::Rate(rate) => format!(
            "At {} {noun} a second, {latency}; {} late, {} dropped{failed}.",
            crate::text::trimmed(rate, 3),
            cells[LATE_CELL],
            cells[DROPPED_CELL]
        ),
        StepLevel::Concurrency(clients) => format!(
            "With {clients} {} at once, {} {noun} a second {ok} and {latency}{failed}.",
            if clients == 1 { "client" } else { "clients" },
            cells[ACHIEVED_CELL]
        ),
    }
}

/// What the Load tab draws of the steps that ended: rows and the curve's points, remade only when
/// a step ends or the run's report arrives.
#[derive(Default)]
pub struct LoadFigures {
    model: Option<Model>,
    rows: Vec<StepRow>,
    /// Each line of [`CURVE_LINES`]' points: the level, and the latency's log10 in ms.
    points: [Vec<PlotPoint>; 3],
    /// The lowest and highest latency among the points, in ms.
    latency_range: Option<(f64, f64)>,
    /// The knee: its step's index and level.
    knee: Option<(usize, f64)>,
    /// The latency axis's marks drawn last frame, in ms.
    marks: Vec<f64>,
    /// Where the curve was drawn last frame.
    transform: Option<PlotTransform>,
}

impl LoadFigures {
    /// No step yet, for a run of `model`.
    pub fn new(model: Model) -> Self {
        LoadFigures {
            model: Some(model),
            ..LoadFigures::default()
        }
    }

    /// Adds a step that ended.
    pub fn push(&mut self, step: &StepResult) {
        let x = step.level().value();
        let values = [step.p50_ms, step.p99_ms, step.p99_uncorrected_ms];
        for (points, value) in self.points.iter_mut().zip(values) {
            if let Some(ms) = value.filter(|v| v.is_finite()) {
                points.push(PlotPoint::new(x, log_axis::y(ms)));
                log_axis::widen(&mut self.latency_range, ms);
            }
        }
        let cells = [
            step.level().describe(),
            format!("{:.1}", step.achieved_rate),
            maybe_ms(step.p50_ms),
            maybe_ms(step.p90_ms),
            maybe_ms(step.p99_ms),
            maybe_ms(step.p999_ms),
            maybe_ms(step.max_ms),
            maybe_ms(step.p99_uncorrected_ms),
            count(step.errors),
            count(step.late),
            count(step.dropped),
        ];
        self.rows.push(StepRow {
            sentence: sentence(step.level(), &cells, step.errors, step.committed.is_some()),
            cells,
            trouble: step.errors > 0 || step.dropped > 0,
        });
    }

    /// Marks the knee: the step at `index`, at `level`; `None` for no knee.
    pub fn set_knee(&mut self, knee: Option<(usize, f64)>) {
        self.knee = knee;
    }

    /// Whether no step ended yet.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each step in words, in order, as the tab says it under the table.
    pub fn sentences(&self) -> impl Iterator<Item = &str> {
        self.rows.iter().map(|r| r.sentence.as_str())
    }

    /// The curve's lines as drawn, each with its points (x the level, y the latency in ms).
    pub fn lines(&self) -> impl Iterator<Item = (CurveLine, Vec<(f64, f64)>)> + '_ {
        CURVE_LINES
            .into_iter()
            .zip(&self.points)
            .map(|(line, points)| {
                let ms = points.iter().map(|p| (p.x, log_axis::ms(p.y))).collect();
                (line, ms)
            })
    }

    /// The latency axis's marks drawn in the last frame, in ms.
    pub fn latency_marks(&self) -> &[f64] {
        &self.marks
    }

    /// Where on the screen a latency of `ms` lay on the curve's axis in the last frame.
    pub fn latency_height(&self, ms: f64) -> Option<f32> {
        let transform = self.transform.as_ref()?;
        Some(transform.position_from_point_y(log_axis::y(ms)))
    }

    /// The curve: latency (log scale) against the step's level, the knee a vertical line,
    /// `height` tall.
    pub fn plot(&mut self, ui: &mut egui::Ui, height: f32) {
        ui.strong("Latency against the level").on_hover_text(
            "Each step's p50 and p99 from the intended start (corrected for coordinated \
             omission), and its p99 from the actual start; the latency axis is logarithmic, so \
             that 2 ms and 2 s both read",
        );
        theme::legend(
            ui,
            CURVE_LINES
                .iter()
                .map(|l| (l.name, l.colour))
                .chain([("knee", theme::WARN)]),
        );
        let x_label = match self.model {
            Some(Model::Closed) => "clients at once",
            _ => "requests a second asked (arrivals)",
        };
        let (bottom, top) = self
            .latency_range
            .map_or((0.0, 1.0), |(lo, hi)| log_axis::span(lo, hi));
        let marks = RefCell::new(Vec::new());
        let response = Plot::new("load-curve")
            .height(height)
            .include_x(0.0)
            .include_y(bottom)
            .include_y(top)
            .x_axis_label(x_label)
            .x_grid_spacer(level_marks)
            .y_axis_label("latency (log scale)")
            .y_grid_spacer(|input| {
                let drawn = log_axis::marks(input);
                *marks.borrow_mut() = drawn.iter().map(|m| log_axis::ms(m.value)).collect();
                drawn
            })
            .y_axis_formatter(|mark, _| log_axis::words(mark.value))
            .label_formatter(|pos| match pos {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\n{} at {}",
                    crate::text::ms(log_axis::ms(position.y)),
                    crate::text::trimmed(position.x, 3)
                )),
                HoverPosition::Elsewhere { .. } => None,
            })
            .allow_scroll(false)
            .show(ui, |plot| {
                if let Some((_, level)) = self.knee {
                    plot.vline(VLine::new("knee", level).color(theme::WARN).width(1.5));
                }
                for (line, points) in CURVE_LINES.iter().zip(&self.points) {
                    // The dashed line's markers hollow and larger: where the two p99s agree,
                    // the other's dot shows inside.
                    let (style, width, shape, radius, filled) = if line.dashed {
                        (
                            LineStyle::dashed_dense(),
                            1.5,
                            MarkerShape::Diamond,
                            5.5,
                            false,
                        )
                    } else {
                        (LineStyle::Solid, 2.0, MarkerShape::Circle, 3.0, true)
                    };
                    plot.line(
                        Line::new(line.name, PlotPoints::Borrowed(points))
                            .color(line.colour)
                            .style(style)
                            .width(width),
                    );
                    plot.points(
                        Points::new(line.name, PlotPoints::Borrowed(points))
                            .shape(shape)
                            .filled(filled)
                            .color(line.colour)
                            .radius(radius),
                    );
                }
            });
        self.transform = Some(response.transform);
        self.marks = marks.into_inner();
    }

    /// The steps' table, a row per step (only the rows in view are laid out), every column in
    /// the tab's width down to [`FIGURE_COLUMN_MIN`] each (narrower, it scrolls sideways).
    pub fn table(&self, ui: &mut egui::Ui) {
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        let knee = self.knee.map(|(index, _)| index);
        let figures = (COLUMNS.len() - 1) as f32;
        let spacing = ui.spacing().item_spacing.x * COLUMNS.len() as f32;
        let figure_width =
            ((ui.available_width() - STEP_COLUMN - spacing) / figures).max(FIGURE_COLUMN_MIN);
        egui::ScrollArea::horizontal()
            .id_salt("load-steps-h")
            .show(ui, |ui| {
                // The tab scrolls as a whole: no scroll of the table's own (its rows out of
                // view are still not laid out).
                TableBuilder::new(ui)
                    .id_salt("load-steps")
                    .striped(true)
                    .vscroll(false)
                    .column(Column::exact(STEP_COLUMN))
                    .columns(Column::exact(figure_width), COLUMNS.len() - 1)
                    .header(row_height, |mut header| {
                        for (heading, meaning) in COLUMNS {
                            header.col(|ui| {
                                ui.strong(heading).on_hover_text(meaning);
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(row_height, self.rows.len(), |mut row| {
                            let index = row.index();
                            let Some(step) = self.rows.get(index) else {
                                return;
                            };
                            for (column, cell) in step.cells.iter().enumerate() {
                                row.col(|ui| {
                                    let mut text = egui::RichText::new(cell);
                                    if column == 0 && knee == Some(index) {
                                        text = text.color(theme::WARN).strong();
                                    } else if step.trouble && column >= ERRORS_CELL {
                                        text = text.color(theme::ERROR);
                                    }
                                    ui.label(text);
                                });
                            }
                        });
                    });
            });
    }

    /// Each step in words, a line each, the knee's marked.
    pub fn sentences_ui(&self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new("Each step in words")
            .default_open(true)
            .show(ui, |ui| {
                for (index, row) in self.rows.iter().enumerate() {
                    if self.knee.is_some_and(|(knee, _)| knee == index) {
                        ui.horizontal_wrapped(|ui| {
                            ui.label(&row.sentence);
                            ui.colored_label(
                                theme::WARN,
                                egui::RichText::new("(the knee)").strong(),
                            );
                        });
                    } else {
                        ui.label(&row.sentence);
                    }
                }
            });
    }
}

/// The level axis's marks: a round step (1, 2 or 5 times a power of ten) that puts at most five
/// marks across the bounds, each its own label's width apart. egui_plot's own marks are tenfold
/// apart, and it hides labels closer than 60 points: a ramp to 6400 showed only its 0.
fn level_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return Vec::new();
    }
    let decade = 10f64.powf((span / 5.0).log10().floor());
    let Some(step) = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|f| f * decade)
        .find(|step| span / step <= 5.0)
    else {
        return Vec::new();
    };
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|k| GridMark {
            value: k as f64 * step,
            step_size: step,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::step::{StepCpu, StepTally};
    use crate::load::{Ended, StepLevel};

    #[test]
    fn the_level_axis_has_at_most_five_round_marks_across_any_ramp() {
        let marks = |lo: f64, hi: f64| -> Vec<f64> {
            level_marks(GridInput {
                bounds: (lo, hi),
                base_step_size: 1.0,
            })
            .into_iter()
            .map(|m| m.value)
            .collect()
        };
        assert_eq!(marks(0.0, 6700.0), [0.0, 2000.0, 4000.0, 6000.0]);
        assert_eq!(marks(0.0, 420.0), [0.0, 100.0, 200.0, 300.0, 400.0]);
        assert_eq!(marks(-0.4, 8.4), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(marks(5.0, 5.0), Vec::<f64>::new());
    }

    fn step(rate: f64, latencies_ms: &[u64], errors: u64) -> StepResult {
        let mut tally = StepTally::new(StepLevel::Rate(rate));
        for &ms in latencies_ms {
            let ended = Ended {
                from_intended: Duration::from_millis(ms),
                from_start: Duration::from_millis(ms / 2),
                ..Ended::default()
            };
            tally.ok(&ended, &Default::default());
        }
        for _ in 0..errors {
            tally.error("UNAVAILABLE", Duration::ZERO);
        }
        tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default())
    }

    #[test]
    fn a_step_makes_one_row_and_a_point_per_line_it_has_a_figure_for() {
        let mut figures = LoadFigures::new(Model::Open);
        figures.push(&step(100.0, &[10, 20, 30], 0));
        // A step where every request failed: a row, and no point on the curve.
        figures.push(&step(200.0, &[], 4));
        assert_eq!(figures.rows.len(), 2);
        assert!(figures.points.iter().all(|p| p.len() == 1));
        assert_eq!(figures.points[0][0].x, 100.0);
        let first = &figures.rows[0].cells;
        assert_eq!(first[0], "100 req/s");
        assert_eq!(first[1], "3.0");
        assert!(first[4].ends_with("ms"), "{first:?}");
        let second = &figures.rows[1];
        assert_eq!(second.cells[2], "–");
        assert_eq!(second.cells[8], "4");
        assert!(second.trouble && !figures.rows[0].trouble);
        assert_eq!(
            figures.rows[0].sentence,
            format!(
                "At 100 requests a second, p99 was {}; 0 late, 0 dropped.",
                first[4]
            )
        );
        assert_eq!(
            second.sentence,
            "At 200 requests a second, no request ended ok; 0 late, 0 dropped, 4 failed."
        );
    }

    #[test]
    fn a_read_write_step_says_transactions_committed() {
        let mut figures = LoadFigures::new(Model::Closed);
        let mut rw = step(0.0, &[10, 20, 30], 0);
        rw.target_rate = None;
        rw.concurrency = Some(2);
        rw.committed = Some(3);
        figures.push(&rw);
        let said = &figures.rows[0].sentence;
        assert!(
            said.starts_with("With 2 clients at once, ")
                && said.contains(" transactions a second committed and p99 was "),
            "{said}"
        );
    }
}
