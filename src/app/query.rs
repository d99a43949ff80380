//! The query panel: one or more variants (each a label, a monospace SQL editor, parameters and
//! request options), a sweep of one parameter, query mode, decoder, iterations, warm-up and the
//! order of the variants' iterations; Run (or Ctrl+Enter) and Cancel; the progress of the run in
//! flight.

use serde::{Deserialize, Serialize};

use super::Command;
use super::options::{OptionSettings, options_ui};
use super::run::ActiveRun;
use super::theme::form_row;
use crate::engine::{
    DatabasePath, Order, Param, ProfileSpec, QueryMode, SubjectSpec, Timeouts, Variant,
};
use crate::server::ServerConfig;
use crate::subject::command::CommandLine;
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
    /// How the first variant is asked.
    pub options: OptionSettings,
    /// The variants after the first (each compared with it); empty for a plain run.
    pub variants: Vec<VariantSettings>,
    /// Which variant the editor shows: 0 for the first, `k` for `variants[k - 1]`.
    pub editing: usize,
    /// A sweep of one parameter of the first variant, `NAME:TYPE=v1,v2,...`; empty for none.
    pub sweep: String,
    /// The order of the variants' timed iterations.
    pub order: Order,
    /// Queries run before, most recent first.
    pub recent: Vec<String>,
    /// Whether Run profiles a client program (`spanprof client`) instead of the query.
    pub client: bool,
    /// The client program's command line, as a shell would split it (no variables or globs).
    pub command: String,
}

/// A variant after the first: its own label, SQL, parameters and options.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VariantSettings {
    /// Its label; empty means the run's label with its number.
    pub label: String,
    /// Its SQL text.
    pub sql: String,
    /// Its parameters, one `name:TYPE=value` per line.
    pub params: String,
    /// How it is asked.
    pub options: OptionSettings,
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
            options: OptionSettings::default(),
            variants: Vec::new(),
            editing: 0,
            sweep: String::new(),
            order: Order::default(),
            recent: Vec::new(),
            client: false,
            command: String::new(),
        }
    }
}

/// `name:TYPE=value` lines as parameters.
fn parse_params(text: &str) -> Result<Vec<Param>, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| Param::parse(line).map_err(|e| format!("parameter {line:?}: {e}")))
        .collect()
}

impl QuerySettings {
    /// The engine's spec for a client program's run on the local instance `server`, the program's
    /// run labelled `label`, or what is wrong with the input.
    pub fn client_spec(&self, label: String, server: ServerConfig) -> Result<SubjectSpec, String> {
        if self.sql.trim().is_empty() {
            return Err("the SQL is empty".into());
        }
        let command = CommandLine::parse(&self.command).map_err(|e| e.to_string())?;
        Ok(SubjectSpec {
            label,
            sql: self.sql.trim().to_owned(),
            iterations: self.iterations.max(1),
            warmup: self.warmup,
            order: self.order,
            server,
            compare: Some(self.decoder),
            ..SubjectSpec::new(command)
        })
    }

    /// The engine's spec for the next run, its first variant labelled `label` (the others by
    /// their own labels, or `label·2`, `label·3`...), or what is wrong with the input.
    pub fn spec(&self, label: String, database: DatabasePath) -> Result<ProfileSpec, String> {
        if self.sql.trim().is_empty() {
            return Err("the SQL is empty".into());
        }
        let first = Variant {
            params: parse_params(&self.params)?,
            mode: self.mode,
            options: self
                .options
                .to_options()
                .map_err(|e| format!("{label}: {e}"))?,
            ..Variant::new(label.clone(), self.sql.trim())
        };
        let mut variants = vec![first];
        for (k, extra) in self.variants.iter().enumerate() {
            let name = if extra.label.trim().is_empty() {
                format!("{label}\u{b7}{}", k + 2)
            } else {
                extra.label.trim().to_owned()
            };
            if extra.sql.trim().is_empty() {
                return Err(format!("{name}: the SQL is empty"));
            }
            variants.push(Variant {
                params: parse_params(&extra.params).map_err(|e| format!("{name}: {e}"))?,
                mode: self.mode,
                options: extra
                    .options
                    .to_options()
                    .map_err(|e| format!("{name}: {e}"))?,
                ..Variant::new(name, extra.sql.trim())
            });
        }
        if !self.sweep.trim().is_empty() {
            if variants.len() > 1 {
                return Err(
                    "a sweep sweeps one query: remove the other variants, or the sweep".into(),
                );
            }
            let sweep = crate::engine::parse_sweep(self.sweep.trim()).map_err(|e| e.to_string())?;
            variants = sweep.expand(&variants[0], !self.label.trim().is_empty());
        }
        let spec = ProfileSpec {
            database,
            variants,
            iterations: self.iterations.max(1),
            warmup: self.warmup,
            decoder: self.decoder,
            timeouts: Timeouts::DEFAULT,
            order: self.order,
        };
        spec.check().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// Adds a variant after the others, a copy of the one being edited, and edits it.
    pub fn add_variant(&mut self) {
        let copy = match self.editing {
            0 => VariantSettings {
                label: String::new(),
                sql: self.sql.clone(),
                params: self.params.clone(),
                options: self.options.clone(),
            },
            k => self
                .variants
                .get(k - 1)
                .map(|v| VariantSettings {
                    label: String::new(),
                    ..v.clone()
                })
                .unwrap_or_default(),
        };
        self.variants.push(copy);
        self.editing = self.variants.len();
    }

    /// Removes the variant being edited (never the first).
    pub fn remove_variant(&mut self) {
        if self.editing > 0 && self.editing <= self.variants.len() {
            self.variants.remove(self.editing - 1);
            self.editing -= 1;
        }
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
        client_ui(ui, settings);
        if !settings.client {
            variant_tabs(ui, settings);
        }
        let editing = settings.editing.min(settings.variants.len());
        settings.editing = editing;
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
                        match editing {
                            0 => settings.sql = q,
                            k => settings.variants[k - 1].sql = q,
                        }
                    }
                }
                sql_label
            })
            .inner;
        let (sql, params, options) = match editing {
            0 => (
                &mut settings.sql,
                &mut settings.params,
                &mut settings.options,
            ),
            k => {
                let v = &mut settings.variants[k - 1];
                (&mut v.sql, &mut v.params, &mut v.options)
            }
        };
        ui.add(
            egui::TextEdit::multiline(sql)
                .id_salt("sql-editor")
                .code_editor()
                .desired_rows(5)
                .desired_width(f32::INFINITY)
                .hint_text("SELECT …"),
        )
        .labelled_by(sql_label.id);
        let params_label = ui.label("Parameters (name:TYPE=value, one per line)");
        ui.add(
            egui::TextEdit::multiline(params)
                .id_salt("params-editor")
                .code_editor()
                .desired_rows(1)
                .desired_width(f32::INFINITY)
                .hint_text("id:INT64=42"),
        )
        .labelled_by(params_label.id);
        options_ui(ui, options);
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
                let (label, hint) = match editing {
                    0 => (&mut settings.label, "run N".to_owned()),
                    k => (
                        &mut settings.variants[k - 1].label,
                        format!("run N\u{b7}{}", k + 1),
                    ),
                };
                form_row(
                    ui,
                    "Label",
                    None,
                    egui::TextEdit::singleline(label)
                        .desired_width(140.0)
                        .hint_text(hint),
                );
                form_row(
                    ui,
                    "Sweep",
                    Some(
                        "One run per value of a parameter of the first query, e.g. \
                         n:INT64=100,1000,10000 with LIMIT @n: the Compare view draws how each \
                         phase grows",
                    ),
                    egui::TextEdit::singleline(&mut settings.sweep)
                        .desired_width(140.0)
                        .hint_text("n:INT64=100,1000"),
                );
                if !settings.variants.is_empty() || !settings.sweep.trim().is_empty() {
                    let order = ui.label("Order");
                    egui::ComboBox::from_id_salt("order")
                        .selected_text(order_label(settings.order))
                        .show_ui(ui, |ui| {
                            for o in [Order::Interleaved, Order::Blocked, Order::Shuffled(0)] {
                                ui.selectable_value(&mut settings.order, o, order_label(o));
                            }
                        })
                        .response
                        .labelled_by(order.id)
                        .on_hover_text(
                            "interleaved: every variant once a round, so the machine's drift falls \
                             on all alike; blocked: each variant's iterations back to back",
                        );
                    ui.end_row();
                }
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

/// The run kind (the query, or a client program reading it) and the program's command line.
fn client_ui(ui: &mut egui::Ui, settings: &mut QuerySettings) {
    ui.horizontal(|ui| {
        ui.label("Profile");
        ui.selectable_value(&mut settings.client, false, "Query")
            .on_hover_text("Profile the query with spanprof's own client");
        ui.selectable_value(&mut settings.client, true, "Client program")
            .on_hover_text(
                "Run another program's Spanner client N times against the local instance \
                 (SPANNER_EMULATOR_HOST and SPANPROF_SQL in its environment): where its time \
                 goes as the server sees it, every row it prints checked, beside spanprof's \
                 decoder and the wire floor",
            );
    });
    if settings.client {
        ui.horizontal(|ui| {
            let label = ui.label("Command");
            ui.add(
                egui::TextEdit::singleline(&mut settings.command)
                    .id_salt("client-command")
                    .code_editor()
                    .desired_width(f32::INFINITY)
                    .hint_text("python3 examples/clients/python_client.py"),
            )
            .labelled_by(label.id);
        });
    }
}

fn progress_ui(ui: &mut egui::Ui, run: &ActiveRun) {
    let progress = run.progress();
    let variant = progress
        .variant
        .and_then(|v| run.labels().get(v))
        .map(|label| format!(" · {label}"))
        .unwrap_or_default();
    let text = match progress.iteration {
        Some(i) => format!("iteration {} of {}{variant}", i + 1, progress.of),
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

/// The variants' tabs: pick the one to edit, add one (a copy of it), remove it.
fn variant_tabs(ui: &mut egui::Ui, settings: &mut QuerySettings) {
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Variants").strong())
            .on_hover_text("Queries (or settings) to compare: their iterations are interleaved");
        // One query has no tabs: only the button that adds a second.
        let tabs = if settings.variants.is_empty() {
            0
        } else {
            settings.variants.len() + 1
        };
        for k in 0..tabs {
            let name = match k {
                0 if settings.label.trim().is_empty() => "1".to_owned(),
                0 => settings.label.trim().to_owned(),
                k => {
                    let label = settings.variants[k - 1].label.trim();
                    if label.is_empty() {
                        (k + 1).to_string()
                    } else {
                        label.to_owned()
                    }
                }
            };
            let short: String = name.chars().take(16).collect();
            if ui
                .selectable_label(settings.editing == k, short)
                .on_hover_text(format!("Edit variant {}", k + 1))
                .clicked()
            {
                settings.editing = k;
            }
        }
        if ui
            .button("+ variant")
            .on_hover_text("Add a variant: a copy of this one, to change")
            .clicked()
        {
            settings.add_variant();
        }
        if settings.editing > 0
            && ui
                .button("Remove variant")
                .on_hover_text("Remove the variant shown")
                .clicked()
        {
            settings.remove_variant();
        }
    });
}

/// An order as the panel names it.
fn order_label(order: Order) -> &'static str {
    match order {
        Order::Interleaved => "Interleaved",
        Order::Blocked => "Blocked",
        Order::Shuffled(_) => "Shuffled",
    }
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
        assert_eq!(spec.map(|s| s.variants[0].params.len()), Ok(1));
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
    fn variants_make_one_run_each_labelled_by_the_run_and_their_number() {
        let mut settings = QuerySettings {
            sql: "SELECT * FROM Seed23 LIMIT 100".into(),
            ..QuerySettings::default()
        };
        settings.add_variant();
        assert_eq!(settings.editing, 1);
        settings.variants[0].sql = "SELECT Id FROM Seed23 LIMIT 100".into();
        settings.variants[0].options.priority = Some(crate::engine::Priority::Low);
        let spec = settings
            .spec("run 3".into(), DatabasePath::default())
            .expect("valid");
        let labels: Vec<&str> = spec.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["run 3", "run 3\u{b7}2"]);
        assert_eq!(
            spec.variants[1].options.priority,
            Some(crate::engine::Priority::Low)
        );
        assert_eq!(spec.variants[0].options.priority, None);
        settings.variants[0].label = "run 3".into();
        let error = settings
            .spec("run 3".into(), DatabasePath::default())
            .expect_err("two labels alike");
        assert!(error.contains("labelled \"run 3\""), "{error}");
        settings.remove_variant();
        assert!(settings.variants.is_empty() && settings.editing == 0);
    }

    #[test]
    fn a_sweep_makes_a_run_per_value_of_the_first_query() {
        let settings = QuerySettings {
            sql: "SELECT * FROM Seed23 LIMIT @n".into(),
            sweep: "n:INT64=10,20,30".into(),
            ..QuerySettings::default()
        };
        let spec = settings
            .spec("run 1".into(), DatabasePath::default())
            .expect("valid");
        let labels: Vec<&str> = spec.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["n=10", "n=20", "n=30"]);
        let bad = QuerySettings {
            sweep: "n=1,2".into(),
            ..settings
        };
        assert!(bad.spec("run 1".into(), DatabasePath::default()).is_err());
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
