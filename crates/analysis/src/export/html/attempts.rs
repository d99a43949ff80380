//! A read-write run's attempts on the page: every attempt of every transaction that took more
//! than one, did not commit, or lost a commit's answer (up to `max_rows` rows), with how it ended,
//! at which step, the server's message (and how a lost answer was resolved), the RetryInfo asked
//! and the back-off slept.

use crate::report::{Attempt, RunReport};

use super::markup::{Cell, Table, clipped};

/// The attempts section, empty for a run of queries or one whose transactions each committed at
/// the first attempt (the findings' sentence says so).
pub fn section(report: &RunReport, max_rows: usize) -> String {
    let rows: Vec<(u32, usize, &Attempt)> = report
        .iterations
        .iter()
        .filter_map(|r| Some((r.iteration, r.transaction.as_ref()?)))
        .filter(|(_, t)| {
            t.attempts.len() > 1
                || t.last()
                    .is_some_and(|a| a.outcome != crate::report::AttemptOutcome::Committed)
                || t.attempts.iter().any(|a| a.commit_resolution.is_some())
        })
        .flat_map(|(iteration, t)| {
            t.attempts
                .iter()
                .enumerate()
                .map(move |(k, a)| (iteration, k + 1, a))
        })
        .take(max_rows)
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut table = Table::new(
        "sortable attempts",
        &[
            "#",
            "attempt",
            "outcome",
            "time",
            "ended at",
            "RetryInfo",
            "back-off after",
            "message",
        ],
    );
    for (iteration, number, a) in rows {
        table.row(
            if a.outcome == crate::report::AttemptOutcome::Committed {
                ""
            } else {
                "failed"
            },
            vec![
                Cell::figure(&iteration.to_string(), f64::from(iteration)),
                Cell::figure(&number.to_string(), number as f64),
                Cell::text(a.outcome.as_str()),
                Cell::ms(a.total_ms),
                Cell::text(a.ended_at.map_or("–", |k| k.as_str())),
                Cell::opt_ms(a.retry_delay_ms),
                Cell::opt_ms(a.backoff_ms),
                Cell::markup(clipped(
                    &[a.message.as_deref(), a.commit_resolution.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join("; "),
                )),
            ],
        );
    }
    format!(
        "<h3>Transactions that took more than one attempt, or did not simply commit</h3>{}",
        table.finish()
    )
}
