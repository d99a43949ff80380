//! The summary tables under the iterations' chart: the total and each part over the selection
//! (or every timed iteration), the notes a reader needs to add them up, and the figures beside the
//! parts.

use std::collections::BTreeSet;

use crate::analysis::PartStats;
use crate::app::theme;
use crate::report::Figure;
use crate::stats::Summary;
use crate::text::{count, ms};

/// The summary tables: the total and each part (mean, median, σ, min, max, p90, p99 and the
/// part's share of the mean total), the notes a reader needs to add them up, then the figures
/// beside the parts (the overlap, what the server reported, Google's latency points) when any was
/// measured. Figures are written as every view writes them.
pub fn summary_table(
    ui: &mut egui::Ui,
    stats: Option<&PartStats>,
    figures: &[(Figure, Summary)],
    selection: &BTreeSet<u32>,
) {
    let over = if selection.is_empty() {
        "every timed iteration".to_owned()
    } else {
        format!("{} selected iterations", count(selection.len() as u64))
    };
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new("Summary").strong());
        ui.label(egui::RichText::new(format!("(over {over})")).small());
    });
    let Some(stats) = stats else {
        ui.label("No timed iteration yet.");
        return;
    };
    // The table scrolls sideways in a narrow window, its bar always shown so that the columns
    // past the edge are seen to be there (the view below the chart scrolls it down).
    egui::ScrollArea::horizontal()
        .id_salt("summary-scroll")
        .auto_shrink([false, true])
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
        .show(ui, |ui| {
            egui::Grid::new("summary-table")
                .striped(true)
                .num_columns(10)
                .spacing([14.0, 3.0])
                .show(ui, |ui| {
                    for heading in [
                        "part", "n", "mean", "median", "σ", "min", "max", "p90", "p99", "share",
                    ] {
                        ui.label(egui::RichText::new(heading).strong());
                    }
                    ui.end_row();
                    summary_row(ui, "total", &stats.total, Some(1.0), None);
                    for p in &stats.parts {
                        let swatch = Some(theme::part(p.part));
                        summary_row(ui, p.part.label(), &p.summary, Some(p.share), swatch);
                    }
                    if !figures.is_empty() {
                        ui.label(egui::RichText::new("Beside the parts").strong())
                            .on_hover_text(
                                "Overlapping the parts, or measured elsewhere: never added to them",
                            );
                        ui.end_row();
                    }
                    for (figure, s) in figures {
                        summary_row(ui, figure.name(), s, None, None);
                    }
                });
            ui.label(
                egui::RichText::new(summary_note(stats))
                    .small()
                    .color(theme::MUTED),
            );
        });
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

/// One row of the summary: its name (with its colour's swatch), count, statistics and share.
fn summary_row(
    ui: &mut egui::Ui,
    name: &str,
    s: &Summary,
    share: Option<f64>,
    swatch: Option<egui::Color32>,
) {
    ui.horizontal(|ui| {
        if let Some(colour) = swatch {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, colour);
        }
        ui.label(name);
    });
    ui.monospace(count(s.count as u64));
    for value in [s.mean, s.median, s.std_dev, s.min, s.max, s.p90, s.p99] {
        ui.monospace(ms(value));
    }
    ui.monospace(share.map_or_else(String::new, |x| format!("{:.0}%", x * 100.0)));
    ui.end_row();
}
