//! The details view: a virtualised preview of the last iteration's first rows, the query
//! statistics and plan when the mode returns them, the server-timing figures, and the log of
//! errors with the server's own message.

use std::time::SystemTime;

use egui_extras::{Column, TableBuilder};

use super::theme;
use crate::engine::IterationDetails;
use crate::wire::result_stats::duration_ms;

/// One line of the error log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// Seconds since the Unix epoch when it was logged.
    pub at: u64,
    /// What went wrong, with the server's message.
    pub message: String,
}

/// The error log, newest last, bounded.
#[derive(Debug, Default)]
pub struct Log {
    entries: Vec<LogEntry>,
}

/// Log lines kept, at most.
const LOG_LINES: usize = 500;

impl Log {
    /// Adds `message`.
    pub fn push(&mut self, message: impl Into<String>) {
        let at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        self.entries.push(LogEntry {
            at,
            message: message.into(),
        });
        if self.entries.len() > LOG_LINES {
            self.entries.remove(0);
        }
    }

    /// Every line kept.
    pub fn entries(&self) -> &[LogEntry] {
        &self.entries
    }

    /// The newest line.
    pub fn last(&self) -> Option<&LogEntry> {
        self.entries.last()
    }
}

/// Which part of the details is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    #[default]
    Rows,
    Stats,
    Plan,
    Log,
}

/// The details view's state.
#[derive(Debug, Default)]
pub struct DetailsView {
    section: Section,
}

impl DetailsView {
    /// Shows the log section (after an error).
    pub fn show_log(&mut self) {
        self.section = Section::Log;
    }

    /// Draws the details of the last iteration of a run in `query_mode` (a report's spelling), if
    /// any, and the log.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        details: Option<&IterationDetails>,
        query_mode: crate::kind::QueryMode,
        log: &Log,
    ) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.section, Section::Rows, "Rows");
            ui.selectable_value(&mut self.section, Section::Stats, "Stats & timing");
            ui.selectable_value(&mut self.section, Section::Plan, "Raw plan");
            let log_title = format!("Log ({})", log.entries().len());
            ui.selectable_value(&mut self.section, Section::Log, log_title);
        });
        ui.separator();
        match (self.section, details) {
            (Section::Log, _) => log_ui(ui, log),
            (_, None) => {
                ui.label("Nothing yet: the last iteration of a successful run shows here.");
            }
            (Section::Rows, Some(d)) => rows_ui(ui, d),
            (Section::Stats, Some(d)) => stats_ui(ui, d, query_mode),
            (Section::Plan, Some(d)) => plan_ui(ui, d),
        }
    }
}

fn rows_ui(ui: &mut egui::Ui, d: &IterationDetails) {
    ui.label(format!(
        "Iteration #{}: the first {} of {} rows (only these are kept).",
        d.iteration,
        d.rows.len(),
        d.rows_total
    ));
    let columns = d
        .rows
        .first()
        .map_or(d.columns.len(), |row| row.len().max(d.columns.len()));
    if columns == 0 {
        return;
    }
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 4.0;
    egui::ScrollArea::horizontal()
        .id_salt("preview-h")
        .show(ui, |ui| {
            TableBuilder::new(ui)
                .id_salt("preview")
                .striped(true)
                .resizable(true)
                .column(Column::exact(48.0))
                .columns(Column::initial(120.0).at_least(40.0).clip(true), columns)
                .header(row_height + 2.0, |mut header| {
                    header.col(|ui| {
                        ui.strong("#");
                    });
                    for c in 0..columns {
                        header.col(|ui| {
                            let name = d.columns.get(c).cloned().unwrap_or(format!("col {c}"));
                            ui.strong(name);
                        });
                    }
                })
                .body(|body| {
                    body.rows(row_height, d.rows.len(), |mut row| {
                        let index = row.index();
                        row.col(|ui| {
                            ui.weak((index + 1).to_string());
                        });
                        let cells = d.rows.get(index);
                        for c in 0..columns {
                            row.col(|ui| {
                                let text = cells.and_then(|r| r.get(c)).map_or("", String::as_str);
                                ui.monospace(text);
                            });
                        }
                    });
                });
        });
}

/// The call's ids (each with a button that copies it) and Google's operation and attempt times.
fn call_ui(ui: &mut egui::Ui, d: &IterationDetails) {
    ui.strong("The call");
    let ids = [
        ("request id (x-goog-spanner-request-id)", &d.request_id),
        ("trace id (end-to-end tracing)", &d.trace_id),
    ];
    egui::Grid::new("call-ids").striped(true).show(ui, |ui| {
        for (name, id) in ids {
            ui.label(name);
            match id {
                Some(id) => {
                    ui.monospace(id);
                    if ui
                        .small_button("Copy")
                        .on_hover_text("Copy it, to find the call in Google's logs")
                        .clicked()
                    {
                        ui.ctx().copy_text(id.clone());
                    }
                }
                None => {
                    ui.weak("none");
                }
            }
            ui.end_row();
        }
        ui.label("operation (the whole call, resumes included)");
        ui.monospace(d.operation.map_or_else(
            || "not measured".to_owned(),
            |v| crate::text::ms(duration_ms(v)),
        ));
        ui.end_row();
        let attempts: Vec<String> = d
            .attempts
            .iter()
            .map(|&a| format!("{:.3}", duration_ms(a)))
            .collect();
        ui.label(format!("attempts ({})", attempts.len()));
        ui.monospace(format!("{} ms", attempts.join(", ")));
        ui.end_row();
    });
    ui.add_space(8.0);
}

fn stats_ui(ui: &mut egui::Ui, d: &IterationDetails, query_mode: crate::kind::QueryMode) {
    call_ui(ui, d);
    ui.strong("Server timing (server-timing header)");
    let timing = [
        ("gfet4t7 (Google front end)", d.server_timing.gfe),
        ("afe (Spanner API front end)", d.server_timing.afe),
    ];
    egui::Grid::new("server-timing")
        .striped(true)
        .show(ui, |ui| {
            for (name, value) in timing {
                ui.label(name);
                ui.monospace(value.map_or_else(
                    || "not sent".to_owned(),
                    |v| crate::text::ms(duration_ms(v)),
                ));
                ui.end_row();
            }
        });
    ui.add_space(8.0);
    ui.strong("Query statistics");
    let Some(stats) = &d.stats else {
        if !query_mode.asks_for_statistics() {
            ui.label("None: the query mode \"Normal\" returns no statistics.");
        } else {
            let missing = crate::analysis::MissingStatistics { mode: query_mode };
            ui.colored_label(theme::WARN, format!("None: {missing}."));
        }
        return;
    };
    egui::ScrollArea::vertical()
        .id_salt("stats")
        .show(ui, |ui| {
            egui::Grid::new("query-stats").striped(true).show(ui, |ui| {
                for (key, value) in &stats.query_stats.entries {
                    ui.label(key);
                    // Wrapped, never cut at the window's edge (a long query_text).
                    ui.add(egui::Label::new(egui::RichText::new(value).monospace()).wrap());
                    ui.end_row();
                }
            });
        });
}

fn plan_ui(ui: &mut egui::Ui, d: &IterationDetails) {
    let Some(plan) = d.stats.as_ref().and_then(|s| s.plan.as_ref()) else {
        ui.label("No plan: choose the \"Profile\" query mode to get the executed plan.");
        return;
    };
    egui::ScrollArea::vertical().id_salt("plan").show(ui, |ui| {
        for node in plan {
            let title = format!("[{}] {} ({})", node.index, node.display_name, node.kind);
            egui::CollapsingHeader::new(title)
                .id_salt(("plan-node", node.index))
                .default_open(true)
                .show(ui, |ui| {
                    if let Some(short) = &node.short_representation {
                        ui.monospace(short);
                    }
                    for (child, kind, variable) in &node.child_links {
                        ui.label(format!("child {child} {kind} {variable}").trim_end());
                    }
                    if !node.metadata.is_null() {
                        ui.monospace(format!("metadata {}", node.metadata));
                    }
                    if !node.execution_stats.is_null() {
                        ui.monospace(format!("execution {}", node.execution_stats));
                    }
                });
        }
    });
}

fn log_ui(ui: &mut egui::Ui, log: &Log) {
    if log.entries().is_empty() {
        ui.label("No errors.");
        return;
    }
    egui::ScrollArea::vertical()
        .id_salt("log")
        .stick_to_bottom(true)
        .show(ui, |ui| {
            for entry in log.entries() {
                ui.horizontal_wrapped(|ui| {
                    ui.weak(clock(entry.at));
                    ui.colored_label(theme::ERROR, &entry.message);
                });
            }
        });
}

/// `hh:mm:ss` UTC of a Unix time.
fn clock(at: u64) -> String {
    let s = at % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_bounded_and_keeps_the_newest() {
        let mut log = Log::default();
        for i in 0..(LOG_LINES + 3) {
            log.push(format!("e{i}"));
        }
        assert_eq!(log.entries().len(), LOG_LINES);
        assert_eq!(log.last().map(|e| e.message.as_str()), Some("e502"));
    }

    #[test]
    fn clock_is_utc_time_of_day() {
        assert_eq!(clock(86_400 + 3661), "01:01:01");
    }
}
