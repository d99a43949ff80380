//! The iterations view: one stacked bar per iteration (server, network, wire decode, row decode,
//! other), warm-ups marked, exact figures on hover (a tooltip egui keeps inside the window),
//! click or drag to select iterations; the legend above the plot, never over its bars; a summary
//! table per phase over the selection (or every timed iteration); the slow first iteration, the
//! outliers and statistics the mode asked for and did not get flagged. The tab around it: the run
//! in flight, or the run shown, picked from the list.

use std::collections::BTreeSet;

use egui_plot::{Bar, BarChart, Plot, PlotPoint, Text};

use super::labels::one_line;
use super::run::ActiveRun;
use super::run_list::{RunEntry, RunList};
use super::theme;
use super::timeline_view::TimelineView;
use crate::analysis;
use crate::report::{IterationRecord, LatencyPoint, Phase, Status, latency_summaries};
use crate::stats::{self, Summary};

/// A bar's width, in iterations.
const BAR_WIDTH: f64 = 0.7;

/// The stacked segments of a bar, bottom to top.
pub const SEGMENTS: [&str; 5] = ["server", "network", "wire decode", "row decode", "other"];

/// One bar's segments in milliseconds, in [`SEGMENTS`] order. The client's wait on the network
/// includes the server's own time, so the server's share is taken out of it; it is capped by it,
/// because a streaming server works while the client decodes, and only the wait is the client's
/// time to attribute.
pub fn segments(r: &IterationRecord) -> [f64; 5] {
    let network = r.network_ms.unwrap_or(0.0).max(0.0);
    let server = r.server_ms.unwrap_or(0.0).clamp(0.0, network);
    let wire = r.wire_decode_ms.unwrap_or(0.0).max(0.0);
    let row = r.row_decode_ms.unwrap_or(0.0).max(0.0);
    let other = r
        .other_ms
        .unwrap_or(r.total_ms - network - wire - row)
        .max(0.0);
    [server, network - server, wire, row, other]
}

/// The stacked segments of a client program's bar (`spanprof client`), bottom to top: its time as
/// the local instance saw it.
pub const CLIENT_SEGMENTS: [&str; 5] = [
    "starting",
    "to first byte",
    "streaming",
    "blocked",
    "to exit",
];

/// One client program's bar in [`CLIENT_SEGMENTS`] order: start-up, request to first byte, the
/// transfer less the time the server was blocked on the client, that blocked time, and last byte
/// to exit.
pub fn client_segments(r: &IterationRecord) -> [f64; 5] {
    let part = |x: Option<f64>| x.unwrap_or(0.0).max(0.0);
    let transfer = part(r.transfer_ms);
    let blocked = part(r.blocked_ms).min(transfer);
    [
        part(r.startup_ms),
        part(r.first_byte_ms),
        transfer - blocked,
        blocked,
        part(r.tail_ms),
    ]
}

/// Which bars a run's records stack: a client program's (their phases measured at the server)
/// or a query's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Query,
    Client,
}

impl Layout {
    fn of(records: &[IterationRecord]) -> Layout {
        if records.iter().any(|r| r.startup_ms.is_some()) {
            Layout::Client
        } else {
            Layout::Query
        }
    }

    fn names(self) -> [&'static str; 5] {
        match self {
            Layout::Query => SEGMENTS,
            Layout::Client => CLIENT_SEGMENTS,
        }
    }

    fn segments(self, r: &IterationRecord) -> [f64; 5] {
        match self {
            Layout::Query => segments(r),
            Layout::Client => client_segments(r),
        }
    }
}

/// Something a reader should notice about an iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// The iteration's number.
    pub iteration: u32,
    /// What about it, in words.
    pub text: String,
}

/// The slow first iteration (in run order, warm-ups included) and the outlying timed iterations
/// (MAD rule on the total), as [`analysis::findings`] found them.
pub fn flags(records: &[IterationRecord]) -> Vec<Flag> {
    let found = analysis::findings(records);
    let slow = found.slow_start().map(|first| Flag {
        iteration: first.iteration,
        text: format!(
            "#{} is a slow cold start: {:.2} ms, {:.1}× the median of the rest",
            first.iteration, first.total_ms, first.ratio
        ),
    });
    let outliers = found.outliers.iter().map(|o| Flag {
        iteration: o.iteration,
        text: format!("#{} is an outlier: {:.2} ms", o.iteration, o.total_ms),
    });
    slow.into_iter().chain(outliers).collect()
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

/// Google's latency points over the same iterations as [`summaries`].
pub fn latency_points(
    records: &[IterationRecord],
    selection: &BTreeSet<u32>,
) -> Vec<(LatencyPoint, Summary)> {
    latency_summaries(&chosen(records, selection))
}

/// The summary of each phase over `records` that count (timed, and in `selection` if it is not
/// empty).
pub fn summaries(records: &[IterationRecord], selection: &BTreeSet<u32>) -> Vec<(Phase, Summary)> {
    let chosen = chosen(records, selection);
    Phase::ALL
        .into_iter()
        .filter_map(|phase| {
            let samples: Vec<f64> = chosen.iter().filter_map(|r| r.phase_ms(phase)).collect();
            Some((phase, stats::summarize(&samples)?))
        })
        .collect()
}

/// The iterations view's state: the selection, and which run it belongs to.
#[derive(Debug, Default)]
pub struct IterationsView {
    run: Option<u64>,
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
    /// The run in flight's records of the variant streaming now, copied when one is added (not
    /// each frame: each holds its timeline): (run, variant, records seen, the copies).
    running: Option<(u64, String, usize, Vec<IterationRecord>)>,
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
    pub fn run(&self) -> Option<u64> {
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
        active: Option<(u64, &ActiveRun)>,
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
                &config.query_mode,
            );
        }
    }

    /// The run in flight, numbered `id`: with several variants, the bars of the one streaming now.
    fn running(&mut self, ui: &mut egui::Ui, id: u64, run: &ActiveRun) {
        let label = run
            .progress()
            .variant
            .and_then(|v| run.labels().get(v))
            .map_or_else(|| run.label().to_owned(), Clone::clone);
        ui.heading(format!("{label} (running)"));
        let seen = run.records().len();
        let cached = match self.running.take() {
            Some(c) if c.0 == id && c.1 == label && c.2 == seen => c,
            _ => {
                let records = run
                    .records()
                    .iter()
                    .filter(|r| r.run == label)
                    .cloned()
                    .collect();
                (id, label.clone(), seen, records)
            }
        };
        self.set_plan_changes([]);
        self.ui(ui, (id, &label), &cached.3, run.mode().as_str());
        self.running = Some(cached);
    }

    /// Draws the view of `records`, the iterations of run `run` (its id, a run in flight has its
    /// own, and its label) in `query_mode` (a report's spelling).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        (run, label): (u64, &str),
        records: &[IterationRecord],
        query_mode: &str,
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
        let layout = Layout::of(records);
        theme::legend(ui, layout.names().into_iter().zip(theme::SEGMENT_COLORS));
        let open = self.timeline.run() == Some(run);
        let share = if open { 0.3 } else { 0.55 };
        let plot_height = (ui.available_height() * share).max(if open { 140.0 } else { 180.0 });
        self.chart(ui, run, records, &flags, plot_height);
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
        for r in records.iter().filter(|r| r.status == Status::Error) {
            ui.colored_label(
                theme::ERROR,
                format!(
                    "#{} failed: {}",
                    r.iteration,
                    r.error.as_deref().unwrap_or("unknown error")
                ),
            );
        }
        ui.add_space(4.0);
        if !self.timeline.ui(ui, run, label, records) {
            let points = latency_points(records, &self.selection);
            summary_table(
                ui,
                &summaries(records, &self.selection),
                &points,
                &self.selection,
            );
        }
    }

    fn chart(
        &mut self,
        ui: &mut egui::Ui,
        run: u64,
        records: &[IterationRecord],
        flags: &[Flag],
        height: f32,
    ) {
        let flagged: BTreeSet<u32> = flags.iter().map(|f| f.iteration).collect();
        let layout = Layout::of(records);
        let mut charts: Vec<BarChart> = Vec::with_capacity(SEGMENTS.len());
        for (k, name) in layout.names().iter().enumerate() {
            let bars: Vec<Bar> = records
                .iter()
                .map(|r| {
                    let height = if r.status == Status::Ok {
                        layout.segments(r)[k]
                    } else if k == SEGMENTS.len() - 1 {
                        r.total_ms
                    } else {
                        0.0
                    };
                    let mut fill = if r.status == Status::Ok {
                        theme::SEGMENT_COLORS[k]
                    } else {
                        theme::ERROR
                    };
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
            let chart = BarChart::new(*name, bars)
                .color(theme::SEGMENT_COLORS[k])
                .element_formatter(Box::new(|_, _| String::new()))
                .stack_on(&refs);
            charts.push(chart);
        }
        self.bars = records.len();
        let warm_labels: Vec<(u32, f64)> = records
            .iter()
            .filter(|r| r.warmup)
            .map(|r| (r.iteration, r.total_ms))
            .collect();
        // Headroom above the tallest bar for the warm-up labels (the legend is above the plot).
        let tallest = records.iter().map(|r| r.total_ms).fold(0.0, f64::max);
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
            .y_axis_label("ms")
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
                for (i, y) in warm_labels {
                    // Unnamed, so the legend leaves it out.
                    plot.text(
                        Text::new("", PlotPoint::new(f64::from(i), y), "warm-up")
                            .id(("warm-up", i))
                            .color(theme::MUTED)
                            .anchor(egui::Align2::CENTER_BOTTOM),
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

/// A bar's outline: white when selected, the warning colour when flagged, else none (a thin
/// outline in the bar's own colour drew a dark rim round every bar, which read as selected).
fn bar_stroke(selected: bool, flagged: bool) -> egui::Stroke {
    if selected {
        egui::Stroke::new(2.0, theme::SELECTED)
    } else if flagged {
        egui::Stroke::new(1.5, theme::WARN)
    } else {
        egui::Stroke::NONE
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

/// The hover text of an iteration's bar: every figure, exactly.
fn tooltip(r: &IterationRecord) -> String {
    let mut text = format!(
        "#{}{} · {}\ntotal {:.3} ms",
        r.iteration,
        if r.warmup { " (warm-up)" } else { "" },
        r.status.as_str(),
        r.total_ms
    );
    let layout = Layout::of(std::slice::from_ref(r));
    let parts = layout.segments(r);
    // The server's time the bar cannot hold (it overlapped the client's own work).
    let beyond = r.server_ms.unwrap_or(0.0) - parts[0];
    for (name, value) in layout.names().iter().zip(parts) {
        text.push_str(&format!("\n{name} {value:.3} ms"));
        if layout == Layout::Query && *name == "network" && beyond > 0.0005 {
            text.push_str(" (the client's waits less the server's time)");
        }
    }
    if let Some(server) = r.server_ms.filter(|_| layout == Layout::Query) {
        text.push_str(&server_line(r, server, beyond));
    }
    if let Some(ttfb) = r.ttfb_ms {
        text.push_str(&format!("\nfirst byte {ttfb:.3} ms"));
    }
    text.push_str(&format!(
        "\n{} rows · {} messages · {:.2} MB",
        r.rows,
        r.messages,
        r.wire_bytes as f64 / 1e6
    ));
    if r.resumes > 0 {
        text.push_str(&format!("\n{} resumes", r.resumes));
    }
    if let Some(e) = &r.error {
        text.push_str(&format!("\n{e}"));
    }
    text
}

/// What the server reports against what the bar draws of it: the stacked bar holds only the part
/// within the client's waits; the rest overlapped the client's own work, which the timeline shows.
fn server_line(r: &IterationRecord, server: f64, beyond: f64) -> String {
    if beyond <= 0.0005 {
        return format!(
            "\nthe server reports {server:.3} ms elapsed, all within the client's waits"
        );
    }
    match super::timeline_rows::server_overlap(r) {
        Some(o) => format!(
            "\nthe server reports {server:.3} ms elapsed: the bar holds {:.3} ms (as much as the client waited);\non the timeline {:.3} ms of it fell in the client's waits, {:.3} ms beside its decode\nand {:.3} ms beside its other work (click for the timeline)",
            server - beyond,
            parts_ms(o.in_waits_us),
            parts_ms(o.over_decode_us),
            parts_ms(o.rest_us)
        ),
        None => format!(
            "\nthe server reports {server:.3} ms elapsed: the bar holds {:.3} ms (as much as the client waited); {beyond:.3} ms overlapped the client's own work",
            server - beyond
        ),
    }
}

fn parts_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The per-phase summary table: median, mean, σ, min, max, p90, p99 in milliseconds; below the
/// phases, Google's latency points (operation, attempt, gfe, afe, query) when any was measured.
pub fn summary_table(
    ui: &mut egui::Ui,
    rows: &[(Phase, Summary)],
    points: &[(LatencyPoint, Summary)],
    selection: &BTreeSet<u32>,
) {
    let over = if selection.is_empty() {
        "every timed iteration".to_owned()
    } else {
        format!("{} selected iterations", selection.len())
    };
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new("Summary").strong());
        ui.label(egui::RichText::new(format!("(ms, over {over})")).small());
    });
    if rows.is_empty() {
        ui.label("No timed iteration yet.");
        return;
    }
    egui::Grid::new("summary-table")
        .striped(true)
        .num_columns(9)
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for heading in [
                "phase", "n", "median", "mean", "σ", "min", "max", "p90", "p99",
            ] {
                ui.label(egui::RichText::new(heading).strong());
            }
            ui.end_row();
            let phases = rows.iter().map(|(phase, s)| (phase.label(), s));
            let google = points.iter().map(|(point, s)| (point.name(), s));
            for (i, (name, s)) in phases.chain(google).enumerate() {
                if i == rows.len() {
                    ui.label(egui::RichText::new("Google's latency points").strong());
                    ui.end_row();
                }
                ui.label(name);
                ui.monospace(s.count.to_string());
                for value in [s.median, s.mean, s.std_dev, s.min, s.max, s.p90, s.p99] {
                    ui.monospace(format!("{value:.3}"));
                }
                ui.end_row();
            }
        });
}

#[cfg(test)]
#[path = "iterations/tests.rs"]
mod tests;
