//! What the journal says of each attempt, read in one pass: its tag, whether it was optimistic,
//! the attempt it retries, when it began and how it ended, and the columns its locks read and
//! wrote. The lock and transaction statistics both start from it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::super::journal::{EventKind, Journal};
use super::super::lock_key::{LockMode, TxnId};

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It committed.
    Committed,
    /// It was aborted (at its commit or before; the journal does not say which).
    Aborted,
    /// It was rolled back.
    RolledBack,
}

/// One attempt, as the journal tells it.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// Its transaction tag (empty without one).
    pub tag: Arc<str>,
    /// Whether it read optimistically.
    pub optimistic: bool,
    /// Whether it retries an aborted attempt.
    pub retry: bool,
    /// When it began.
    pub begun: Duration,
    /// When and how it ended; None while it runs.
    pub ended: Option<(Duration, Ending)>,
    /// The columns its granted locks read (`table.column`, `table._exists` for a row).
    pub reads: BTreeSet<String>,
    /// The columns its granted locks write.
    pub writes: BTreeSet<String>,
}

/// Every attempt whose beginning the journal still holds.
pub fn attempts(journal: &Journal) -> HashMap<TxnId, Attempt> {
    let mut attempts: HashMap<TxnId, Attempt> = HashMap::new();
    for event in journal.events() {
        match &event.kind {
            EventKind::Begun {
                txn,
                previous,
                tag,
                optimistic,
                ..
            } => {
                attempts.insert(
                    *txn,
                    Attempt {
                        tag: tag.clone(),
                        optimistic: *optimistic,
                        retry: previous.is_some(),
                        begun: event.at,
                        ended: None,
                        reads: BTreeSet::new(),
                        writes: BTreeSet::new(),
                    },
                );
            }
            EventKind::Granted { txn, key, mode, .. } => {
                if let Some(attempt) = attempts.get_mut(txn) {
                    let column = key.stats_column();
                    if reads(*mode) {
                        attempt.reads.insert(column.clone());
                    }
                    if *mode != LockMode::ReaderShared {
                        attempt.writes.insert(column);
                    }
                }
            }
            EventKind::Committed { txn, .. } => {
                end(&mut attempts, *txn, event.at, Ending::Committed)
            }
            EventKind::Aborted { txn, .. } => end(&mut attempts, *txn, event.at, Ending::Aborted),
            EventKind::RolledBack { txn } => end(&mut attempts, *txn, event.at, Ending::RolledBack),
            _ => {}
        }
    }
    attempts
}

/// Whether a lock in `mode` was taken by a read (ReaderShared, or Exclusive: a read then a write).
fn reads(mode: LockMode) -> bool {
    matches!(mode, LockMode::ReaderShared | LockMode::Exclusive)
}

fn end(attempts: &mut HashMap<TxnId, Attempt>, txn: TxnId, at: Duration, how: Ending) {
    if let Some(attempt) = attempts.get_mut(&txn) {
        attempt.ended.get_or_insert((at, how));
    }
}
