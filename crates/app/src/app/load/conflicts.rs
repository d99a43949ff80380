//! A read-write load run's hottest keys in the Load tab, under the goodput: a few rows per step,
//! each a key its transactions waited on (its columns, waits, their time, the attempts wounded over
//! it), as the step's `conflicts` has them (the local instance's lock table, a model of Spanner's
//! locking); a step that named none says so and nothing is invented. Written once when a step
//! ends; nothing for a run of queries.

use egui_extras::{Column, TableBuilder};

use crate::analysis::conflicts::SOURCE;
use crate::app::theme;
use crate::load::StepResult;
use crate::text::{count, ms};

/// The keys shown per step at most (a step's report keeps more).
pub const KEYS_PER_STEP: usize = 5;

/// The table's headings.
pub const HEADINGS: [&str; 6] = ["step", "key", "columns", "waits", "wait", "wounds"];

/// The words of a read-write step that named no wait or wound.
pub const NONE_NAMED: &str = "the target named no lock waits";

/// The hottest keys of a read-write run's steps, as drawn.
#[derive(Debug, Default)]
pub struct LoadConflicts {
    rows: Vec<[String; 6]>,
    /// Whether some step named a wait or a wound.
    named: bool,
}

impl LoadConflicts {
    /// Adds a step that ended; a query run's step adds nothing.
    pub fn push(&mut self, step: &StepResult) {
        if step.committed_per_s.is_none() {
            return;
        }
        let level = step.level().describe();
        let Some(c) = &step.conflicts else {
            let dash = || "–".to_owned();
            self.rows
                .push([level, NONE_NAMED.to_owned(), dash(), dash(), dash(), dash()]);
            return;
        };
        self.named = true;
        for k in c.keys.iter().take(KEYS_PER_STEP) {
            self.rows.push([
                level.clone(),
                k.key.clone(),
                if k.columns.is_empty() {
                    "–".to_owned()
                } else {
                    k.columns.join(", ")
                },
                count(k.waits),
                ms(k.wait_ms),
                count(k.wounds),
            ]);
        }
    }

    /// The rows as drawn: step, key, columns, waits, wait, wounds.
    pub fn rows(&self) -> impl Iterator<Item = &[String]> {
        self.rows.iter().map(|r| r.as_slice())
    }

    /// The heading, where the figures come from, and the table; nothing without a read-write
    /// step; a line alone when no step named a wait.
    pub fn ui(&self, ui: &mut egui::Ui) {
        if self.rows.is_empty() {
            return;
        }
        ui.strong("The hottest keys").on_hover_text(
            "The keys each step's transactions waited on most for a lock: the waits, their \
             time, and the attempts wounded over the key (wound-wait: an older transaction \
             aborts a younger one that holds what it asks for)",
        );
        if !self.named {
            ui.label(
                egui::RichText::new(format!(
                    "The target named no lock waits for these read-write steps ({SOURCE} names \
                     them; other targets do not)."
                ))
                .color(theme::MUTED),
            );
            return;
        }
        ui.label(
            egui::RichText::new(format!("These figures come from {SOURCE}.")).color(theme::MUTED),
        );
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        egui::ScrollArea::horizontal()
            .id_salt("load-conflicts-h")
            .show(ui, |ui| {
                TableBuilder::new(ui)
                    .id_salt("load-conflicts-table")
                    .striped(true)
                    .vscroll(false)
                    // Sized to their words: the six fit the tab at 900 points wide.
                    .columns(Column::auto().at_least(50.0), HEADINGS.len())
                    .header(row_height, |mut header| {
                        for heading in HEADINGS {
                            header.col(|ui| {
                                ui.strong(heading);
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(row_height, self.rows.len(), |mut row| {
                            let Some(cells) = self.rows.get(row.index()) else {
                                return;
                            };
                            for cell in cells {
                                row.col(|ui| {
                                    // One line: a wrapped cell ran past its row's height.
                                    ui.add(
                                        egui::Label::new(cell)
                                            .wrap_mode(egui::TextWrapMode::Extend),
                                    );
                                });
                            }
                        });
                    });
            });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::StepLevel;
    use crate::load::step::{StepCpu, StepTally};
    use crate::report::{Conflicts, KeyConflicts};

    fn step(level: u32) -> StepResult {
        let mut s = StepTally::read_write(StepLevel::Concurrency(level)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        s.committed_per_s = Some(10.0);
        s
    }

    #[test]
    fn a_step_s_hottest_keys_are_rows_and_a_step_without_names_none_invented() {
        let mut view = LoadConflicts::default();
        view.push(&step(1));
        let mut hot = step(2);
        hot.conflicts = Some(Conflicts {
            waits: 3,
            wait_ms: 12.5,
            wounds: 1,
            keys: vec![KeyConflicts {
                key: "accounts(1)".into(),
                columns: vec!["balance".into()],
                waits: 3,
                wait_ms: 12.5,
                wounds: 1,
            }],
        });
        view.push(&hot);
        let rows: Vec<&[String]> = view.rows().collect();
        assert_eq!(
            rows,
            [
                ["concurrency 1", NONE_NAMED, "–", "–", "–", "–"],
                [
                    "concurrency 2",
                    "accounts(1)",
                    "balance",
                    "3",
                    "12.5 ms",
                    "1"
                ]
            ]
        );
        let query = StepTally::new(StepLevel::Concurrency(3)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        view.push(&query);
        assert_eq!(view.rows().count(), 2, "a query's step adds nothing");
    }
}
