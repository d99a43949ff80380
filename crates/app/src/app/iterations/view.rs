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

use egui_plot::{Bar, BarChart, Plot, PlotPoint, Text};

use crate::analysis::{self, PartStats};
use crate::app::labels::one_line;
use crate::app::runs::{ActiveRun, RunEntry, RunList};
use crate::app::theme;
use crate::app::timeline::TimelineView;
use crate::part::Part;
use crate::report::{Figure, IterationRecord, RunId, Status, figure_summaries};
use crate::stats::Summary;
use crate::text::{bytes, count, ms};

pub use super::summary::summary_table;
pub use super::words::{Flag, failures, flags, tooltip};

/// A bar's width, in iterations.
const BAR_WIDTH: f64 = 0.7;

/// The parts the bars of `records` stack, bottom to top: every part some iteration had, in
/// [`Part::ALL`] order (untimed last for a query, and for a failed iteration the whole bar).
pub fn stacked_parts(records: &[IterationRecord]) -> Vec<Part> {
    let mut had = 0u32;
    for r in records {
        for (part, _) in r.accounting().parts.iter() {
            had |= 1 << part.index();
        }
    }
    Part::ALL
        .into_iter()
        .filter(|p| had & (1 << p.index()) != 0)
        .collect()
}

/// Where an iteration's overlap is drawn: from the top of its waits (the parts before the decode)
/// up by the overlap, as far as the bar goes; `None` without one.
pub fn overlap_span(r: &IterationRecord) -> Option<(f64, f64)> {
    let a = r.accounting();
    let overlap = a.overlap_ms.filter(|o| *o > 0.0)?;
    let waits: f64 = a
        .parts
        .iter()
        .take_while(|(p, _)| !p.is_client_cpu() && *p != Part::Descheduled && *p != Part::Untimed)
        .map(|(_, ms)| ms)
        .sum();
    let room = (a.parts.sum_ms() - waits).max(0.0);
    Some((waits, overlap.min(room)))
}

/// The run picker above the bars: every run by its title, newest first.
fn run_picker(ui: &mut egui::Ui, runs: &mut RunList) {
    let mut shown = runs.shown_id();
    ui.horizontal(|ui| {
        let title = runs.shown().map(RunEntry::title).unwrap_or_default();
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

/// The figures beside the parts over the same iterations as [`part_stats`].
pub fn figures(records: &[IterationRecord], selection: &BTreeSet<u32>) -> Vec<(Figure, Summary)> {
    figure_summaries(&chosen(records, selection))
}

/// The parts of the `records` that count (timed, and in `selection` if it is not empty), as
/// `analysis` summarises them.
pub fn part_stats(records: &[IterationRecord], selection: &BTreeSet<u32>) -> Option<PartStats> {
    PartStats::of(chosen(records, selection))
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

    /// The timeline view (which iteration is open, what it drew).
    pub fn timeline(&mut self) -> &mut TimelineView {
        &mut self.timeline
    }

    /// How many bars (iterations) the chart drew last frame.
    pub fn bars_drawn(&self) -> usize {
        self.bars
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
            if let (Some(_), true) = (&run.report.stopped, nothing_ok) {
                // Said once, beside the editor (and in the status bar): no chart of one failure.
                ui.add_space(12.0);
                ui.label(
                    egui::RichText::new(
                        "This run stopped after its first iteration: the server refused the query \
                         with an error no retry can fix. Its message is beside the SQL editor, the \
                         part it points at marked.",
                    )
                    .color(theme::MUTED),
                );
                return;
            }
            ui.label(
                egui::RichText::new(format!(
                    "{} · {} · mode {}",
                    config.target,
                    one_line(&config.sql, 80),
                    config.query_mode
                ))
                .small()
                .color(theme::MUTED),
            );
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
        let records = run.records(variant);
        self.set_plan_changes([]);
        let progress = run.progress();
        self.streaming = progress.iteration.map(|_| {
            let iteration = records.last().map_or(0, |r| r.iteration + 1);
            Streaming {
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
        theme::legend(
            ui,
            stacked.iter().map(|p| (p.label(), theme::part(*p))).chain(
                records
                    .iter()
                    .any(|r| overlap_span(r).is_some())
                    .then_some(("overlap (server beside client, not added)", theme::OVERLAP)),
            ),
        );
        let open = self.timeline.run() == Some(run);
        // Room for the timeline below when one is open, never so little that the axes go.
        let share = if open { 0.4 } else { 0.55 };
        let plot_height = (ui.available_height() * share).max(180.0);
        self.chart(ui, (run, &stacked), records, &flags, plot_height);
        ui.add_space(6.0);
        if let Some(missing) = analysis::missing_statistics(query_mode, records) {
            ui.colored_label(theme::WARN, format!("! {missing}"));
        }
        for flag in &flags {
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
        ui.add_space(4.0);
        // Below the chart, one scroll: the open timeline with its causes, then the summary,
        // which a timeline never takes away.
        egui::ScrollArea::vertical()
            .id_salt("below-chart")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                if self.timeline.ui(ui, run, label, records) {
                    ui.add_space(8.0);
                }
                summary_table(
                    ui,
                    part_stats(records, &self.selection).as_ref(),
                    &figures(records, &self.selection),
                    &self.selection,
                );
            });
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
        let mut charts = self.stacked_charts(stacked, records, &flagged, clip);
        charts.extend(overlap_chart(records, clip));
        let streaming = self.streaming.clone();
        if let Some(now) = &streaming {
            // The iteration streaming now, as far as it has come: the axes have a scale from the
            // first frame of a long first iteration.
            let bar = Bar::new(f64::from(now.iteration), now.so_far_ms)
                .width(BAR_WIDTH)
                .fill(theme::MUTED.gamma_multiply(0.35))
                .stroke(egui::Stroke::new(1.0, theme::MUTED));
            charts.push(
                BarChart::new("streaming", vec![bar])
                    .color(theme::MUTED)
                    .element_formatter(Box::new(|_, _| String::new())),
            );
        }
        self.bars = records.len();
        // A warm-up past the clip is drawn cut at it, its figure written on it.
        let warm_labels: Vec<(u32, f64, String)> = records
            .iter()
            .filter(|r| r.warmup)
            .map(|r| match clip {
                Some(c) if r.total_ms > c => {
                    (r.iteration, c, format!("warm-up {} (cut)", ms(r.total_ms)))
                }
                _ => (r.iteration, r.total_ms, "warm-up".to_owned()),
            })
            .collect();
        // Headroom above the tallest bar for the warm-up labels (the legend is above the plot).
        let tallest = records
            .iter()
            .map(|r| clip.map_or(r.total_ms, |c| r.total_ms.min(c)))
            .chain(streaming.as_ref().map(|s| s.so_far_ms))
            .fold(0.0, f64::max);
        let plan_marks: Vec<u32> = self.plan_changes.iter().map(|(i, _)| *i).collect();
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
                            now.words.as_str(),
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

    /// One bar chart per part, stacked: each iteration's part in its colour (a failed iteration
    /// one bar of its whole time, in the error colour), warm-ups faded, selected and flagged bars
    /// outlined.
    fn stacked_charts(
        &self,
        stacked: &[Part],
        records: &[IterationRecord],
        flagged: &BTreeSet<u32>,
        clip: Option<f64>,
    ) -> Vec<BarChart> {
        let parts: Vec<crate::report::Parts> =
            records.iter().map(|r| r.accounting().parts).collect();
        let mut charts: Vec<BarChart> = Vec::with_capacity(stacked.len() + 1);
        // Each bar's height so far, to cut a warm-up's parts at the clip.
        let mut below = vec![0.0f64; records.len()];
        for (k, &part) in stacked.iter().enumerate() {
            let last = k + 1 == stacked.len();
            let bars: Vec<Bar> = records
                .iter()
                .zip(&parts)
                .zip(&mut below)
                .map(|((r, p), below)| {
                    let ok = r.status() == Status::Ok;
                    let full = match (ok, last) {
                        (true, _) => p.ms(part),
                        (false, true) => r.total_ms,
                        (false, false) => 0.0,
                    };
                    let height = match clip.filter(|_| r.warmup) {
                        Some(c) => (*below + full).min(c) - below.min(c),
                        None => full,
                    };
                    *below += full;
                    let mut fill = if ok { theme::part(part) } else { theme::ERROR };
                    if r.warmup {
                        fill = fill.gamma_multiply(0.4);
                    }
                    let stroke = bar_stroke(
                        self.selection.contains(&r.iteration),
                        flagged.contains(&r.iteration),
                    );
                    Bar::new(r.iteration as f64, height)
                        .width(BAR_WIDTH)
                        .fill(fill)
                        .stroke(stroke)
                        .name(format!("#{}", r.iteration))
                })
                .collect();
            let refs: Vec<&BarChart> = charts.iter().collect();
            // No text drawn beside the hovered bar (egui_plot draws it to the bar's right, past
            // the window's edge for the last bars): the tooltip below says it all.
            let chart = BarChart::new(part.label(), bars)
                .color(theme::part(part))
                .element_formatter(Box::new(|_, _| String::new()))
                .stack_on(&refs);
            charts.push(chart);
        }
        charts
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

/// The overlaps of `records`, outlined over their decode: drawn, never stacked or added.
fn overlap_chart(records: &[IterationRecord], clip: Option<f64>) -> Option<BarChart> {
    let overlaps: Vec<Bar> = records
        .iter()
        .filter(|r| r.status() == Status::Ok)
        .filter_map(|r| {
            let (base, height) = overlap_span(r)?;
            let height = match clip.filter(|_| r.warmup) {
                Some(c) if base >= c => return None,
                Some(c) => height.min(c - base),
                None => height,
            };
            Some(
                Bar::new(r.iteration as f64, height)
                    .base_offset(base)
                    .width(BAR_WIDTH * 0.55)
                    .fill(theme::OVERLAP.gamma_multiply(0.25))
                    .stroke(egui::Stroke::new(1.5, theme::OVERLAP)),
            )
        })
        .collect();
    (!overlaps.is_empty()).then(|| {
        BarChart::new("overlap", overlaps)
            .color(theme::OVERLAP)
            .element_formatter(Box::new(|_, _| String::new()))
    })
}

/// Where the chart cuts warm-ups: a little above the tallest timed iteration, when a warm-up is
/// more than 1.5 times that (a cold start would otherwise set the scale and leave the timed bars
/// a fifth of the height); `None` when no warm-up stands that far out, or none is timed.
pub fn warmup_clip(records: &[IterationRecord]) -> Option<f64> {
    let timed = records
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.total_ms)
        .fold(0.0, f64::max);
    let warm = records
        .iter()
        .filter(|r| r.warmup)
        .map(|r| r.total_ms)
        .fold(0.0, f64::max);
    (timed > 0.0 && warm > timed * 1.5).then_some(timed * 1.15)
}

/// A bar's outline: white when selected, the warning colour when flagged, else a hairline in the
/// plot's own dark that parts each stacked segment from the next, a cue besides hue (a thin
/// outline in the bar's own colour drew a rim round every bar, which read as selected).
fn bar_stroke(selected: bool, flagged: bool) -> egui::Stroke {
    if selected {
        egui::Stroke::new(2.0, theme::SELECTED)
    } else if flagged {
        egui::Stroke::new(1.5, theme::WARN)
    } else {
        egui::Stroke::new(1.0, theme::SEPARATOR)
    }
}

/// The iteration whose bar's column the pointer is over, if any.
fn hovered_bar<'r>(
    plot: &egui_plot::PlotResponse<()>,
    records: &'r [IterationRecord],
) -> Option<&'r IterationRecord> {
    let pos = plot.response.hover_pos()?;
    let x = plot.transform.value_from_position(pos).x;
    records
        .iter()
        .find(|r| (x - f64::from(r.iteration)).abs() <= BAR_WIDTH / 2.0)
}

#[cfg(test)]
mod tests;
