//! The iterations view: one stacked bar per iteration, its parts as `report::accounting` gives
//! them (a query's server, network, decode, client work, descheduled, untimed, and a cold start's
//! steps; a client program's parts as the server saw them), the overlap of the server's work with
//! the client's drawn outlined over the decode (never stacked), warm-ups marked, exact figures on
//! hover (a tooltip egui keeps inside the window), click or drag to select iterations; the headline
//! and the legend above the plot, never over its bars; a table of the parts over the selection (or
//! every timed iteration) and one of the figures beside them; the slow first iteration, the
//! outliers and statistics the mode asked for and did not get flagged. The tab around it: the run
//! in flight, or the run shown, picked from the list.

use std::collections::BTreeSet;

use egui_plot::{Plot, PlotPoint, Text};

use crate::analysis::{self, PartStats};
use crate::app::labels::one_line;
use crate::app::runs::{ActiveRun, RunEntry, RunList};
use crate::app::theme;
use crate::app::timeline::TimelineView;
use crate::part::Part;
use crate::report::{IterationRecord, RunId, Status, figure_summaries};
use crate::text::{bytes, count, ms};

use super::attempts::TransactionWords;
use super::bars::{
    BAR_WIDTH, CANCELLED, Marks, bar_words, ended_charts, hovered_bar, iteration_marks,
    iteration_tick, overlap_chart, stacked_charts, streaming_chart,
};
pub use super::bars::{overlap_span, stacked_parts, warmup_clip};
pub use super::summary::{Table, empty_words, summary_table};
pub use super::words::{Flag, failures, flags, tooltip};

/// The run picker above the bars: every run by its title, newest first.
fn run_picker(ui: &mut egui::Ui, runs: &mut RunList) {
    let mut shown = runs.shown_id();
    ui.horizontal(|ui| {
        let title = runs.shown().map_or_else(
            || format!("Pick a run ({} in the list)", runs.entries().len()),
            RunEntry::title,
        );
        egui::ComboBox::from_id_salt("shown-run")
            .selected_text(egui::RichText::new(title).heading())
            .show_ui(ui, |ui| {
                for r in runs.entries().iter().rev() {
                    ui.selectable_value(&mut shown, Some(r.id), r.title());
                }
            });
    });
    runs.show(shown);
}

/// The iterations of `records` that count: timed, and in `selection` if it is not empty.
fn chosen<'a>(
    records: &'a [IterationRecord],
    selection: &BTreeSet<u32>,
) -> Vec<&'a IterationRecord> {
    records
        .iter()
        .filter(|r| r.is_timed() && (selection.is_empty() || selection.contains(&r.iteration)))
        .collect()
}

/// The iteration streaming now.
#[derive(Debug, Clone)]
struct Streaming {
    /// Its number.
    iteration: u32,
    /// Its milliseconds so far.
    so_far_ms: f64,
    /// What it has streamed, in words.
    words: String,
    /// Iterations its variant runs in all, warm-ups included: the axis spans them from the first.
    planned: u32,
}

/// The iterations view's state: the selection, and which run it belongs to.
#[derive(Debug, Default)]
pub struct IterationsView {
    run: Option<RunId>,
    selection: BTreeSet<u32>,
    drag_from: Option<f64>,
    bars: usize,
    hovered: Option<u32>,
    plot_rect: Option<egui::Rect>,
    /// Where the run's plan changed: (first iteration of the new plan, the finding in words).
    plan_changes: Vec<(u32, String)>,
    /// The chart's transform last frame (where each bar was drawn).
    transform: Option<egui_plot::PlotTransform>,
    /// The timeline of the iteration whose bar or flag was clicked.
    timeline: TimelineView,
    /// The iteration streaming now, drawn as a partial bar.
    streaming: Option<Streaming>,
    /// The SQL editor no longer holds the query the newest run was refused on.
    query_edited: bool,
    /// A read-write run's transactions in words, made once per run and selection.
    transactions: TransactionWords,
}

impl IterationsView {
    /// The selected iterations' numbers.
    pub fn selection(&self) -> &BTreeSet<u32> {
        &self.selection
    }

    /// Selects exactly `iterations`.
    pub fn select(&mut self, iterations: impl IntoIterator<Item = u32>) {
        self.selection = iterations.into_iter().collect();
    }

    /// Moves to the iteration `delta` places from the one open (its timeline) or selected alone,
    /// among `records` in the order they ran: the timeline follows when one is open, the
    /// selection always (the arrow keys). Without one open or selected, the first (or last)
    /// is picked.
    pub fn step(&mut self, run: RunId, records: &[IterationRecord], delta: i32) {
        let numbers: Vec<u32> = records.iter().map(|r| r.iteration).collect();
        let Some((&first, &last)) = numbers.first().zip(numbers.last()) else {
            return;
        };
        let current = self
            .timeline
            .opened()
            .filter(|_| self.timeline.run() == Some(run))
            .or_else(|| match self.selection.len() {
                1 => self.selection.first().copied(),
                _ => None,
            });
        let next = match current.and_then(|c| numbers.iter().position(|&n| n == c)) {
            Some(at) => {
                let to = (at as i64 + i64::from(delta)).clamp(0, numbers.len() as i64 - 1);
                numbers[to as usize]
            }
            None if delta < 0 => last,
            None => first,
        };
        self.select([next]);
        if self.timeline.run() == Some(run) {
            self.timeline.open(run, next);
        }
    }

    /// The iteration whose bar the pointer was over last frame (its tooltip shown).
    pub fn hovered(&self) -> Option<u32> {
        self.hovered
    }

    /// Where the plot was drawn last frame (its data area and axes), in points.
    pub fn plot_rect(&self) -> Option<egui::Rect> {
        self.plot_rect
    }

    /// Where the point (`iteration`, `ms`) of the chart was drawn last frame, in points.
    pub fn bar_position(&self, iteration: u32, ms: f64) -> Option<egui::Pos2> {
        let point = egui_plot::PlotPoint::new(f64::from(iteration), ms);
        Some(self.transform.as_ref()?.position_from_point(&point))
    }

    /// The iterations the chart's axis spanned last frame, from and to.
    pub fn iteration_span(&self) -> Option<(f64, f64)> {
        let bounds = self.transform.as_ref()?.bounds();
        Some((bounds.min()[0], bounds.max()[0]))
    }

    /// The timeline view (which iteration is open, what it drew).
    pub fn timeline(&mut self) -> &mut TimelineView {
        &mut self.timeline
    }

    /// How many bars (iterations) the chart drew last frame.
    pub fn bars_drawn(&self) -> usize {
        self.bars
    }

    /// Whether the SQL editor no longer holds the query the newest run was refused on: the
    /// refusal is then said here, not pointed at beside the editor.
    pub fn set_query_edited(&mut self, edited: bool) {
        self.query_edited = edited;
    }

    /// The run whose iterations the view shows (its selection belongs to it).
    pub fn run(&self) -> Option<RunId> {
        self.run
    }

    /// Where the plan of the run about to be drawn changed, marked on the chart.
    pub fn set_plan_changes(&mut self, changes: impl IntoIterator<Item = (u32, String)>) {
        self.plan_changes = changes.into_iter().collect();
    }

    /// The plan changes the chart marks.
    pub fn plan_changes(&self) -> &[(u32, String)] {
        &self.plan_changes
    }

    /// The Iterations tab: while a run is in flight (`active`, with its id), the bars of its
    /// variant streaming now; else the run shown, picked from the list by its title.
    pub fn tab(
        &mut self,
        ui: &mut egui::Ui,
        active: Option<(RunId, &ActiveRun)>,
        runs: &mut RunList,
    ) {
        if let Some((id, run)) = active {
            self.running(ui, id, run);
            return;
        }
        if runs.is_empty() {
            ui.add_space(40.0);
            ui.vertical_centered(|ui| {
                ui.heading("No run yet");
                ui.label("Press Run (or Ctrl+Enter) to profile the query on the left.");
            });
            return;
        }
        run_picker(ui, runs);
        if let Some(run) = runs.shown() {
            let config = &run.report.config;
            let nothing_ok = run
                .report
                .iterations
                .iter()
                .all(|r| r.status() != Status::Ok);
            if run.evicted {
                // Its records are in the history: read back within a frame or two.
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("reading this run's iterations from the history…");
                });
                return;
            }
            if let (Some(stopped), true) = (&run.report.stopped, nothing_ok) {
                // Said once, beside the editor while it holds the query: no chart of one failure.
                ui.add_space(12.0);
                let newest = runs.entries().last().map(|r| r.id) == Some(run.id);
                // A read-write run's editor holds its script, and what was refused a statement.
                let (refused, editor) = if run.report.config.read_write.is_some() {
                    ("a statement of the transaction", "script")
                } else {
                    ("the query", "SQL editor")
                };
                let words = if newest && !self.query_edited {
                    format!(
                        "This run stopped after its first iteration: the server refused {refused} \
                         with an error no retry can fix. Its message is beside the {editor}, the \
                         part it points at marked."
                    )
                } else {
                    // The server's own message, not the report's sentence, which would say
                    // "stopped after" a second time.
                    let why = run
                        .report
                        .iterations
                        .first()
                        .and_then(|r| r.error())
                        .unwrap_or(stopped);
                    format!(
                        "This run stopped after its first iteration: the server refused its \
                         query with an error no retry can fix: {why}"
                    )
                };
                ui.label(egui::RichText::new(words).color(theme::MUTED));
                return;
            }
            let transaction = config.read_write.as_ref().map_or(String::new(), |o| {
                format!(" · read-write transaction ({o})")
            });
            ui.label(
                egui::RichText::new(format!(
                    "{} · {} · mode {}{transaction}",
                    config.target,
                    one_line(&config.sql, 80),
                    config.query_mode
                ))
                .small()
                .color(theme::MUTED),
            );
            self.transactions.update(run.id, &run.report);
            // The window shares the process with the local instance: what it took is said.
            let local = config.target == "local";
            if let Some(load) = config
                .window_cpu
                .as_ref()
                .and_then(|cpu| analysis::BusyWindow::of(cpu, local))
            {
                ui.colored_label(theme::WARN, format!("! {load}"));
            }
            self.set_plan_changes(
                run.report
                    .plans
                    .changes()
                    .iter()
                    .map(|c| (c.iteration, c.text())),
            );
            self.ui(
                ui,
                (run.id, &config.label),
                &run.report.iterations,
                config.query_mode,
            );
        }
    }

    /// The run in flight, numbered `id`: with several variants, the bars of the one streaming now.
    /// Its records are read where the run keeps them, never copied.
    fn running(&mut self, ui: &mut egui::Ui, id: RunId, run: &ActiveRun) {
        let variant = run.progress().variant.unwrap_or(0);
        let label = run
            .labels()
            .get(variant)
            .map_or_else(|| run.label().to_owned(), Clone::clone);
        ui.heading(format!("{label} (running)"));
        self.transactions.clear();
        let records = run.records(variant);
        self.set_plan_changes([]);
        let progress = run.progress();
        let variants = u32::try_from(run.labels().len().max(1)).unwrap_or(u32::MAX);
        self.streaming = progress.iteration.map(|_| {
            let iteration = records.last().map_or(0, |r| r.iteration + 1);
            Streaming {
                planned: (progress.of / variants).max(iteration + 1),
                iteration,
                so_far_ms: progress.elapsed_ms,
                words: format!(
                    "#{iteration} streaming: {} · {} rows · {}",
                    ms(progress.elapsed_ms),
                    count(progress.rows),
                    bytes(progress.wire_bytes)
                ),
            }
        });
        self.ui(ui, (id, &label), records, run.mode());
        self.streaming = None;
    }

    /// Draws the view of `records`, the iterations of run `run` (its id, a run in flight has its
    /// own, and its label) in `query_mode` (a report's spelling).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        (run, label): (RunId, &str),
        records: &[IterationRecord],
        query_mode: crate::kind::QueryMode,
    ) {
        if self.run != Some(run) {
            self.run = Some(run);
            self.selection.clear();
            self.drag_from = None;
        }
        let flags = flags(records);
        let warmups = records.iter().filter(|r| r.warmup).count();
        ui.horizontal(|ui| {
            ui.label(
                egui::RichText::new(format!(
                    "{} iterations ({} warm-up)",
                    records.len(),
                    warmups
                ))
                .strong(),
            );
            if self.selection.is_empty() {
                ui.label("· click or drag across bars to select iterations");
            } else {
                ui.label(format!("· {} selected", self.selection.len()));
                if ui.small_button("Clear selection").clicked() {
                    self.selection.clear();
                }
            }
        });
        let stacked = stacked_parts(records);
        if let Some(stats) = PartStats::of(records) {
            ui.label(egui::RichText::new(stats.headline().to_string()).strong())
                .on_hover_text("Over every timed iteration; the table below follows the selection");
        }
        let ended = |status: Status| records.iter().any(|r| r.status() == status);
        theme::legend(
            ui,
            stacked
                .iter()
                .map(|p| (p.label(), theme::part(*p)))
                .chain(
                    records
                        .iter()
                        .any(|r| overlap_span(r).is_some())
                        .then_some(("overlap (server beside client, not added)", theme::OVERLAP)),
                )
                .chain(ended(Status::Error).then_some(("failed", theme::ERROR)))
                .chain(
                    ended(Status::Cancelled).then_some(("cancelled (stopped early)", CANCELLED)),
                ),
        );
        let open = self.timeline.run() == Some(run);
        // One scroll under the legend: the chart, its notes, the open timeline with its causes
        // (as high as the room in view, so that its rows and causes are seen at once once it is
        // scrolled to, which opening it does), then the summary, which a timeline never takes
        // away. The chart keeps its height and its axes whatever is open below it.
        let room = ui.available_height();
        egui::ScrollArea::vertical()
            .id_salt("below-chart")
            .auto_shrink([false, false])
            // A drag on the chart selects bars; it never scrolls.
            .scroll_source(egui::scroll_area::ScrollSource {
                scroll_bar: true,
                mouse_wheel: true,
                ..egui::scroll_area::ScrollSource::SCROLL_BAR
            })
            .show(ui, |ui| {
                let top = ui.cursor().top();
                let share = if open { 0.4 } else { 0.55 };
                let plot_height = (room * share).max(180.0);
                self.chart(ui, (run, &stacked), records, &flags, plot_height);
                ui.add_space(6.0);
                self.notes(ui, run, records, &flags, query_mode);
                ui.add_space(4.0);
                let left = room - (ui.cursor().top() - top) - 8.0;
                let conflicts = self.transactions.conflicts(Some(run)).cloned();
                self.timeline.set_conflicts(conflicts);
                if self
                    .timeline
                    .ui(ui, (run, label), records, (left, room - 8.0))
                {
                    ui.add_space(8.0);
                }
                self.summary(ui, records);
                if let Some(rows) = self.transactions.conflict_rows(Some(run)) {
                    ui.add_space(6.0);
                    super::conflicts::ui(ui, rows);
                }
            });
    }

    /// Under the chart: the statistics the mode did not get, the flags (each opens its
    /// iteration's timeline), where the plan changed, and the failures.
    fn notes(
        &mut self,
        ui: &mut egui::Ui,
        run: RunId,
        records: &[IterationRecord],
        flags: &[Flag],
        query_mode: crate::kind::QueryMode,
    ) {
        if let Some(missing) = analysis::missing_statistics(query_mode, records) {
            ui.colored_label(theme::WARN, format!("! {missing}"));
        }
        for flag in flags {
            let text = egui::RichText::new(format!("! {}", flag.text)).color(theme::WARN);
            if ui
                .add(egui::Button::new(text).frame(false))
                .on_hover_text("Open its timeline")
                .clicked()
            {
                self.select([flag.iteration]);
                self.timeline.open(run, flag.iteration);
            }
        }
        for (_, change) in &self.plan_changes {
            ui.colored_label(theme::WARN, format!("! {change}"));
        }
        for line in failures(records) {
            ui.colored_label(theme::ERROR, line);
        }
    }

    /// The summary over the iterations that count: one iteration's own figures, several's spread.
    fn summary(&mut self, ui: &mut egui::Ui, records: &[IterationRecord]) {
        let counted = chosen(records, &self.selection);
        let single = match counted.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        if let (Some(one), Some(run)) = (single, self.run) {
            self.transactions.make_attempts(run, one, records.len());
        }
        let single = single.map(|one| one.iteration);
        let figures = figure_summaries(&counted);
        let stats = PartStats::of(counted);
        let table = Table {
            stats: stats.as_ref(),
            figures: &figures,
            selection: &self.selection,
            single,
            empty: empty_words(records),
            transactions: self.transactions.sentence(self.run),
            attempts: single.and_then(|i| self.transactions.attempts(self.run, i)),
        };
        summary_table(ui, &table);
    }

    fn chart(
        &mut self,
        ui: &mut egui::Ui,
        (run, stacked): (RunId, &[Part]),
        records: &[IterationRecord],
        flags: &[Flag],
        height: f32,
    ) {
        let flagged: BTreeSet<u32> = flags.iter().map(|f| f.iteration).collect();
        let clip = warmup_clip(records);
        let marks = Marks {
            selection: &self.selection,
            flagged: &flagged,
            clip,
        };
        let mut charts = stacked_charts(stacked, records, &marks);
        charts.extend(overlap_chart(records, clip));
        charts.extend(ended_charts(records, &marks));
        let streaming = self.streaming.clone();
        // The iteration streaming now, as far as it has come: the axes have a scale from the
        // first frame of a long first iteration.
        charts.extend(
            streaming
                .as_ref()
                .map(|now| streaming_chart(now.iteration, now.so_far_ms)),
        );
        self.bars = records.len();
        // A warm-up past the clip is drawn cut at it, its figure written on it; a cancelled
        // iteration says so on its bar.
        let warm_labels = bar_words(records, clip);
        // Headroom above the tallest bar for the warm-up labels (the legend is above the plot).
        let tallest = records
            .iter()
            .map(|r| clip.map_or(r.total_ms, |c| r.total_ms.min(c)))
            .chain(streaming.as_ref().map(|s| s.so_far_ms))
            .fold(0.0, f64::max);
        let plan_marks: Vec<u32> = self.plan_changes.iter().map(|(i, _)| *i).collect();
        // While the first iterations stream, the axis spans the run from its first iteration
        // (alone, the streaming bar made it read −0.3 to 0.3).
        let span = streaming
            .as_ref()
            .map_or(0.0, |s| f64::from(s.planned) - 0.5);
        let response = Plot::new("iterations-plot")
            .height(height)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .allow_boxed_zoom(false)
            .allow_double_click_reset(false)
            .include_y(0.0)
            .include_y(tallest * 1.12)
            .y_axis_label("time")
            .y_axis_formatter(|mark, _| ms(mark.value))
            .x_axis_label("iteration")
            .include_x(if span > 0.0 { -0.5 } else { 0.0 })
            .include_x(span)
            .x_grid_spacer(iteration_marks)
            .x_axis_formatter(|mark, _| iteration_tick(mark.value))
            .show(ui, |plot| {
                for chart in charts {
                    plot.bar_chart(chart);
                }
                for &i in &plan_marks {
                    // Between the last iteration of the old plan and the first of the new.
                    let x = f64::from(i) - 0.5;
                    plot.vline(
                        egui_plot::VLine::new("plan changed", x)
                            .color(theme::WARN)
                            .style(egui_plot::LineStyle::dashed_loose()),
                    );
                    plot.text(
                        Text::new("", PlotPoint::new(x, tallest * 1.2), "plan changed")
                            .id(("plan-change", i))
                            .color(theme::WARN)
                            .anchor(egui::Align2::LEFT_BOTTOM),
                    );
                }
                if let Some(now) = &streaming {
                    plot.text(
                        Text::new(
                            "",
                            PlotPoint::new(f64::from(now.iteration), now.so_far_ms),
                            // At the text's own size: the small style's 8 points were hard to read.
                            egui::RichText::new(now.words.as_str())
                                .text_style(egui::TextStyle::Body),
                        )
                        .id("streaming")
                        .color(theme::MUTED)
                        .anchor(egui::Align2::RIGHT_BOTTOM),
                    );
                }
                for (i, y, words) in warm_labels {
                    // Unnamed, so the legend leaves it out; from the bar's left edge rightwards,
                    // so that the first bar's label stays inside the plot.
                    let x = f64::from(i) - BAR_WIDTH / 2.0;
                    plot.text(
                        Text::new("", PlotPoint::new(x, y), words)
                            .id(("warm-up", i))
                            .color(theme::MUTED)
                            .anchor(egui::Align2::LEFT_BOTTOM),
                    );
                }
            });
        self.plot_rect = Some(response.response.rect);
        self.transform = Some(response.transform);
        let hovered = hovered_bar(&response, records);
        self.hovered = hovered.map(|r| r.iteration);
        if let Some(r) = hovered {
            response.response.clone().on_hover_ui_at_pointer(|ui| {
                ui.label(tooltip(r));
            });
        }
        if let Some(clicked) = self.select_with_pointer(ui, &response, records) {
            self.timeline.open(run, clicked);
        }
    }

    /// Click selects one bar (Shift or Ctrl adds to the selection); a drag selects the range.
    /// Returns the bar clicked alone (its timeline opens).
    fn select_with_pointer(
        &mut self,
        ui: &egui::Ui,
        plot: &egui_plot::PlotResponse<()>,
        records: &[IterationRecord],
    ) -> Option<u32> {
        let response = &plot.response;
        let x_at = |pos: egui::Pos2| plot.transform.value_from_position(pos).x;
        let additive = ui.input(|i| i.modifiers.shift || i.modifiers.command);
        if response.drag_started()
            && let Some(pos) = response.interact_pointer_pos()
        {
            self.drag_from = Some(x_at(pos));
        }
        if response.drag_stopped()
            && let (Some(from), Some(pos)) =
                (self.drag_from.take(), response.interact_pointer_pos())
        {
            let to = x_at(pos);
            let (lo, hi) = (from.min(to), from.max(to));
            let hit = records
                .iter()
                .map(|r| r.iteration)
                .filter(|&i| (i as f64) >= lo - 0.35 && (i as f64) <= hi + 0.35);
            if !additive {
                self.selection.clear();
            }
            self.selection.extend(hit);
        }
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
        {
            let x = x_at(pos).round();
            let hit = records.iter().map(|r| r.iteration).find(|&i| i as f64 == x);
            match hit {
                Some(i) if additive => {
                    if !self.selection.remove(&i) {
                        self.selection.insert(i);
                    }
                }
                Some(i) => {
                    self.select([i]);
                    return Some(i);
                }
                None => self.selection.clear(),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
