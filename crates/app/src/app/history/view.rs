//! The History view: the queries the run history holds, one entry per SQL whatever the mode or
//! options it ran with (searchable by SQL text and label), and the chosen one's runs over time: a
//! measure's median and p90 per run as a trend, plan changes marked by a dashed cyan line, failed
//! runs by a red cross, pinned runs by a yellow diamond; below, the runs as a table (settings as
//! columns, `rows.rs`) to pick two from (any day, any entry) for Compare, and to label, pin or
//! delete.
//!
//! Everything is read by [`HistoryReader`] on its own thread; a frame draws only what the view
//! keeps: at most [`QUERY_LIMIT`] queries and [`TREND_LIMIT`] runs, the trend's lines made once
//! when the trend arrives, the list drawn a screenful of rows at a time.

use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoints, Points, VLine};

use super::groups::{QueryGroup, counted};
use super::reader::{Answer, Ask, HistoryReader, QUERY_LIMIT, TREND_LIMIT};
use super::rows::{self, PINNED, PLAN_CHANGED, run_name, shorten};
use crate::app::query::mode_word;
use crate::app::theme;
use crate::history::TrendPoint;
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

/// A run picked to compare: kept with its name while another entry is shown, so picks span
/// entries.
#[derive(Debug, Clone)]
struct Picked {
    id: String,
    name: String,
}

/// The History view's state.
pub struct HistoryView {
    reader: Option<HistoryReader>,
    search: String,
    asked: Option<String>,
    queries: Vec<QueryGroup>,
    /// The chosen entry's key (its SQL normalised).
    chosen: Option<String>,
    /// The fingerprints whose trend was last asked for the chosen entry.
    trend_of: Vec<String>,
    points: Vec<TrendPoint>,
    lines: TrendLines,
    measure: Measure,
    picked: Vec<Picked>,
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
            trend_of: Vec::new(),
            points: Vec::new(),
            lines: TrendLines::default(),
            measure: Measure::Total,
            picked: Vec::new(),
            label: String::new(),
            waiting: false,
            events: Vec::new(),
        }
    }

    /// The queries listed, one entry per SQL.
    pub fn queries(&self) -> &[QueryGroup] {
        &self.queries
    }

    /// The trend's legend: each mark's name and colour, as drawn above the plot.
    pub fn legend() -> [(&'static str, egui::Color32); 6] {
        [
            ("median", theme::run_color(0)),
            ("p90", theme::run_color(1)),
            ("plan changed", PLAN_CHANGED),
            ("failed", theme::ERROR),
            ("pinned", PINNED),
            ("picked", theme::SELECTED),
        ]
    }

    /// The chosen query's runs, oldest first.
    pub fn points(&self) -> &[TrendPoint] {
        &self.points
    }

    /// The ids of the runs picked (at most two, of any entry).
    pub fn picked(&self) -> Vec<String> {
        self.picked.iter().map(|p| p.id.clone()).collect()
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
        if !self.trend_of.is_empty() {
            self.ask(Ask::Trend(self.trend_of.clone()));
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
                        self.follow_chosen();
                    }
                }
                Answer::Trend {
                    fingerprints,
                    points,
                } => {
                    if fingerprints == self.trend_of {
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
        // A third of a narrow window, so the runs' table keeps room beside the list.
        let list = (ui.available_width() * 0.34).clamp(180.0, 290.0);
        egui::Panel::left("history-queries")
            .resizable(true)
            .default_size(list)
            .show(ui, |ui| self.query_list(ui));
        egui::CentralPanel::default().show(ui, |ui| self.trend(ui));
    }

    /// The search box, the import button and the queries found.
    fn query_list(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Search");
            // The rest of the row: the list is as wide as a person makes it, never the box.
            ui.add(
                egui::TextEdit::singleline(&mut self.search)
                    .hint_text("SQL text or label")
                    .desired_width(ui.available_width()),
            )
            .labelled_by(label.id);
        });
        let shown = self.queries.len();
        let more = if shown == QUERY_LIMIT {
            " (the latest)"
        } else {
            ""
        };
        ui.horizontal(|ui| {
            let count = counted(shown as u64, "query", "queries");
            ui.colored_label(theme::MUTED, format!("{count}{more}"));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui
                    .button("Import reports…")
                    .on_hover_text("Save the runs of older JSON reports into the history")
                    .clicked()
                {
                    self.events.push(HistoryEvent::Import);
                }
            });
        });
        ui.separator();
        let mut chose = None;
        let height = entry_height(ui);
        egui::ScrollArea::vertical()
            .id_salt("history-query-list")
            .show_rows(ui, height, self.queries.len(), |ui, rows| {
                for q in &self.queries[rows] {
                    let first_line = q.sql.lines().next().unwrap_or("").trim();
                    let runs = counted(q.runs, "run", "runs");
                    let count = format!("{runs} · last {}", day(&q.last_started_at));
                    let on = self.chosen.as_ref() == Some(&q.key);
                    if entry(ui, on, first_line, &count)
                        .on_hover_text(&q.sql)
                        .clicked()
                    {
                        chose = Some(q.key.clone());
                    }
                }
            });
        if let Some(key) = chose {
            self.choose(key);
        }
    }

    /// Shows the runs of the entry `key` (its SQL normalised), as a click on it in the list does.
    /// Picks are kept: a run of another entry stays picked beside this one's.
    pub fn choose(&mut self, key: String) {
        if self.chosen.as_ref() == Some(&key) {
            return;
        }
        self.chosen = Some(key);
        self.points.clear();
        self.lines = TrendLines::default();
        self.trend_of.clear();
        self.follow_chosen();
    }

    /// Asks for the chosen entry's trend when its fingerprints are not those last asked (it was
    /// just chosen, or a run in another mode joined it).
    fn follow_chosen(&mut self) {
        let Some(key) = &self.chosen else {
            return;
        };
        let Some(group) = self.queries.iter().find(|q| &q.key == key) else {
            return;
        };
        if group.fingerprints != self.trend_of {
            self.trend_of = group.fingerprints.clone();
            self.ask(Ask::Trend(self.trend_of.clone()));
        }
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
        if let Some(q) = self.queries.iter().find(|q| q.key == chosen) {
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
            let runs = counted(self.points.len() as u64, "run", "runs");
            ui.colored_label(theme::MUTED, format!("{runs}{more}"));
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
            .filter(|(_, p)| self.picked.iter().any(|k| k.id == p.summary.id))
            .filter_map(|(k, p)| Some([k as f64, p.figures(self.measure)?.median]))
            .collect();
        // The legend is a row above the plot, never over its lines.
        theme::legend(ui, Self::legend());
        Plot::new("history-trend")
            .height(ui.available_height() * 0.5)
            .include_y(0.0)
            // Room either side for the first and the last run's time, never cut at the edge.
            .include_x(-0.4)
            .include_x(l.days.len() as f64 - 0.6)
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
                            .color(PLAN_CHANGED)
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
                        .color(PINNED)
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

    /// Compare, label, pin and delete for the picked runs, and which runs are picked (of any
    /// entry: a pick made under another entry is named here). Every button and the line of picks
    /// are always drawn (greyed when nothing is picked), so picking a run never moves the table
    /// under the pointer.
    fn actions(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let two = self.picked.len() == 2;
            if ui
                .add_enabled(two, egui::Button::new("Open in Compare"))
                .on_disabled_hover_text(
                    "Pick two runs in the list below (of this query or another)",
                )
                .clicked()
            {
                self.ask(Ask::Load(self.picked()));
            }
            let one = self.picked.last().map(|p| p.id.clone());
            ui.separator();
            ui.add_enabled(
                one.is_some(),
                egui::TextEdit::singleline(&mut self.label)
                    .hint_text("a label")
                    .desired_width(140.0),
            );
            let on = one.is_some();
            let pinned = one
                .as_ref()
                .is_some_and(|id| self.points.iter().any(|p| &p.summary.id == id && p.pinned));
            let label = ui.add_enabled(on, egui::Button::new("Set label"));
            let pin = ui.add_enabled(on, egui::Button::new(if pinned { "Unpin" } else { "Pin" }));
            let delete = ui.add_enabled(on, egui::Button::new("Delete"));
            let Some(id) = one else {
                return;
            };
            if label.clicked() {
                self.ask(Ask::Label(id.clone(), self.label.trim().to_owned()));
            }
            if pin.clicked() {
                self.ask(Ask::Pin(id.clone(), !pinned));
            }
            if delete.clicked() {
                self.picked.retain(|p| p.id != id);
                self.ask(Ask::Delete(id));
            }
        });
        let names: Vec<&str> = self.picked.iter().map(|p| p.name.as_str()).collect();
        let picks = if names.is_empty() {
            "picked: none (tick runs below to compare, label, pin or delete)".to_owned()
        } else {
            format!("picked: {}", names.join("  ·  "))
        };
        ui.add(egui::Label::new(egui::RichText::new(picks).color(theme::MUTED)).truncate());
    }

    /// The runs, newest first, a checkbox each to pick it.
    fn run_rows(&mut self, ui: &mut egui::Ui) {
        let picked = self.picked();
        if let Some(id) = rows::table(ui, &self.points, &picked, self.measure) {
            self.toggle(id);
        }
    }

    /// Picks run `id` (the earlier of two picked making way) or unpicks it.
    pub fn toggle(&mut self, id: String) {
        if let Some(at) = self.picked.iter().position(|p| p.id == id) {
            self.picked.remove(at);
            return;
        }
        if self.picked.len() == 2 {
            self.picked.remove(0);
        }
        let point = self.points.iter().find(|p| p.summary.id == id);
        self.label = point.map(|p| p.summary.label.clone()).unwrap_or_default();
        let name = point.map_or_else(
            || format!("run {id}"),
            |p| {
                let mode = p.settings.as_ref().map(|s| mode_word(s.mode));
                match mode {
                    Some(mode) => format!("{} ({mode})", run_name(p)),
                    None => run_name(p),
                }
            },
        );
        self.picked.push(Picked { id, name });
    }
}

/// The height of a list entry: two lines and the padding of a button.
fn entry_height(ui: &egui::Ui) -> f32 {
    2.0 * ui.text_style_height(&egui::TextStyle::Button) + 2.0 * ui.spacing().button_padding.y
}

/// One entry of the query list, selectable as one: its SQL's first line, and below it `count` in
/// the muted colour, each line cut with an ellipsis at the list's edge (one label cut to one row
/// lost the count, and uncut it ran past the edge).
fn entry(ui: &mut egui::Ui, on: bool, first: &str, count: &str) -> egui::Response {
    let width = ui.available_width();
    let pad = ui.spacing().button_padding;
    let line = |text: egui::RichText| {
        egui::WidgetText::from(text).into_galley(
            ui,
            Some(egui::TextWrapMode::Truncate),
            width - 2.0 * pad.x,
            egui::TextStyle::Button,
        )
    };
    let top = line(egui::RichText::new(first));
    let bottom = line(egui::RichText::new(count).color(theme::MUTED));
    let size = egui::vec2(width, entry_height(ui));
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click());
    response.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::Button, true, on, format!("{first}\n{count}"))
    });
    if ui.is_rect_visible(rect) {
        let visuals = ui.style().interact_selectable(&response, on);
        if on || response.hovered() || response.has_focus() {
            ui.painter().rect(
                rect,
                visuals.corner_radius,
                visuals.weak_bg_fill,
                visuals.bg_stroke,
                egui::StrokeKind::Inside,
            );
        }
        let at = rect.min + pad;
        let below = egui::vec2(0.0, ui.text_style_height(&egui::TextStyle::Button));
        ui.painter().galley(at, top, visuals.text_color());
        ui.painter().galley(at + below, bottom, theme::MUTED);
    }
    response
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
        if k > 0 && rows::plan_changed(&points[k - 1], p) {
            l.plan_changes.push(x - 0.5);
        }
        l.days.push(day(&p.summary.started_at));
    }
    // Runs of one minute (a launch and a relaunch) are told apart on the axis by their seconds.
    if l.days.windows(2).any(|w| w[0] == w[1]) {
        l.days = points
            .iter()
            .map(|p| rows::started(&p.summary.started_at))
            .collect();
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
            settings: None,
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
        assert_eq!(
            l.days[0], "03-01 10:00:00",
            "runs of one minute: to the second"
        );
        let apart = [point("1", None, false, 1.0), {
            let mut p = point("2", None, false, 1.0);
            p.summary.started_at = "2026-03-02T10:00:00Z".into();
            p
        }];
        assert_eq!(
            lines(&apart, Measure::Total).days,
            ["03-01 10:00", "03-02 10:00"]
        );
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
        assert_eq!(rows::when("2026-03-01T10:00:00Z"), "2026-03-01 10:00");
        assert_eq!(rows::started("2026-03-01T10:00:05.25Z"), "03-01 10:00:05");
    }
}
