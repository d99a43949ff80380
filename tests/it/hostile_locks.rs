//! A hostile client against the local instance's lock table: transactions that take locks and
//! never commit, reads of huge key ranges and huge key lists, and many open transactions. Each is
//! bounded: the locks go with the idle reaper, a waiter behind a lock that is never let go waits a
//! bounded time and aborts, a scan of any width is one range entry, a list of more keys than a
//! statement names one by one locks its table whole, and open transactions stop at their bound.

use std::time::{Duration, Instant};

use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::server::txn::row_key::MAX_KEYS_PER_STATEMENT;
use spanprof::server::{KnobSettings, LocalInstance};
use tonic::Code;
use tonic::transport::Channel;

use crate::client::DATABASE;
use crate::read_write::instance;

async fn connection(server: &LocalInstance) -> SpannerClient<Channel> {
    let channel = Channel::from_shared(format!("http://{}", server.host_port()))
        .expect("a valid URI")
        .connect()
        .await
        .expect("connects");
    SpannerClient::new(channel)
}

async fn session(client: &mut SpannerClient<Channel>) -> String {
    let request = pb::CreateSessionRequest {
        database: DATABASE.into(),
        session: None,
    };
    client
        .create_session(request)
        .await
        .expect("a session")
        .into_inner()
        .name
}

/// Begins a pessimistic read-write transaction.
async fn begin(
    client: &mut SpannerClient<Channel>,
    session: &str,
) -> Result<Vec<u8>, tonic::Status> {
    let options = pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(
            pb::transaction_options::ReadWrite {
                read_lock_mode: 1,
                multiplexed_session_previous_transaction_id: Vec::new(),
            },
        )),
        ..Default::default()
    };
    let request = pb::BeginTransactionRequest {
        session: session.into(),
        options: Some(options),
        ..Default::default()
    };
    Ok(client.begin_transaction(request).await?.into_inner().id)
}

async fn run(
    client: &mut SpannerClient<Channel>,
    session: &str,
    id: &[u8],
    sql: &str,
    seqno: i64,
) -> Result<pb::ResultSet, tonic::Status> {
    let request = pb::ExecuteSqlRequest {
        session: session.into(),
        transaction: Some(pb::TransactionSelector {
            selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
        }),
        sql: sql.into(),
        seqno,
        ..Default::default()
    };
    Ok(client.execute_sql(request).await?.into_inner())
}

#[tokio::test(flavor = "multi_thread")]
async fn locks_never_let_go_are_reaped_and_a_waiter_behind_them_waits_a_bounded_time() {
    let server = instance(KnobSettings {
        transaction_idle_timeout_ms: 400,
        ..KnobSettings::default()
    })
    .await;
    let mut client = connection(&server).await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    // The hostile one reads row 9 and is never heard from again.
    let squatter = begin(&mut client, &a).await.expect("begins");
    let read = "SELECT Balance FROM Accounts WHERE AccountId = 9";
    run(&mut client, &a, &squatter, read, 1)
        .await
        .expect("reads");
    assert_eq!(server.locks().entries(), 1, "one row's ReaderShared");
    // A younger writer of row 9 waits for it, at most the limit, then aborts.
    let writer = begin(&mut client, &b).await.expect("begins");
    let update = "UPDATE Accounts SET Balance = 0 WHERE AccountId = 9";
    run(&mut client, &b, &writer, update, 1)
        .await
        .expect("writes");
    let started = Instant::now();
    let commit = pb::CommitRequest {
        session: b.clone(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(writer)),
        ..Default::default()
    };
    let outcome = client.commit(commit).await;
    let waited = started.elapsed();
    // Either the reaper ended the squatter first (the commit goes ahead) or the wait's own bound
    // ended it (ABORTED): both within the limit and a little.
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    match outcome {
        Ok(_) => assert!(
            waited >= Duration::from_millis(200),
            "it waited: {waited:?}"
        ),
        Err(status) => assert_eq!(status.code(), Code::Aborted, "{status:?}"),
    }
    // The squatter's locks are gone with it, and the lock table holds nothing.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _ = begin(&mut client, &a)
        .await
        .expect("a begin runs the reaper");
    assert_eq!(server.locks().entries(), 0, "nothing left held");
    let gone = run(&mut client, &a, &squatter, read, 2)
        .await
        .expect_err("the squatter was reaped");
    assert_eq!(gone.code(), Code::Aborted, "{gone:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_of_any_width_takes_a_bounded_number_of_entries() {
    let server = instance(KnobSettings::default()).await;
    let mut client = connection(&server).await;
    let a = session(&mut client).await;
    let id = begin(&mut client, &a).await.expect("begins");
    // A scan over a range wider than the table is one range entry.
    let wide = "SELECT COUNT(*) FROM Accounts WHERE AccountId BETWEEN -9223372036854775807 \
                AND 9223372036854775806";
    run(&mut client, &a, &id, wide, 1).await.expect("scans");
    assert_eq!(server.locks().entries(), 1, "one range, whatever its width");
    // A list of more keys than a statement names one by one locks its table whole: one entry.
    let keys: Vec<String> = (0..=MAX_KEYS_PER_STATEMENT as i64)
        .map(|k| k.to_string())
        .collect();
    let many = format!(
        "SELECT COUNT(*) FROM Accounts WHERE AccountId IN ({})",
        keys.join(",")
    );
    let second = begin(&mut client, &a).await.expect("begins");
    let started = Instant::now();
    run(&mut client, &a, &second, &many, 1)
        .await
        .expect("reads a long list");
    assert!(
        server.locks().entries() <= 2,
        "its table whole, not {} keys: {} entries",
        keys.len(),
        server.locks().entries()
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread")]
async fn open_transactions_stop_at_their_bound_and_their_locks_with_them() {
    let server = instance(KnobSettings {
        max_read_write_transactions: 20,
        ..KnobSettings::default()
    })
    .await;
    let mut client = connection(&server).await;
    let a = session(&mut client).await;
    let mut open = Vec::new();
    for n in 0..20 {
        let id = begin(&mut client, &a).await.expect("within the bound");
        let read = format!("SELECT Balance FROM Accounts WHERE AccountId = {}", n + 1);
        run(&mut client, &a, &id, &read, 1).await.expect("reads");
        open.push(id);
    }
    let refused = begin(&mut client, &a).await.expect_err("past the bound");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(server.locks().entries(), 20);
    for id in open {
        let request = pb::RollbackRequest {
            session: a.clone(),
            transaction_id: id,
        };
        client.rollback(request).await.expect("rolls back");
    }
    assert_eq!(server.locks().entries(), 0, "a rollback lets its locks go");
}
