//! The query panel: the variants' tabs (each variant a label, a monospace SQL editor, parameters
//! and request options), a sweep of one parameter, query mode, decoder, iterations, warm-up and
//! the order of the variants' iterations; Run (or Ctrl+Enter) and Cancel; the progress of the run
//! in flight. What it edits is [`QuerySettings`].

use super::options::options_ui;
use super::settings::{QuerySettings, VariantSettings};
use crate::app::command::Command;
use crate::app::runs::ActiveRun;
use crate::app::theme::form_row;
use crate::engine::{Order, QueryMode};
use crate::text::count;
use crate::wire::DecoderKind;

/// The query panel: beyond the settings, each read-write variant's script as last checked.
#[derive(Debug, Default)]
pub struct QueryPanel {
    /// The read-write variants' scripts, parsed once per text (not per frame).
    scripts: Vec<ScriptCheck>,
}

/// A read-write script, parsed: its text and what parsing said (its steps in words, or why it
/// cannot run).
#[derive(Debug)]
struct ScriptCheck {
    text: String,
    said: Result<String, String>,
}

impl ScriptCheck {
    fn of(text: &str) -> ScriptCheck {
        ScriptCheck {
            text: text.to_owned(),
            said: crate::script::parse(text)
                .map(|s| format!("{}, then the commit", s.summary()))
                .map_err(|e| e.to_string()),
        }
    }
}

/// A query the server refused for good (the last run stopped on it): what it said, and the error
/// that says where in the SQL it pointed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refusal<'a> {
    /// The SQL it refused.
    pub sql: &'a str,
    /// Why the run stopped, in words.
    pub text: &'a str,
    /// The server's error, which may say where.
    pub error: &'a str,
}

impl<'a> Refusal<'a> {
    /// The refusal of the newest run in `runs`, when it stopped on one.
    pub fn of_latest(runs: &'a [crate::app::runs::RunEntry]) -> Option<Refusal<'a>> {
        let report = &runs.last()?.report;
        Some(Refusal {
            sql: &report.config.sql,
            text: report.stopped.as_deref()?,
            error: report.iterations.first()?.error().unwrap_or(""),
        })
    }
}

impl QueryPanel {
    /// Draws the panel (Run and Cancel are [`QueryPanel::run_bar`]'s). A query the server refused
    /// is said beside the editor, the span it pointed at marked, while the editor holds that
    /// query.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut QuerySettings,
        refusal: Option<Refusal<'_>>,
    ) {
        settings.keep_one();
        subject_ui(ui, settings);
        if !settings.subject {
            variant_tabs(ui, settings);
        }
        self.check_scripts(settings);
        let checked = self.script_of(settings.editing_mut());
        sql_editor(ui, settings, refusal, checked);
        let subject = settings.subject;
        let v = settings.editing_mut();
        let transaction = (v.read_write && !subject).then_some(&mut v.transaction);
        options_ui(ui, &mut v.options, transaction);
        egui::Grid::new("query-options")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                mode_and_decoder(ui, settings);
                repetitions_and_label(ui, settings);
                sweep_and_order(ui, settings);
            });
    }

    /// Run and Cancel, and the progress of the run in flight: pinned below the panel, so that
    /// whatever its scroll or the window's height they stay in view.
    pub fn run_bar(
        &mut self,
        ui: &mut egui::Ui,
        settings: &QuerySettings,
        active: Option<&ActiveRun>,
    ) -> Option<Command> {
        ui.add_space(4.0);
        self.check_scripts(settings);
        let empty = !settings.subject && settings.variants.iter().all(|v| v.sql.trim().is_empty());
        let unparsed = !settings.subject && self.scripts.iter().any(|c| c.said.is_err());
        let blocked = if empty {
            Some(("the query is empty", "The query is empty: write one to run"))
        } else if unparsed {
            Some((
                "the script has an error",
                "The read-write script cannot run: its error is under the editor",
            ))
        } else {
            None
        };
        let command = run_buttons(ui, active.is_some(), blocked);
        if let Some(run) = active {
            progress_ui(ui, run);
        }
        ui.add_space(2.0);
        command
    }
}

impl QueryPanel {
    /// Parses each read-write variant's script whose text changed since it was last parsed.
    fn check_scripts(&mut self, settings: &QuerySettings) {
        let texts = || {
            settings
                .variants
                .iter()
                .filter(|v| v.read_write)
                .map(|v| v.sql.trim())
        };
        // Most frames: nothing changed, nothing to allocate.
        if texts().eq(self.scripts.iter().map(|c| c.text.as_str())) {
            return;
        }
        let mut checked = Vec::new();
        for v in settings.variants.iter().filter(|v| v.read_write) {
            let text = v.sql.trim();
            checked.push(match self.scripts.iter().position(|c| c.text == text) {
                Some(k) => self.scripts.swap_remove(k),
                None => ScriptCheck::of(text),
            });
        }
        self.scripts = checked;
    }

    /// What parsing said of `variant`'s script, when it is a read-write variant's.
    fn script_of(&self, variant: &VariantSettings) -> Option<&Result<String, String>> {
        let text = variant.sql.trim();
        variant
            .read_write
            .then(|| self.scripts.iter().find(|c| c.text == text))
            .flatten()
            .map(|c| &c.said)
    }
}

/// The SQL editor of the variant shown (with the recent queries to pick from, and the switch that
/// makes its text a read-write transaction's script) and its parameters; the server's refusal of
/// the query in it, the span it pointed at marked; a script's steps, or why it cannot run.
fn sql_editor(
    ui: &mut egui::Ui,
    settings: &mut QuerySettings,
    refusal: Option<Refusal<'_>>,
    script: Option<&Result<String, String>>,
) {
    let subject = settings.subject;
    let sql_label = ui
        .horizontal_wrapped(|ui| {
            let read_write = settings.editing_mut().read_write && !subject;
            let title = if read_write { "Script" } else { "SQL" };
            let sql_label = ui.label(egui::RichText::new(title).strong());
            if let Some(q) = recent_picked(ui, &settings.recent) {
                settings.editing_mut().sql = q;
            }
            if !subject {
                ui.checkbox(
                    &mut settings.editing_mut().read_write,
                    "Read-write transaction",
                )
                .on_hover_text(
                    "Run each iteration's statements (separated by ;) as one read-write \
                     transaction and commit it: START BATCH DML … RUN BATCH, MUTATE and SLEEP \
                     too (docs/commands/read-write-scripts.md). Every attempt is timed; an \
                     abort is retried as the transaction options say",
                );
            }
            sql_label
        })
        .inner;
    let variant = settings.editing_mut();
    let read_write = variant.read_write && !subject;
    // Only while the editor holds the query refused (an edit may have fixed it).
    let refused = refusal.filter(|r| r.sql == variant.sql);
    let span = refused.and_then(|r| crate::analysis::sql_span(r.error, r.sql));
    let mut layouter = |ui: &egui::Ui, text: &dyn egui::TextBuffer, wrap: f32| {
        let mut job = marked_sql(ui, text.as_str(), span.clone());
        job.wrap.max_width = wrap;
        ui.ctx().fonts_mut(|f| f.layout_job(job))
    };
    let editor = ui
        .add(
            egui::TextEdit::multiline(&mut variant.sql)
                .id_salt("sql-editor")
                .code_editor()
                .desired_rows(5)
                .desired_width(f32::INFINITY)
                .hint_text(if read_write {
                    "UPDATE …; UPDATE …"
                } else {
                    "SELECT …"
                })
                .layouter(&mut layouter),
        )
        .labelled_by(sql_label.id);
    focus_once(ui, &editor);
    if let Some(r) = refused {
        ui.colored_label(crate::app::theme::ERROR, r.text);
    }
    if !read_write {
        params_editor(ui, variant);
        return;
    }
    match script {
        Some(Err(e)) if !variant.sql.trim().is_empty() => {
            ui.colored_label(crate::app::theme::ERROR, e);
        }
        Some(Ok(steps)) if refused.is_none() => {
            ui.label(egui::RichText::new(steps).color(crate::app::theme::MUTED));
        }
        _ => {}
    }
}

/// The parameters of a query (a read-write script takes none).
fn params_editor(ui: &mut egui::Ui, variant: &mut VariantSettings) {
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

/// Gives the SQL editor the keyboard once, on the window's first frame, unless a field already has
/// it: what a person types first is the query, not the sixteen Tabs past the menus and the
/// connection panel it would otherwise take. Escape (or a click elsewhere) leaves it, and the
/// arrows move between iterations again.
fn focus_once(ui: &egui::Ui, editor: &egui::Response) {
    let once = egui::Id::unique("sql-editor-focused-once");
    if ui.data(|d| d.get_temp::<bool>(once).is_some()) {
        return;
    }
    ui.data_mut(|d| d.insert_temp(once, true));
    if ui.memory(|m| m.focused().is_none()) {
        editor.request_focus();
    }
}

/// The SQL as the editor lays it out, in the editor's monospace font, the byte range `span`
/// marked (the server pointed there).
fn marked_sql(
    ui: &egui::Ui,
    sql: &str,
    span: Option<std::ops::Range<usize>>,
) -> egui::text::LayoutJob {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let plain = egui::TextFormat::simple(font.clone(), ui.visuals().text_color());
    let mut job = egui::text::LayoutJob::default();
    let span = span.filter(|s| {
        s.end <= sql.len() && sql.is_char_boundary(s.start) && sql.is_char_boundary(s.end)
    });
    let Some(span) = span else {
        job.append(sql, 0.0, plain);
        return job;
    };
    let marked = egui::TextFormat {
        background: crate::app::theme::ERROR.gamma_multiply(0.45),
        underline: egui::Stroke::new(1.5, crate::app::theme::ERROR),
        ..plain.clone()
    };
    job.append(&sql[..span.start], 0.0, plain.clone());
    job.append(&sql[span.clone()], 0.0, marked);
    job.append(&sql[span.end..], 0.0, plain);
    job
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
        0 => "the query's first words and the time".to_owned(),
        k => format!("the run's label\u{b7}{}", k + 1),
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

/// Run and Cancel; the one clicked. Run is the primary action, filled with the accent; Cancel
/// stands apart at the bar's other end, so the two are never mistaken for one another.
/// `blocked`: why the input cannot run, in a few words and in a sentence, when it cannot.
fn run_buttons(ui: &mut egui::Ui, running: bool, blocked: Option<(&str, &str)>) -> Option<Command> {
    let mut command = None;
    ui.horizontal(|ui| {
        let ready = !running && blocked.is_none();
        let run = crate::app::theme::primary_button("Run", ready, egui::vec2(96.0, 28.0));
        let run = ui
            .add_enabled(ready, run)
            .on_hover_text("Run the query (Ctrl+Enter)")
            .on_disabled_hover_text(match blocked {
                _ if running => "A run is in flight: Cancel it first",
                Some((_, why)) => why,
                None => "",
            });
        if run.clicked() {
            command = Some(Command::Run);
        }
        if let (Some((short, _)), false) = (blocked, running) {
            ui.label(egui::RichText::new(short).color(crate::app::theme::WARN));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .add_enabled(running, egui::Button::new("Cancel"))
                .on_hover_text("Stop the run in flight (Ctrl+.)")
                .clicked()
            {
                command = Some(Command::Cancel);
            }
        });
    });
    command
}

/// The run kind (the query, or a subject reading it: "Client program") and the subject's command
/// line.
fn subject_ui(ui: &mut egui::Ui, settings: &mut QuerySettings) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Profile");
        ui.selectable_value(&mut settings.subject, false, "Query")
            .on_hover_text("Profile the query with spanprof's own client");
        ui.selectable_value(&mut settings.subject, true, "Client program")
            .on_hover_text(
                "Run another program's Spanner client N times against the local instance \
                 (SPANNER_EMULATOR_HOST and SPANPROF_SQL in its environment): where its time \
                 goes as the server sees it, every row it prints checked, beside spanprof's \
                 decoder and the wire floor",
            );
    });
    if settings.subject {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `marked_sql` of `sql` and `span`, laid out in a frame of its own.
    fn job(sql: &str, span: Option<std::ops::Range<usize>>) -> egui::text::LayoutJob {
        let ctx = egui::Context::default();
        let mut out = None;
        let mut output = ctx.run_ui(egui::RawInput::default(), |ui| {
            out = Some(marked_sql(ui, sql, span.clone()));
        });
        // No renderer here to take the font atlas: dropped on purpose.
        output.textures_delta.clear();
        out.expect("laid out")
    }

    #[test]
    fn the_span_the_server_points_at_is_marked_in_the_editor() {
        let job = job("SELECT Nme FROM t", Some(7..10));
        let sections: Vec<(&str, bool)> = job
            .sections
            .iter()
            .map(|s| {
                let text = &job.text[s.byte_range.start.0..s.byte_range.end.0];
                (text, s.format.background != egui::Color32::TRANSPARENT)
            })
            .collect();
        assert_eq!(
            sections,
            [("SELECT ", false), ("Nme", true), (" FROM t", false)]
        );
        // A span that is not one of the text's (stale, or mid-character) marks nothing.
        assert_eq!(job_sections("SELECT '東'", Some(8..9)), 1);
        assert_eq!(job_sections("SELECT 1", Some(5..50)), 1);
    }

    fn job_sections(sql: &str, span: Option<std::ops::Range<usize>>) -> usize {
        job(sql, span).sections.len()
    }
}
