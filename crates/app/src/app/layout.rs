//! The window's panels around the views: the menu bar (File, with the runs' exports and the load
//! run's, the tabs, Export, Copy summary), the status bar (the run or load run, the target, the
//! last notice, a desktop dialog being waited for), the side panel (connection, then query; its
//! Run bar starts a load run on the Load tab) and the central area's tab.

use super::SpanprofApp;
use super::command::Command;
use super::connection::{ConnectionSettings, TargetKind, repaint_notifier};
use super::settings::Tab;
use super::theme;
use crate::engine::QueryMode;
use crate::export::{Format, RunKind};
use crate::text::count;

impl SpanprofApp {
    /// The menu bar; the command a click asked for.
    pub(super) fn menu_bar(&mut self, ui: &mut egui::Ui) -> Option<Command> {
        let mut command = None;
        egui::MenuBar::new().ui(ui, |ui| {
            ui.label(egui::RichText::new("spanprof").strong().size(16.0));
            ui.separator();
            ui.menu_button("File", |ui| {
                if ui.button("Open report…").clicked() {
                    command = Some(Command::OpenReport);
                }
                ui.separator();
                for format in Format::of(RunKind::Profile) {
                    let label = format!("Export {}", format.label(RunKind::Profile));
                    if ui.button(label).clicked() {
                        command = Some(Command::Export(format, RunKind::Profile));
                    }
                }
                ui.menu_button("Export the load run", |ui| {
                    for format in Format::of(RunKind::Load) {
                        if ui.button(format.label(RunKind::Load)).clicked() {
                            command = Some(Command::Export(format, RunKind::Load));
                        }
                    }
                });
                if ui.button("Copy summary").clicked() {
                    command = Some(Command::CopySummary);
                }
            });
            ui.separator();
            for (tab, name) in [
                (Tab::Iterations, "Iterations"),
                (Tab::Compare, "Compare"),
                (Tab::Plan, "Plan"),
                (Tab::Details, "Details"),
                (Tab::History, "History"),
                (Tab::Load, "Load"),
            ] {
                let chosen = ui.selectable_value(&mut self.settings.tab, tab, name);
                if chosen.has_focus() {
                    // A selected tab is drawn in the selection's colours, which hide egui's focus
                    // outline: the keyboard's place is drawn over them.
                    ui.painter().rect_stroke(
                        chosen.rect.expand(1.0),
                        3.0,
                        egui::Stroke::new(2.0, theme::FOCUS),
                        egui::StrokeKind::Outside,
                    );
                }
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button("Copy summary").clicked() {
                    command = Some(Command::CopySummary);
                }
                ui.menu_button("Export", |ui| {
                    for format in Format::of(RunKind::Profile) {
                        if ui.button(format.label(RunKind::Profile)).clicked() {
                            command = Some(Command::Export(format, RunKind::Profile));
                        }
                    }
                });
            });
        });
        command
    }

    /// The status bar.
    pub(super) fn status_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            if self.dialogs.waiting_for_system() {
                ui.spinner();
                ui.label("waiting for the desktop's file dialog");
                if ui
                    .small_button("Use spanprof's dialog")
                    .on_hover_text("The desktop's dialog did not appear? Choose the file here")
                    .clicked()
                {
                    self.dialogs.use_built_in(repaint_notifier(&self.ctx));
                }
                ui.separator();
            }
            match self.runs.active() {
                Some(run) => {
                    ui.colored_label(theme::WARN, "running");
                    let target = run.target().unwrap_or("connecting");
                    ui.label(format!("{} · {target}", run.label()));
                }
                None if self.runs.is_loading() => {
                    ui.colored_label(theme::WARN, "running");
                    ui.label("load run");
                }
                None => match cancelled_at(self.runs.entries()) {
                    // The last run was cancelled: said so, not a green "ready" over its grey bar.
                    Some((label, at)) => {
                        ui.colored_label(theme::WARN, "cancelled");
                        ui.label(format!(
                            "{label}: stopped during #{at} · ready to run again"
                        ));
                    }
                    None => {
                        ui.colored_label(theme::OK, "ready");
                    }
                },
            }
            ui.separator();
            ui.label(target_summary(&self.settings.connection));
            if let Some(notice) = &self.notice {
                ui.separator();
                let is_error = self.log.last().is_some_and(|e| &e.message == notice);
                let color = if is_error { theme::ERROR } else { theme::MUTED };
                ui.colored_label(color, notice);
            }
        });
    }

    /// The side panel: the connection, then the query; the command a click asked for.
    pub(super) fn side_panel(&mut self, ui: &mut egui::Ui) -> Option<Command> {
        let mut command = None;
        let running = self.runs.is_running();
        // Run, Cancel and the progress first, pinned at the bottom: in view at any height. On
        // the Load tab they start and stop a load run.
        egui::Panel::bottom("run-bar")
            .resizable(false)
            .show(ui, |ui| {
                command = if self.settings.tab == Tab::Load {
                    let query = &self.settings.query;
                    let empty =
                        !query.subject && query.variants.iter().all(|v| v.sql.trim().is_empty());
                    self.load.run_bar(ui, &self.settings.load, running, empty)
                } else {
                    self.query
                        .run_bar(ui, &self.settings.query, self.runs.active())
                };
            });
        // As wide as the panel was dragged: its rows wrap to that width (a sideways scroll would
        // stop text wrapping and cut it at the panel's edge), so none widens the panel and its
        // edge drags narrower.
        egui::ScrollArea::vertical()
            .auto_shrink([false, true])
            .show(ui, |ui| {
                egui::CollapsingHeader::new(egui::RichText::new("Connection").strong())
                    .default_open(true)
                    .show(ui, |ui| {
                        let kind = self.settings.connection.kind;
                        let asked = self.connection.ui(
                            ui,
                            &mut self.settings.connection,
                            self.emulator.status(),
                            !running,
                        );
                        command = command.take().or(asked);
                        if self.settings.connection.kind != kind {
                            self.target_kind_changed(kind);
                        }
                    });
                ui.separator();
                egui::CollapsingHeader::new(egui::RichText::new("Query").strong())
                    .default_open(true)
                    .show(ui, |ui| {
                        let refusal = super::query::Refusal::of_latest(self.runs.entries());
                        self.query.ui(ui, &mut self.settings.query, refusal);
                    });
            });
        command
    }

    /// A target of another kind was picked (the panel was on `from`): the query mode becomes the
    /// one the person had there, or, on a kind not visited, the one that returns the query
    /// statistics when they had left it at the default (the emulator returns none in "With
    /// stats"). The status line says what changed.
    fn target_kind_changed(&mut self, from: TargetKind) {
        let to = self.settings.connection.kind;
        // A kind whose fields make no target yet (an empty host:port) still has its mode restored.
        let statistics = self.settings.connection.target().ok();
        let statistics = statistics.map(|(target, _)| target.default_mode());
        let mode = &mut self.settings.query.mode;
        let change = self
            .settings
            .modes_by_target
            .switched(from, to, *mode, statistics);
        if let Some(change) = change {
            *mode = change.mode;
            self.notice = Some(change.words);
        }
    }

    /// The central area: the open tab; the command a click asked for.
    pub(super) fn central(&mut self, ui: &mut egui::Ui) -> Option<Command> {
        match self.settings.tab {
            Tab::Iterations => {
                let (active, list) = self.runs.in_flight_and_list();
                if let (None, Some(why)) = (&active, &self.failed_run) {
                    failed_run_ui(ui, why, list.entries().len());
                }
                self.iterations.tab(ui, active, list);
                if self.runs.list().shown().is_some() {
                    // A run picked: the failure was seen.
                    self.failed_run = None;
                }
            }
            Tab::Compare => self.compare.ui(ui, self.runs.list_mut().entries_mut()),
            Tab::History => self.history_view.ui(ui),
            Tab::Load => {
                let local = self.settings.connection.kind == TargetKind::Local;
                let read_write = self.settings.query.first().is_some_and(|v| v.read_write);
                return self.load.ui(ui, &mut self.settings.load, local, read_write);
            }
            Tab::Details => {
                let shown = self.runs.list().shown();
                let details = shown.and_then(|r| r.details.as_deref());
                // With no run shown, nothing was asked of the server.
                let mode = shown.map_or(QueryMode::Normal, |r| r.report.config.query_mode);
                self.details.ui(ui, details, mode, &self.log);
            }
            Tab::Plan => {
                let run = self.runs.list().shown().map(|r| (r.id, &r.report));
                let selection = match run {
                    Some((id, _)) if self.iterations.run() == Some(id) => {
                        self.iterations.selection().clone()
                    }
                    _ => Default::default(),
                };
                self.operators.ui(ui, run, &selection);
            }
        }
        None
    }
}

/// The side panel's width: by default a third of a window `width` points wide (300 at 900, 360
/// at 1280 and wider), dragged down to 250 (its fields and buttons wrap, Run stays in its bar)
/// and up to half the window.
pub(super) fn side_widths(width: f32) -> (f32, f32, f32) {
    const LEAST: f32 = 250.0;
    let default = (width / 3.0).clamp(LEAST, 360.0);
    (default, LEAST, (width / 2.0).max(LEAST))
}

/// The label of the newest run made in this window and its iteration that was cancelled, when it
/// was (a run is cancelled in its last iteration: the one read is the last, whatever the run's
/// length).
fn cancelled_at(entries: &[super::runs::RunEntry]) -> Option<(&str, u32)> {
    let run = entries.last()?;
    if !matches!(run.source, super::runs::RunSource::Live) {
        return None;
    }
    let at = run.report.iterations.last()?;
    (at.status() == crate::report::Status::Cancelled)
        .then_some((run.report.config.label.as_str(), at.iteration))
}

/// The status bar's words for the target.
fn target_summary(c: &ConnectionSettings) -> String {
    match c.kind {
        TargetKind::Local => format!(
            "local instance · Seed23 {} rows",
            count(c.local.seed23_rows)
        ),
        TargetKind::Emulator => format!("emulator {}", c.emulator.host_port),
        TargetKind::Cloud => format!(
            "Cloud Spanner {}/{}/{}",
            c.cloud.project, c.cloud.instance, c.cloud.database
        ),
    }
}

/// Why the last run could not start, in the central area where its bars would have been.
fn failed_run_ui(ui: &mut egui::Ui, why: &str, earlier: usize) {
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(1.0, super::theme::ERROR))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.colored_label(
                super::theme::ERROR,
                egui::RichText::new("The run could not start").strong(),
            );
            ui.label(why);
            if earlier > 0 {
                ui.label(
                    egui::RichText::new(
                        "Earlier runs are still in the run list below and in Compare.",
                    )
                    .color(super::theme::MUTED),
                );
            }
        });
    ui.add_space(6.0);
}
