//! One pair of runs as a diff, read like a before and after: `A -> B` (A started first), which run
//! each is, the settings they differ in called out, the verdict in words in the text's own
//! neutral colour (neither run's colour nor an error's), and per part A's mean, B's, the change
//! Δ = B − A and its interval, each figure [`analysis::deltas`]' (the means are those `spanprof
//! compare` prints).

use super::verdicts::{Diff, Verdict};
use crate::analysis::{self, Deltas, SettingChange};
use crate::app::runs::RunEntry;
use crate::app::theme;
use crate::text::{ms, signed_ms};

/// One side of the diff: the run and the short name it is called by.
pub type Side<'a> = (&'a RunEntry, &'a str);

/// Draws `a -> b` with where their diff stands.
pub fn ui(ui: &mut egui::Ui, (a, a_name): Side<'_>, (b, b_name): Side<'_>, verdict: &Verdict) {
    ui.label(
        egui::RichText::new(heading(a_name, b_name))
            .heading()
            .strong(),
    );
    for (side, run, name) in [("A", a, a_name), ("B", b, b_name)] {
        ui.colored_label(theme::MUTED, who(side, run, name))
            .on_hover_text(&run.report.config.sql);
    }
    match verdict {
        Verdict::Pending => {
            ui.label(egui::RichText::new(format!("comparing {b_name} with {a_name}…")).italics());
        }
        Verdict::Failed(why) => {
            ui.label(format!("{b_name} cannot be compared with {a_name}: {why}"));
        }
        Verdict::Ready(diff) => ready(ui, diff, a_name, b_name),
    }
}

/// The heading of a pair: `run 3 -> run 5`.
pub fn heading(a_name: &str, b_name: &str) -> String {
    format!("{a_name} -> {b_name}")
}

/// Which run a side is: `A: run 3 · started 2026-12-05 01:31:56 · <label> · <target>`.
pub fn who(side: &str, run: &RunEntry, name: &str) -> String {
    let mut text = format!("{side}: {name}");
    if let Some(t) = run.started() {
        text.push_str(&format!(" · started {}", t.format("%Y-%m-%d %H:%M:%S")));
    }
    if run.report.config.label != name {
        text.push_str(&format!(" · {}", run.title()));
    }
    text.push_str(&format!(" · {}", run.report.config.target));
    text
}

/// The settings that differ in one line: `Differs in mode with-stats -> profile; decoder fast ->
/// reference`; `None` when they are alike.
pub fn settings_line(changes: &[SettingChange]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let each: Vec<String> = changes
        .iter()
        .map(|c| {
            let cut = |s: &str| match s.char_indices().nth(48) {
                Some((end, _)) => format!("{}…", &s[..end]),
                None => s.to_owned(),
            };
            format!("{} {} -> {}", c.name, cut(&c.a), cut(&c.b))
        })
        .collect();
    Some(format!("Differs in {}", each.join("; ")))
}

/// A computed diff: the settings, the verdict, the table.
fn ready(ui: &mut egui::Ui, diff: &Diff, a_name: &str, b_name: &str) {
    match settings_line(&diff.settings) {
        Some(line) => {
            ui.colored_label(theme::WARN, line).on_hover_text(
                "A difference in timing may come from these as much as from the query",
            );
        }
        None => {
            ui.colored_label(
                theme::MUTED,
                "Same settings: mode, decoder, rows, target, options, SQL",
            );
        }
    }
    match &diff.words {
        Some(words) => {
            ui.label(egui::RichText::new(words).strong());
        }
        None => {
            ui.label(format!(
                "{b_name} cannot be compared with {a_name}: a run without timed iterations"
            ));
        }
    }
    if let Some(deltas) = &diff.deltas {
        table(ui, deltas, a_name, b_name);
    }
}

/// A row of the table as text: part, A, B, Δ, the interval.
pub fn row_text(delta: &analysis::MeasureDelta) -> [String; 5] {
    [
        delta.measure.label().to_owned(),
        ms(delta.a_mean),
        ms(delta.b_mean),
        signed_ms(delta.change()),
        format!("{} to {}", signed_ms(delta.low), signed_ms(delta.high)),
    ]
}

/// The per-part table: mean in A, in B, Δ and its interval; a Δ whose interval leaves out 0 is
/// strong, one that does not is muted.
fn table(ui: &mut egui::Ui, deltas: &Deltas, a_name: &str, b_name: &str) {
    let level = crate::text::trimmed(deltas.confidence * 100.0, 2);
    let headings = [
        "part".to_owned(),
        format!("A: {a_name}"),
        format!("B: {b_name}"),
        "Δ = B − A".to_owned(),
        format!("{level}% interval of Δ"),
    ];
    ui.push_id(("compare-diff", a_name, b_name), |ui| {
        egui::Grid::new("compare-diff")
            .striped(true)
            .num_columns(5)
            .spacing([16.0, 3.0])
            .show(ui, |ui| {
                for heading in &headings {
                    ui.label(egui::RichText::new(heading).strong());
                }
                ui.end_row();
                for delta in &deltas.rows {
                    let [part, a, b, change, interval] = row_text(delta);
                    ui.label(part);
                    ui.monospace(a);
                    ui.monospace(b);
                    let change = egui::RichText::new(change).monospace();
                    if delta.is_clear() {
                        ui.label(change.strong());
                    } else {
                        ui.label(change.color(theme::MUTED))
                            .on_hover_text("The interval holds 0: no clear change");
                    }
                    ui.colored_label(theme::MUTED, egui::RichText::new(interval).monospace());
                    ui.end_row();
                }
            });
    });
    ui.colored_label(
        theme::MUTED,
        format!(
            "Means; the parts' Δ add up to the total's. The verdict compares medians. \
             Intervals: {level}% bootstrap over each run's iterations."
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::Measure;

    #[test]
    fn a_row_reads_part_a_b_the_change_and_its_interval() {
        let delta = analysis::MeasureDelta {
            measure: Measure::Total,
            a_mean: 10.0,
            b_mean: 12.5,
            low: 1.25,
            high: 3.5,
        };
        assert_eq!(
            row_text(&delta),
            [
                "total",
                "10.0 ms",
                "12.5 ms",
                "+2.50 ms",
                "+1.25 ms to +3.50 ms"
            ]
        );
        assert_eq!(heading("run 3", "run 5"), "run 3 -> run 5");
    }

    #[test]
    fn the_settings_line_names_each_setting_with_a_s_value_then_b_s() {
        assert_eq!(settings_line(&[]), None);
        let changes = [
            SettingChange {
                name: "mode",
                a: "with-stats".into(),
                b: "profile".into(),
            },
            SettingChange {
                name: "decoder",
                a: "fast".into(),
                b: "reference".into(),
            },
        ];
        assert_eq!(
            settings_line(&changes).as_deref(),
            Some("Differs in mode with-stats -> profile; decoder fast -> reference")
        );
    }
}
