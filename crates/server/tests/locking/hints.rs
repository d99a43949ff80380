//! Read's lock hint through the request path: EXCLUSIVE read-modify-writes of one row queue
//! behind each other (the younger's read waits in mode Exclusive, behind the older, and both
//! commit), where SHARED ones both read and the commit's write wounds the younger; an optimistic
//! transaction's EXCLUSIVE read takes no lock, and a hint outside a read-write transaction is
//! harmless.

use std::time::Duration;

use spanprof_model::report::LockWaitSeen;
use spanprof_server::server::LocalInstance;
use spanprof_server::server::txn::journal::{EventKind, WaitEnd};
use spanprof_server::server::txn::lock_key::{LockMode, TxnId};
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::read_request::LockHint;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof_wire::proto::google::spanner::v1::transaction_options::read_write::ReadLockMode;
use tonic::Code;
use tonic::transport::Channel;

use super::{begin, begin_in, commit, header_waits, hex, lock_id, run, session, start};

/// A read of account 1's balance in `transaction`, hinted `hint`.
fn read_request(
    session: &str,
    transaction: pb::TransactionSelector,
    hint: LockHint,
) -> pb::ReadRequest {
    let key = prost_types::ListValue {
        values: vec![prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue("1".into())),
        }],
    };
    pb::ReadRequest {
        session: session.into(),
        transaction: Some(transaction),
        table: "Accounts".into(),
        columns: vec!["Balance".into()],
        key_set: Some(pb::KeySet {
            keys: vec![key],
            ..Default::default()
        }),
        lock_hint: hint as i32,
        ..Default::default()
    }
}

fn in_txn(id: &[u8]) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
    }
}

/// The balance a StreamingRead of account 1 in transaction `id` answers.
async fn read_balance(
    client: SpannerClient<Channel>,
    session: String,
    id: Vec<u8>,
    hint: LockHint,
) -> Result<i64, tonic::Status> {
    Ok(read_waited(client, session, id, hint).await?.0)
}

/// The balance a StreamingRead of account 1 in transaction `id` answers, and the wait for locks
/// its headers give (none when they give none), with the waits they name.
async fn read_waited(
    mut client: SpannerClient<Channel>,
    session: String,
    id: Vec<u8>,
    hint: LockHint,
) -> Result<(i64, Option<Duration>, Vec<LockWaitSeen>), tonic::Status> {
    let request = read_request(&session, in_txn(&id), hint);
    let answer = client.streaming_read(request).await?;
    let (waited, named) = header_waits(answer.metadata());
    let mut stream = answer.into_inner();
    let mut values = Vec::new();
    while let Some(part) = stream.message().await? {
        values.extend(part.values);
    }
    match values.as_slice() {
        [
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(balance)),
            },
        ] => Ok((balance.parse().expect("an INT64"), waited, named)),
        other => panic!("one balance, not {other:?}"),
    }
}

const ADD_ONE: &str = "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";

/// Waits (on the journal, not a clock) until `txn` waits for a lock; gives up after 10 s.
async fn until_waiting(instance: &LocalInstance, txn: TxnId) {
    for _ in 0..1_000 {
        if !instance.locks().journal(|j| j.waits_of(txn)).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{txn:?} never waited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exclusive_reads_of_one_row_queue_and_both_read_modify_writes_commit_without_a_wound() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let (older, younger) = (begin(&mut client, &a).await, begin(&mut client, &b).await);
    let (first, older_read_waited, _) = read_waited(
        client.clone(),
        a.clone(),
        older.clone(),
        LockHint::Exclusive,
    )
    .await
    .expect("the older reads");
    assert_eq!(older_read_waited, None, "no wait, no header");
    let second = tokio::spawn(read_waited(
        client.clone(),
        b.clone(),
        younger.clone(),
        LockHint::Exclusive,
    ));
    until_waiting(&instance, lock_id(&younger)).await;
    assert!(!second.is_finished(), "the younger's read waits");
    run(&mut client, &a, &older, ADD_ONE, 1)
        .await
        .expect("the older writes what it read");
    let (_, older_waited, _) = commit(client.clone(), a.clone(), older.clone())
        .await
        .expect("the older commits");
    assert_eq!(older_waited, Duration::ZERO, "its write needs no upgrade");
    let (seen, read_waited, named) = second.await.expect("joins").expect("the younger reads");
    assert_eq!(seen, first + 1, "after the older's write");
    let read_waited = read_waited.expect("the read's answer says how long it waited");
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(
        (named[0].key.as_str(), named[0].mode.as_str()),
        ("accounts(1)", "Exclusive")
    );
    assert_eq!(named[0].holders, [hex(&older)], "behind the older");
    run(&mut client, &b, &younger, ADD_ONE, 1)
        .await
        .expect("the younger writes");
    commit(client.clone(), b.clone(), younger.clone())
        .await
        .expect("the younger commits too");
    let (old_id, young_id) = (lock_id(&older), lock_id(&younger));
    instance.locks().journal(|journal| {
        let ended_badly = journal
            .events()
            .any(|e| matches!(e.kind, EventKind::Wound { .. } | EventKind::Aborted { .. }));
        assert!(!ended_badly, "no wound, no abort");
        let granted = |txn: TxnId| {
            journal.events().find_map(|e| match &e.kind {
                EventKind::Granted {
                    txn: t, key, mode, ..
                } if *t == txn && key.column.is_none() => Some((key.rows_in_words(), *mode)),
                _ => None,
            })
        };
        assert_eq!(
            granted(old_id),
            Some(("accounts(1)".to_owned(), LockMode::Exclusive))
        );
        assert_eq!(
            granted(young_id),
            Some(("accounts(1)".to_owned(), LockMode::Exclusive))
        );
        assert!(journal.waits_of(old_id).is_empty(), "the older never waits");
        let waits = journal.waits_of(young_id);
        assert_eq!(waits.len(), 1, "{waits:?}");
        let wait = &waits[0];
        assert_eq!(wait.mode, LockMode::Exclusive);
        assert_eq!(wait.key.rows_in_words(), "accounts(1)");
        let holders: Vec<(TxnId, LockMode)> =
            wait.holders.iter().map(|h| (h.txn, h.mode)).collect();
        assert_eq!(holders, [(old_id, LockMode::Exclusive)]);
        assert!(
            matches!(wait.ended, Some((_, WaitEnd::Granted))),
            "{wait:?}"
        );
        let journalled = wait.duration(wait.started);
        assert!(
            read_waited.abs_diff(journalled) <= Duration::from_millis(1),
            "{read_waited:?} against {journalled:?}"
        );
    });
    let after = begin(&mut client, &a).await;
    let balance = read_balance(client.clone(), a.clone(), after, LockHint::Unspecified)
        .await
        .expect("reads");
    assert_eq!(balance, first + 2, "both writes landed, once each");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_reads_of_one_row_both_read_and_the_older_commit_wounds_the_younger() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let (older, younger) = (begin(&mut client, &a).await, begin(&mut client, &b).await);
    let first = read_balance(client.clone(), a.clone(), older.clone(), LockHint::Shared)
        .await
        .expect("the older reads");
    read_balance(
        client.clone(),
        b.clone(),
        younger.clone(),
        LockHint::Unspecified,
    )
    .await
    .expect("the younger reads too: ReaderShared is shared");
    run(&mut client, &a, &older, ADD_ONE, 1)
        .await
        .expect("the older writes");
    run(&mut client, &b, &younger, ADD_ONE, 1)
        .await
        .expect("the younger writes");
    commit(client.clone(), a.clone(), older.clone())
        .await
        .expect("the older commits");
    let aborted = commit(client.clone(), b.clone(), younger.clone())
        .await
        .expect_err("the younger was wounded");
    assert_eq!(aborted.code(), Code::Aborted, "{aborted:?}");
    let (old_id, young_id) = (lock_id(&older), lock_id(&younger));
    instance.locks().journal(|journal| {
        let reads: Vec<LockMode> = journal
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Granted { key, mode, .. } if key.column.is_none() => Some(*mode),
                _ => None,
            })
            .collect();
        // The reads' grants, and the UPDATEs' of the rows they read again.
        assert!(reads.len() >= 2, "{reads:?}");
        assert!(
            reads.iter().all(|m| *m == LockMode::ReaderShared),
            "every row lock is shared: {reads:?}"
        );
        let wounds: Vec<(TxnId, TxnId, LockMode, Option<String>)> = journal
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Wound {
                    by,
                    victim,
                    key,
                    mode,
                } => Some((
                    *by,
                    *victim,
                    *mode,
                    key.column.as_deref().map(str::to_owned),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            wounds,
            [(
                old_id,
                young_id,
                LockMode::WriterShared,
                Some("balance".to_owned())
            )],
            "the older's commit, writing the cell, wounds the younger reader"
        );
        let aborted: Vec<TxnId> = journal
            .events()
            .filter_map(|e| match e.kind {
                EventKind::Aborted { txn, .. } => Some(txn),
                _ => None,
            })
            .collect();
        assert_eq!(aborted, [young_id]);
    });
    let after = begin(&mut client, &a).await;
    let balance = read_balance(client.clone(), a.clone(), after, LockHint::Unspecified)
        .await
        .expect("reads");
    assert_eq!(balance, first + 1, "only the older's write landed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_hint_locks_nothing_in_an_optimistic_transaction_or_outside_one() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let optimistic = begin_in(&mut client, &a, ReadLockMode::Optimistic).await;
    read_balance(
        client.clone(),
        a.clone(),
        optimistic.clone(),
        LockHint::Exclusive,
    )
    .await
    .expect("reads lock-free");
    // A pessimistic transaction's exclusive read of the same row is not held up by it.
    let pessimistic = begin(&mut client, &b).await;
    read_balance(
        client.clone(),
        b.clone(),
        pessimistic.clone(),
        LockHint::Exclusive,
    )
    .await
    .expect("reads");
    // Nor is a single-use read-only read, hinted EXCLUSIVE, by the pessimistic one's lock.
    let single_use = pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(
            pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(Default::default())),
                ..Default::default()
            },
        )),
    };
    let request = read_request(&a, single_use, LockHint::Exclusive);
    let outside = tokio::time::timeout(Duration::from_secs(10), client.read(request))
        .await
        .expect("answers without waiting for a lock")
        .expect("reads")
        .into_inner();
    assert_eq!(outside.rows.len(), 1);
    let (optimistic_id, pessimistic_id) = (lock_id(&optimistic), lock_id(&pessimistic));
    instance.locks().journal(|journal| {
        let granted: Vec<(TxnId, LockMode)> = journal
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Granted { txn, mode, .. } => Some((*txn, *mode)),
                _ => None,
            })
            .collect();
        assert_eq!(granted, [(pessimistic_id, LockMode::Exclusive)]);
        assert!(journal.waits_of(optimistic_id).is_empty());
        assert!(journal.waits_of(pessimistic_id).is_empty());
    });
    // An unknown hint is refused before anything runs.
    let mut unknown = read_request(&a, in_txn(&optimistic), LockHint::Unspecified);
    unknown.lock_hint = 7;
    let refused = client.read(unknown).await.expect_err("refused");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
}

/// A NORMAL-mode DML's answer carries only its row count, no query statistics: when it waited for
/// a lock, its headers say how long and behind whom, as a read's do (a DML's wait was told to
/// nobody when its answer had statistics of any kind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_normal_mode_dml_that_waited_says_so_in_its_headers() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let (older, younger) = (begin(&mut client, &a).await, begin(&mut client, &b).await);
    read_waited(
        client.clone(),
        a.clone(),
        older.clone(),
        LockHint::Exclusive,
    )
    .await
    .expect("the older reads, Exclusive");
    let dml = {
        let mut client = client.clone();
        let request = pb::ExecuteSqlRequest {
            session: b.clone(),
            transaction: Some(in_txn(&younger)),
            sql: ADD_ONE.into(),
            seqno: 1,
            query_mode: pb::execute_sql_request::QueryMode::Normal as i32,
            ..Default::default()
        };
        tokio::spawn(async move { client.execute_sql(request).await })
    };
    until_waiting(&instance, lock_id(&younger)).await;
    commit(client.clone(), a.clone(), older.clone())
        .await
        .expect("the older commits, letting the row go");
    let answer = dml.await.expect("joins").expect("the younger's DML runs");
    let (waited, named) = header_waits(answer.metadata());
    let waited = waited.expect("the DML's answer says how long it waited");
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0].holders, [hex(&older)], "behind the older");
    let stats = answer.into_inner().stats.expect("a DML's row count");
    assert!(
        stats.query_stats.is_none(),
        "NORMAL mode: no query statistics"
    );
    let journalled = instance.locks().journal(|j| {
        let waits = j.waits_of(lock_id(&younger));
        waits
            .iter()
            .map(|w| w.duration(w.started))
            .sum::<Duration>()
    });
    assert!(
        waited.abs_diff(journalled) <= Duration::from_millis(1),
        "{waited:?} against {journalled:?}"
    );
}
