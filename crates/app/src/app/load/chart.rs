//! The Load tab's figures, made once when a step ends (never per frame): a table row per step, its
//! cells written, and the curve's points; then their drawing: latency against the step's level
//! (p50 and p99 from the intended start, p99 from the actual start dashed) with the knee as a
//! vertical line, and the steps' table (in the tab's own scroll).

use egui_extras::{Column, TableBuilder};
use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoint, PlotPoints, Points, VLine};

use crate::app::theme;
use crate::load::{Model, StepResult};
use crate::text::{count, maybe_ms};

/// The table's columns: each heading, and what it means (its tooltip).
const COLUMNS: [(&str, &str); 11] = [
    (
        "step",
        "The step's level: requests a second asked (open model) or clients (closed model)",
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

/// The colour of the p50 line.
const P50: egui::Color32 = egui::Color32::from_rgb(0x4c, 0x9a, 0xf0);
/// The colour of both p99 lines (the one from the actual start dashed).
const P99: egui::Color32 = egui::Color32::from_rgb(0xf0, 0x7a, 0x4c);

/// One step's row of the table, its cells written once.
struct StepRow {
    cells: [String; COLUMNS.len()],
    /// Errors or dropped starts: the row says so in colour.
    trouble: bool,
}

/// What the Load tab draws of the steps that ended: rows and the curve's points, remade only when
/// a step ends or the run's report arrives.
#[derive(Default)]
pub struct LoadFigures {
    model: Option<Model>,
    rows: Vec<StepRow>,
    p50: Vec<PlotPoint>,
    p99: Vec<PlotPoint>,
    p99_actual: Vec<PlotPoint>,
    /// The knee: its step's index and level.
    knee: Option<(usize, f64)>,
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
        for (points, value) in [
            (&mut self.p50, step.p50_ms),
            (&mut self.p99, step.p99_ms),
            (&mut self.p99_actual, step.p99_uncorrected_ms),
        ] {
            if let Some(y) = value {
                points.push(PlotPoint::new(x, y));
            }
        }
        self.rows.push(StepRow {
            cells: [
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
            ],
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

    /// The curve: latency against the step's level, the knee a vertical line, `height` tall.
    pub fn plot(&self, ui: &mut egui::Ui, height: f32) {
        ui.strong("Latency against the level").on_hover_text(
            "Each step's p50 and p99 from the intended start (corrected for coordinated \
             omission), and its p99 from the actual start",
        );
        theme::legend(
            ui,
            [
                ("p50 from the intended start", P50),
                ("p99 from the intended start", P99),
                ("p99 from the actual start (dashed)", P99),
                ("knee", theme::WARN),
            ],
        );
        let x_label = match self.model {
            Some(Model::Closed) => "clients (concurrency)",
            _ => "requests a second asked",
        };
        Plot::new("load-curve")
            .height(height)
            .include_y(0.0)
            .include_x(0.0)
            .x_axis_label(x_label)
            .y_axis_label("latency")
            .y_axis_formatter(|mark, _| crate::text::ms(mark.value))
            .allow_scroll(false)
            .show(ui, |plot| {
                if let Some((_, level)) = self.knee {
                    plot.vline(VLine::new("knee", level).color(theme::WARN).width(1.5));
                }
                plot.line(
                    Line::new(
                        "p99 from the actual start",
                        PlotPoints::Borrowed(&self.p99_actual),
                    )
                    .color(P99)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
                );
                for (name, points, color) in [
                    ("p99 from the intended start", &self.p99, P99),
                    ("p50 from the intended start", &self.p50, P50),
                ] {
                    plot.line(
                        Line::new(name, PlotPoints::Borrowed(points))
                            .color(color)
                            .width(2.0),
                    );
                    plot.points(
                        Points::new(name, PlotPoints::Borrowed(points))
                            .shape(MarkerShape::Circle)
                            .color(color)
                            .radius(3.0),
                    );
                }
            });
    }

    /// The steps' table, a row per step (only the rows in view are laid out).
    pub fn table(&self, ui: &mut egui::Ui) {
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        let knee = self.knee.map(|(index, _)| index);
        egui::ScrollArea::horizontal()
            .id_salt("load-steps-h")
            .show(ui, |ui| {
                // The tab scrolls as a whole: no scroll of the table's own (its rows out of
                // view are still not laid out).
                TableBuilder::new(ui)
                    .id_salt("load-steps")
                    .striped(true)
                    .vscroll(false)
                    .column(Column::initial(120.0).at_least(80.0))
                    .columns(Column::initial(82.0).at_least(50.0), COLUMNS.len() - 1)
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
                                    } else if step.trouble && column >= COLUMNS.len() - 3 {
                                        text = text.color(theme::ERROR);
                                    }
                                    ui.label(text);
                                });
                            }
                        });
                    });
            });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::step::{StepCpu, StepTally};
    use crate::load::{Ended, StepLevel};

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
        assert_eq!(figures.p50.len(), 1);
        assert_eq!(figures.p99.len(), 1);
        assert_eq!(figures.p99_actual.len(), 1);
        assert_eq!(figures.p50[0].x, 100.0);
        let first = &figures.rows[0].cells;
        assert_eq!(first[0], "100 req/s");
        assert_eq!(first[1], "3.0");
        assert!(first[4].ends_with("ms"), "{first:?}");
        let second = &figures.rows[1];
        assert_eq!(second.cells[2], "–");
        assert_eq!(second.cells[8], "4");
        assert!(second.trouble && !figures.rows[0].trouble);
    }
}
