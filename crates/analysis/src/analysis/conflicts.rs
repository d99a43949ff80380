//! The conflict view of a read-write run: who blocked whom, on what, for how long, and the keys
//! waited on most. Computed once here, from the waits and wounds the server named on the run's
//! attempts (the local instance names them: its lock table is a model of Spanner's locking), for
//! every view (the JSON export, the HTML report, the window).
//!
//! Each wait and wound becomes a [`ConflictPair`]: the attempt that waited or was wounded, and the
//! transactions it was behind, each mapped to this run's attempt by its transaction id ("iteration
//! 3, attempt 1") or, when no attempt of the run had that id, named as another client's
//! transaction. Warm-up iterations count: their transactions held locks like the timed ones.

use std::collections::HashMap;

use serde::Serialize;

use crate::report::{ActionKind, ConflictTally, Conflicts, LockWaitSeen, RunReport, WoundSeen};

/// The pairs a [`RunConflicts`] keeps at most, in the order they happened (the rest are counted).
pub const MAX_PAIRS: usize = 1_000;

/// Where the figures come from, in the words every view shows beside them.
pub const SOURCE: &str = "the local instance's lock table, a model of Spanner's locking";

/// One attempt of the run: its iteration's number and its place among the iteration's attempts
/// (the first is 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttemptRef {
    /// The iteration's number (as the report numbers them, warm-ups first).
    pub iteration: u32,
    /// The attempt, from 1.
    pub attempt: usize,
    /// Whether the iteration was a warm-up.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

impl AttemptRef {
    /// "iteration 3, attempt 1" (a warm-up's says so).
    pub fn words(&self) -> String {
        let warm = if self.warmup { "warm-up " } else { "" };
        format!(
            "{warm}iteration {}, attempt {}",
            self.iteration, self.attempt
        )
    }
}

/// A transaction an attempt waited behind or was wounded by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Party {
    /// An attempt of this run.
    Attempt(AttemptRef),
    /// A transaction no attempt of this run had: another client's (its id in hex).
    Other(String),
}

impl Party {
    /// "iteration 3, attempt 1", or "another client's transaction 00ab…".
    pub fn words(&self) -> String {
        match self {
            Party::Attempt(a) => a.words(),
            Party::Other(id) => format!("another client's transaction {}", short_id(id)),
        }
    }
}

/// The first 12 hex digits of an id (enough to tell transactions apart on a page).
fn short_id(id: &str) -> String {
    if id.len() > 12 {
        format!("{}…", id.get(..12).unwrap_or(id))
    } else {
        id.to_owned()
    }
}

/// What happened between them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "what")]
pub enum ConflictKind {
    /// The attempt waited for a lock during one of its actions, for `ms` milliseconds.
    Wait {
        /// The action it waited in.
        action: Option<ActionKind>,
        /// How long.
        ms: f64,
    },
    /// An older transaction wounded it: it was aborted.
    Wound,
}

/// One wait or wound: the attempt it happened to, on what, and whom it was behind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConflictPair {
    /// The attempt that waited, or was wounded.
    pub attempt: AttemptRef,
    /// A wait (with its time) or a wound.
    #[serde(flatten)]
    pub kind: ConflictKind,
    /// The rows, in the server's words (`accounts(1)`).
    pub key: String,
    /// The column, when one cell of each row was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The lock mode asked for.
    pub mode: String,
    /// The transactions it waited behind (a wound: the one that wounded it).
    pub behind: Vec<Party>,
}

impl ConflictPair {
    /// The key with its column: `accounts(1).balance`, or the key alone.
    pub fn key_words(&self) -> String {
        key_words(&self.key, self.column.as_deref())
    }

    /// Whom it was behind, in words ("iteration 2, attempt 1 and another client's
    /// transaction 00ab…"; "a transaction the server did not name" when none was named).
    pub fn behind_words(&self) -> String {
        if self.behind.is_empty() {
            return "a transaction the server did not name".to_owned();
        }
        let words: Vec<String> = self.behind.iter().map(Party::words).collect();
        words.join(" and ")
    }
}

/// A key with its column, as the views write it.
pub fn key_words(key: &str, column: Option<&str>) -> String {
    match column {
        Some(c) => format!("{key}.{c}"),
        None => key.to_owned(),
    }
}

/// One key of a tally in a line, for a summary printed: "accounts(1) (balance): 182 waits
/// (1234.5 ms), 552 wounds".
pub fn key_line(k: &crate::report::KeyConflicts) -> String {
    let columns = if k.columns.is_empty() {
        String::new()
    } else {
        format!(" ({})", k.columns.join(", "))
    };
    format!(
        "{}{columns}: {} waits ({:.1} ms), {} wounds",
        k.key, k.waits, k.wait_ms, k.wounds
    )
}

/// The keys of `tally` shown in a printed summary, at most.
pub const KEYS_PRINTED: usize = 3;

/// A run's conflict view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConflicts {
    /// The waits, their time and the wounds in all, and the keys waited on most.
    #[serde(flatten)]
    pub tally: Conflicts,
    /// Each wait and wound, in the order the run's attempts went (at most [`MAX_PAIRS`]).
    pub pairs: Vec<ConflictPair>,
    /// The pairs past [`MAX_PAIRS`], counted, not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub pairs_left_out: usize,
    /// Where the figures come from ([`SOURCE`]).
    pub source: &'static str,
    /// The run's attempts by their transaction id, to name whom a wait was behind.
    #[serde(skip)]
    owners: HashMap<String, AttemptRef>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RunConflicts {
    /// The conflict view of `report`: `None` when no attempt of it named a wait or a wound (a
    /// run of queries, a target that names none, a run without contention).
    pub fn of(report: &RunReport) -> Option<RunConflicts> {
        let owners = owners(report);
        let party = |id: &str| party_of(&owners, id);
        let mut tally = ConflictTally::default();
        let mut pairs = Vec::new();
        let mut left_out = 0;
        let mut keep = |pair: ConflictPair| {
            if pairs.len() < MAX_PAIRS {
                pairs.push(pair);
            } else {
                left_out += 1;
            }
        };
        for (attempt_ref, attempt) in attempts(report) {
            for action in &attempt.actions {
                for wait in &action.lock_waits {
                    tally.wait(wait);
                    keep(ConflictPair {
                        attempt: attempt_ref,
                        kind: ConflictKind::Wait {
                            action: action.kind,
                            ms: wait.ms,
                        },
                        key: wait.key.clone(),
                        column: wait.column.clone(),
                        mode: wait.mode.clone(),
                        behind: wait.holders.iter().map(|h| party(h)).collect(),
                    });
                }
            }
            if let Some(wound) = &attempt.wounded_by {
                tally.wound(wound);
                keep(ConflictPair {
                    attempt: attempt_ref,
                    kind: ConflictKind::Wound,
                    key: wound.key.clone(),
                    column: wound.column.clone(),
                    mode: wound.mode.clone(),
                    behind: vec![party(&wound.by)],
                });
            }
        }
        if tally.is_empty() {
            return None;
        }
        Some(RunConflicts {
            tally: tally.conflicts(),
            pairs,
            pairs_left_out: left_out,
            source: SOURCE,
            owners,
        })
    }

    /// The transaction of id `id` (hex): this run's attempt that had it, or another client's.
    pub fn party(&self, id: &str) -> Party {
        party_of(&self.owners, id)
    }

    /// A wait in words, for a tooltip: "waited 4.5 ms for accounts(1).balance (WriterShared)
    /// behind iteration 2, attempt 1".
    pub fn wait_words(&self, wait: &LockWaitSeen) -> String {
        let behind: Vec<String> = wait.holders.iter().map(|h| self.party(h).words()).collect();
        format!(
            "waited {:.1} ms for {} ({}) behind {}",
            wait.ms,
            key_words(&wait.key, wait.column.as_deref()),
            wait.mode,
            if behind.is_empty() {
                "a transaction the server did not name".to_owned()
            } else {
                behind.join(" and ")
            }
        )
    }

    /// A wound in words: "wounded by iteration 2, attempt 1, an older transaction that asked for
    /// accounts(1) (Exclusive)".
    pub fn wound_words(&self, wound: &WoundSeen) -> String {
        format!(
            "wounded by {}, an older transaction that asked for {} ({})",
            self.party(&wound.by).words(),
            key_words(&wound.key, wound.column.as_deref()),
            wound.mode
        )
    }

    /// The pairs of one attempt, in order.
    pub fn of_attempt(&self, attempt: AttemptRef) -> impl Iterator<Item = &ConflictPair> {
        self.pairs.iter().filter(move |p| p.attempt == attempt)
    }

    /// Its totals in one line: "12 waits (340.0 ms) and 3 wounds".
    pub fn totals_words(&self) -> String {
        format!(
            "{} waits ({:.1} ms) and {} wounds",
            self.tally.waits, self.tally.wait_ms, self.tally.wounds
        )
    }
}

/// Every attempt of the run, with its place.
fn attempts(report: &RunReport) -> impl Iterator<Item = (AttemptRef, &crate::report::Attempt)> {
    report.iterations.iter().flat_map(|record| {
        let txn = record.transaction.as_ref();
        txn.into_iter().flat_map(move |t| {
            t.attempts.iter().enumerate().map(move |(k, a)| {
                let place = AttemptRef {
                    iteration: record.iteration,
                    attempt: k + 1,
                    warmup: record.warmup,
                };
                (place, a)
            })
        })
    })
}

fn party_of(owners: &HashMap<String, AttemptRef>, id: &str) -> Party {
    match owners.get(id) {
        Some(a) => Party::Attempt(*a),
        None => Party::Other(id.to_owned()),
    }
}

/// The run's attempts by their transaction id.
fn owners(report: &RunReport) -> HashMap<String, AttemptRef> {
    attempts(report)
        .filter_map(|(place, a)| Some((a.transaction_id.clone()?, place)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{
        Action, Attempt, AttemptOutcome, IterationRecord, LockWaitSeen, ReportHead, RunConfig,
        TransactionRecord, WoundSeen,
    };

    fn attempt(id: &str, outcome: AttemptOutcome) -> Attempt {
        let mut a = Attempt::new(outcome);
        a.transaction_id = Some(id.into());
        a
    }

    fn wait(key: &str, ms: f64, holders: &[&str]) -> LockWaitSeen {
        LockWaitSeen {
            key: key.into(),
            column: Some("balance".into()),
            mode: "WriterShared".into(),
            ms,
            holders: holders.iter().map(|h| (*h).into()).collect(),
        }
    }

    fn iteration(n: u32, attempts: Vec<Attempt>) -> IterationRecord {
        let mut r = IterationRecord::new("rw", n, n == 0, "2026-12-05T00:00:00Z");
        r.transaction = Some(TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
        r
    }

    /// Iteration 0 (a warm-up) holds a lock iteration 1's first attempt waits behind; iteration
    /// 1's first attempt is wounded by iteration 2's; its second attempt waits behind a
    /// transaction of no attempt of the run.
    fn report() -> RunReport {
        let first = attempt("aa01", AttemptOutcome::Committed);
        let mut wounded = attempt("bb01", AttemptOutcome::Aborted);
        wounded.actions.push(Action {
            kind: Some(ActionKind::Dml),
            ms: 9.0,
            lock_waits: vec![wait("accounts(1)", 4.5, &["aa01"])],
            ..Action::default()
        });
        wounded.wounded_by = Some(WoundSeen {
            by: "cc01".into(),
            key: "accounts(1)".into(),
            column: None,
            mode: "Exclusive".into(),
        });
        let mut retried = attempt("bb02", AttemptOutcome::Committed);
        retried.actions.push(Action {
            kind: Some(ActionKind::Commit),
            ms: 3.0,
            lock_waits: vec![wait("accounts(2)", 2.0, &["ffffffffffffffffffff"])],
            ..Action::default()
        });
        let older = attempt("cc01", AttemptOutcome::Committed);
        ReportHead::new(RunConfig::default(), String::new()).with_records(vec![
            iteration(0, vec![first]),
            iteration(1, vec![wounded, retried]),
            iteration(2, vec![older]),
        ])
    }

    #[test]
    fn a_holder_of_the_run_is_named_by_its_iteration_and_attempt() {
        let c = RunConflicts::of(&report()).expect("conflicts");
        let first = &c.pairs[0];
        assert_eq!(
            (first.attempt.iteration, first.attempt.attempt),
            (1, 1),
            "{c:?}"
        );
        assert_eq!(
            first.kind,
            ConflictKind::Wait {
                action: Some(ActionKind::Dml),
                ms: 4.5
            }
        );
        assert_eq!(first.key_words(), "accounts(1).balance");
        assert_eq!(first.behind_words(), "warm-up iteration 0, attempt 1");
    }

    #[test]
    fn a_wound_names_the_older_attempt_and_an_unknown_id_is_another_client_s() {
        let c = RunConflicts::of(&report()).expect("conflicts");
        let wound = c
            .pairs
            .iter()
            .find(|p| p.kind == ConflictKind::Wound)
            .expect("a wound");
        assert_eq!(wound.attempt.words(), "iteration 1, attempt 1");
        assert_eq!(wound.behind_words(), "iteration 2, attempt 1");
        let other = &c.pairs[2];
        assert_eq!(other.attempt.words(), "iteration 1, attempt 2");
        assert_eq!(
            other.behind,
            vec![Party::Other("ffffffffffffffffffff".into())]
        );
        assert_eq!(
            other.behind_words(),
            "another client's transaction ffffffffffff…"
        );
    }

    #[test]
    fn the_hottest_key_and_the_totals_count_every_wait_and_wound() {
        let c = RunConflicts::of(&report()).expect("conflicts");
        assert_eq!((c.tally.waits, c.tally.wounds), (2, 1));
        assert!((c.tally.wait_ms - 6.5).abs() < 1e-9);
        assert_eq!(c.tally.keys[0].key, "accounts(1)");
        assert_eq!((c.tally.keys[0].waits, c.tally.keys[0].wounds), (1, 1));
        assert_eq!(c.totals_words(), "2 waits (6.5 ms) and 1 wounds");
        let one = AttemptRef {
            iteration: 1,
            attempt: 1,
            warmup: false,
        };
        assert_eq!(c.of_attempt(one).count(), 2, "a wait and a wound");
        let r = report();
        let attempt = &r.iterations[1].transaction.as_ref().expect("one").attempts[0];
        assert_eq!(
            c.wait_words(&attempt.actions[0].lock_waits[0]),
            "waited 4.5 ms for accounts(1).balance (WriterShared) behind warm-up iteration 0, \
             attempt 1"
        );
        assert_eq!(
            c.wound_words(attempt.wounded_by.as_ref().expect("wounded")),
            "wounded by iteration 2, attempt 1, an older transaction that asked for accounts(1) \
             (Exclusive)"
        );
    }

    #[test]
    fn a_run_with_no_named_wait_has_no_conflict_view() {
        let report =
            ReportHead::new(RunConfig::default(), String::new()).with_records(vec![iteration(
                0,
                vec![attempt("aa", AttemptOutcome::Committed)],
            )]);
        assert_eq!(RunConflicts::of(&report), None);
    }

    #[test]
    fn the_json_says_what_each_pair_was_and_where_the_figures_come_from() {
        let c = RunConflicts::of(&report()).expect("conflicts");
        let json = serde_json::to_value(&c).expect("JSON");
        assert_eq!(json["source"], SOURCE);
        assert_eq!(json["keys"][0]["key"], "accounts(1)");
        assert_eq!(json["pairs"][0]["what"], "wait");
        assert_eq!(json["pairs"][0]["action"], "dml");
        assert_eq!(json["pairs"][0]["behind"][0]["attempt"]["iteration"], 0);
        assert_eq!(json["pairs"][1]["what"], "wound");
        assert_eq!(
            json["pairs"][2]["behind"][0]["other"],
            "ffffffffffffffffffff"
        );
    }
}
