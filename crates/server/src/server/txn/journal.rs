//! The lock table's journal: an append-only record of what the model of Spanner's locking did
//! (every attempt begun, lock granted, wait started and ended, wound, abort and commit), in order,
//! with its time as an offset from the lock table's start. It is bounded as a ring (the last
//! [`JOURNAL_EVENTS`] events by default), counting what it dropped. Tests hold the tool's reports
//! against it, and it is what SPANNER_SYS.LOCK_STATS is aggregated from ([`Journal::lock_stats`]).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use super::lock_key::{Age, KeyRange, LockKey, LockMode, RowKey, Rows, TxnId};

/// The events a journal keeps by default.
pub const JOURNAL_EVENTS: usize = 100_000;

/// The sample lock requests a lock-stats row keeps, as Spanner's SAMPLE_LOCK_REQUESTS does.
pub const LOCK_STATS_SAMPLES: usize = 20;

/// Which wait an event is about, unique within one lock table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaitId(pub u64);

/// A transaction holding a lock that a request waited on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The holding transaction.
    pub txn: TxnId,
    /// Its age.
    pub age: Age,
    /// Its transaction tag (empty without one).
    pub tag: Arc<str>,
    /// The lock it holds that conflicted.
    pub key: LockKey,
    /// The mode it holds it in.
    pub mode: LockMode,
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitEnd {
    /// The lock was granted.
    Granted,
    /// The waiting transaction was wounded by an older one.
    Wounded,
    /// The caller's deadline passed first.
    Deadline,
    /// The waiting future was dropped, or its transaction ended while it waited.
    Cancelled,
}

/// Why a transaction was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbortCause {
    /// An older transaction wounded it.
    Wounded,
    /// A lock wait passed its deadline.
    LockWaitDeadline,
    /// An optimistic transaction's reads were written after its snapshot.
    Validation,
    /// It stayed idle too long.
    Idle,
    /// The local instance's scripted aborts chose it.
    Scripted,
    /// A schema change (DDL) wrote a table it had touched.
    SchemaChanged,
    /// Its commit could not write while long reads held the database.
    Busy,
}

impl AbortCause {
    /// The cause in words.
    pub fn describe(self) -> &'static str {
        match self {
            AbortCause::Wounded => "wounded by an older transaction",
            AbortCause::LockWaitDeadline => "a lock wait passed its deadline",
            AbortCause::Validation => "a row it read was written after its snapshot",
            AbortCause::Idle => "idle too long",
            AbortCause::Scripted => "a scripted abort",
            AbortCause::SchemaChanged => "a schema change wrote a table it touched",
            AbortCause::Busy => "long reads held the database at its commit",
        }
    }
}

/// What happened, in one journal event.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// An attempt of a read-write transaction began locking.
    Begun {
        /// The attempt.
        txn: TxnId,
        /// The aborted attempt it retries, if it is a retry.
        previous: Option<TxnId>,
        /// Its age (a retry's is its first attempt's).
        age: Age,
        /// Its session.
        session: Arc<str>,
        /// Its transaction tag (empty without one).
        tag: Arc<str>,
        /// Whether it reads optimistically.
        optimistic: bool,
    },
    /// A lock was granted (`waited`: None when it was granted at once).
    Granted {
        /// The transaction.
        txn: TxnId,
        /// The lock.
        key: LockKey,
        /// The mode it now holds (Exclusive after an upgrade).
        mode: LockMode,
        /// How long it waited, if it waited.
        waited: Option<Duration>,
    },
    /// A request began to wait on the holders of conflicting locks.
    WaitStarted {
        /// The wait.
        wait: WaitId,
        /// The waiting transaction.
        txn: TxnId,
        /// What it asked for.
        key: LockKey,
        /// In which mode.
        mode: LockMode,
        /// Whom it waits on.
        holders: Vec<Holder>,
    },
    /// A wait ended.
    WaitEnded {
        /// The wait.
        wait: WaitId,
        /// The waiting transaction.
        txn: TxnId,
        /// How.
        how: WaitEnd,
        /// How long it lasted.
        waited: Duration,
    },
    /// An older transaction, asking for a lock, wounded a younger holder.
    Wound {
        /// The older transaction.
        by: TxnId,
        /// The younger one, now to be aborted.
        victim: TxnId,
        /// What the older one asked for.
        key: LockKey,
        /// In which mode.
        mode: LockMode,
    },
    /// A lock granted to a wait whose future was dropped before it saw the grant was given back.
    Returned {
        /// The transaction.
        txn: TxnId,
        /// The lock.
        key: LockKey,
    },
    /// A transaction was aborted (its locks were released).
    Aborted {
        /// The transaction.
        txn: TxnId,
        /// Why.
        cause: AbortCause,
        /// Why, in words (the cause's, with the caller's detail).
        detail: String,
    },
    /// A transaction committed (its locks were released).
    Committed {
        /// The transaction.
        txn: TxnId,
        /// Its commit timestamp, as the caller gives it.
        timestamp: i64,
    },
    /// A transaction ended without commit or abort (a rollback; its locks were released).
    RolledBack {
        /// The transaction.
        txn: TxnId,
    },
}

/// One journal event.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEvent {
    /// Its place in the journal, from 0, counting dropped events too.
    pub seq: u64,
    /// When, as an offset from the lock table's start.
    pub at: Duration,
    /// What happened.
    pub kind: EventKind,
}

/// One wait, read back from the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRecord {
    /// The wait.
    pub wait: WaitId,
    /// The waiting transaction.
    pub txn: TxnId,
    /// What it asked for.
    pub key: LockKey,
    /// In which mode.
    pub mode: LockMode,
    /// Whom it waited on.
    pub holders: Vec<Holder>,
    /// When it started.
    pub started: Duration,
    /// When and how it ended; None while it goes on.
    pub ended: Option<(Duration, WaitEnd)>,
}

impl WaitRecord {
    /// How long it lasted, or has lasted by `now` while it goes on.
    pub fn duration(&self, now: Duration) -> Duration {
        self.ended
            .map_or(now, |(at, _)| at)
            .saturating_sub(self.started)
    }
}

/// Where a lock-stats row's rows start: SPANNER_SYS's ROW_RANGE_START_KEY, a row or a range's start
/// (Spanner writes a `+` after a range's).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowRangeStart {
    /// One row.
    Row(RowKey),
    /// A range starting at this key (None: the table's first row).
    Range(Option<RowKey>),
}

/// One sample lock request of a lock-stats row: SAMPLE_LOCK_REQUESTS' {column, lock_mode,
/// transaction_tag}.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SampleLockRequest {
    /// `table.column` (`table._exists` for a whole row).
    pub column: String,
    /// The mode asked for or held.
    pub lock_mode: LockMode,
    /// The requesting or holding transaction's tag.
    pub transaction_tag: Arc<str>,
}

/// One row of SPANNER_SYS.LOCK_STATS for an interval: the lock wait on the rows starting at one
/// key, with sample requests (the waiters' and the holders' they waited on).
#[derive(Debug, Clone, PartialEq)]
pub struct LockStat {
    /// The table.
    pub table: Arc<str>,
    /// ROW_RANGE_START_KEY.
    pub start: RowRangeStart,
    /// LOCK_WAIT_SECONDS: the waits' time inside the interval.
    pub lock_wait_seconds: f64,
    /// SAMPLE_LOCK_REQUESTS, at most [`LOCK_STATS_SAMPLES`], the waiters' first.
    pub samples: Vec<SampleLockRequest>,
}

/// The journal: a ring of events, the oldest dropped first.
#[derive(Debug, Clone)]
pub struct Journal {
    events: VecDeque<JournalEvent>,
    capacity: usize,
    dropped: u64,
    next: u64,
}

impl Journal {
    /// An empty journal keeping the last `capacity` events (at least one).
    pub fn new(capacity: usize) -> Journal {
        let capacity = capacity.max(1);
        Journal {
            events: VecDeque::with_capacity(capacity.min(1024)),
            capacity,
            dropped: 0,
            next: 0,
        }
    }

    /// Appends an event at `at`, dropping the oldest when full.
    pub fn record(&mut self, at: Duration, kind: EventKind) {
        if self.events.len() == self.capacity {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(JournalEvent {
            seq: self.next,
            at,
            kind,
        });
        self.next += 1;
    }

    /// The events kept, oldest first.
    pub fn events(&self) -> impl Iterator<Item = &JournalEvent> {
        self.events.iter()
    }

    /// How many events the ring dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Every wait the journal keeps, by the start of each, oldest first.
    pub fn waits(&self) -> Vec<WaitRecord> {
        let mut waits: BTreeMap<WaitId, WaitRecord> = BTreeMap::new();
        for event in &self.events {
            match &event.kind {
                EventKind::WaitStarted {
                    wait,
                    txn,
                    key,
                    mode,
                    holders,
                } => {
                    waits.insert(
                        *wait,
                        WaitRecord {
                            wait: *wait,
                            txn: *txn,
                            key: key.clone(),
                            mode: *mode,
                            holders: holders.clone(),
                            started: event.at,
                            ended: None,
                        },
                    );
                }
                EventKind::WaitEnded { wait, how, .. } => {
                    if let Some(record) = waits.get_mut(wait) {
                        record.ended = Some((event.at, *how));
                    }
                }
                _ => {}
            }
        }
        waits.into_values().collect()
    }

    /// The waits of one transaction.
    pub fn waits_of(&self, txn: TxnId) -> Vec<WaitRecord> {
        self.waits().into_iter().filter(|w| w.txn == txn).collect()
    }

    /// The time one transaction spent in waits that ended.
    pub fn total_wait(&self, txn: TxnId) -> Duration {
        self.waits_of(txn)
            .iter()
            .filter_map(|w| w.ended.map(|(at, _)| at.saturating_sub(w.started)))
            .sum()
    }

    /// SPANNER_SYS.LOCK_STATS for the interval `[from, to)`: per table and row-range start, the
    /// time of the waits inside the interval (a wait across its edge counts its part inside; one
    /// still going counts up to `to`, as an interval is read after it closes), with up to
    /// [`LOCK_STATS_SAMPLES`] sample requests, the most waited on first.
    pub fn lock_stats(&self, from: Duration, to: Duration) -> Vec<LockStat> {
        let mut rows: HashMap<(Arc<str>, RowRangeStart), LockStat> = HashMap::new();
        for wait in self.waits() {
            let end = wait.ended.map_or(to, |(at, _)| at.min(to));
            let inside = end.saturating_sub(wait.started.max(from));
            if inside.is_zero() {
                continue;
            }
            let start = range_start(&wait.key.rows);
            let row = rows
                .entry((wait.key.table.clone(), start.clone()))
                .or_insert_with(|| LockStat {
                    table: wait.key.table.clone(),
                    start,
                    lock_wait_seconds: 0.0,
                    samples: Vec::new(),
                });
            row.lock_wait_seconds += inside.as_secs_f64();
            let waiter_tag = self.tag_of(wait.txn);
            let waiter = SampleLockRequest {
                column: wait.key.stats_column(),
                lock_mode: wait.mode,
                transaction_tag: waiter_tag,
            };
            let holders = wait.holders.iter().map(|h| SampleLockRequest {
                column: h.key.stats_column(),
                lock_mode: h.mode,
                transaction_tag: h.tag.clone(),
            });
            for sample in std::iter::once(waiter).chain(holders) {
                if row.samples.len() < LOCK_STATS_SAMPLES && !row.samples.contains(&sample) {
                    row.samples.push(sample);
                }
            }
        }
        let mut stats: Vec<LockStat> = rows.into_values().collect();
        stats.sort_by(|a, b| {
            b.lock_wait_seconds
                .total_cmp(&a.lock_wait_seconds)
                .then_with(|| a.table.cmp(&b.table))
                .then_with(|| a.start.cmp(&b.start))
        });
        stats
    }

    /// The tag a transaction began with, if the journal still has its beginning.
    fn tag_of(&self, txn: TxnId) -> Arc<str> {
        self.events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::Begun { txn: t, tag, .. } if *t == txn => Some(tag.clone()),
                _ => None,
            })
            .unwrap_or_else(|| Arc::from(""))
    }
}

/// The ROW_RANGE_START_KEY of a lock's rows.
fn range_start(rows: &Rows) -> RowRangeStart {
    match rows {
        Rows::Row(key) => RowRangeStart::Row(key.clone()),
        Rows::Range(KeyRange { start, .. }) => RowRangeStart::Range(start.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn began(journal: &mut Journal, txn: u64, tag: &str) {
        journal.record(
            ms(0),
            EventKind::Begun {
                txn: TxnId(txn),
                previous: None,
                age: Age(ms(txn)),
                session: "s".into(),
                tag: tag.into(),
                optimistic: false,
            },
        );
    }

    fn wait(journal: &mut Journal, id: u64, txn: u64, key: LockKey, span: (u64, u64)) {
        let holder = Holder {
            txn: TxnId(99),
            age: Age(ms(0)),
            tag: "holder".into(),
            key: key.clone(),
            mode: LockMode::Exclusive,
        };
        journal.record(
            ms(span.0),
            EventKind::WaitStarted {
                wait: WaitId(id),
                txn: TxnId(txn),
                key,
                mode: LockMode::ReaderShared,
                holders: vec![holder],
            },
        );
        journal.record(
            ms(span.1),
            EventKind::WaitEnded {
                wait: WaitId(id),
                txn: TxnId(txn),
                how: WaitEnd::Granted,
                waited: ms(span.1 - span.0),
            },
        );
    }

    #[test]
    fn the_ring_keeps_the_last_events_and_counts_the_dropped() {
        let mut journal = Journal::new(3);
        for n in 0..5 {
            journal.record(ms(n), EventKind::RolledBack { txn: TxnId(n) });
        }
        let kept: Vec<u64> = journal.events().map(|e| e.seq).collect();
        assert_eq!(kept, [2, 3, 4]);
        assert_eq!(journal.dropped(), 2);
        assert_eq!(journal.events().next().map(|e| e.at), Some(ms(2)));
    }

    #[test]
    fn lock_stats_add_the_waits_inside_the_interval_per_row_with_samples() {
        let mut journal = Journal::new(100);
        began(&mut journal, 1, "app-a");
        began(&mut journal, 2, "app-b");
        let hot = LockKey::cell("t", RowKey::ints(&[7]), "v");
        let cold = LockKey::table("t");
        wait(&mut journal, 1, 1, hot.clone(), (100, 400));
        wait(&mut journal, 2, 2, hot.clone(), (900, 1200));
        wait(&mut journal, 3, 2, cold, (200, 300));
        // The interval [0 s, 1 s): the first wait whole (0.3 s), 0.1 s of the second, the range's.
        let stats = journal.lock_stats(ms(0), ms(1000));
        assert_eq!(stats.len(), 2);
        assert_eq!(stats[0].start, RowRangeStart::Row(RowKey::ints(&[7])));
        assert!((stats[0].lock_wait_seconds - 0.4).abs() < 1e-9);
        assert_eq!(stats[1].start, RowRangeStart::Range(None));
        assert!((stats[1].lock_wait_seconds - 0.1).abs() < 1e-9);
        let samples: Vec<(&str, LockMode, &str)> = stats[0]
            .samples
            .iter()
            .map(|s| (s.column.as_str(), s.lock_mode, &*s.transaction_tag))
            .collect();
        assert_eq!(
            samples,
            [
                ("t.v", LockMode::ReaderShared, "app-a"),
                ("t.v", LockMode::Exclusive, "holder"),
                ("t.v", LockMode::ReaderShared, "app-b"),
            ]
        );
        // The next interval sees the rest of the second wait only.
        let next = journal.lock_stats(ms(1000), ms(2000));
        assert_eq!(next.len(), 1);
        assert!((next[0].lock_wait_seconds - 0.2).abs() < 1e-9);
        assert!(journal.lock_stats(ms(2000), ms(3000)).is_empty());
    }

    #[test]
    fn a_wait_still_going_counts_up_to_the_end_of_the_interval() {
        let mut journal = Journal::new(100);
        journal.record(
            ms(500),
            EventKind::WaitStarted {
                wait: WaitId(1),
                txn: TxnId(1),
                key: LockKey::row("t", RowKey::ints(&[1])),
                mode: LockMode::WriterShared,
                holders: Vec::new(),
            },
        );
        let stats = journal.lock_stats(ms(0), ms(1000));
        assert!((stats[0].lock_wait_seconds - 0.5).abs() < 1e-9);
        assert_eq!(stats[0].samples[0].column, "t._exists");
        assert_eq!(
            journal.total_wait(TxnId(1)),
            Duration::ZERO,
            "not ended yet"
        );
        assert_eq!(journal.waits_of(TxnId(1))[0].duration(ms(800)), ms(300));
    }
}
