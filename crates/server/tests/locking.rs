//! The local instance's lock table on the request path, through a real tonic client: two
//! pessimistic transactions of known ages on one row (the older commits, the younger is wounded,
//! in the answers and in the journal), a retry on the same session keeping its age, and a lock
//! wait reported as the journal has it; and Read's lock hint: EXCLUSIVE read-modify-writes of one
//! row queue where shared ones wound (`locking/hints.rs`).

use std::time::Duration;

use spanprof_model::report::{LockWaitSeen, WoundSeen};
use spanprof_server::server::txn::journal::EventKind;
use spanprof_server::server::txn::lock_key::TxnId;
use spanprof_server::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::execute_sql_request::QueryMode;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof_wire::proto::google::spanner::v1::transaction_options::read_write::ReadLockMode;
use spanprof_wire::wire::result_stats::{
    COMMIT_LOCK_WAIT_HEADER, COMMIT_LOCK_WAITS_HEADER, QueryStats, WOUNDED_BY_TRAILER,
};
use tonic::Code;
use tonic::transport::Channel;

#[path = "locking/hints.rs"]
mod hints;

const DATABASE: &str = "projects/p/instances/i/databases/d";

async fn start() -> (LocalInstance, SpannerClient<Channel>) {
    let config = ServerConfig {
        seed23_rows: 1_000,
        knobs: KnobSettings::default(),
        ..ServerConfig::default()
    };
    let instance = LocalInstance::start(config).await.expect("starts");
    let channel = Channel::from_shared(format!("http://{}", instance.host_port()))
        .expect("a URI")
        .connect()
        .await
        .expect("connects");
    (instance, SpannerClient::new(channel))
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

/// Begins a pessimistic read-write transaction in `session`.
async fn begin(client: &mut SpannerClient<Channel>, session: &str) -> Vec<u8> {
    begin_in(client, session, ReadLockMode::Pessimistic).await
}

/// Begins a read-write transaction in `session` whose reads lock as `mode` says.
async fn begin_in(
    client: &mut SpannerClient<Channel>,
    session: &str,
    mode: ReadLockMode,
) -> Vec<u8> {
    let options = pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(
            pb::transaction_options::ReadWrite {
                read_lock_mode: mode as i32,
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
    client
        .begin_transaction(request)
        .await
        .expect("begins")
        .into_inner()
        .id
}

/// Runs `sql` in transaction `id` with statistics: its answer.
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
        query_mode: QueryMode::Profile as i32,
        ..Default::default()
    };
    Ok(client.execute_sql(request).await?.into_inner())
}

/// Commits transaction `id`: its answer and the lock wait its header gives (the waits it names
/// are checked against it).
async fn commit(
    mut client: SpannerClient<Channel>,
    session: String,
    id: Vec<u8>,
) -> Result<(pb::CommitResponse, Duration, Vec<LockWaitSeen>), tonic::Status> {
    let request = pb::CommitRequest {
        session,
        transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
        ..Default::default()
    };
    let answer = client.commit(request).await?;
    let (waited, named) = header_waits(answer.metadata());
    let waited = waited.expect("the local instance says how long the commit waited for locks");
    let named_ms: f64 = named.iter().map(|w| w.ms).sum();
    assert!(
        (named_ms - waited.as_secs_f64() * 1e3).abs() < 0.01,
        "the waits named add up to the wait: {named:?} against {waited:?}"
    );
    Ok((answer.into_inner(), waited, named))
}

/// The wait for locks `headers` give (`spanprof-lock-wait-us`; none when absent) and the waits
/// they name (`spanprof-lock-waits`).
fn header_waits(headers: &tonic::metadata::MetadataMap) -> (Option<Duration>, Vec<LockWaitSeen>) {
    let waited = headers
        .get(COMMIT_LOCK_WAIT_HEADER)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .map(Duration::from_micros);
    let named = headers
        .get(COMMIT_LOCK_WAITS_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|t| serde_json::from_str(t).expect("the waits as JSON"))
        .unwrap_or_default();
    (waited, named)
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn lock_id(id: &[u8]) -> TxnId {
    TxnId(u64::from_be_bytes(id.try_into().expect("eight bytes")))
}

const READ_7: &str = "SELECT Balance FROM Accounts WHERE AccountId = 7";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_older_commits_and_the_younger_waiting_on_it_is_wounded_and_keeps_its_age() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let old = begin(&mut client, &a).await;
    run(&mut client, &a, &old, READ_7, 1).await.expect("reads");
    let young = begin(&mut client, &b).await;
    run(&mut client, &b, &young, READ_7, 1)
        .await
        .expect("reads too: ReaderShared is shared");
    let add_one = "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 7";
    run(&mut client, &b, &young, add_one, 2)
        .await
        .expect("writes");
    // The younger's commit asks Exclusive on the row the older reads: it waits.
    let waiting = tokio::spawn(commit(client.clone(), b.clone(), young.clone()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "the younger waits for the older's lock"
    );
    let add_ten = "UPDATE Accounts SET Balance = Balance + 10 WHERE AccountId = 7";
    run(&mut client, &a, &old, add_ten, 2)
        .await
        .expect("writes");
    let (_, old_waited, _) = commit(client.clone(), a.clone(), old.clone())
        .await
        .expect("the older commits");
    let wounded = waiting
        .await
        .expect("joins")
        .expect_err("the younger is wounded");
    assert_eq!(wounded.code(), Code::Aborted, "{wounded:?}");
    assert!(wounded.message().contains("wounded"), "{wounded:?}");
    // Who wounded it, on what: the trailer names the older transaction by its id.
    let by: WoundSeen = wounded
        .metadata()
        .get(WOUNDED_BY_TRAILER)
        .and_then(|v| v.to_str().ok())
        .and_then(|t| serde_json::from_str(t).ok())
        .expect("the wound, named");
    assert_eq!(by.by, hex(&old));
    // A write of the Balance cell, asked at commit, against the younger's read of the row.
    assert_eq!(
        (by.key.as_str(), by.column.as_deref(), by.mode.as_str()),
        ("accounts(7)", Some("balance"), "WriterShared")
    );
    let after = begin(&mut client, &a).await;
    let read = run(&mut client, &a, &after, READ_7, 1)
        .await
        .expect("reads");
    assert_eq!(
        read.rows[0].values[0].kind,
        Some(prost_types::value::Kind::StringValue("1010".into())),
        "only the older's write landed"
    );
    // Its retry on the same session keeps the wounded attempt's age.
    let retry = begin(&mut client, &b).await;
    run(&mut client, &b, &retry, READ_7, 1)
        .await
        .expect("reads");
    let (old_id, young_id, retry_id) = (lock_id(&old), lock_id(&young), lock_id(&retry));
    instance.locks().journal(|journal| {
        let wounds: Vec<(TxnId, TxnId)> = journal
            .events()
            .filter_map(|e| match e.kind {
                EventKind::Wound { by, victim, .. } => Some((by, victim)),
                _ => None,
            })
            .collect();
        assert_eq!(wounds, [(old_id, young_id)]);
        let began = |txn: TxnId| {
            journal
                .events()
                .find_map(|e| match &e.kind {
                    EventKind::Begun {
                        txn: t,
                        previous,
                        age,
                        ..
                    } if *t == txn => Some((*previous, *age)),
                    _ => None,
                })
                .expect("begun")
        };
        let (_, old_age) = began(old_id);
        let (_, young_age) = began(young_id);
        assert!(old_age < young_age, "ages by first read");
        assert_eq!(began(retry_id), (Some(young_id), young_age));
        // What the older's commit waited is what the journal has for it.
        let journalled: Duration = journal
            .waits_of(old_id)
            .iter()
            .map(|w| w.duration(w.started))
            .sum();
        let gap = old_waited.abs_diff(journalled);
        assert!(
            gap <= Duration::from_millis(1),
            "{old_waited:?} against {journalled:?}"
        );
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_waits_for_a_committing_writer_and_reports_the_wait_as_lock_wait_time() {
    let (instance, mut client) = start().await;
    let (a, b) = (session(&mut client).await, session(&mut client).await);
    let older = begin(&mut client, &a).await;
    run(&mut client, &a, &older, READ_7, 1)
        .await
        .expect("reads");
    let younger = begin(&mut client, &b).await;
    run(&mut client, &b, &younger, READ_7, 1)
        .await
        .expect("reads");
    // The younger's write must wait for the older's read lock; the older never commits, and
    // rolls back after 300 ms: the younger's commit then goes ahead.
    run(
        &mut client,
        &b,
        &younger,
        "UPDATE Accounts SET Balance = 5 WHERE AccountId = 7",
        2,
    )
    .await
    .expect("writes");
    let committing = tokio::spawn(commit(client.clone(), b.clone(), younger.clone()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    client
        .rollback(pb::RollbackRequest {
            session: a.clone(),
            transaction_id: older.clone(),
        })
        .await
        .expect("rolls back");
    let (_, waited, named) = committing.await.expect("joins").expect("commits");
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0].key, "accounts(7)");
    assert_eq!(
        named[0].holders,
        [hex(&older)],
        "it waited behind the older"
    );
    let journalled: Duration = instance.locks().journal(|j| {
        j.waits_of(lock_id(&younger))
            .iter()
            .map(|w| w.duration(w.started))
            .sum()
    });
    assert!(waited.abs_diff(journalled) <= Duration::from_millis(1));
    // A statement's wait is its lock_wait_time.
    let third = begin(&mut client, &a).await;
    run(&mut client, &a, &third, READ_7, 1)
        .await
        .expect("reads");
    let fourth = begin(&mut client, &b).await;
    let stats = run(&mut client, &b, &fourth, READ_7, 1)
        .await
        .expect("reads")
        .stats;
    let lock_wait = query_stats(stats.as_ref())
        .and_then(|s| s.lock_wait)
        .expect("lock_wait_time");
    assert_eq!(lock_wait, Duration::ZERO, "readers share");
}

/// `query_stats` as text, parsed as spanprof's client parses it.
fn query_stats(stats: Option<&pb::ResultSetStats>) -> Option<QueryStats> {
    let fields = &stats?.query_stats.as_ref()?.fields;
    let entries = fields
        .iter()
        .filter_map(|(k, v)| match &v.kind {
            Some(prost_types::value::Kind::StringValue(s)) => Some((k.clone(), s.clone())),
            _ => None,
        })
        .collect();
    Some(QueryStats::from_entries(entries))
}
