use std::time::Duration;

use super::*;
use crate::server::txn::journal::{EventKind, Holder, RowRangeStart, WaitEnd, WaitId};
use crate::server::txn::lock_key::{Age, LockKey, LockMode, RowKey, TxnId};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A window whose lock table started at wall second 100, read at `now_ms` of table time, with
/// one-second "minutes" (so interval k ends at wall second k + 1, table time (k - 99) s).
fn window(now_ms: u64) -> Window {
    Window {
        wall_zero: Duration::from_secs(100),
        now: ms(now_ms),
        base: Duration::from_secs(1),
    }
}

fn begin(journal: &mut Journal, txn: u64, tag: &str, previous: Option<u64>, optimistic: bool) {
    journal.record(
        ms(0),
        EventKind::Begun {
            txn: TxnId(txn),
            previous: previous.map(TxnId),
            age: Age(ms(txn)),
            session: "s".into(),
            tag: tag.into(),
            optimistic,
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
            mode: LockMode::WriterShared,
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

fn row(n: i64) -> LockKey {
    LockKey::row("accounts", RowKey::ints(&[n]))
}

fn minute(journal: &Journal, now_ms: u64) -> SpanStats {
    collect(journal, window(now_ms), &[Span::Minute]).remove(0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn waits_are_split_at_interval_edges_per_row_range_and_totalled() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "app-a", None, false);
    begin(&mut journal, 2, "app-b", None, false);
    wait(&mut journal, 1, 1, row(7), (200, 600));
    wait(&mut journal, 2, 2, row(7), (800, 1300));
    wait(&mut journal, 3, 2, LockKey::table("accounts"), (1100, 1200));
    let stats = minute(&journal, 3500);
    let top: Vec<(u64, RowRangeStart, f64)> = stats
        .lock
        .top
        .iter()
        .map(|r| {
            (
                r.interval_end.as_secs(),
                r.start.clone(),
                r.lock_wait_seconds,
            )
        })
        .collect();
    assert_eq!(top.len(), 3, "{top:?}");
    assert_eq!(top[0].0, 101);
    assert_eq!(top[0].1, RowRangeStart::Row(RowKey::ints(&[7])));
    assert!(
        close(top[0].2, 0.6),
        "0.4 s and the first 0.2 s of the second wait"
    );
    assert_eq!(top[1].0, 102);
    assert!(close(top[1].2, 0.3), "the second wait's rest");
    assert_eq!(top[2].1, RowRangeStart::Range(None));
    assert!(close(top[2].2, 0.1));
    let totals: Vec<(u64, f64)> = stats
        .lock
        .total
        .iter()
        .map(|t| (t.interval_end.as_secs(), t.total_lock_wait_seconds))
        .collect();
    assert_eq!(
        totals.len(),
        3,
        "every closed interval has its total: {totals:?}"
    );
    assert!(close(totals[0].1, 0.6) && close(totals[1].1, 0.4) && close(totals[2].1, 0.0));
    let tags: Vec<&str> = stats.lock.top[0]
        .samples
        .iter()
        .map(|s| &*s.transaction_tag)
        .collect();
    assert_eq!(tags, ["app-a", "holder", "app-b"]);
}

#[test]
fn an_interval_appears_only_once_it_has_closed() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "", None, false);
    wait(&mut journal, 1, 1, row(1), (100, 300));
    assert!(minute(&journal, 999).lock.top.is_empty(), "still open");
    assert!(minute(&journal, 999).lock.total.is_empty());
    let closed = minute(&journal, 1000);
    assert_eq!(closed.lock.top.len(), 1);
    assert_eq!(closed.lock.top[0].interval_end, Duration::from_secs(101));
    // The ten-"minute" interval holding it closes at wall second 110.
    let ten = |now| collect(&journal, window(now), &[Span::TenMinute]).remove(0);
    assert!(ten(9_999).lock.top.is_empty());
    assert_eq!(
        ten(10_000).lock.top[0].interval_end,
        Duration::from_secs(110)
    );
}

#[test]
fn a_wait_still_going_counts_up_to_the_last_closed_interval() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "", None, false);
    journal.record(
        ms(500),
        EventKind::WaitStarted {
            wait: WaitId(1),
            txn: TxnId(1),
            key: row(3),
            mode: LockMode::ReaderShared,
            holders: Vec::new(),
        },
    );
    let stats = minute(&journal, 2500);
    let seconds: Vec<f64> = stats.lock.top.iter().map(|r| r.lock_wait_seconds).collect();
    assert_eq!(seconds.len(), 2);
    assert!(
        close(seconds[0], 0.5) && close(seconds[1], 1.0),
        "{seconds:?}"
    );
}

#[test]
fn optimistic_transactions_leave_nothing() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "pessimist", None, false);
    begin(&mut journal, 2, "optimist", None, true);
    wait(&mut journal, 1, 1, row(1), (100, 200));
    wait(&mut journal, 2, 2, row(2), (100, 400));
    journal.record(
        ms(500),
        EventKind::Committed {
            txn: TxnId(1),
            timestamp: 1,
        },
    );
    journal.record(
        ms(600),
        EventKind::Committed {
            txn: TxnId(2),
            timestamp: 2,
        },
    );
    let stats = minute(&journal, 1000);
    assert_eq!(stats.lock.top.len(), 1);
    assert_eq!(
        stats.lock.top[0].start,
        RowRangeStart::Row(RowKey::ints(&[1]))
    );
    assert!(close(stats.lock.total[0].total_lock_wait_seconds, 0.1));
    let tags: Vec<&str> = stats.txn.top.iter().map(|r| &*r.tag).collect();
    assert_eq!(tags, ["pessimist"]);
    assert_eq!(stats.txn.total[0].figures.attempt_count, 1);
}

#[test]
fn the_top_table_keeps_the_most_waited_rows_and_the_total_counts_them_all() {
    let mut journal = Journal::new(10_000);
    begin(&mut journal, 1, "", None, false);
    let n = TOP_ROWS as u64 + 5;
    for i in 0..n {
        // Row i waits i + 1 ms.
        wait(&mut journal, i, 1, row(i as i64), (0, i + 1));
    }
    let stats = minute(&journal, 1000);
    assert_eq!(stats.lock.top.len(), TOP_ROWS);
    assert_eq!(
        stats.lock.top[0].start,
        RowRangeStart::Row(RowKey::ints(&[n as i64 - 1]))
    );
    let least = stats
        .lock
        .top
        .iter()
        .map(|r| r.lock_wait_seconds)
        .fold(1.0, f64::min);
    assert!(
        close(least, 0.006),
        "the five shortest waits are cut: {least}"
    );
    let all: f64 = (1..=n).map(|i| i as f64 / 1000.0).sum();
    assert!(close(stats.lock.total[0].total_lock_wait_seconds, all));
}

#[test]
fn transaction_stats_group_attempts_by_tag_and_count_aborts_and_retries() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "transfer", None, false);
    begin(&mut journal, 2, "transfer", None, false);
    begin(&mut journal, 5, "", None, false);
    journal.record(
        ms(100),
        EventKind::Granted {
            txn: TxnId(1),
            key: LockKey::cell("accounts", RowKey::ints(&[1]), "balance"),
            mode: LockMode::Exclusive,
            waited: None,
        },
    );
    journal.record(
        ms(200),
        EventKind::Committed {
            txn: TxnId(1),
            timestamp: 1,
        },
    );
    journal.record(
        ms(300),
        EventKind::Aborted {
            txn: TxnId(2),
            cause: crate::server::txn::journal::AbortCause::Wounded,
            detail: String::new(),
        },
    );
    journal.record(
        ms(300),
        EventKind::Begun {
            txn: TxnId(4),
            previous: Some(TxnId(2)),
            age: Age(ms(2)),
            session: "s".into(),
            tag: "transfer".into(),
            optimistic: false,
        },
    );
    journal.record(
        ms(700),
        EventKind::Committed {
            txn: TxnId(4),
            timestamp: 2,
        },
    );
    journal.record(ms(800), EventKind::RolledBack { txn: TxnId(5) });
    let stats = minute(&journal, 1000);
    assert_eq!(stats.txn.top.len(), 2);
    let transfer = stats
        .txn
        .top
        .iter()
        .find(|r| &*r.tag == "transfer")
        .expect("the tagged row");
    let f = transfer.figures;
    assert_eq!(
        (
            f.attempt_count,
            f.commit_attempt_count,
            f.commit_abort_count,
            f.commit_retry_count
        ),
        (3, 3, 1, 1)
    );
    // Latencies 0.2 s, 0.3 s and 0.4 s (the retry began at 0.3 s).
    assert!(close(f.avg_total_latency_seconds, 0.3));
    assert_eq!(transfer.read_columns, ["accounts.balance"]);
    assert_eq!(transfer.write_constructive_columns, ["accounts.balance"]);
    let untagged = stats
        .txn
        .top
        .iter()
        .find(|r| r.tag.is_empty())
        .expect("row");
    assert_ne!(untagged.fprint, transfer.fprint);
    assert_eq!(
        untagged.figures.commit_attempt_count, 0,
        "a rollback is no commit"
    );
    assert!(stats.txn.top[0].figures.avg_total_latency_seconds >= 0.3);
    let total = stats.txn.total[0].figures;
    assert_eq!((total.attempt_count, total.commit_abort_count), (4, 1));
}

#[test]
fn a_single_interval_agrees_with_the_journals_own_lock_stats() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "a", None, false);
    begin(&mut journal, 2, "b", None, false);
    wait(&mut journal, 1, 1, row(1), (100, 450));
    wait(&mut journal, 2, 2, row(2), (300, 1700));
    wait(&mut journal, 3, 1, LockKey::table("accounts"), (900, 950));
    let ours = minute(&journal, 1000).lock.top;
    let theirs = journal.lock_stats(ms(0), ms(1000));
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!((&a.table, &a.start), (&b.table, &b.start));
        assert!(close(a.lock_wait_seconds, b.lock_wait_seconds));
        assert_eq!(a.samples, b.samples);
    }
}

#[test]
fn retention_is_productions_in_intervals_and_no_older_than_the_journal() {
    let mut journal = Journal::new(100);
    begin(&mut journal, 1, "", None, false);
    let long = minute(&journal, 1_000_000);
    assert_eq!(long.lock.total.len() as u64, Span::Minute.retained());
    assert_eq!(
        long.lock.total.last().map(|t| t.interval_end),
        Some(Duration::from_secs(1100))
    );
    let short = minute(&journal, 4200);
    assert_eq!(short.lock.total.len(), 4, "from the table's start only");
    // A ring that dropped events covers only from its oldest kept event.
    let mut ring = Journal::new(2);
    for n in 0..3 {
        ring.record(ms(n * 1000), EventKind::RolledBack { txn: TxnId(n) });
    }
    assert_eq!(minute(&ring, 4200).lock.total.len(), 3);
}
