//! The query panel: a monospace SQL editor, parameters, query mode, decoder, iterations, warm-up and a
//! run label; Run (or Ctrl+Enter) and Cancel; the progress of the run in flight.

use serde::{Deserialize, Serialize};

use super::Command;
use super::run::ActiveRun;
use super::theme::form_row;
use crate::engine::{DatabasePath, Param, ProfileSpec, QueryMode, Timeouts};
use crate::wire::DecoderKind;

/// The query the app opens with: something real on the built-in instance's Seed23.
pub const DEFAULT_SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";
/// Recent queries remembered, at most.
const RECENT_QUERIES: usize = 10;

/// Everything the query panel persists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuerySettings {
    /// The SQL text.
    pub sql: String,
    /// Parameters, one `name:TYPE=value` per line.
    pub params: String,
    /// The query mode.
    pub mode: QueryMode,
    /// The decoder that turns the answer into rows.
    pub decoder: DecoderKind,
    /// Timed iterations.
    pub iterations: u32,
    /// Warm-up iterations before them.
    pub warmup: u32,
    /// The next run's label; empty means "run N".
    pub label: String,
    /// Queries run before, most recent first.
    pub recent: Vec<String>,
}

impl Default for QuerySettings {
    fn default() -> Self {
        QuerySettings {
            sql: DEFAULT_SQL.into(),
            params: String::new(),
            mode: QueryMode::WithStats,
            decoder: DecoderKind::Fast,
            iterations: 10,
            warmup: 1,
            label: String::new(),
            recent: Vec::new(),
        }
    }
}

impl QuerySettings {
    /// The engine's spec for the next run, labelled `label`, or what is wrong with the input.
    pub fn spec(&self, label: String, database: DatabasePath) -> Result<ProfileSpec, String> {
        if self.sql.trim().is_empty() {
            return Err("the SQL is empty".into());
        }
        let params = self
            .params
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(|line| Param::parse(line).map_err(|e| format!("parameter {line:?}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProfileSpec {
            label,
            database,
            sql: self.sql.trim().to_owned(),
            params,
            mode: self.mode,
            iterations: self.iterations.max(1),
            warmup: self.warmup,
            decoder: self.decoder,
            timeouts: Timeouts::DEFAULT,
        })
    }

    /// Remembers `sql` as the most recent query.
    pub fn remember(&mut self, sql: &str) {
        self.recent.retain(|q| q != sql);
        self.recent.insert(0, sql.to_owned());
        self.recent.truncate(RECENT_QUERIES);
    }
}

/// The query panel (it keeps no state of its own beyond the settings).
#[derive(Debug, Default)]
pub struct QueryPanel;

impl QueryPanel {
    /// Draws the panel; returns Run or Cancel when asked for.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut QuerySettings,
        active: Option<&ActiveRun>,
    ) -> Option<Command> {
        let mut command = None;
        let running = active.is_some();
        let sql_label = ui
            .horizontal(|ui| {
                let sql_label = ui.label(egui::RichText::new("SQL").strong());
                if !settings.recent.is_empty() {
                    let mut chosen = None;
                    egui::ComboBox::from_id_salt("recent-queries")
                        .selected_text("Recent")
                        .width(80.0)
                        .show_ui(ui, |ui| {
                            for q in &settings.recent {
                                let short: String = q.chars().take(60).collect();
                                if ui.selectable_label(false, short).clicked() {
                                    chosen = Some(q.clone());
                                }
                            }
                        });
                    if let Some(q) = chosen {
                        settings.sql = q;
                    }
                }
                sql_label
            })
            .inner;
        ui.add(
            egui::TextEdit::multiline(&mut settings.sql)
                .id_salt("sql-editor")
                .code_editor()
                .desired_rows(5)
                .desired_width(f32::INFINITY)
                .hint_text("SELECT …"),
        )
        .labelled_by(sql_label.id);
        let params_label = ui.label("Parameters (name:TYPE=value, one per line)");
        ui.add(
            egui::TextEdit::multiline(&mut settings.params)
                .id_salt("params-editor")
                .code_editor()
                .desired_rows(1)
                .desired_width(f32::INFINITY)
                .hint_text("id:INT64=42"),
        )
        .labelled_by(params_label.id);
        egui::Grid::new("query-options")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                let mode = ui.label("Mode");
                egui::ComboBox::from_id_salt("query-mode")
                    .selected_text(mode_label(settings.mode))
                    .show_ui(ui, |ui| {
                        for m in [QueryMode::Normal, QueryMode::WithStats, QueryMode::Profile] {
                            ui.selectable_value(&mut settings.mode, m, mode_label(m));
                        }
                    })
                    .response
                    .labelled_by(mode.id);
                ui.end_row();
                let decoder = ui.label("Decoder");
                egui::ComboBox::from_id_salt("decoder")
                    .selected_text(decoder_label(settings.decoder))
                    .show_ui(ui, |ui| {
                        for d in [DecoderKind::Fast, DecoderKind::Reference] {
                            ui.selectable_value(&mut settings.decoder, d, decoder_label(d));
                        }
                    })
                    .response
                    .labelled_by(decoder.id)
                    .on_hover_text(
                        "fast: reads the bytes straight into rows; reference: prost builds each \
                         message, then rows. Run both and compare them.",
                    );
                ui.end_row();
                form_row(
                    ui,
                    "Iterations",
                    None,
                    egui::DragValue::new(&mut settings.iterations).range(1..=10_000),
                );
                form_row(
                    ui,
                    "Warm-up",
                    None,
                    egui::DragValue::new(&mut settings.warmup).range(0..=1_000),
                );
                form_row(
                    ui,
                    "Label",
                    None,
                    egui::TextEdit::singleline(&mut settings.label)
                        .desired_width(140.0)
                        .hint_text("run N"),
                );
            });
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let run = ui
                .add_enabled(
                    !running,
                    egui::Button::new(egui::RichText::new("Run").strong())
                        .min_size(egui::vec2(72.0, 24.0)),
                )
                .on_hover_text("Run the query (Ctrl+Enter)");
            if run.clicked() {
                command = Some(Command::Run);
            }
            if ui
                .add_enabled(running, egui::Button::new("Cancel"))
                .clicked()
            {
                command = Some(Command::Cancel);
            }
        });
        if let Some(run) = active {
            progress_ui(ui, run);
        }
        command
    }
}

fn progress_ui(ui: &mut egui::Ui, run: &ActiveRun) {
    let progress = run.progress();
    let text = match progress.iteration {
        Some(i) => format!("iteration {} of {}", i + 1, progress.of),
        None => "connecting…".to_owned(),
    };
    ui.add(
        egui::ProgressBar::new(progress.fraction())
            .text(text)
            .animate(false),
    );
    let mut line = format!("{} rows", thousands(progress.rows));
    if let Some(rows_per_s) = progress.rows_per_s {
        line.push_str(&format!(" · {} rows/s", thousands(rows_per_s as u64)));
    }
    if let Some(mb_per_s) = progress.mb_per_s {
        line.push_str(&format!(" · {mb_per_s:.1} MB/s"));
    }
    ui.label(egui::RichText::new(line).small().monospace());
}

/// A query mode as the panel names it.
pub fn mode_label(mode: QueryMode) -> &'static str {
    match mode {
        QueryMode::Normal => "Normal (rows only)",
        QueryMode::WithStats => "With stats",
        QueryMode::Profile => "Profile (stats + plan)",
    }
}

/// A decoder as the panel names it.
pub fn decoder_label(decoder: DecoderKind) -> &'static str {
    match decoder {
        DecoderKind::Fast => "Fast (zero-copy)",
        DecoderKind::Reference => "Reference (prost)",
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn spec_checks_parameters_and_sql() {
        let mut settings = QuerySettings {
            params: "id:INT64=42\n\n".into(),
            ..QuerySettings::default()
        };
        let spec = settings.spec("a".into(), DatabasePath::default());
        assert_eq!(spec.map(|s| s.params.len()), Ok(1));
        settings.params = "nonsense".into();
        assert!(
            settings
                .spec("a".into(), DatabasePath::default())
                .is_err_and(|e| e.contains("nonsense"))
        );
        settings.sql = "  ".into();
        assert_eq!(
            settings.spec("a".into(), DatabasePath::default()).err(),
            Some("the SQL is empty".to_owned())
        );
    }

    #[test]
    fn recent_queries_are_unique_most_recent_first_and_bounded() {
        let mut settings = QuerySettings::default();
        for i in 0..12 {
            settings.remember(&format!("q{i}"));
        }
        settings.remember("q5");
        assert_eq!(settings.recent.len(), RECENT_QUERIES);
        assert_eq!(settings.recent[0], "q5");
        assert_eq!(settings.recent.iter().filter(|q| *q == "q5").count(), 1);
    }
}
