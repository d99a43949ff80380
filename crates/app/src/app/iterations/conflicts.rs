//! A read-write run's conflict view under the summary: who blocked whom, as the target named it
//! (the local instance's lock table, a model of Spanner's locking): the totals, the hottest keys
//! (key, columns, waits, wait, wounds), then each wait and wound with the attempt it happened to,
//! on what, for how long and whom it was behind. Its rows are written once per run from
//! `analysis::RunConflicts` (the same figures as the exports), never per frame.

use std::sync::Arc;

use egui_extras::{Column, TableBuilder};

use crate::analysis::conflicts::{ConflictKind, RunConflicts, SOURCE};
use crate::app::theme;
use crate::text::{count, ms};

/// The pairs the window lists at most (the exports keep every one).
pub const MAX_PAIRS_SHOWN: usize = 100;

/// The keys' table's headings.
pub const KEY_HEADINGS: [&str; 5] = ["key", "columns", "waits", "wait", "wounds"];
/// The pairs' table's headings.
pub const PAIR_HEADINGS: [&str; 7] = ["attempt", "what", "at", "key", "mode", "wait", "behind"];

/// A run's conflict view, shared with its timeline, and its rows.
#[derive(Debug, Clone)]
pub struct ConflictView {
    /// The view, as the analysis made it.
    pub conflicts: Arc<RunConflicts>,
    /// Its rows, in words.
    pub rows: ConflictRows,
}

impl ConflictView {
    /// The view of `c`, its rows written.
    pub fn of(c: RunConflicts) -> ConflictView {
        let rows = ConflictRows::of(&c);
        ConflictView {
            conflicts: Arc::new(c),
            rows,
        }
    }
}

/// The conflict view in words, written once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConflictRows {
    /// "12 waits (340.0 ms) and 3 wounds".
    pub totals: String,
    /// The hottest keys, the most waited on first.
    pub keys: Vec<[String; 5]>,
    /// Each wait and wound, in the order the attempts went (at most [`MAX_PAIRS_SHOWN`]).
    pub pairs: Vec<[String; 7]>,
    /// The pairs not listed.
    pub left_out: usize,
}

impl ConflictRows {
    /// The rows of `c`.
    pub fn of(c: &RunConflicts) -> ConflictRows {
        let keys = c
            .tally
            .keys
            .iter()
            .map(|k| {
                [
                    k.key.clone(),
                    if k.columns.is_empty() {
                        "–".to_owned()
                    } else {
                        k.columns.join(", ")
                    },
                    count(k.waits),
                    ms(k.wait_ms),
                    count(k.wounds),
                ]
            })
            .collect();
        let pairs = c
            .pairs
            .iter()
            .take(MAX_PAIRS_SHOWN)
            .map(|p| {
                let (what, at, wait) = match p.kind {
                    ConflictKind::Wait { action, ms: took } => (
                        "waited",
                        action.map_or("–", |a| a.as_str()).replace('_', " "),
                        ms(took),
                    ),
                    ConflictKind::Wound => ("wounded", "–".to_owned(), "–".to_owned()),
                };
                [
                    p.attempt.words(),
                    what.to_owned(),
                    at,
                    p.key_words(),
                    p.mode.clone(),
                    wait,
                    p.behind_words(),
                ]
            })
            .collect();
        ConflictRows {
            totals: c.totals_words(),
            keys,
            pairs,
            left_out: c.pairs.len().saturating_sub(MAX_PAIRS_SHOWN) + c.pairs_left_out,
        }
    }
}

/// Draws the view: a heading that folds, the source, the keys, then the pairs.
pub fn ui(ui: &mut egui::Ui, rows: &ConflictRows) {
    egui::CollapsingHeader::new(format!("Who blocked whom · {}", rows.totals))
        .id_salt("who-blocked-whom")
        .default_open(true)
        .show(ui, |ui| {
            ui.label(
                egui::RichText::new(format!(
                    "As the target named them: {SOURCE}. Cloud Spanner may decide otherwise."
                ))
                .color(theme::MUTED),
            );
            ui.strong("The hottest keys");
            table(ui, "conflict-keys", &KEY_HEADINGS, &rows.keys);
            ui.add_space(6.0);
            ui.strong("Each wait and wound").on_hover_text(
                "An attempt waits behind the transactions that held the lock; a wounded \
                     attempt was aborted for an older transaction that asked for a lock it held \
                     (wound-wait). A transaction no attempt of this run had is another client's.",
            );
            table(ui, "conflict-pairs", &PAIR_HEADINGS, &rows.pairs);
            if rows.left_out > 0 {
                ui.label(
                    egui::RichText::new(format!(
                        "{} more not listed: the JSON and HTML exports hold them.",
                        count(rows.left_out as u64)
                    ))
                    .color(theme::MUTED),
                );
            }
        });
}

/// A table of text rows, each cell on one line, its columns sized to their words; the tab's
/// own scroll takes it (a table that scrolled inside it took the wheel from the tab).
fn table<const N: usize>(ui: &mut egui::Ui, id: &str, headings: &[&str; N], rows: &[[String; N]]) {
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::horizontal().id_salt(id).show(ui, |ui| {
        TableBuilder::new(ui)
            .id_salt(id)
            .striped(true)
            .vscroll(false)
            .columns(Column::auto().at_least(50.0), N)
            .header(row_height, |mut header| {
                for h in headings {
                    header.col(|ui| {
                        ui.strong(*h);
                    });
                }
            })
            .body(|body| {
                body.rows(row_height, rows.len(), |mut row| {
                    let Some(cells) = rows.get(row.index()) else {
                        return;
                    };
                    for cell in cells {
                        row.col(|ui| {
                            ui.add(egui::Label::new(cell).wrap_mode(egui::TextWrapMode::Extend));
                        });
                    }
                });
            });
    });
}
