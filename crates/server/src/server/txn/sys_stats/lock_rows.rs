//! LOCK_STATS_TOP_* and LOCK_STATS_TOTAL_* for one span: per listed interval and row-range start
//! (a table and a row, or a range's first key), the time of the waits inside the interval (a wait
//! across an edge counts its part on each side; one still going counts up to the interval's end,
//! as only closed intervals are listed), with up to [`LOCK_STATS_SAMPLES`] sample requests (the
//! waiter's and those of the holders it waited on, each once); the top [`TOP_ROWS`] rows of each
//! interval by lock wait, and each interval's total over every row. The waits of optimistic
//! attempts are left out.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::super::journal::{Journal, LOCK_STATS_SAMPLES, RowRangeStart, SampleLockRequest};
use super::super::lock_key::{KeyRange, Rows, TxnId};
use super::facts::Attempt;
use super::{Intervals, TOP_ROWS};

/// One row of LOCK_STATS_TOP_*.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRow {
    /// INTERVAL_END, since the Unix epoch.
    pub interval_end: Duration,
    /// The table (lower-cased, as the lock table names it).
    pub table: Arc<str>,
    /// Where its rows start: ROW_RANGE_START_KEY with the table.
    pub start: RowRangeStart,
    /// LOCK_WAIT_SECONDS.
    pub lock_wait_seconds: f64,
    /// SAMPLE_LOCK_REQUESTS.
    pub samples: Vec<SampleLockRequest>,
}

/// One row of LOCK_STATS_TOTAL_*.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LockTotal {
    /// INTERVAL_END, since the Unix epoch.
    pub interval_end: Duration,
    /// TOTAL_LOCK_WAIT_SECONDS: every row's lock wait, the rows past the top included.
    pub total_lock_wait_seconds: f64,
}

/// One span's lock statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LockStats {
    /// The TOP table's rows, by interval, then the most lock wait first.
    pub top: Vec<LockRow>,
    /// The TOTAL table's rows: one per listed interval, oldest first.
    pub total: Vec<LockTotal>,
}

/// The lock statistics of the listed `intervals`, from `journal` and its `attempts`.
pub fn lock_stats(
    journal: &Journal,
    attempts: &HashMap<TxnId, Attempt>,
    intervals: &Intervals,
) -> LockStats {
    type Key = (u128, Arc<str>, RowRangeStart);
    let mut rows: BTreeMap<Key, LockRow> = BTreeMap::new();
    for wait in journal.waits() {
        if attempts.get(&wait.txn).is_some_and(|a| a.optimistic) {
            continue;
        }
        let waiter_tag = attempts
            .get(&wait.txn)
            .map_or_else(|| Arc::from(""), |a| a.tag.clone());
        let waiter = SampleLockRequest {
            column: wait.key.stats_column(),
            lock_mode: wait.mode,
            transaction_tag: waiter_tag,
        };
        let holders: Vec<SampleLockRequest> = wait
            .holders
            .iter()
            .map(|h| SampleLockRequest {
                column: h.key.stats_column(),
                lock_mode: h.mode,
                transaction_tag: h.tag.clone(),
            })
            .collect();
        let start = range_start(&wait.key.rows);
        let (began, ended) = (wait.started, wait.ended.map(|(at, _)| at));
        let reach_end = ended.unwrap_or(Duration::MAX);
        for k in intervals.reached(began, reach_end.min(far(intervals))) {
            let (from, to) = intervals.bounds(k);
            let inside = ended
                .map_or(to, |at| at.min(to))
                .saturating_sub(began.max(from));
            if inside.is_zero() {
                continue;
            }
            let row = rows
                .entry((k, wait.key.table.clone(), start.clone()))
                .or_insert_with(|| LockRow {
                    interval_end: intervals.end(k),
                    table: wait.key.table.clone(),
                    start: start.clone(),
                    lock_wait_seconds: 0.0,
                    samples: Vec::new(),
                });
            row.lock_wait_seconds += inside.as_secs_f64();
            for sample in std::iter::once(&waiter).chain(&holders) {
                if row.samples.len() < LOCK_STATS_SAMPLES && !row.samples.contains(sample) {
                    row.samples.push(sample.clone());
                }
            }
        }
    }
    ranked(rows.into_values().collect(), intervals)
}

/// The end of the last listed interval, in journal time: a wait still going reaches no further.
fn far(intervals: &Intervals) -> Duration {
    intervals.bounds(intervals.last).1
}

/// Each interval's rows, the most lock wait first and cut at [`TOP_ROWS`]; and the totals.
fn ranked(mut rows: Vec<LockRow>, intervals: &Intervals) -> LockStats {
    rows.sort_by(|a, b| {
        a.interval_end
            .cmp(&b.interval_end)
            .then_with(|| b.lock_wait_seconds.total_cmp(&a.lock_wait_seconds))
            .then_with(|| a.table.cmp(&b.table))
            .then_with(|| a.start.cmp(&b.start))
    });
    let mut totals: BTreeMap<Duration, f64> =
        intervals.all().map(|k| (intervals.end(k), 0.0)).collect();
    let mut top = Vec::with_capacity(rows.len());
    let mut kept = 0;
    let mut current = None;
    for row in rows {
        *totals.entry(row.interval_end).or_default() += row.lock_wait_seconds;
        if current != Some(row.interval_end) {
            current = Some(row.interval_end);
            kept = 0;
        }
        if kept < TOP_ROWS {
            kept += 1;
            top.push(row);
        }
    }
    let total = totals
        .into_iter()
        .map(|(interval_end, total_lock_wait_seconds)| LockTotal {
            interval_end,
            total_lock_wait_seconds,
        })
        .collect();
    LockStats { top, total }
}

/// The ROW_RANGE_START_KEY of a lock's rows.
fn range_start(rows: &Rows) -> RowRangeStart {
    match rows {
        Rows::Row(key) => RowRangeStart::Row(key.clone()),
        Rows::Range(KeyRange { start, .. }) => RowRangeStart::Range(start.clone()),
    }
}
