//! The summary tables under the iterations' chart: the total and each part over the selection
//! (or every timed iteration), the notes a reader needs to add them up, and the figures beside the
//! parts. The part names stay put while the figures scroll sideways, the column headings stay in
//! view while the view around scrolls down, and one iteration shows its own figures, not a spread.

use std::collections::BTreeSet;

use egui::{Align, Color32, FontId, Layout, Rect, RichText, TextStyle, UiBuilder, vec2};

use super::attempts::{AttemptRow, attempts_table};
use crate::analysis::PartStats;
use crate::app::theme;
use crate::report::{Figure, IterationRecord, Status};
use crate::stats::Summary;
use crate::text::{count, ms};

/// A row's height, in points: one line of body text with room around it.
const ROW: f32 = 20.0;
/// Space after each column's widest text, in points.
const GAP: f32 = 14.0;
/// A part's colour swatch and the space after it, in points.
const SWATCH: f32 = 13.0;

/// What the summary shows.
pub struct Table<'a> {
    /// The parts over the iterations that count, when any does.
    pub stats: Option<&'a PartStats>,
    /// The figures beside the parts over the same iterations.
    pub figures: &'a [(Figure, Summary)],
    /// The selected iterations (none: every timed one).
    pub selection: &'a BTreeSet<u32>,
    /// The iteration, when exactly one counts: its own figures, no spread.
    pub single: Option<u32>,
    /// Why no iteration counts, when none does.
    pub empty: &'static str,
    /// A read-write run's transactions in one sentence (`analysis::Transactions`).
    pub transactions: Option<&'a str>,
    /// The one iteration that counts, a transaction's: its attempts.
    pub attempts: Option<&'a [AttemptRow]>,
}

/// Why no iteration of `records` counts yet, in words: a run cancelled or failed before one ended
/// ok is not one still waiting for its first.
pub fn empty_words(records: &[IterationRecord]) -> &'static str {
    if records.iter().any(|r| r.status() == Status::Cancelled) {
        "No timed iteration: the run was cancelled before one ended."
    } else if records.iter().any(|r| r.status() == Status::Error) {
        "No timed iteration ended ok."
    } else {
        "No timed iteration yet."
    }
}

/// One row of the table: its name (with its colour's swatch), then a cell per column.
struct Row<'a> {
    name: &'a str,
    swatch: Option<Color32>,
    cells: Vec<String>,
    /// A section's heading, not figures.
    heading: bool,
}

/// The statistics' columns over several iterations.
const MANY: [&str; 9] = [
    "n", "mean", "median", "σ", "min", "max", "p90", "p99", "share",
];

/// The summary tables: the total and each part (mean, median, σ, min, max, p90, p99 and the
/// part's share of the mean total; one iteration's own figure and share when one counts), the
/// notes a reader needs to add them up, then the figures beside the parts (the overlap, what the
/// server reported, Google's latency points) when any was measured. Figures are written as every
/// view writes them.
pub fn summary_table(ui: &mut egui::Ui, t: &Table<'_>) {
    let over = match (t.single, t.selection.len()) {
        (Some(i), 1) => format!("#{i} selected: its own figures, no spread over one iteration"),
        (Some(i), _) => format!("#{i}, the one timed iteration: no spread over one"),
        (None, 0) => "every timed iteration".to_owned(),
        (None, n) => format!("{} selected iterations", count(n as u64)),
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Summary").strong());
        ui.label(RichText::new(format!("(over {over})")).color(theme::MUTED));
    });
    if let Some(sentence) = t.transactions {
        ui.label(format!("{sentence}."))
            .on_hover_text("Over every timed iteration of the run");
    }
    let Some(stats) = t.stats else {
        ui.label(t.empty);
        return;
    };
    let single_heading = t.single.map(|i| format!("#{i}"));
    let headings: Vec<&str> = match &single_heading {
        Some(h) => vec![h.as_str(), "share"],
        None => MANY.to_vec(),
    };
    let cells = |s: &Summary, share: Option<f64>| -> Vec<String> {
        let share = share.map_or_else(String::new, |x| format!("{:.0}%", x * 100.0));
        if t.single.is_some() {
            return vec![ms(s.mean), share];
        }
        let mut cells = vec![count(s.count as u64)];
        cells.extend(
            [s.mean, s.median, s.std_dev, s.min, s.max, s.p90, s.p99]
                .into_iter()
                .map(ms),
        );
        cells.push(share);
        cells
    };
    let mut rows = vec![Row {
        name: "total",
        swatch: None,
        cells: cells(&stats.total, Some(1.0)),
        heading: false,
    }];
    for p in &stats.parts {
        rows.push(Row {
            name: p.part.label(),
            swatch: Some(theme::part(p.part)),
            cells: cells(&p.summary, Some(p.share)),
            heading: false,
        });
    }
    if !t.figures.is_empty() {
        rows.push(Row {
            name: "Beside the parts",
            swatch: None,
            cells: Vec::new(),
            heading: true,
        });
    }
    for (figure, s) in t.figures {
        rows.push(Row {
            name: figure.name(),
            swatch: None,
            cells: cells(s, None),
            heading: false,
        });
    }
    grid(ui, &headings, &rows);
    // Below the table at the text's own size, wrapped to the width there is (it scrolled away
    // with the figures, cut at the right, in the small style).
    ui.add_space(4.0);
    ui.label(RichText::new(summary_note(stats)).color(theme::MUTED));
    if let (Some(rows), Some(i)) = (t.attempts, t.single) {
        attempts_table(ui, i, rows);
    }
}

/// The table: the names in a column that stays put, the figures in columns that scroll sideways
/// beside them, the headings' row held at the top of the view while the rows pass under it.
fn grid(ui: &mut egui::Ui, headings: &[&str], rows: &[Row<'_>]) {
    let body = TextStyle::Body.resolve(ui.style());
    let mono = TextStyle::Monospace.resolve(ui.style());
    let width = |text: &str, font: &FontId| {
        ui.painter()
            .layout_no_wrap(text.to_owned(), font.clone(), Color32::WHITE)
            .size()
            .x
    };
    let names = rows
        .iter()
        .map(|r| width(r.name, &body) + if r.swatch.is_some() { SWATCH } else { 0.0 })
        .fold(width("part", &body), f32::max)
        + GAP;
    let columns: Vec<f32> = headings
        .iter()
        .enumerate()
        .map(|(k, h)| {
            rows.iter()
                .filter_map(|r| r.cells.get(k))
                .map(|c| width(c, &mono))
                .fold(width(h, &body), f32::max)
                + GAP
        })
        .collect();
    let height = ROW * (rows.len() + 1) as f32;
    // Where the headings' row is drawn: at the table's top, or lower while the view above has
    // scrolled past it and rows remain under it.
    let view_top = ui.clip_rect().top();
    ui.horizontal_top(|ui| {
        ui.spacing_mut().item_spacing.x = 0.0;
        let (left, _) = ui.allocate_exact_size(vec2(names, height), egui::Sense::hover());
        let head_y = left.top().max(view_top).min(left.bottom() - 2.0 * ROW);
        stripes(ui, left, rows.len());
        for (k, row) in rows.iter().enumerate() {
            let rect =
                Rect::from_min_size(left.min + vec2(0.0, ROW * (k + 1) as f32), vec2(names, ROW));
            name_cell(ui, rect, row);
        }
        heading_row(
            ui,
            left,
            head_y,
            &[("part", names)],
            Layout::left_to_right(Align::Center),
        );
        egui::ScrollArea::horizontal()
            .id_salt("summary-scroll")
            .auto_shrink([false, true])
            .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
            .show(ui, |ui| {
                let total: f32 = columns.iter().sum();
                let (area, _) = ui.allocate_exact_size(vec2(total, height), egui::Sense::hover());
                stripes(ui, area, rows.len());
                for (k, row) in rows.iter().enumerate() {
                    let mut x = area.left();
                    let y = area.top() + ROW * (k + 1) as f32;
                    for (cell, &w) in row.cells.iter().zip(&columns) {
                        let rect = Rect::from_min_size(egui::pos2(x, y), vec2(w - GAP / 2.0, ROW));
                        x += w;
                        cell_ui(ui, rect, Layout::right_to_left(Align::Center), |ui| {
                            ui.monospace(cell);
                        });
                    }
                }
                let heads: Vec<(&str, f32)> = headings
                    .iter()
                    .copied()
                    .zip(columns.iter().copied())
                    .collect();
                heading_row(
                    ui,
                    area,
                    head_y,
                    &heads,
                    Layout::right_to_left(Align::Center),
                );
            });
    });
}

/// Every other row's background, from the first row under the headings.
fn stripes(ui: &egui::Ui, area: Rect, rows: usize) {
    let fill = ui.visuals().faint_bg_color;
    for k in (1..rows).step_by(2) {
        let top = area.top() + ROW * (k + 1) as f32;
        let rect = Rect::from_x_y_ranges(area.x_range(), top..=top + ROW);
        ui.painter().rect_filled(rect, 0.0, fill);
    }
}

/// A row's name, with its part's swatch when it has one.
fn name_cell(ui: &mut egui::Ui, rect: Rect, row: &Row<'_>) {
    cell_ui(ui, rect, Layout::left_to_right(Align::Center), |ui| {
        if let Some(colour) = row.swatch {
            let (swatch, _) = ui.allocate_exact_size(vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(swatch, 2.0, colour);
            ui.add_space(SWATCH - 9.0);
        }
        if row.heading {
            ui.label(RichText::new(row.name).strong())
                .on_hover_text("Overlapping the parts, or measured elsewhere: never added to them");
        } else {
            ui.label(row.name);
        }
    });
}

/// The headings across `area` at `y`, over a ground that hides the rows passing under them.
fn heading_row(ui: &mut egui::Ui, area: Rect, y: f32, heads: &[(&str, f32)], layout: Layout) {
    let ground = Rect::from_x_y_ranges(area.x_range(), y..=y + ROW);
    ui.painter()
        .rect_filled(ground, 0.0, ui.visuals().panel_fill);
    let mut x = area.left();
    for &(text, w) in heads {
        // Figures' headings right-aligned over their figures, which end short of the gap.
        let inner = if layout.main_dir() == egui::Direction::RightToLeft {
            w - GAP / 2.0
        } else {
            w
        };
        let rect = Rect::from_min_size(egui::pos2(x, y), vec2(inner, ROW));
        x += w;
        cell_ui(ui, rect, layout, |ui| {
            ui.label(RichText::new(text).strong());
        });
    }
}

/// Draws `add` in `rect` with `layout`, leaving the layout around where it was.
fn cell_ui(ui: &mut egui::Ui, rect: Rect, layout: Layout, add: impl FnOnce(&mut egui::Ui)) {
    let mut cell = ui.new_child(UiBuilder::new().max_rect(rect).layout(layout));
    add(&mut cell);
}

/// What a reader needs to add the parts up: means do, medians do not; how the wait was split.
fn summary_note(stats: &PartStats) -> String {
    let mut note = format!(
        "The parts' means add up to the mean total; their medians and percentiles do not. {}.",
        stats.split.note()
    );
    if stats.client_work_untimed > 0 {
        note.push_str(" An older report: the client's own work was not timed, and is in untimed.");
    }
    note
}
