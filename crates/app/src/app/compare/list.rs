//! The Compare tab's run list: a line saying how many runs it holds, how many are picked and what
//! File > Export writes, then one row per run, newest first, in a box as wide as the tab (each
//! column a share of it, its text cut with an ellipsis, never wider) with a scroll bar always
//! shown. And the short names runs are called by in the tab: the label when it is short, else
//! `run 3` (its number in this window), the time it started in a column of its own.

use std::collections::BTreeSet;

use egui_extras::{Column, TableBuilder};

use crate::analysis::totals_distribution;
use crate::app::runs::{self, RunEntry};
use crate::app::theme;
use crate::report::RunId;
use crate::text::ms;

/// The longest name a run is called by in the tab; a longer one (the query's first words and
/// the time, 37 characters) gives way to `run N`.
pub const SHORT_NAME: usize = 32;

/// What a row of the list is.
const ROW: f32 = 22.0;

/// Rows shown before the list scrolls.
const ROWS_SHOWN: usize = 6;

/// The list's columns: heading, share of the width, least width in points, hover text.
const COLUMNS: [(&str, f32, f32, &str); 7] = [
    (
        "compare",
        0.15,
        80.0,
        "Pick two or more runs to compare them",
    ),
    (
        "export",
        0.08,
        48.0,
        "File > Export writes the runs in view (those picked here) and those ticked",
    ),
    (
        "started",
        0.2,
        140.0,
        "When the run started: the time first, then the day",
    ),
    (
        "query",
        0.27,
        90.0,
        "The run's SQL (its label and the SQL when hovered)",
    ),
    ("target", 0.12, 60.0, "Where it ran"),
    ("timed", 0.07, 40.0, "Timed iterations"),
    ("median", 0.11, 64.0, "The median total"),
];

/// What a run is called by in the list: its title (the label, and the file it came from) when
/// at most [`SHORT_NAME`] characters, else `run N` (its number in this window).
pub fn short_name(run: &RunEntry) -> String {
    let title = run.title();
    if !title.trim().is_empty() && title.chars().count() <= SHORT_NAME {
        title
    } else {
        format!("run {}", run.id)
    }
}

/// The names `runs` are called by side by side: each one's name as [`runs::names`] gives it
/// (with the time where labels repeat, the date where days differ) when at most
/// [`SHORT_NAME`] characters, else `run N`; `run N` for all when two are still alike.
pub fn short_names(runs: &[&RunEntry]) -> Vec<String> {
    let names: Vec<String> = runs::names(runs)
        .into_iter()
        .zip(runs)
        .map(|(name, run)| {
            if name.chars().count() <= SHORT_NAME {
                name
            } else {
                format!("run {}", run.id)
            }
        })
        .collect();
    let distinct: BTreeSet<&String> = names.iter().collect();
    if distinct.len() == names.len() {
        names
    } else {
        runs.iter().map(|r| format!("run {}", r.id)).collect()
    }
}

/// The line above the list: how many runs it holds, how many are picked, and how many File >
/// Export writes (those picked, with those ticked).
pub fn count_line(runs: &[RunEntry], picked: &BTreeSet<RunId>) -> String {
    let n = runs.len();
    let in_list = runs.iter().filter(|r| picked.contains(&r.id)).count();
    let exported = runs
        .iter()
        .filter(|r| r.export || picked.contains(&r.id))
        .count();
    let ticked = exported - in_list;
    let runs_word = if n == 1 { "run" } else { "runs" };
    let mut line = format!("{n} {runs_word} · {in_list} picked · Export writes {exported}");
    if ticked > 0 {
        line.push_str(&format!(" ({ticked} ticked)"));
    }
    line
}

/// Draws the list of `runs` (newest first); `picked` is changed by the boxes ticked.
pub fn ui(ui: &mut egui::Ui, runs: &mut [RunEntry], picked: &mut BTreeSet<RunId>) {
    ui.label(egui::RichText::new(count_line(runs, picked)).strong());
    let width = ui.available_width();
    let spacing = ui.spacing().item_spacing.x;
    // Columns whose least width no longer fits leave, the last first (target, then timed...).
    let mut shown = COLUMNS.len();
    let least = |k: usize| -> f32 { COLUMNS[..k].iter().map(|c| c.2 + spacing).sum() };
    while shown > 3 && least(shown) > width {
        shown -= 1;
    }
    let room = (width - spacing * shown as f32).max(40.0);
    let share: f32 = COLUMNS[..shown].iter().map(|c| c.1).sum();
    let mut table = TableBuilder::new(ui)
        .id_salt("compare-runs")
        .striped(true)
        .vscroll(true)
        .auto_shrink([false, true])
        .max_scroll_height(ROW * ROWS_SHOWN as f32)
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible);
    for column in &COLUMNS[..shown] {
        table = table.column(Column::exact(room * column.1 / share).clip(true));
    }
    table
        .header(ROW, |mut header| {
            for (name, _, _, hover) in &COLUMNS[..shown] {
                header.col(|ui| {
                    ui.strong(*name).on_hover_text(*hover);
                });
            }
        })
        .body(|body| {
            body.rows(ROW, runs.len(), |mut row| {
                let at = runs.len() - 1 - row.index();
                let run = &mut runs[at];
                for column in 0..shown {
                    row.col(|ui| {
                        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
                        cell(ui, column, run, picked);
                    });
                }
            });
        });
}

/// One cell of `run`'s row.
fn cell(ui: &mut egui::Ui, column: usize, run: &mut RunEntry, picked: &mut BTreeSet<RunId>) {
    match column {
        0 => {
            let mut on = picked.contains(&run.id);
            if ui.checkbox(&mut on, short_name(run)).changed() {
                if on {
                    picked.insert(run.id);
                } else {
                    picked.remove(&run.id);
                }
            }
        }
        1 => {
            let name = format!("export {}", short_name(run));
            let in_view = picked.contains(&run.id);
            let mut on = in_view;
            let ticked = if in_view { &mut on } else { &mut run.export };
            let response = ui
                .add_enabled(!in_view, egui::Checkbox::without_text(ticked))
                .on_hover_text("Also write this run in File > Export")
                .on_disabled_hover_text("Picked here, so File > Export writes it");
            let checked = in_view || run.export;
            response.widget_info(|| {
                egui::WidgetInfo::selected(egui::Role::CheckBox, !in_view, checked, &name)
            });
        }
        2 => {
            let started = run.started().map_or_else(
                || "—".to_owned(),
                |t| t.format("%H:%M:%S %Y-%m-%d").to_string(),
            );
            ui.monospace(started);
        }
        3 => {
            let sql: String = run
                .report
                .config
                .sql
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            ui.label(sql)
                .on_hover_text(format!("{}\n{}", run.title(), run.report.config.sql));
        }
        4 => {
            ui.colored_label(theme::MUTED, &run.report.config.target);
        }
        5 => {
            ui.monospace(run.report.timed().count().to_string());
        }
        _ => {
            let median =
                totals_distribution(&run.report).map_or_else(|| "—".to_owned(), |d| ms(d.median));
            ui.monospace(median);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::runs::{RunList, RunSource};
    use crate::report::RunReport;

    /// Runs of these labels (started as said, `""` for none), as the list holds them: numbered
    /// from 1 in this order, none marked for export.
    fn entries(runs: &[(&str, &str)]) -> Vec<RunEntry> {
        let mut list = RunList::default();
        for (label, started) in runs {
            let report = RunReport {
                started_at: (*started).into(),
                ..RunReport::with_totals(label, &[10.0])
            };
            list.add(report, None, RunSource::Live);
        }
        let mut runs = list.entries().to_vec();
        runs.iter_mut().for_each(|r| r.export = false);
        runs
    }

    #[test]
    fn a_long_name_gives_way_to_the_run_s_number_and_alike_names_to_numbers_for_all() {
        let auto = "SELECT * FROM Seed23 LIMIT… 14:05:09";
        let runs = entries(&[("wide", ""), ("x", ""), (auto, "")]);
        let (wide, auto) = (&runs[0], &runs[2]);
        assert_eq!(short_name(wide), "wide");
        assert_eq!(short_name(auto), "run 3");
        assert_eq!(short_names(&[wide, auto]), ["wide", "run 3"]);
        // Alike labels are told apart by the time (short); a label alike a number, by numbers.
        let timed = entries(&[
            ("wide", "2026-12-03T10:00:00Z"),
            ("wide", "2026-12-03T10:30:00Z"),
        ]);
        let told = short_names(&[&timed[0], &timed[1]]);
        assert!(told.iter().all(|n| n.starts_with("wide · ")), "{told:?}");
        assert_ne!(told[0], told[1]);
        let long = "x".repeat(40);
        let numbered = entries(&[("run 2", ""), (&long, "")]);
        assert_eq!(
            short_names(&[&numbered[0], &numbered[1]]),
            ["run 1", "run 2"]
        );
    }

    #[test]
    fn the_count_line_says_how_many_runs_are_held_picked_and_exported() {
        let mut runs = entries(&[("a", ""), ("b", ""), ("c", "")]);
        let picked: BTreeSet<RunId> = [runs[1].id].into();
        assert_eq!(
            count_line(&runs, &picked),
            "3 runs · 1 picked · Export writes 1"
        );
        runs[0].export = true;
        runs[1].export = true;
        assert_eq!(
            count_line(&runs, &picked),
            "3 runs · 1 picked · Export writes 2 (1 ticked)"
        );
        assert_eq!(
            count_line(&runs[..1], &BTreeSet::new()),
            "1 run · 0 picked · Export writes 1 (1 ticked)"
        );
    }
}
