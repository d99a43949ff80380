//! A read-write load run's figures beside the target's own statistics in the Load tab, under the
//! hottest keys (the window's `load --server-stats`): each figure of the run, the target's
//! (LOCK_STATS and TXN_STATS of the run's intervals), whether they agree, and the line in words,
//! with why they may differ; or the sentence that the target serves none, that they were not read,
//! or that they count none of an optimistic run. Made once when the run ends, from
//! `analysis::server_stats` (the words the command line and the page say); nothing for a run that
//! did not ask for them.

use egui_extras::{Column, TableBuilder};

use crate::analysis::server_stats::{StatsView, server_stats_view};
use crate::app::theme;
use crate::load::LoadReport;

/// The table's headings.
pub const STATS_HEADINGS: [&str; 4] = ["figure", "the run", "the target", "agree?"];

/// The target's statistics of the last run, as drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadTargetStats {
    /// The figures compared.
    Compared {
        /// What was read, in words.
        read: String,
        /// A row per figure: figure, the run, the target, agree?
        rows: Vec<[String; 4]>,
        /// Whether each row's figures agree (None: nothing to compare).
        agree: Vec<Option<bool>>,
        /// Each figure's line in words.
        words: Vec<String>,
        /// What was cut or refused while reading.
        notices: Vec<String>,
        /// Why the two may differ.
        caveats: Vec<&'static str>,
    },
    /// One sentence: the target serves none, they were not read, or they count none of the run.
    Said(String),
}

impl LoadTargetStats {
    /// What `report` says of the target's statistics; None when the run did not ask for them.
    pub fn of(report: &LoadReport) -> Option<LoadTargetStats> {
        Some(match server_stats_view(report)? {
            StatsView::NotServed(words)
            | StatsView::NotRead(words)
            | StatsView::NotCounted(words) => LoadTargetStats::Said(words),
            StatsView::Compared(c) => LoadTargetStats::Compared {
                read: c.what_was_read(),
                rows: c
                    .lines
                    .iter()
                    .map(|l| {
                        [
                            l.what.to_owned(),
                            l.run.clone(),
                            l.target.clone(),
                            l.verdict().to_owned(),
                        ]
                    })
                    .collect(),
                agree: c.lines.iter().map(|l| l.agree).collect(),
                words: c.lines.into_iter().map(|l| l.words).collect(),
                notices: c
                    .notices
                    .iter()
                    .map(|n| crate::text::printable(n).into_owned())
                    .collect(),
                caveats: c.caveats,
            },
        })
    }

    /// Every line of words it shows: the sentence, or each figure's line.
    pub fn words(&self) -> &[String] {
        match self {
            LoadTargetStats::Said(words) => std::slice::from_ref(words),
            LoadTargetStats::Compared { words, .. } => words,
        }
    }

    /// The heading, then the sentence, or what was read, the table, each figure's line, the
    /// notices and the caveats.
    pub fn ui(&self, ui: &mut egui::Ui) {
        ui.strong("The target's own statistics").on_hover_text(
            "What the target's SPANNER_SYS tables say of the run, read once its statistics \
             interval holding the run's end closed: LOCK_STATS (lock waits, by row range) and \
             TXN_STATS (attempts, aborts and commits, for the tag the run's transactions carried)",
        );
        let (read, rows, agree, words, notices, caveats) = match self {
            LoadTargetStats::Said(words) => {
                ui.label(egui::RichText::new(words).color(theme::MUTED));
                return;
            }
            LoadTargetStats::Compared {
                read,
                rows,
                agree,
                words,
                notices,
                caveats,
            } => (read, rows, agree, words, notices, caveats),
        };
        ui.label(egui::RichText::new(format!("{read}:")).color(theme::MUTED));
        table(ui, rows, agree);
        for line in words {
            ui.label(line);
        }
        for notice in notices {
            ui.colored_label(theme::WARN, format!("note: {notice}"));
        }
        ui.label(egui::RichText::new("Why they may differ:").color(theme::MUTED));
        for caveat in caveats {
            ui.label(
                egui::RichText::new(format!("• {caveat}"))
                    .small()
                    .color(theme::MUTED),
            );
        }
    }
}

/// The figures' table: short cells, one line each (their lines in words follow it), a verdict
/// that they differ marked.
fn table(ui: &mut egui::Ui, rows: &[[String; 4]], agree: &[Option<bool>]) {
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
    egui::ScrollArea::horizontal()
        .id_salt("load-target-stats-h")
        .show(ui, |ui| {
            TableBuilder::new(ui)
                .id_salt("load-target-stats-table")
                .striped(true)
                .vscroll(false)
                .columns(Column::auto().at_least(60.0), STATS_HEADINGS.len())
                .header(row_height, |mut header| {
                    for heading in STATS_HEADINGS {
                        header.col(|ui| {
                            ui.strong(heading);
                        });
                    }
                })
                .body(|body| {
                    body.rows(row_height, rows.len(), |mut row| {
                        let Some(cells) = rows.get(row.index()) else {
                            return;
                        };
                        for (k, cell) in cells.iter().enumerate() {
                            // A figure that differs is marked; the words under the table say by
                            // how much and why.
                            let differ = agree.get(row.index()) == Some(&Some(false));
                            let text = match k {
                                3 if differ => egui::RichText::new(cell).color(theme::WARN),
                                _ => egui::RichText::new(cell),
                            };
                            row.col(|ui| {
                                ui.add(
                                    egui::Label::new(text).wrap_mode(egui::TextWrapMode::Extend),
                                );
                            });
                        }
                    });
                });
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::server_stats::{ServedStats, ServerStats, StatsRead, TxnStatsRow};
    use crate::load::{LoadSteps, Model, RunFacts, StepLevel};

    fn report(read: Option<StatsRead>) -> LoadReport {
        let plan = LoadSteps {
            model: Model::Closed,
            levels: vec![StepLevel::Concurrency(1)],
            step_duration: std::time::Duration::from_secs(1),
            max_in_flight: 1,
            drain: std::time::Duration::from_secs(1),
        };
        let mut r = LoadReport::new(RunFacts::default(), &plan, Vec::new());
        r.server_stats = read.map(|read| ServerStats {
            tag: "spanprof-load-0a1b2c3d".into(),
            run_from: String::new(),
            run_to: String::new(),
            read,
            lock_free: false,
        });
        r
    }

    #[test]
    fn served_statistics_are_rows_and_words_and_a_target_without_them_a_sentence() {
        assert_eq!(LoadTargetStats::of(&report(None)), None);
        let served = ServedStats {
            intervals: vec!["2026-12-05T18:31:00Z".into()],
            txn_rows: vec![TxnStatsRow {
                interval_end: "2026-12-05T18:31:00Z".into(),
                tag: "spanprof-load-0a1b2c3d".into(),
                attempt_count: 3,
                commit_attempt_count: 3,
                commit_abort_count: 1,
                commit_retry_count: 1,
                avg_total_latency_seconds: None,
            }],
            ..ServedStats::default()
        };
        let view = LoadTargetStats::of(&report(Some(StatsRead::Served(served)))).expect("asked");
        let LoadTargetStats::Compared { rows, words, .. } = &view else {
            panic!("compared: {view:?}");
        };
        let attempts = rows.iter().find(|r| r[0] == "attempts").expect("attempts");
        assert_eq!(attempts[1..], ["0", "3", "differ"]);
        assert!(
            words
                .iter()
                .any(|w| w.starts_with("attempts: the run counted 0"))
        );
        let none = LoadTargetStats::of(&report(Some(StatsRead::NotServed {
            why: "NOT_FOUND".into(),
        })))
        .expect("asked");
        assert!(
            none.words()[0].starts_with(crate::analysis::server_stats::NOT_SERVED),
            "{none:?}"
        );
    }
}
