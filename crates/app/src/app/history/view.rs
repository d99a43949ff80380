//! The History view: the queries the run history holds (searchable by SQL text and label), and
//! the chosen one's runs over time: a measure's median and p90 per run as a trend, plan changes
//! marked by a dashed line, failed runs by a red cross, pinned runs by a pin; below, the runs
//! as a list to pick two from (any day) for Compare, and to label, pin or delete.
//!
//! Everything is read by [`HistoryReader`] on its own thread; a frame draws only what the view
//! keeps: at most [`QUERY_LIMIT`] queries and [`TREND_LIMIT`] runs, the trend's lines made once
//! when the trend arrives, the list drawn a screenful of rows at a time.

use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoints, Points, VLine};

use super::reader::{Answer, Ask, HistoryReader, QUERY_LIMIT, TREND_LIMIT};
use crate::app::theme;
use crate::history::{QuerySummary, TrendPoint};
use crate::part::{Measure, Part};
use crate::report::RunReport;

/// What the view hands the app.
#[derive(Debug, Clone)]
pub enum HistoryEvent {
    /// These stored runs (id, report) are to be compared.
    Compare(Vec<(String, RunReport)>),
    /// The user asked to import JSON reports (open the dialog).
    Import,
    /// Something to say in the status bar.
    Notice(String),
}

/// The trend's lines, made when a trend arrives (not per frame).
#[derive(Debug, Default)]
struct TrendLines {
    median: Vec<[f64; 2]>,
    p90: Vec<[f64; 2]>,
    failed: Vec<[f64; 2]>,
    pinned: Vec<[f64; 2]>,
    /// Between a run and the one before it, where the plan changed.
    plan_changes: Vec<f64>,
    /// Each run's day, for the x axis.
    days: Vec<String>,
}

/// The History view's state.
pub struct HistoryView {
    reader: Option<HistoryReader>,
    search: String,
    asked: Option<String>,
    queries: Vec<QuerySummary>,
    chosen: Option<String>,
    points: Vec<TrendPoint>,
    lines: TrendLines,
    measure: Measure,
    picked: Vec<String>,
    label: String,
    waiting: bool,
    events: Vec<HistoryEvent>,
}

impl HistoryView {
    /// The view reading through `reader` (`None`: the history is off).
    pub fn new(reader: Option<HistoryReader>) -> Self {
        HistoryView {
            reader,
            search: String::new(),
            asked: None,
            queries: Vec::new(),
            chosen: None,
            points: Vec::new(),
            lines: TrendLines::default(),
            measure: Measure::Total,
            picked: Vec::new(),
            label: String::new(),
            waiting: false,
            events: Vec::new(),
        }
    }

    /// The queries listed.
    pub fn queries(&self) -> &[QuerySummary] {
        &self.queries
    }

    /// The chosen query's runs, oldest first.
    pub fn points(&self) -> &[TrendPoint] {
        &self.points
    }

    /// The ids of the runs picked (at most two).
    pub fn picked(&self) -> &[String] {
        &self.picked
    }

    /// Whether an answer is awaited.
    pub fn waiting(&self) -> bool {
        self.waiting
    }

    fn ask(&mut self, ask: Ask) {
        if let Some(reader) = &self.reader {
            reader.ask(ask);
            self.waiting = true;
        }
    }

    /// Reads the listings again (a run of this launch was saved).
    pub fn refresh(&mut self) {
        if let Some(search) = self.asked.clone() {
            self.ask(Ask::Queries(search));
        }
        if let Some(fingerprint) = self.chosen.clone() {
            self.ask(Ask::Trend(fingerprint));
        }
    }

    /// Imports the JSON report at `path` into the history.
    pub fn import(&mut self, path: std::path::PathBuf) {
        self.ask(Ask::Import(path));
    }

    /// Takes in the reader's answers; what the app is to do about them.
    pub fn drain(&mut self) -> Vec<HistoryEvent> {
        let answers = self.reader.as_ref().map(HistoryReader::answers);
        for answer in answers.unwrap_or_default() {
            self.waiting = false;
            match answer {
                Answer::Queries { search, queries } => {
                    if Some(&search) == self.asked.as_ref() {
                        self.queries = queries;
                    }
                }
                Answer::Trend {
                    fingerprint,
                    points,
                } => {
                    if Some(&fingerprint) == self.chosen.as_ref() {
                        self.picked
                            .retain(|id| points.iter().any(|p| &p.summary.id == id));
                        self.points = points;
                        self.lines = lines(&self.points, self.measure);
                    }
                }
                Answer::Loaded(runs) => self.events.push(HistoryEvent::Compare(runs)),
                Answer::Done(words) | Answer::Failed(words) => {
                    self.events.push(HistoryEvent::Notice(words));
                }
            }
        }
        std::mem::take(&mut self.events)
    }

    /// Draws the view.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.reader.is_none() {
            ui.label("The run history is off (--no-history): nothing is saved, nothing to show.");
            return;
        }
        if self.asked.as_deref() != Some(self.search.trim()) {
            let search = self.search.trim().to_owned();
            self.asked = Some(search.clone());
            self.ask(Ask::Queries(search));
        }
        egui::Panel::left("history-queries")
            .resizable(true)
            .default_size(290.0)
            .show(ui, |ui| self.query_list(ui));
        egui::CentralPanel::default().show(ui, |ui| self.trend(ui));
    }

    /// The search box, the import button and the queries found.
    fn query_list(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Search");
            ui.add(
                egui::TextEdit::singleline(&mut self.search)
                    .hint_text("SQL text or label")
                    .desired_width(170.0),
            )
            .labelled_by(label.id);
            if ui
                .button("Import reports…")
                .on_hover_text("Save the runs of older JSON reports into the history")
                .clicked()
            {
                self.events.push(HistoryEvent::Import);
            }
        });
        let shown = self.queries.len();
        let more = if shown == QUERY_LIMIT {
            " (the latest)"
        } else {
            ""
        };
        ui.colored_label(theme::MUTED, format!("{shown} queries{more}"));
        ui.separator();
        let mut chose = None;
        egui::ScrollArea::vertical()
            .id_salt("history-query-list")
            .show_rows(ui, 38.0, self.queries.len(), |ui, rows| {
                for q in &self.queries[rows] {
                    let first_line = q.sql.lines().next().unwrap_or("").trim();
                    let runs = if q.runs == 1 { "run" } else { "runs" };
                    let text = format!(
                        "{}\n{} {runs} · last {}",
                        shorten(first_line, 40),
                        q.runs,
                        day(&q.last_started_at)
                    );
                    let on = self.chosen.as_ref() == Some(&q.fingerprint);
                    if ui
                        .selectable_label(on, text)
                        .on_hover_text(&q.sql)
                        .clicked()
                    {
                        chose = Some(q.fingerprint.clone());
                    }
                }
            });
        if let Some(fingerprint) = chose {
            self.choose(fingerprint);
        }
    }

    /// Shows the trend of the query `fingerprint` (as a click on it in the list does).
    pub fn choose(&mut self, fingerprint: String) {
        if self.chosen.as_ref() == Some(&fingerprint) {
            return;
        }
        self.chosen = Some(fingerprint.clone());
        self.points.clear();
        self.lines = TrendLines::default();
        self.picked.clear();
        self.ask(Ask::Trend(fingerprint));
    }

    /// The chosen query's trend and its runs.
    fn trend(&mut self, ui: &mut egui::Ui) {
        let Some(chosen) = self.chosen.clone() else {
            ui.label(if self.queries.is_empty() && !self.waiting {
                "No runs in the history yet: finished runs are saved here, and older JSON reports can be imported."
            } else {
                "Pick a query on the left to see its runs over time."
            });
            return;
        };
        if let Some(q) = self.queries.iter().find(|q| q.fingerprint == chosen) {
            ui.label(egui::RichText::new(shorten(&q.sql, 160)).monospace());
        }
        ui.horizontal(|ui| {
            let before = self.measure;
            egui::ComboBox::from_label("part")
                .selected_text(self.measure.label())
                .show_ui(ui, |ui| {
                    let measures =
                        std::iter::once(Measure::Total).chain(Part::ALL.map(Measure::Part));
                    for measure in measures {
                        if self.points.iter().any(|p| p.figures(measure).is_some()) {
                            ui.selectable_value(&mut self.measure, measure, measure.label());
                        }
                    }
                });
            if self.measure != before {
                self.lines = lines(&self.points, self.measure);
            }
            let more = if self.points.len() == TREND_LIMIT {
                " (the latest)"
            } else {
                ""
            };
            ui.colored_label(theme::MUTED, format!("{} runs{more}", self.points.len()));
            if self.waiting {
                ui.spinner();
            }
        });
        self.plot(ui);
        self.actions(ui);
        ui.separator();
        self.run_rows(ui);
    }

    /// The trend plot: median and p90 per run, plan changes, failed and pinned runs.
    fn plot(&self, ui: &mut egui::Ui) {
        let l = &self.lines;
        let days = l.days.clone();
        let picked: Vec<[f64; 2]> = self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| self.picked.contains(&p.summary.id))
            .filter_map(|(k, p)| Some([k as f64, p.figures(self.measure)?.median]))
            .collect();
        // The legend is a row above the plot, never over its lines.
        theme::legend(
            ui,
            [
                ("median", theme::run_color(0)),
                ("p90", theme::run_color(1)),
                ("plan changed", theme::WARN),
                ("failed", theme::ERROR),
                ("pinned", theme::WARN),
                ("picked", theme::SELECTED),
            ],
        );
        Plot::new("history-trend")
            .height(ui.available_height() * 0.5)
            .include_y(0.0)
            .y_axis_label(format!("{} ms", self.measure.label()))
            .x_axis_label("run")
            .x_axis_formatter(move |mark, _| {
                let k = mark.value.round();
                if (mark.value - k).abs() > 1e-6 || k < 0.0 {
                    return String::new();
                }
                days.get(k as usize).cloned().unwrap_or_default()
            })
            .show(ui, |plot| {
                for &x in &l.plan_changes {
                    plot.vline(
                        VLine::new("plan changed", x)
                            .color(theme::WARN)
                            .style(LineStyle::dashed_loose()),
                    );
                }
                plot.line(
                    Line::new("p90", PlotPoints::from(l.p90.clone()))
                        .color(theme::run_color(1))
                        .width(1.5),
                );
                plot.line(
                    Line::new("median", PlotPoints::from(l.median.clone()))
                        .color(theme::run_color(0))
                        .width(2.5),
                );
                plot.points(
                    Points::new("median", PlotPoints::from(l.median.clone()))
                        .color(theme::run_color(0))
                        .radius(3.0),
                );
                plot.points(
                    Points::new("failed", PlotPoints::from(l.failed.clone()))
                        .shape(MarkerShape::Cross)
                        .color(theme::ERROR)
                        .radius(7.0),
                );
                plot.points(
                    Points::new("pinned", PlotPoints::from(l.pinned.clone()))
                        .shape(MarkerShape::Diamond)
                        .color(theme::WARN)
                        .radius(5.0),
                );
                plot.points(
                    Points::new("picked", PlotPoints::from(picked))
                        .shape(MarkerShape::Circle)
                        .filled(false)
                        .color(theme::SELECTED)
                        .radius(8.0),
                );
            });
    }

    /// Compare, label, pin and delete for the picked runs.
    fn actions(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let two = self.picked.len() == 2;
            if ui
                .add_enabled(two, egui::Button::new("Open in Compare"))
                .on_disabled_hover_text("Pick two runs in the list below")
                .clicked()
            {
                self.ask(Ask::Load(self.picked.clone()));
            }
            let one = self.picked.last().cloned();
            ui.separator();
            ui.add_enabled(
                one.is_some(),
                egui::TextEdit::singleline(&mut self.label)
                    .hint_text("a label")
                    .desired_width(140.0),
            );
            let Some(id) = one else {
                ui.colored_label(theme::MUTED, "pick runs to compare, label, pin or delete");
                return;
            };
            if ui.button("Set label").clicked() {
                self.ask(Ask::Label(id.clone(), self.label.trim().to_owned()));
            }
            let pinned = self.points.iter().any(|p| p.summary.id == id && p.pinned);
            if ui.button(if pinned { "Unpin" } else { "Pin" }).clicked() {
                self.ask(Ask::Pin(id.clone(), !pinned));
            }
            if ui.button("Delete").clicked() {
                self.picked.retain(|p| p != &id);
                self.ask(Ask::Delete(id));
            }
        });
    }

    /// The runs, newest first, a checkbox each to pick it.
    fn run_rows(&mut self, ui: &mut egui::Ui) {
        let mut toggled = None;
        egui::ScrollArea::vertical()
            .id_salt("history-runs")
            .show_rows(ui, 20.0, self.points.len(), |ui, rows| {
                for k in rows {
                    let p = &self.points[self.points.len() - 1 - k];
                    ui.horizontal(|ui| {
                        let mut on = self.picked.contains(&p.summary.id);
                        let name = if p.summary.label.is_empty() {
                            format!("run {}", p.summary.id)
                        } else {
                            p.summary.label.clone()
                        };
                        if ui.checkbox(&mut on, name).changed() {
                            toggled = Some(p.summary.id.clone());
                        }
                        ui.colored_label(theme::MUTED, when(&p.summary.started_at));
                        let figures = p.figures(self.measure).map_or("—".into(), |f| {
                            format!(
                                "median {} · p90 {}",
                                crate::text::ms(f.median),
                                crate::text::ms(f.p90)
                            )
                        });
                        ui.label(figures);
                        ui.colored_label(theme::MUTED, &p.summary.target);
                        if let Some(plan) = &p.plan {
                            ui.colored_label(theme::MUTED, format!("plan {}", shorten(plan, 8)));
                        }
                        if p.failed {
                            ui.colored_label(theme::ERROR, "failed");
                        }
                        if p.pinned {
                            ui.colored_label(theme::WARN, "pinned");
                        }
                    });
                }
            });
        if let Some(id) = toggled {
            self.toggle(id);
        }
    }

    /// Picks run `id` (the earlier of two picked making way) or unpicks it.
    pub fn toggle(&mut self, id: String) {
        if let Some(at) = self.picked.iter().position(|p| p == &id) {
            self.picked.remove(at);
        } else {
            if self.picked.len() == 2 {
                self.picked.remove(0);
            }
            self.label = self
                .points
                .iter()
                .find(|p| p.summary.id == id)
                .map(|p| p.summary.label.clone())
                .unwrap_or_default();
            self.picked.push(id);
        }
    }
}

/// The lines of `points` for `measure` (the total, or a part).
fn lines(points: &[TrendPoint], measure: Measure) -> TrendLines {
    let mut l = TrendLines::default();
    for (k, p) in points.iter().enumerate() {
        let x = k as f64;
        let figures = p.figures(measure);
        if let Some(f) = figures {
            l.median.push([x, f.median]);
            l.p90.push([x, f.p90]);
        }
        let y = figures.map_or(0.0, |f| f.median);
        if p.failed {
            l.failed.push([x, y]);
        }
        if p.pinned {
            l.pinned.push([x, y]);
        }
        if k > 0 && p.plan.is_some() && points[k - 1].plan.is_some() && p.plan != points[k - 1].plan
        {
            l.plan_changes.push(x - 0.5);
        }
        l.days.push(day(&p.summary.started_at));
    }
    l
}

/// `2026-03-01T10:00:00Z` as `03-01 10:00`: the axis tells apart runs of one day.
fn day(rfc3339: &str) -> String {
    match (rfc3339.get(5..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => rfc3339.to_owned(),
    }
}

/// `2026-03-01T10:00:00Z` as `2026-03-01 10:00`.
fn when(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => rfc3339.to_owned(),
    }
}

/// `text` cut to `n` characters, with an ellipsis when cut.
fn shorten(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(n).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{MeasureFigures, RunSummary};

    fn point(id: &str, plan: Option<&str>, failed: bool, median: f64) -> TrendPoint {
        TrendPoint {
            summary: RunSummary {
                id: id.into(),
                started_at: "2026-03-01T10:00:00Z".into(),
                label: id.into(),
                target: "local".into(),
                fingerprint: "f".into(),
                iterations: 1,
                median_total_ms: Some(median),
                p90_total_ms: Some(median),
                sql: String::new(),
            },
            pinned: false,
            failed,
            plan: plan.map(str::to_owned),
            measures: vec![MeasureFigures {
                measure: Measure::Total,
                median,
                p90: median * 2.0,
            }],
        }
    }

    #[test]
    fn the_lines_mark_plan_changes_between_runs_and_failed_runs_on_the_median() {
        let points = [
            point("1", Some("a"), false, 1.0),
            point("2", Some("a"), true, 2.0),
            point("3", Some("b"), false, 3.0),
            point("4", None, false, 4.0),
        ];
        let l = lines(&points, Measure::Total);
        assert_eq!(l.plan_changes, [1.5]);
        assert_eq!(l.failed, [[1.0, 2.0]]);
        assert_eq!(l.p90[2], [2.0, 6.0]);
        assert_eq!(l.days[0], "03-01 10:00");
        assert!(
            lines(&points, Measure::Part(Part::Server))
                .median
                .is_empty()
        );
    }

    #[test]
    fn at_most_two_runs_are_picked_the_earlier_making_way() {
        let mut view = HistoryView::new(None);
        for id in ["1", "2", "3"] {
            view.toggle(id.into());
        }
        assert_eq!(view.picked(), ["2", "3"]);
        view.toggle("2".into());
        assert_eq!(view.picked(), ["3"]);
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(when("2026-03-01T10:00:00Z"), "2026-03-01 10:00");
    }
}
