//! How waits end besides a grant (a dropped future, a deadline, the transaction's end), who is
//! served first, the bounds, the journal's ring and lock stats, and wound-wait under a crowd.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_dropped_waiting_future_leaves_no_waiter_and_no_lock() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, old, row(1), Exclusive).await;
    {
        let waiting = table.acquire(young, row(1), ReaderShared, far());
        tokio::pin!(waiting);
        tokio::select! {
            biased;
            _ = &mut waiting => panic!("granted beside an Exclusive holder"),
            () = settle() => {}
        }
        assert_eq!(table.waiting(), 1);
    }
    assert_eq!(table.waiting(), 0);
    assert_eq!(table.locks_of(young), 0);
    let waits = table.journal(|j| j.waits_of(young));
    assert_eq!(waits[0].ended.map(|(_, how)| how), Some(WaitEnd::Cancelled));
    commit(&table, old);
    assert_eq!(
        table.locks_of(young),
        0,
        "nothing was granted to the dropped wait"
    );
    assert_eq!(table.entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_grant_the_dropped_future_never_saw_is_given_back() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    let third = begin(&table, 3, 3);
    granted(&table, old, row(1), Exclusive).await;
    let waiting = table.acquire(young, row(1), Exclusive, far());
    let mut waiting = Box::pin(waiting);
    tokio::select! {
        biased;
        _ = &mut waiting => panic!("granted beside an Exclusive holder"),
        () = settle() => {}
    }
    let third_waits = spawn_acquire(&table, third, row(1), Exclusive);
    settle().await;
    // The release grants the young one's wait, which nobody polls again.
    commit(&table, old);
    assert_eq!(table.locks_of(young), 1);
    drop(waiting);
    assert_eq!(table.locks_of(young), 0);
    assert!(kinds(&table).contains(&EventKind::Returned {
        txn: young,
        key: row(1),
    }));
    // And what it gave back went to the next waiter.
    assert!(outcome(third_waits).await.is_ok());
    assert_eq!(table.locks_of(third), 1);
}

#[tokio::test(start_paused = true)]
async fn a_wait_ends_at_its_deadline_and_leaves_the_holder_alone() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, old, row(1), WriterShared).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let error = table
        .acquire(young, row(1), ReaderShared, deadline)
        .await
        .expect_err("the deadline passes");
    let LockError::DeadlineExceeded(passed) = &error else {
        panic!("{error:?}");
    };
    assert!(error.is_abort());
    assert_eq!(passed.waited, Duration::from_secs(10));
    assert_eq!(passed.holders[0].txn, old);
    assert_eq!(table.waiting(), 0);
    assert_eq!(table.locks_of(young), 0);
    assert_eq!(table.check(old), Ok(()));
    let waits = table.journal(|j| j.waits_of(young));
    assert_eq!(
        waits[0].ended,
        Some((Duration::from_secs(10), WaitEnd::Deadline))
    );
}

#[tokio::test(start_paused = true)]
async fn waiters_are_granted_oldest_first() {
    let table = table();
    let holder = begin(&table, 1, 0);
    granted(&table, holder, row(1), Exclusive).await;
    let mut waits = Vec::new();
    for (id, age) in [(5, 50), (2, 20), (8, 80), (3, 30)] {
        let txn = begin(&table, id, age);
        waits.push((txn, spawn_acquire(&table, txn, row(1), Exclusive)));
        settle().await;
    }
    assert_eq!(table.waiting(), 4);
    let mut previous = holder;
    for next in [2, 3, 5, 8] {
        commit(&table, previous);
        settle().await;
        assert_eq!(table.locks_of(TxnId(next)), 1, "{next} after {previous:?}");
        previous = TxnId(next);
    }
    commit(&table, previous);
    assert_eq!(
        granted_after_waiting(&table),
        [TxnId(2), TxnId(3), TxnId(5), TxnId(8)]
    );
    for (txn, wait) in waits {
        assert!(outcome(wait).await.is_ok(), "{txn:?}");
    }
    assert!(
        !kinds(&table)
            .iter()
            .any(|k| matches!(k, EventKind::Wound { .. }))
    );
}

#[tokio::test(start_paused = true)]
async fn a_transaction_ended_while_it_waits_wakes_and_leaves_nothing() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    granted(&table, old, row(1), Exclusive).await;
    let waiting = spawn_acquire(&table, young, row(1), Exclusive);
    settle().await;
    table.release_all(young, TxnEnd::RolledBack);
    assert_eq!(outcome(waiting).await, Err(LockError::Ended(young)));
    assert_eq!(table.waiting(), 0);
    commit(&table, old);
    assert_eq!(table.entries(), 0);
}

fn info(id: u64) -> TxnInfo {
    TxnInfo {
        id: TxnId(id),
        previous: None,
        age: Age(ms(id)),
        session: "s".into(),
        tag: "".into(),
        optimistic: false,
    }
}

fn exhausted(what: Limit, limit: usize) -> Result<Acquired, LockError> {
    Err(LockError::Exhausted { what, limit })
}

#[tokio::test(start_paused = true)]
async fn every_bound_on_locks_and_transactions_fails_clearly() {
    let table = bounded(LockBounds {
        locks_per_txn: 2,
        entries: 4,
        ranges: 1,
        waiters: 10,
        transactions: 4,
        journal_events: 100,
    });
    let a = begin(&table, 1, 1);
    let b = begin(&table, 2, 2);
    let c = begin(&table, 3, 3);
    let d = begin(&table, 4, 4);
    assert_eq!(
        table.begin(info(5)),
        Err(LockError::Exhausted {
            what: Limit::Transactions,
            limit: 4
        })
    );
    assert_eq!(table.begin(info(1)), Err(LockError::AlreadyBegun(a)));
    // Locks per transaction; an upgrade is not a new lock.
    granted(&table, a, row(1), ReaderShared).await;
    granted(&table, a, row(2), ReaderShared).await;
    assert_eq!(
        try_now(&table, a, row(3), ReaderShared).await,
        exhausted(Limit::LocksPerTxn, 2)
    );
    assert_eq!(
        granted(&table, a, row(1), WriterShared).await.mode,
        Exclusive
    );
    // Ranges in all.
    granted(&table, b, range(100, 200), ReaderShared).await;
    assert_eq!(
        try_now(&table, c, range(300, 400), ReaderShared).await,
        exhausted(Limit::Ranges, 1)
    );
    // Entries in all (a: 2, b: 1, c: 1).
    granted(&table, c, row(9), ReaderShared).await;
    assert_eq!(table.entries(), 4);
    assert_eq!(
        try_now(&table, d, row(10), ReaderShared).await,
        exhausted(Limit::Entries, 4)
    );
    // An unknown transaction is refused.
    assert_eq!(
        try_now(&table, TxnId(99), row(1), ReaderShared).await,
        Err(LockError::UnknownTransaction(TxnId(99)))
    );
    // Room comes back when a transaction ends, and a transaction may begin again.
    commit(&table, b);
    granted(&table, d, range(300, 400), ReaderShared).await;
    assert_eq!(table.entries(), 4);
    assert_eq!(table.begin(info(5)), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn the_bound_on_waiters_fails_clearly() {
    let table = bounded(LockBounds {
        waiters: 1,
        ..LockBounds::default()
    });
    let a = begin(&table, 1, 1);
    let b = begin(&table, 2, 2);
    let c = begin(&table, 3, 3);
    granted(&table, a, row(1), Exclusive).await;
    let first = spawn_acquire(&table, b, row(1), ReaderShared);
    settle().await;
    assert_eq!(table.waiting(), 1);
    assert_eq!(
        try_now(&table, c, row(1), ReaderShared).await,
        exhausted(Limit::Waiters, 1)
    );
    commit(&table, a);
    assert!(outcome(first).await.is_ok());
    granted(&table, c, row(1), ReaderShared).await;
}

#[tokio::test(start_paused = true)]
async fn the_journal_is_a_ring_that_counts_what_it_dropped() {
    let table = bounded(LockBounds {
        journal_events: 4,
        ..LockBounds::default()
    });
    let a = begin(&table, 1, 1);
    for k in 0..5 {
        granted(&table, a, row(k), ReaderShared).await;
    }
    commit(&table, a);
    // 1 begun + 5 granted + 1 committed = 7 events, the last 4 kept.
    assert_eq!(table.journal(|j| j.dropped()), 3);
    let seqs: Vec<u64> = table.journal(|j| j.events().map(|e| e.seq).collect());
    assert_eq!(seqs, [3, 4, 5, 6]);
    assert!(matches!(kinds(&table).last(), Some(EventKind::Committed { txn, .. }) if *txn == a));
}

#[tokio::test(start_paused = true)]
async fn lock_stats_from_real_waits_name_the_row_the_seconds_and_both_sides() {
    let table = table();
    let old = begin(&table, 1, 1);
    let young = begin(&table, 2, 2);
    let key = LockKey::cell("Singers", RowKey::ints(&[42]), "Name");
    granted(&table, old, key.clone(), WriterShared).await;
    let waiting = spawn_acquire(&table, young, key.clone(), ReaderShared);
    settle().await;
    tokio::time::advance(ms(250)).await;
    commit(&table, old);
    assert!(outcome(waiting).await.is_ok());
    let stats = table.journal(|j| j.lock_stats(Duration::ZERO, Duration::from_secs(60)));
    assert_eq!(stats.len(), 1);
    assert_eq!(&*stats[0].table, "singers");
    assert_eq!(
        stats[0].start,
        crate::server::txn::journal::RowRangeStart::Row(RowKey::ints(&[42]))
    );
    assert!((stats[0].lock_wait_seconds - 0.25).abs() < 1e-9);
    let samples: Vec<(String, LockMode, String)> = stats[0]
        .samples
        .iter()
        .map(|s| (s.column.clone(), s.lock_mode, s.transaction_tag.to_string()))
        .collect();
    assert_eq!(
        samples,
        [
            ("singers.name".to_owned(), ReaderShared, "tag-2".to_owned()),
            ("singers.name".to_owned(), WriterShared, "tag-1".to_owned()),
        ]
    );
}

/// Wound-wait under a crowd: transactions each lock three of five keys in their own order; a
/// wounded or timed-out attempt retries with its age. Every transaction commits, none waits
/// forever (a deadlock would leave the deadline to end waits, and the count of deadline aborts
/// shows it), and the oldest commits at its first attempt.
#[tokio::test(start_paused = true)]
async fn a_crowd_of_crossing_transactions_all_commit_without_a_deadlock() {
    let table = table();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut tasks = Vec::new();
    for t in 0..12_u64 {
        let keys: Vec<i64> = (0..3).map(|_| (next() % 5) as i64).collect();
        let table = table.clone();
        tasks.push(tokio::spawn(async move {
            let age = Age(ms(t));
            let mut attempt = t * 1_000_000;
            let mut previous = None;
            let mut deadlines = 0;
            loop {
                assert!(
                    attempt < t * 1_000_000 + 1_000,
                    "{t} retried a thousand times"
                );
                let txn = begin_retry(&table, attempt, previous, age);
                let mut failed = None;
                for &k in &keys {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    match table.acquire(txn, row(k), Exclusive, deadline).await {
                        Ok(_) => tokio::time::sleep(ms(1)).await,
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                match failed {
                    None if table.check(txn).is_ok() => {
                        commit(&table, txn);
                        return (deadlines, attempt - t * 1_000_000 + 1);
                    }
                    Some(LockError::DeadlineExceeded(_)) => deadlines += 1,
                    _ => {}
                }
                abort_wounded(&table, txn);
                previous = Some(txn);
                attempt += 1;
            }
        }));
    }
    let mut deadline_aborts = 0;
    let mut attempts = Vec::new();
    for task in tasks {
        let (deadlines, tries) = task.await.expect("the transaction ran");
        deadline_aborts += deadlines;
        attempts.push(tries);
    }
    assert_eq!(deadline_aborts, 0, "no wait lasted until its deadline");
    assert_eq!(attempts[0], 1, "the oldest is never wounded: {attempts:?}");
    assert_eq!(table.entries(), 0);
    assert_eq!(table.waiting(), 0);
    let committed = kinds(&table)
        .iter()
        .filter(|k| matches!(k, EventKind::Committed { .. }))
        .count();
    assert_eq!(committed, 12);
}
