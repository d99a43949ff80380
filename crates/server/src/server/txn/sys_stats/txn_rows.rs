//! TXN_STATS_TOP_* and TXN_STATS_TOTAL_* for one span: the attempts that ended (committed, aborted
//! or rolled back) in each listed interval, grouped by fingerprint (FPRINT: the hash of the
//! transaction tag, or without one of the columns the attempt read and wrote), the top
//! [`TOP_ROWS`] of each interval by average latency, and each interval's total over every attempt.
//! Optimistic attempts are left out.
//!
//! What the journal cannot tell is filled in as `docs/serve.md` says: an abort counts as an aborted
//! commit attempt (the journal does not say whether it came at the commit); failed preconditions
//! are 0; participants 1 (the local instance is one split); commit latency and bytes are NULL;
//! WRITE_DELETE_TABLES is empty (a delete's locks are a write's).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::super::lock_key::TxnId;
use super::facts::{Attempt, Ending};
use super::{Intervals, TOP_ROWS};
use crate::fnv;

/// The figures a TOP row and a TOTAL row share.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TxnFigures {
    /// ATTEMPT_COUNT: attempts that ended in the interval.
    pub attempt_count: i64,
    /// COMMIT_ATTEMPT_COUNT: those that committed or were aborted.
    pub commit_attempt_count: i64,
    /// COMMIT_ABORT_COUNT: those aborted.
    pub commit_abort_count: i64,
    /// COMMIT_RETRY_COUNT: commit attempts that retried an aborted attempt.
    pub commit_retry_count: i64,
    /// COMMIT_FAILED_PRECONDITION_COUNT: always 0 here.
    pub commit_failed_precondition_count: i64,
    /// AVG_PARTICIPANTS: 1 when there was a commit attempt.
    pub avg_participants: f64,
    /// AVG_TOTAL_LATENCY_SECONDS: from each attempt's beginning to its end, averaged.
    pub avg_total_latency_seconds: f64,
}

/// One row of TXN_STATS_TOP_*.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnRow {
    /// INTERVAL_END, since the Unix epoch.
    pub interval_end: Duration,
    /// TRANSACTION_TAG (empty without one).
    pub tag: Arc<str>,
    /// FPRINT.
    pub fprint: i64,
    /// READ_COLUMNS (`table.column`, sorted).
    pub read_columns: Vec<String>,
    /// WRITE_CONSTRUCTIVE_COLUMNS.
    pub write_constructive_columns: Vec<String>,
    /// The counts and averages.
    pub figures: TxnFigures,
}

/// One row of TXN_STATS_TOTAL_*.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxnTotal {
    /// INTERVAL_END, since the Unix epoch.
    pub interval_end: Duration,
    /// The counts and averages over every attempt of the interval.
    pub figures: TxnFigures,
}

/// One span's transaction statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxnStats {
    /// The TOP table's rows, by interval, the highest average latency first.
    pub top: Vec<TxnRow>,
    /// The TOTAL table's rows: one per listed interval with an attempt, oldest first.
    pub total: Vec<TxnTotal>,
}

/// What one group's attempts add up to.
#[derive(Debug, Default)]
struct Tally {
    tag: Arc<str>,
    reads: BTreeSet<String>,
    writes: BTreeSet<String>,
    attempts: i64,
    commits: i64,
    aborts: i64,
    retries: i64,
    latency: f64,
}

impl Tally {
    fn add(&mut self, attempt: &Attempt, how: Ending, latency: Duration) {
        self.attempts += 1;
        if how != Ending::RolledBack {
            self.commits += 1;
            self.retries += i64::from(attempt.retry);
        }
        self.aborts += i64::from(how == Ending::Aborted);
        self.latency += latency.as_secs_f64();
    }

    fn figures(&self) -> TxnFigures {
        TxnFigures {
            attempt_count: self.attempts,
            commit_attempt_count: self.commits,
            commit_abort_count: self.aborts,
            commit_retry_count: self.retries,
            commit_failed_precondition_count: 0,
            avg_participants: if self.commits > 0 { 1.0 } else { 0.0 },
            avg_total_latency_seconds: self.latency / self.attempts.max(1) as f64,
        }
    }
}

/// The transaction statistics of the listed `intervals`, from the journal's `attempts`.
pub fn txn_stats(attempts: &HashMap<TxnId, Attempt>, intervals: &Intervals) -> TxnStats {
    let mut groups: BTreeMap<(u128, i64), Tally> = BTreeMap::new();
    let mut totals: BTreeMap<u128, Tally> = BTreeMap::new();
    for attempt in attempts.values().filter(|a| !a.optimistic) {
        let Some((at, how)) = attempt.ended else {
            continue;
        };
        let k = intervals.at(at);
        if !intervals.lists(k) {
            continue;
        }
        let latency = at.saturating_sub(attempt.begun);
        let group = groups.entry((k, fprint(attempt))).or_default();
        group.tag = attempt.tag.clone();
        group.reads.extend(attempt.reads.iter().cloned());
        group.writes.extend(attempt.writes.iter().cloned());
        group.add(attempt, how, latency);
        totals.entry(k).or_default().add(attempt, how, latency);
    }
    let mut top: Vec<TxnRow> = groups
        .into_iter()
        .map(|((k, fprint), tally)| TxnRow {
            interval_end: intervals.end(k),
            figures: tally.figures(),
            tag: tally.tag,
            fprint,
            read_columns: tally.reads.into_iter().collect(),
            write_constructive_columns: tally.writes.into_iter().collect(),
        })
        .collect();
    top.sort_by(|a, b| {
        a.interval_end
            .cmp(&b.interval_end)
            .then_with(|| {
                b.figures
                    .avg_total_latency_seconds
                    .total_cmp(&a.figures.avg_total_latency_seconds)
            })
            .then_with(|| a.fprint.cmp(&b.fprint))
    });
    let mut kept: BTreeMap<Duration, usize> = BTreeMap::new();
    top.retain(|row| {
        let n = kept.entry(row.interval_end).or_default();
        *n += 1;
        *n <= TOP_ROWS
    });
    let total = totals
        .into_iter()
        .map(|(k, tally)| TxnTotal {
            interval_end: intervals.end(k),
            figures: tally.figures(),
        })
        .collect();
    TxnStats { top, total }
}

/// FPRINT: FNV-1a of the tag when there is one, else of the columns read and written; kept
/// non-negative as an INT64.
fn fprint(attempt: &Attempt) -> i64 {
    let hash = if attempt.tag.is_empty() {
        let mut parts: Vec<&[u8]> = vec![b"reads"];
        parts.extend(attempt.reads.iter().map(|c| c.as_bytes()));
        parts.push(b"writes");
        parts.extend(attempt.writes.iter().map(|c| c.as_bytes()));
        fnv::of_parts(&parts)
    } else {
        fnv::of_parts(&[b"tag", attempt.tag.as_bytes()])
    };
    (hash >> 1) as i64
}
