//! A read-write transaction's attempts as a small table under the summary, for the one iteration
//! selected: each attempt's outcome, the step it ended at, its time, the RetryInfo the server
//! asked for and the back-off slept after it; the server's messages under the table, wrapped to
//! the width there is (in a column they ran past the window's edge).

use std::sync::Arc;

use egui::RichText;

use super::conflicts::{ConflictRows, ConflictView};
use crate::analysis::{RunConflicts, Transactions};
use crate::app::theme;
use crate::report::{AttemptOutcome, IterationRecord, RunId, RunReport, TransactionRecord};
use crate::text::{excerpt, maybe_ms, ms, printable};

/// A run's transactions in words, made once per run shown (and per iteration selected), never
/// per frame: the summary's sentence and the selected iteration's attempts.
#[derive(Debug, Default)]
pub struct TransactionWords {
    /// The run and its records' count the sentence was made from, and the sentence (none for a
    /// query's run).
    sentence: Option<(RunId, usize, Option<String>)>,
    /// The run, iteration and records' count the rows were made from, and the rows.
    attempts: Option<(RunId, u32, usize, Vec<AttemptRow>)>,
    /// The run and its records' count its conflict view was made from, the view and its rows
    /// (none when the target named no wait or wound).
    conflicts: Option<(RunId, usize, Option<ConflictView>)>,
}

impl TransactionWords {
    /// Makes the sentence of `report`'s transactions (`analysis::Transactions`), run `run`,
    /// unless it was made from these records.
    pub fn update(&mut self, run: RunId, report: &RunReport) {
        let records = report.iterations.len();
        if !matches!(&self.sentence, Some((r, n, _)) if *r == run && *n == records) {
            let said = Transactions::of(report).map(|t| t.to_string());
            self.sentence = Some((run, records, said));
        }
        if !matches!(&self.conflicts, Some((r, n, _)) if *r == run && *n == records) {
            let view = RunConflicts::of(report).map(ConflictView::of);
            self.conflicts = Some((run, records, view));
        }
    }

    /// The conflict view of run `run` (made once per run), when its target named waits or
    /// wounds.
    pub fn conflicts(&self, run: Option<RunId>) -> Option<&Arc<RunConflicts>> {
        match &self.conflicts {
            Some((r, _, Some(view))) if Some(*r) == run => Some(&view.conflicts),
            _ => None,
        }
    }

    /// The conflict view's rows, for run `run`.
    pub fn conflict_rows(&self, run: Option<RunId>) -> Option<&ConflictRows> {
        match &self.conflicts {
            Some((r, _, Some(view))) if Some(*r) == run => Some(&view.rows),
            _ => None,
        }
    }

    /// Forgets the sentence and the conflict view (a run in flight has none yet).
    pub fn clear(&mut self) {
        self.sentence = None;
        self.conflicts = None;
    }

    /// The sentence of run `run`, when it ran transactions.
    pub fn sentence(&self, run: Option<RunId>) -> Option<&str> {
        match &self.sentence {
            Some((r, _, said)) if Some(*r) == run => said.as_deref(),
            _ => None,
        }
    }

    /// Makes the rows of `record`'s attempts (of run `run`, `records` records so far), when it is
    /// a transaction's, unless they were made from these.
    pub fn make_attempts(&mut self, run: RunId, record: &IterationRecord, records: usize) {
        let key = (run, record.iteration, records);
        if matches!(&self.attempts, Some((r, i, n, _)) if (*r, *i, *n) == key) {
            return;
        }
        self.attempts = record
            .transaction
            .as_ref()
            .map(|t| (run, record.iteration, records, attempt_rows(t)));
    }

    /// The rows of iteration `iteration`'s attempts, run `run`, when they were made.
    pub fn attempts(&self, run: Option<RunId>, iteration: u32) -> Option<&[AttemptRow]> {
        match &self.attempts {
            Some((r, i, _, rows)) if Some(*r) == run && *i == iteration => Some(rows),
            _ => None,
        }
    }
}

/// The most characters of a message shown.
const MESSAGE_CHARS: usize = 400;

/// The table's headings.
const HEADINGS: [&str; 6] = [
    "attempt",
    "outcome",
    "ended at",
    "took",
    "RetryInfo",
    "back-off",
];

/// One attempt's row, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRow {
    /// Its number, from 1.
    pub number: usize,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The rest of its cells, after the number and the outcome.
    pub cells: [String; 4],
    /// The server's message, whole (empty without one).
    pub message: String,
}

/// The rows of `t`'s attempts.
pub fn attempt_rows(t: &TransactionRecord) -> Vec<AttemptRow> {
    t.attempts
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let retry = match (a.retry_delay_ms, a.retry_info_from.as_deref()) {
                (Some(d), Some(from)) => format!("{} ({from})", ms(d)),
                (Some(d), None) => ms(d),
                (None, _) => "–".to_owned(),
            };
            AttemptRow {
                number: k + 1,
                outcome: a.outcome,
                cells: [
                    a.ended_at.map_or("–", |s| s.as_str()).replace('_', " "),
                    ms(a.total_ms),
                    retry,
                    maybe_ms(a.backoff_ms),
                ],
                // The server's message, then how a lost commit answer was resolved.
                message: [a.message.as_deref(), a.commit_resolution.as_deref()]
                    .into_iter()
                    .flatten()
                    .map(|m| printable(m).into_owned())
                    .collect::<Vec<_>>()
                    .join("; "),
            }
        })
        .collect()
}

/// The attempts of iteration `iteration`, a transaction, as a table, the server's messages
/// under it.
pub fn attempts_table(ui: &mut egui::Ui, iteration: u32, rows: &[AttemptRow]) {
    ui.add_space(6.0);
    ui.label(RichText::new(format!("Attempts of #{iteration}")).strong());
    egui::ScrollArea::horizontal()
        .id_salt("attempts-scroll")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new("attempts-grid")
                .num_columns(HEADINGS.len())
                .striped(true)
                .spacing([14.0, 4.0])
                .show(ui, |ui| {
                    for h in HEADINGS {
                        ui.label(RichText::new(h).strong());
                    }
                    ui.end_row();
                    for row in rows {
                        row_ui(ui, row);
                    }
                });
        });
    for row in rows.iter().filter(|r| !r.message.is_empty()) {
        ui.label(
            RichText::new(format!(
                "attempt {}: {}",
                row.number,
                excerpt(&row.message, MESSAGE_CHARS)
            ))
            .color(theme::MUTED),
        );
    }
}

fn row_ui(ui: &mut egui::Ui, row: &AttemptRow) {
    ui.monospace(row.number.to_string());
    let colour = match row.outcome {
        AttemptOutcome::Committed => ui.visuals().text_color(),
        AttemptOutcome::Aborted | AttemptOutcome::Failed => theme::ERROR,
        AttemptOutcome::Cancelled | AttemptOutcome::Unknown => theme::WARN,
    };
    ui.label(RichText::new(row.outcome.as_str()).color(colour));
    for cell in &row.cells {
        ui.monospace(cell);
    }
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ActionKind, Attempt};

    #[test]
    fn an_aborted_attempt_says_where_what_was_asked_and_what_was_slept() {
        let mut aborted = Attempt::new(AttemptOutcome::Aborted);
        aborted.total_ms = 3.07;
        aborted.ended_at = Some(ActionKind::Commit);
        aborted.retry_delay_ms = Some(20.0);
        aborted.retry_info_from = Some("details".into());
        aborted.backoff_ms = Some(21.1);
        aborted.message = Some("Transaction aborted\u{7}; retry it".into());
        let mut committed = Attempt::new(AttemptOutcome::Committed);
        committed.total_ms = 3.71;
        let t = TransactionRecord {
            attempts: vec![aborted, committed],
            ..TransactionRecord::default()
        };
        let rows = attempt_rows(&t);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].number, 1);
        assert_eq!(
            rows[0].cells,
            [
                "commit".to_owned(),
                "3.07 ms".into(),
                "20.0 ms (details)".into(),
                "21.1 ms".into()
            ]
        );
        assert!(!rows[0].message.contains('\u{7}'), "{}", rows[0].message);
        assert_eq!(rows[1].outcome, AttemptOutcome::Committed);
        assert_eq!(rows[1].cells[0], "–");
        assert_eq!(rows[1].cells[3], "–");
        assert_eq!(rows[1].message, "");
    }

    #[test]
    fn a_commit_learned_by_asking_again_says_so_under_the_table() {
        let mut committed = Attempt::new(AttemptOutcome::Committed);
        committed.commit_resolution =
            Some("the commit's answer was lost (unavailable); asked again".into());
        let t = TransactionRecord {
            attempts: vec![committed],
            ..TransactionRecord::default()
        };
        let rows = attempt_rows(&t);
        assert!(
            rows[0].message.contains("asked again"),
            "{}",
            rows[0].message
        );
    }
}
