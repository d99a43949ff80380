//! The lock table against its rules: the matrix, wound-wait, waits and their journal, ranges,
//! cancellation, deadlines, fairness and bounds. Time is tokio's paused clock, so a wait's length
//! is exactly the time the test advanced.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::*;
use crate::server::txn::journal::{AbortCause, EventKind, WaitEnd};
use crate::server::txn::lock_key::{Age, KeyRange, LockKey, LockMode, RowKey};

use LockMode::{Exclusive, ReaderShared, WriterShared, WriterSharedTimestamp};

mod ends;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn table() -> Arc<LockTable> {
    Arc::new(LockTable::new(LockBounds::default()))
}

fn bounded(bounds: LockBounds) -> Arc<LockTable> {
    Arc::new(LockTable::new(bounds))
}

/// Begins transaction `id` with age `age` ms, tagged `tag-<id>`.
fn begin(table: &LockTable, id: u64, age: u64) -> TxnId {
    begin_retry(table, id, None, Age(ms(age)))
}

fn begin_retry(table: &LockTable, id: u64, previous: Option<TxnId>, age: Age) -> TxnId {
    table
        .begin(TxnInfo {
            id: TxnId(id),
            previous,
            age,
            session: "session".into(),
            tag: format!("tag-{id}").into(),
            optimistic: false,
        })
        .expect("begin");
    TxnId(id)
}

fn row(k: i64) -> LockKey {
    LockKey::row("t", RowKey::ints(&[k]))
}

fn range(start: i64, end: i64) -> LockKey {
    LockKey::range(
        "t",
        KeyRange {
            start: Some(RowKey::ints(&[start])),
            end: Some(RowKey::ints(&[end])),
        },
    )
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

/// Asks without waiting: granted, or the deadline (now) passes at once.
async fn try_now(
    table: &LockTable,
    txn: TxnId,
    key: LockKey,
    mode: LockMode,
) -> Result<Acquired, LockError> {
    table.acquire(txn, key, mode, Instant::now()).await
}

async fn granted(table: &LockTable, txn: TxnId, key: LockKey, mode: LockMode) -> Acquired {
    try_now(table, txn, key, mode)
        .await
        .expect("granted at once")
}

fn would_wait(outcome: &Result<Acquired, LockError>) -> bool {
    matches!(outcome, Err(LockError::DeadlineExceeded(_)))
}

fn spawn_acquire(
    table: &Arc<LockTable>,
    txn: TxnId,
    key: LockKey,
    mode: LockMode,
) -> JoinHandle<Result<Acquired, LockError>> {
    let table = table.clone();
    tokio::spawn(async move { table.acquire(txn, key, mode, far()).await })
}

/// Lets the spawned tasks run until they wait.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

async fn outcome(handle: JoinHandle<Result<Acquired, LockError>>) -> Result<Acquired, LockError> {
    handle.await.expect("the task ran")
}

fn commit(table: &LockTable, txn: TxnId) {
    table.release_all(txn, TxnEnd::Committed { timestamp: 0 });
}

fn abort_wounded(table: &LockTable, txn: TxnId) {
    table.release_all(
        txn,
        TxnEnd::Aborted {
            cause: AbortCause::Wounded,
            detail: String::new(),
        },
    );
}

fn kinds(table: &LockTable) -> Vec<EventKind> {
    table.journal(|j| j.events().map(|e| e.kind.clone()).collect())
}

/// The transactions granted a lock after waiting, in the journal's order.
fn granted_after_waiting(table: &LockTable) -> Vec<TxnId> {
    kinds(table)
        .into_iter()
        .filter_map(|k| match k {
            EventKind::Granted {
                txn,
                waited: Some(_),
                ..
            } => Some(txn),
            _ => None,
        })
        .collect()
}

#[test]
fn the_conflict_matrix_entry_by_entry() {
    let expected = [
        // held ReaderShared
        (ReaderShared, ReaderShared, false),
        (ReaderShared, WriterShared, true),
        (ReaderShared, Exclusive, true),
        (ReaderShared, WriterSharedTimestamp, true),
        // held WriterShared
        (WriterShared, ReaderShared, true),
        (WriterShared, WriterShared, false),
        (WriterShared, Exclusive, true),
        (WriterShared, WriterSharedTimestamp, false),
        // held Exclusive
        (Exclusive, ReaderShared, true),
        (Exclusive, WriterShared, true),
        (Exclusive, Exclusive, true),
        (Exclusive, WriterSharedTimestamp, true),
        // held WriterSharedTimestamp
        (WriterSharedTimestamp, ReaderShared, true),
        (WriterSharedTimestamp, WriterShared, false),
        (WriterSharedTimestamp, Exclusive, true),
        (WriterSharedTimestamp, WriterSharedTimestamp, false),
    ];
    assert_eq!(expected.len(), LockMode::ALL.len() * LockMode::ALL.len());
    for (held, asked, conflict) in expected {
        assert_eq!(
            LockMode::conflicts(held, asked),
            conflict,
            "{held} held, {asked} asked"
        );
    }
}

#[test]
fn a_read_then_a_write_of_one_cell_is_exclusive() {
    assert_eq!(ReaderShared.combined_with(WriterShared), Exclusive);
    assert_eq!(WriterShared.combined_with(ReaderShared), Exclusive);
    assert_eq!(ReaderShared.combined_with(WriterSharedTimestamp), Exclusive);
    assert_eq!(ReaderShared.combined_with(ReaderShared), ReaderShared);
    assert_eq!(WriterShared.combined_with(WriterShared), WriterShared);
    assert_eq!(
        WriterShared.combined_with(WriterSharedTimestamp),
        WriterSharedTimestamp
    );
    for mode in LockMode::ALL {
        assert_eq!(Exclusive.combined_with(mode), Exclusive);
    }
}

#[tokio::test(start_paused = true)]
async fn an_upgrade_takes_no_new_entry_and_then_conflicts_with_readers() {
    let table = table();
    let a = begin(&table, 1, 1);
    let b = begin(&table, 2, 2);
    assert_eq!(
        granted(&table, a, row(1), ReaderShared).await.mode,
        ReaderShared
    );
    let upgraded = granted(&table, a, row(1), WriterShared).await;
    assert_eq!(upgraded.mode, Exclusive);
    assert_eq!(table.locks_of(a), 1);
    assert_eq!(table.entries(), 1);
    // Holding Exclusive, asking ReaderShared again keeps it Exclusive.
    assert_eq!(
        granted(&table, a, row(1), ReaderShared).await.mode,
        Exclusive
    );
    // The younger b cannot read beside it now.
    assert!(would_wait(&try_now(&table, b, row(1), ReaderShared).await));
}

#[tokio::test(start_paused = true)]
async fn an_upgrade_waits_for_the_other_readers() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, old, row(1), ReaderShared).await;
    granted(&table, young, row(1), ReaderShared).await;
    // The younger reader's upgrade waits for the older reader; its ReaderShared is unchanged.
    assert!(would_wait(
        &try_now(&table, young, row(1), WriterShared).await
    ));
    assert_eq!(
        table.check(old),
        Ok(()),
        "a younger requester wounds nobody"
    );
    // The older reader's upgrade wounds the younger reader.
    let upgrade = spawn_acquire(&table, old, row(1), WriterShared);
    settle().await;
    assert!(
        matches!(table.check(young), Err(LockError::Wounded(w)) if w.by == old && w.mode == Exclusive)
    );
    abort_wounded(&table, young);
    assert_eq!(outcome(upgrade).await.expect("upgraded").mode, Exclusive);
}

#[tokio::test(start_paused = true)]
async fn a_younger_requester_waits_and_is_granted_when_the_older_holder_releases() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, old, row(7), Exclusive).await;
    let waiting = spawn_acquire(&table, young, row(7), ReaderShared);
    settle().await;
    assert_eq!(table.waiting(), 1);
    tokio::time::advance(ms(50)).await;
    commit(&table, old);
    let acquired = outcome(waiting).await.expect("granted after the release");
    assert_eq!(acquired.waited(), ms(50));
    let wait = acquired.wait.expect("it waited");
    assert_eq!(wait.holders.len(), 1);
    assert_eq!(wait.holders[0].txn, old);
    assert_eq!(wait.holders[0].mode, Exclusive);
    assert_eq!(&*wait.holders[0].tag, "tag-1");
    assert_eq!(table.check(old), Err(LockError::UnknownTransaction(old)));
    assert_eq!(
        table.check(young),
        Ok(()),
        "the younger one was never wounded"
    );

    let events: Vec<(Duration, EventKind)> =
        table.journal(|j| j.events().map(|e| (e.at, e.kind.clone())).collect());
    let shape: Vec<String> = events
        .iter()
        .map(|(at, k)| match k {
            EventKind::Begun { txn, .. } => format!("{at:?} begun {}", txn.0),
            EventKind::Granted { txn, waited, .. } => {
                format!("{at:?} granted {} after {waited:?}", txn.0)
            }
            EventKind::WaitStarted { txn, holders, .. } => format!(
                "{at:?} {} waits on {:?}",
                txn.0,
                holders.iter().map(|h| h.txn.0).collect::<Vec<_>>()
            ),
            EventKind::WaitEnded {
                txn, how, waited, ..
            } => {
                format!("{at:?} {} ended {how:?} after {waited:?}", txn.0)
            }
            EventKind::Committed { txn, .. } => format!("{at:?} committed {}", txn.0),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "0ns begun 1",
            "0ns begun 2",
            "0ns granted 1 after None",
            "0ns 2 waits on [1]",
            "50ms committed 1",
            "50ms 2 ended Granted after 50ms",
            "50ms granted 2 after Some(50ms)",
        ]
    );
    let waits = table.journal(|j| j.waits_of(young));
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].started, Duration::ZERO);
    assert_eq!(waits[0].ended, Some((ms(50), WaitEnd::Granted)));
    assert_eq!(table.journal(|j| j.total_wait(young)), ms(50));
    assert_eq!(table.journal(|j| j.total_wait(old)), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn an_older_requester_wounds_the_younger_holder_which_fails_its_next_request_and_check() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, young, row(1), WriterShared).await;
    let waiting = spawn_acquire(&table, old, row(1), ReaderShared);
    settle().await;
    let wounded = Wounded {
        by: old,
        key: row(1),
        mode: ReaderShared,
    };
    assert_eq!(table.check(young), Err(LockError::Wounded(wounded.clone())));
    let next = try_now(&table, young, row(2), ReaderShared).await;
    assert_eq!(next, Err(LockError::Wounded(wounded)));
    assert!(next.as_ref().err().is_some_and(LockError::is_abort));
    assert_eq!(
        table.locks_of(young),
        1,
        "a wounded holder keeps its locks until it ends"
    );
    assert_eq!(table.waiting(), 1, "the older one waits for the release");
    abort_wounded(&table, young);
    assert!(outcome(waiting).await.is_ok());
    assert!(kinds(&table).contains(&EventKind::Wound {
        by: old,
        victim: young,
        key: row(1),
        mode: ReaderShared,
    }));
    assert!(kinds(&table).iter().any(|k| matches!(
        k,
        EventKind::Aborted { txn, cause: AbortCause::Wounded, detail }
            if *txn == young && detail == "wounded by an older transaction"
    )));
}

#[tokio::test(start_paused = true)]
async fn a_waiting_younger_transaction_that_is_wounded_wakes_at_once() {
    let table = table();
    let oldest = begin(&table, 1, 1);
    let middle = begin(&table, 2, 2);
    let young = begin(&table, 3, 3);
    granted(&table, middle, row(1), Exclusive).await;
    granted(&table, young, row(2), Exclusive).await;
    let young_waits = spawn_acquire(&table, young, row(1), ReaderShared);
    settle().await;
    let oldest_waits = spawn_acquire(&table, oldest, row(2), ReaderShared);
    settle().await;
    // The young one's wait ended without any release and without its deadline.
    assert!(young_waits.is_finished());
    let error = outcome(young_waits).await.expect_err("wounded");
    assert!(matches!(&error, LockError::Wounded(w) if w.by == oldest && w.key == row(2)));
    let waits = table.journal(|j| j.waits_of(young));
    assert_eq!(waits[0].ended.map(|(_, how)| how), Some(WaitEnd::Wounded));
    assert_eq!(table.check(middle), Ok(()));
    abort_wounded(&table, young);
    assert!(outcome(oldest_waits).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn two_transactions_crossing_two_keys_do_not_deadlock_and_the_older_commits() {
    for older_asks_first in [false, true] {
        let table = table();
        let old = begin(&table, 1, 1);
        let young = begin(&table, 2, 2);
        granted(&table, old, row(1), Exclusive).await;
        granted(&table, young, row(2), Exclusive).await;
        let (old_wait, young_outcome) = if older_asks_first {
            let old_wait = spawn_acquire(&table, old, row(2), Exclusive);
            settle().await;
            let young_outcome = try_now(&table, young, row(1), Exclusive).await;
            (old_wait, young_outcome)
        } else {
            let young_wait = spawn_acquire(&table, young, row(1), Exclusive);
            settle().await;
            let old_wait = spawn_acquire(&table, old, row(2), Exclusive);
            settle().await;
            (old_wait, outcome(young_wait).await)
        };
        assert!(
            matches!(young_outcome, Err(LockError::Wounded(ref w)) if w.by == old),
            "{older_asks_first}: {young_outcome:?}"
        );
        abort_wounded(&table, young);
        assert!(outcome(old_wait).await.is_ok());
        assert_eq!(table.check(old), Ok(()));
        commit(&table, old);
        assert_eq!(table.entries(), 0);
        assert_eq!(table.waiting(), 0);
        let ends: Vec<EventKind> = kinds(&table)
            .into_iter()
            .filter(|k| matches!(k, EventKind::Committed { .. } | EventKind::Aborted { .. }))
            .collect();
        assert!(
            matches!(ends[..], [EventKind::Aborted { txn: a, .. }, EventKind::Committed { txn: c, .. }] if a == young && c == old)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_keeps_its_age_and_wounds_a_newer_holder_it_would_otherwise_wait_for() {
    let table = table();
    let first = begin(&table, 1, 1);
    let first_age = Age(ms(1));
    table.release_all(
        first,
        TxnEnd::Aborted {
            cause: AbortCause::Scripted,
            detail: "every 1".into(),
        },
    );
    tokio::time::advance(ms(10)).await;
    let newer = begin(&table, 2, 5);
    granted(&table, newer, row(1), Exclusive).await;
    // A transaction begun now is younger than `newer`: it waits and wounds nobody.
    let fresh = begin_retry(&table, 3, None, table.age_now());
    assert!(would_wait(
        &try_now(&table, fresh, row(1), ReaderShared).await
    ));
    assert_eq!(table.check(newer), Ok(()));
    // The retry with its first attempt's age is older: it wounds the holder.
    let retry = begin_retry(&table, 4, Some(first), first_age);
    let waiting = spawn_acquire(&table, retry, row(1), ReaderShared);
    settle().await;
    assert!(matches!(table.check(newer), Err(LockError::Wounded(w)) if w.by == retry));
    abort_wounded(&table, newer);
    assert!(outcome(waiting).await.is_ok());
    assert!(kinds(&table).iter().any(|k| matches!(
        k,
        EventKind::Begun { txn, previous: Some(p), age, .. } if *txn == retry && *p == first && *age == first_age
    )));
    assert!(kinds(&table).iter().any(|k| matches!(
        k,
        EventKind::Aborted { cause: AbortCause::Scripted, detail, .. } if detail == "a scripted abort: every 1"
    )));
}

#[tokio::test(start_paused = true)]
async fn ranges_conflict_with_the_points_they_cover_and_compatible_modes_share() {
    let table = table();
    let scanner = begin(&table, 1, 1);
    let b = begin(&table, 2, 2);
    let c = begin(&table, 3, 3);
    granted(&table, scanner, range(1, 10), ReaderShared).await;
    // A write inside the range waits; at its end (half-open) it does not.
    assert!(would_wait(&try_now(&table, b, row(5), WriterShared).await));
    assert!(would_wait(
        &try_now(
            &table,
            b,
            LockKey::cell("T", RowKey::ints(&[1]), "v"),
            WriterShared
        )
        .await
    ));
    granted(&table, b, row(10), WriterShared).await;
    granted(&table, b, row(0), Exclusive).await;
    // Another table's row 5 is another row.
    granted(&table, b, LockKey::row("u", RowKey::ints(&[5])), Exclusive).await;
    // Readers share the range's rows, and overlapping ranges.
    granted(&table, c, row(5), ReaderShared).await;
    granted(&table, c, range(5, 10), ReaderShared).await;
    // A whole-table writer waits for both the range and the points.
    assert!(would_wait(
        &try_now(&table, c, LockKey::table("t"), WriterShared).await
    ));
    // Blind writers share, over a range too: b's WriterShared on row 10 lets c write [10, 11).
    granted(&table, c, range(10, 11), WriterShared).await;
    // Reading what it wrote upgrades c's range to Exclusive, which b's row is in the way of.
    let upgrade = try_now(&table, c, range(10, 11), ReaderShared).await;
    let Err(LockError::DeadlineExceeded(blocked)) = upgrade else {
        panic!("{upgrade:?}");
    };
    assert_eq!(blocked.holders.len(), 1);
    assert_eq!(
        (blocked.holders[0].txn, blocked.holders[0].key.clone()),
        (b, row(10))
    );
    // Blind writers share a cell; a column lock and another column do not meet.
    let d = begin(&table, 4, 4);
    let e = begin(&table, 5, 5);
    let cell = |col: &str| LockKey::cell("w", RowKey::ints(&[1]), col);
    granted(&table, d, cell("a"), WriterShared).await;
    granted(&table, e, cell("a"), WriterShared).await;
    granted(&table, e, cell("b"), Exclusive).await;
    granted(&table, d, cell("a"), WriterSharedTimestamp).await;
    // A whole-row reader meets both columns' writers.
    let f = begin(&table, 6, 6);
    let blocked = try_now(
        &table,
        f,
        LockKey::row("w", RowKey::ints(&[1])),
        ReaderShared,
    )
    .await;
    let Err(LockError::DeadlineExceeded(deadline)) = blocked else {
        panic!("{blocked:?}");
    };
    let mut on: Vec<u64> = deadline.holders.iter().map(|h| h.txn.0).collect();
    on.sort_unstable();
    assert_eq!(on, [4, 5, 5]);
    // A whole-table range is one entry.
    let g = begin(&table, 7, 7);
    let before = table.entries();
    granted(&table, g, LockKey::table("empty"), Exclusive).await;
    assert_eq!(table.entries(), before + 1);
}

#[tokio::test(start_paused = true)]
async fn a_failed_request_says_how_long_it_waited_as_the_journal_does_and_nothing_if_it_never_waited()
 {
    let table = table();
    let oldest = begin(&table, 1, 1);
    let middle = begin(&table, 2, 2);
    let young = begin(&table, 3, 3);
    granted(&table, middle, row(1), Exclusive).await;
    granted(&table, young, row(2), Exclusive).await;
    let waiting = Arc::clone(&table);
    let young_waits = tokio::spawn(async move {
        waiting
            .acquire_waited(young, row(1), ReaderShared, far())
            .await
    });
    settle().await;
    tokio::time::advance(ms(30)).await;
    let oldest_waits = spawn_acquire(&table, oldest, row(2), ReaderShared);
    settle().await;
    let (error, waited) = young_waits
        .await
        .expect("the task ran")
        .expect_err("wounded while it waited");
    assert!(matches!(error, LockError::Wounded(_)));
    let journal = table.journal(|j| j.waits_of(young));
    let (ended, _) = journal[0].ended.expect("the wait ended");
    assert_eq!(waited, Some(ended - journal[0].started));
    assert_eq!(waited, Some(ms(30)));
    // Wounded already, it asks again and fails at once: no wait, none journaled.
    let again = table
        .acquire_waited(young, row(3), ReaderShared, far())
        .await;
    assert!(
        matches!(again, Err((LockError::Wounded(_), None))),
        "{again:?}"
    );
    assert_eq!(table.journal(|j| j.waits_of(young)).len(), 1);
    abort_wounded(&table, young);
    assert!(outcome(oldest_waits).await.is_ok());
}
