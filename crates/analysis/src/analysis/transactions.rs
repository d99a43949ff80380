//! A read-write run's transactions in figures: attempts per transaction (mean, most, how many
//! took each count), the aborts by the action they happened at, the back-off slept, and what ended
//! the transactions that did not commit. Computed once here for every view.

use std::collections::BTreeMap;
use std::fmt;

use crate::report::{ActionKind, AttemptOutcome, RunReport};

/// The transactions of one run's timed iterations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transactions {
    /// Transactions (timed iterations that ran one).
    pub count: usize,
    /// Of them, committed.
    pub committed: usize,
    /// Attempts, all of them.
    pub attempts: usize,
    /// Transactions by their number of attempts.
    pub by_attempts: BTreeMap<usize, usize>,
    /// Aborted attempts by the action they aborted at.
    pub aborts_at: BTreeMap<&'static str, usize>,
    /// The back-off slept before retries, in milliseconds, summed.
    pub backoff_ms: f64,
    /// Attempts whose abort carried a RetryInfo.
    pub with_retry_info: usize,
    /// Attempts whose commit's answer was lost, so that the commit was sent again.
    pub lost_answers: usize,
    /// Of them, those whose outcome the server's answer to it told (committed or aborted).
    pub learned: usize,
    /// Transactions whose outcome stayed unknown (no answer to the commit, asked again or not).
    pub unknown: usize,
}

impl Transactions {
    /// The figures of `report`'s timed transactions; `None` when it ran none (a query's run).
    pub fn of(report: &RunReport) -> Option<Transactions> {
        let mut t = Transactions::default();
        for record in report.timed() {
            let Some(txn) = &record.transaction else {
                continue;
            };
            t.count += 1;
            t.attempts += txn.attempts.len();
            *t.by_attempts.entry(txn.attempts.len()).or_default() += 1;
            if txn.last().map(|a| a.outcome) == Some(AttemptOutcome::Committed) {
                t.committed += 1;
            }
            if txn.last().map(|a| a.outcome) == Some(AttemptOutcome::Unknown) {
                t.unknown += 1;
            }
            for attempt in &txn.attempts {
                t.backoff_ms += attempt.backoff_ms.unwrap_or(0.0);
                if attempt.actions.iter().any(|a| a.commit_asked_again > 0) {
                    t.lost_answers += 1;
                    if attempt.outcome != AttemptOutcome::Unknown {
                        t.learned += 1;
                    }
                }
                if attempt.outcome == AttemptOutcome::Aborted {
                    let at = attempt
                        .ended_at
                        .map_or("unknown action", ActionKind::as_str);
                    *t.aborts_at.entry(at).or_default() += 1;
                    if attempt.retry_delay_ms.is_some() {
                        t.with_retry_info += 1;
                    }
                }
            }
        }
        (t.count > 0).then_some(t)
    }

    /// Attempts per transaction, on average.
    pub fn mean_attempts(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.attempts as f64 / self.count as f64
        }
    }

    /// Aborted attempts, all of them.
    pub fn aborts(&self) -> usize {
        self.aborts_at.values().sum()
    }
}

impl fmt::Display for Transactions {
    /// `9 transactions, 9 committed; 1.33 attempts per transaction (6 took 1, 3 took 2); 3 aborts,
    /// all at commit (3 with RetryInfo); 62.4 ms of back-off`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let took: Vec<String> = self
            .by_attempts
            .iter()
            .map(|(n, count)| format!("{count} took {n}"))
            .collect();
        write!(
            f,
            "{} transactions, {} committed; {:.2} attempts per transaction ({})",
            self.count,
            self.committed,
            self.mean_attempts(),
            took.join(", ")
        )?;
        let aborts = self.aborts();
        if aborts == 0 {
            write!(f, "; no aborts")?;
        } else {
            self.fmt_aborts(f, aborts)?;
        }
        if self.lost_answers > 0 {
            write!(
                f,
                "; {} commits lost their answer and were asked again ({} outcomes learned)",
                self.lost_answers, self.learned
            )?;
        }
        if self.unknown > 0 {
            write!(f, "; {} outcomes unknown", self.unknown)?;
        }
        Ok(())
    }
}

impl Transactions {
    fn fmt_aborts(&self, f: &mut fmt::Formatter<'_>, aborts: usize) -> fmt::Result {
        let at: Vec<String> = self
            .aborts_at
            .iter()
            .map(|(action, n)| format!("{n} at {}", action.replace('_', " ")))
            .collect();
        write!(
            f,
            "; {aborts} aborts ({}; {} with RetryInfo); {:.1} ms of back-off",
            at.join(", "),
            self.with_retry_info,
            self.backoff_ms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Attempt, IterationRecord, ReportHead, RunConfig, TransactionRecord};

    fn transaction(aborts: usize) -> IterationRecord {
        let mut r = IterationRecord::new("rw", 0, false, "2026-12-05T00:00:00Z");
        let mut attempts = Vec::new();
        for _ in 0..aborts {
            let mut a = Attempt::new(AttemptOutcome::Aborted);
            a.ended_at = Some(ActionKind::Commit);
            a.retry_delay_ms = Some(20.0);
            a.backoff_ms = Some(21.0);
            attempts.push(a);
        }
        attempts.push(Attempt::new(AttemptOutcome::Committed));
        r.transaction = Some(TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
        r
    }

    #[test]
    fn attempts_and_aborts_are_counted_by_step() {
        let report = ReportHead::new(RunConfig::default(), String::new()).with_records(vec![
            transaction(0),
            transaction(1),
            transaction(0),
            transaction(2),
        ]);
        let t = Transactions::of(&report).expect("transactions");
        assert_eq!((t.count, t.committed, t.attempts), (4, 4, 7));
        assert_eq!(t.by_attempts.get(&1), Some(&2));
        assert_eq!(t.by_attempts.get(&3), Some(&1));
        assert_eq!(t.aborts_at.get("commit"), Some(&3));
        assert_eq!(t.with_retry_info, 3);
        assert!((t.backoff_ms - 63.0).abs() < 1e-9);
        let words = t.to_string();
        assert!(words.contains("1.75 attempts per transaction"), "{words}");
        assert!(
            words.contains("3 aborts (3 at commit; 3 with RetryInfo)"),
            "{words}"
        );
    }

    #[test]
    fn lost_commit_answers_and_unknown_outcomes_are_said() {
        let mut learned = transaction(0);
        let mut unknown = transaction(0);
        for (record, outcome) in [
            (&mut learned, AttemptOutcome::Committed),
            (&mut unknown, AttemptOutcome::Unknown),
        ] {
            let attempt = &mut record.transaction.as_mut().expect("one").attempts[0];
            attempt.outcome = outcome;
            attempt.actions.push(crate::report::Action {
                kind: Some(ActionKind::Commit),
                commit_asked_again: 1,
                ..Default::default()
            });
        }
        let report = ReportHead::new(RunConfig::default(), String::new()).with_records(vec![
            learned,
            unknown,
            transaction(0),
        ]);
        let t = Transactions::of(&report).expect("transactions");
        assert_eq!(
            (t.committed, t.lost_answers, t.learned, t.unknown),
            (2, 2, 1, 1)
        );
        let words = t.to_string();
        assert!(
            words.contains("no aborts; 2 commits lost their answer and were asked again (1 outcomes learned); 1 outcomes unknown"),
            "{words}"
        );
    }

    #[test]
    fn a_query_run_has_no_transactions() {
        let report = ReportHead::new(RunConfig::default(), String::new())
            .with_records(vec![IterationRecord::new("q", 0, false, "")]);
        assert_eq!(Transactions::of(&report), None);
    }
}
