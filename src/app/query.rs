//! The query panel: the variants' tabs (each variant a label, a monospace SQL editor, parameters
//! and request options), a sweep of one parameter, query mode, decoder, iterations, warm-up and
//! the order of the variants' iterations; Run (or Ctrl+Enter) and Cancel; the progress of the run
//! in flight. What it edits is [`QuerySettings`].

use super::command::Command;
use super::options::options_ui;
use super::query_settings::QuerySettings;
use super::run::ActiveRun;
use super::theme::form_row;
use crate::engine::{Order, QueryMode};
use crate::text::count;
use crate::wire::DecoderKind;

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
        settings.keep_one();
        client_ui(ui, settings);
        if !settings.client {
            variant_tabs(ui, settings);
        }
        sql_editor(ui, settings);
        options_ui(ui, &mut settings.editing_mut().options);
        egui::Grid::new("query-options")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                mode_and_decoder(ui, settings);
                repetitions_and_label(ui, settings);
                sweep_and_order(ui, settings);
            });
        ui.add_space(6.0);
        let command = run_buttons(ui, active.is_some());
        if let Some(run) = active {
            progress_ui(ui, run);
        }
        command
    }
}

/// The SQL editor of the variant shown (with the recent queries to pick from) and its parameters.
fn sql_editor(ui: &mut egui::Ui, settings: &mut QuerySettings) {
    let sql_label = ui
        .horizontal(|ui| {
            let sql_label = ui.label(egui::RichText::new("SQL").strong());
            if let Some(q) = recent_picked(ui, &settings.recent) {
                settings.editing_mut().sql = q;
            }
            sql_label
        })
        .inner;
    let variant = settings.editing_mut();
    ui.add(
        egui::TextEdit::multiline(&mut variant.sql)
            .id_salt("sql-editor")
            .code_editor()
            .desired_rows(5)
            .desired_width(f32::INFINITY)
            .hint_text("SELECT …"),
    )
    .labelled_by(sql_label.id);
    let params_label = ui.label("Parameters (name:TYPE=value, one per line)");
    ui.add(
        egui::TextEdit::multiline(&mut variant.params)
            .id_salt("params-editor")
            .code_editor()
            .desired_rows(1)
            .desired_width(f32::INFINITY)
            .hint_text("id:INT64=42"),
    )
    .labelled_by(params_label.id);
}

/// The Recent menu (when there are recent queries); the query picked from it, if one was.
fn recent_picked(ui: &mut egui::Ui, recent: &[String]) -> Option<String> {
    if recent.is_empty() {
        return None;
    }
    let mut chosen = None;
    egui::ComboBox::from_id_salt("recent-queries")
        .selected_text("Recent")
        .width(80.0)
        .show_ui(ui, |ui| {
            for q in recent {
                let short: String = q.chars().take(60).collect();
                if ui.selectable_label(false, short).clicked() {
                    chosen = Some(q.clone());
                }
            }
        });
    chosen
}

/// The Mode and Decoder rows of the panel's grid.
fn mode_and_decoder(ui: &mut egui::Ui, settings: &mut QuerySettings) {
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
}

/// The Iterations, Warm-up and Label rows of the panel's grid (the label of the variant shown).
fn repetitions_and_label(ui: &mut egui::Ui, settings: &mut QuerySettings) {
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
    let hint = match settings.editing {
        0 => "run N".to_owned(),
        k => format!("run N\u{b7}{}", k + 1),
    };
    form_row(
        ui,
        "Label",
        None,
        egui::TextEdit::singleline(&mut settings.editing_mut().label)
            .desired_width(140.0)
            .hint_text(hint),
    );
}

/// The Sweep row of the panel's grid, and the Order row when there is more than one variant or a
/// sweep.
fn sweep_and_order(ui: &mut egui::Ui, settings: &mut QuerySettings) {
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
    if settings.variants.len() > 1 || !settings.sweep.trim().is_empty() {
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
}

/// Run and Cancel; the one clicked.
fn run_buttons(ui: &mut egui::Ui, running: bool) -> Option<Command> {
    let mut command = None;
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
    command
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
    let mut line = format!("{} rows", count(progress.rows));
    if let Some(rows_per_s) = progress.rows_per_s {
        line.push_str(&format!(" · {} rows/s", count(rows_per_s as u64)));
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
        let tabs = if settings.variants.len() > 1 {
            settings.variants.len()
        } else {
            0
        };
        for k in 0..tabs {
            let name = match settings.variants[k].label.trim() {
                "" => (k + 1).to_string(),
                label => label.to_owned(),
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
