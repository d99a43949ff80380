//! A read-write load run's transactions in the Load tab, made once when a step ends: each step's
//! goodput (transactions committed a second) against its attempts a second, two lines against the
//! level, and a row per step with the two rates, the aborts per transaction, where the server
//! aborted them and how many attempts the transactions took; under a step of a mix of scripts, a
//! row per script (its goodput, aborts per transaction, latencies and requests); under them, the
//! steps' hottest keys (`conflicts.rs`). Nothing for a run of queries.

use egui_extras::{Column, TableBuilder};
use egui_plot::{Line, MarkerShape, Plot, PlotPoint, PlotPoints, Points};

use super::conflicts::LoadConflicts;
use crate::app::theme;
use crate::load::{Model, StepResult};
use crate::text::{count, trimmed};

/// The colour of the goodput line.
const GOODPUT: egui::Color32 = egui::Color32::from_rgb(0x4c, 0xc0, 0x7a);
/// The colour of the attempts' line.
const ATTEMPTS: egui::Color32 = egui::Color32::from_rgb(0xf0, 0x9a, 0x3c);

/// The two lines' names, in the legend as in the plot.
pub const GOODPUT_LINE: &str = "committed a second (goodput)";
/// The attempts' line.
pub const ATTEMPTS_LINE: &str = "attempts a second (aborted ones too)";

/// The table's columns: each heading, and what it means.
const COLUMNS: [(&str, &str); 6] = [
    ("step", "The step's level"),
    (
        "goodput/s",
        "Transactions committed a second: the work that counted",
    ),
    (
        "attempts/s",
        "Attempts a second, the aborted ones included: the work the server was asked for",
    ),
    (
        "aborts per transaction",
        "Aborted attempts over the transactions that made an attempt, committed or not",
    ),
    (
        "aborted at",
        "The action the server aborted the attempts at, and how many",
    ),
    (
        "attempts taken",
        "How many transactions took each number of attempts: 1×217 is 217 that committed (or \
         failed) at the first",
    ),
];

/// One step's row, its cells written once.
struct GoodputRow {
    cells: [String; COLUMNS.len()],
}

/// What the Load tab draws of a read-write run's steps: empty until a step of one ends.
#[derive(Default)]
pub struct LoadGoodput {
    model: Option<Model>,
    rows: Vec<GoodputRow>,
    /// The goodput's points, then the attempts': the level, and the rate a second.
    points: [Vec<PlotPoint>; 2],
    /// The steps' hottest keys.
    conflicts: LoadConflicts,
}

impl LoadGoodput {
    /// No step yet, for a run of `model`.
    pub fn new(model: Model) -> Self {
        LoadGoodput {
            model: Some(model),
            ..LoadGoodput::default()
        }
    }

    /// Adds a step that ended; a query run's step adds nothing.
    pub fn push(&mut self, step: &StepResult) {
        let Some(committed_per_s) = step.committed_per_s else {
            return;
        };
        self.conflicts.push(step);
        let x = step.level().value();
        for (points, rate) in self
            .points
            .iter_mut()
            .zip([Some(committed_per_s), step.attempts_per_s])
        {
            if let Some(rate) = rate.filter(|r| r.is_finite()) {
                points.push(PlotPoint::new(x, rate));
            }
        }
        let aborted_at: Vec<String> = step
            .aborts_at
            .iter()
            .map(|(at, n)| format!("{at} {}", count(*n)))
            .collect();
        let taken: Vec<String> = step
            .attempts
            .iter()
            .map(|(attempts, n)| format!("{attempts}×{}", count(*n)))
            .collect();
        let or_dash = |v: Vec<String>, between: &str| {
            if v.is_empty() {
                "–".to_owned()
            } else {
                v.join(between)
            }
        };
        self.rows.push(GoodputRow {
            cells: [
                step.level().describe(),
                format!("{committed_per_s:.1}"),
                step.attempts_per_s
                    .map_or("–".to_owned(), |r| format!("{r:.1}")),
                step.aborts_per_transaction
                    .map_or("–".to_owned(), |a| trimmed(a, 3)),
                or_dash(aborted_at, ", "),
                or_dash(taken, "  "),
            ],
        });
        self.rows.extend(step.scripts.iter().map(script_row));
    }

    /// The steps' hottest keys, as drawn.
    pub fn conflicts(&self) -> &LoadConflicts {
        &self.conflicts
    }

    /// Whether no read-write step ended yet.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each step's row as drawn: level, goodput, attempts a second, aborts per transaction,
    /// where they aborted, the attempts taken.
    pub fn rows(&self) -> impl Iterator<Item = &[String]> {
        self.rows.iter().map(|r| r.cells.as_slice())
    }

    /// The lines as drawn, each its name and points (the level, the rate a second).
    pub fn lines(&self) -> impl Iterator<Item = (&'static str, Vec<(f64, f64)>)> + '_ {
        [GOODPUT_LINE, ATTEMPTS_LINE]
            .into_iter()
            .zip(&self.points)
            .map(|(name, points)| (name, points.iter().map(|p| (p.x, p.y)).collect()))
    }

    /// The plot and the table, `height` tall; nothing for a run of queries.
    pub fn ui(&self, ui: &mut egui::Ui, height: f32) {
        if self.is_empty() {
            return;
        }
        ui.strong("Goodput against attempts").on_hover_text(
            "Each request is one read-write transaction, every attempt and back-off until it \
             commits, fails or gives up. Goodput counts the committed ones a second; attempts \
             count the aborted ones too: where the lines part, aborts take the work",
        );
        theme::legend(ui, [(GOODPUT_LINE, GOODPUT), (ATTEMPTS_LINE, ATTEMPTS)]);
        let x_label = match self.model {
            Some(Model::Closed) => "clients at once",
            _ => "requests a second asked (arrivals)",
        };
        Plot::new("load-goodput")
            .height(height)
            .include_x(0.0)
            .include_y(0.0)
            .x_axis_label(x_label)
            .y_axis_label("a second")
            .allow_scroll(false)
            .show(ui, |plot| {
                for ((name, colour), points) in [(GOODPUT_LINE, GOODPUT), (ATTEMPTS_LINE, ATTEMPTS)]
                    .into_iter()
                    .zip(&self.points)
                {
                    plot.line(
                        Line::new(name, PlotPoints::Borrowed(points))
                            .color(colour)
                            .width(2.0),
                    );
                    plot.points(
                        Points::new(name, PlotPoints::Borrowed(points))
                            .shape(MarkerShape::Circle)
                            .color(colour)
                            .radius(3.0),
                    );
                }
            });
        ui.add_space(4.0);
        self.table(ui);
        ui.add_space(6.0);
        self.conflicts.ui(ui);
    }

    /// A row per step, the columns in the tab's width.
    fn table(&self, ui: &mut egui::Ui) {
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        egui::ScrollArea::horizontal()
            .id_salt("load-goodput-h")
            .show(ui, |ui| {
                TableBuilder::new(ui)
                    .id_salt("load-goodput-table")
                    .striped(true)
                    .vscroll(false)
                    .column(Column::exact(100.0))
                    .columns(Column::exact(90.0), 2)
                    .column(Column::exact(170.0))
                    .column(Column::auto().at_least(150.0))
                    .column(Column::remainder().at_least(120.0))
                    .header(row_height, |mut header| {
                        for (heading, meaning) in COLUMNS {
                            header.col(|ui| {
                                ui.strong(heading).on_hover_text(meaning);
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(row_height, self.rows.len(), |mut row| {
                            let Some(step) = self.rows.get(row.index()) else {
                                return;
                            };
                            for cell in &step.cells {
                                row.col(|ui| {
                                    ui.label(cell);
                                });
                            }
                        });
                    });
            });
    }
}

/// A mix's script's row under its step: its goodput and aborts per transaction, its committed
/// transactions' latencies where a step has where it aborted, its requests where a step has the
/// attempts taken.
fn script_row(x: &crate::load::ScriptShare) -> GoodputRow {
    let latency =
        |name: &str, v: Option<f64>| v.map(|ms| format!("{name} {}", crate::text::ms(ms)));
    let latencies: Vec<String> = [latency("p50", x.p50_ms), latency("p99", x.p99_ms)]
        .into_iter()
        .flatten()
        .collect();
    GoodputRow {
        cells: [
            format!("  ↳ {}", x.script),
            format!("{:.1}", x.committed_per_s),
            "–".to_owned(),
            x.aborts_per_transaction
                .map_or("–".to_owned(), |a| trimmed(a, 3)),
            if latencies.is_empty() {
                "–".to_owned()
            } else {
                latencies.join(" · ")
            },
            format!("{} requests, {} failed", count(x.requests), count(x.errors)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;
    use crate::load::StepLevel;
    use crate::load::step::{StepCpu, StepTally};

    #[test]
    fn a_read_write_step_makes_a_row_and_a_point_per_line_and_a_query_s_nothing() {
        let mut goodput = LoadGoodput::new(Model::Closed);
        let query = StepTally::new(StepLevel::Concurrency(1)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        goodput.push(&query);
        assert!(goodput.is_empty(), "a query's step");
        let mut step = StepTally::read_write(StepLevel::Concurrency(2)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        step.committed_per_s = Some(240.6);
        step.attempts_per_s = Some(303.0);
        step.aborts_per_transaction = Some(0.26);
        step.aborts_at = BTreeMap::from([("commit".into(), 42), ("dml".into(), 21)]);
        step.attempts = BTreeMap::from([(1, 217), (2, 12)]);
        goodput.push(&step);
        let rows: Vec<&[String]> = goodput.rows().collect();
        assert_eq!(
            rows,
            [[
                "concurrency 2",
                "240.6",
                "303.0",
                "0.26",
                "commit 42, dml 21",
                "1×217  2×12"
            ]]
        );
        let lines: Vec<_> = goodput.lines().collect();
        assert_eq!(lines[0], (GOODPUT_LINE, vec![(2.0, 240.6)]));
        assert_eq!(lines[1], (ATTEMPTS_LINE, vec![(2.0, 303.0)]));
    }

    #[test]
    fn a_mix_s_step_has_a_row_per_script_under_its_own() {
        let mut tally = StepTally::read_write(StepLevel::Concurrency(2))
            .with_scripts(&["transfer".to_owned(), "audit".to_owned()]);
        tally.script_ended(0, Some(Duration::from_millis(4)), None);
        tally.script_ended(1, None, None);
        let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let mut goodput = LoadGoodput::new(Model::Closed);
        goodput.push(&step);
        let rows: Vec<&[String]> = goodput.rows().collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[1][0], "  ↳ transfer");
        assert_eq!(rows[1][1], "1.0");
        assert!(rows[1][4].starts_with("p50 4"), "{rows:?}");
        assert_eq!(rows[1][5], "1 requests, 0 failed");
        assert_eq!(rows[2][0], "  ↳ audit");
        assert_eq!(rows[2][4], "–");
        assert_eq!(rows[2][5], "1 requests, 1 failed");
    }
}
