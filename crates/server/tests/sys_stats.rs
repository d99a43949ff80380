//! SPANNER_SYS's lock and transaction statistics on the local instance, through a real tonic
//! client: two transactions conflict on one row of the lock table (the younger waits for the
//! older's commit), the one-second "minute" closes, and LOCK_STATS_TOP_MINUTE, LOCK_STATS_TOTAL_
//! MINUTE and TXN_STATS_TOP_MINUTE, queried in single-use transactions, say what the journal holds;
//! the tables are filtered, aggregated and typed as production's, and nothing else of SPANNER_SYS
//! is readable.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use spanprof_server::server::txn::journal::WaitEnd;
use spanprof_server::server::txn::lock_key::{Age, LockKey, LockMode, RowKey, TxnId};
use spanprof_server::server::txn::locks::{LockTable, TxnEnd, TxnInfo};
use spanprof_server::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof_wire::wire::Timestamp;
use tonic::transport::Channel;

const DATABASE: &str = "projects/p/instances/i/databases/d";

async fn start() -> (LocalInstance, SpannerClient<Channel>, String) {
    let config = ServerConfig {
        seed23_rows: 1_000,
        knobs: KnobSettings {
            stats_interval_ms: 1_000,
            ..KnobSettings::default()
        },
        ..ServerConfig::default()
    };
    let instance = LocalInstance::start(config).await.expect("starts");
    let channel = Channel::from_shared(format!("http://{}", instance.host_port()))
        .expect("a URI")
        .connect()
        .await
        .expect("connects");
    let mut client = SpannerClient::new(channel);
    let session = client
        .create_session(pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        })
        .await
        .expect("a session")
        .into_inner()
        .name;
    (instance, client, session)
}

/// Runs `sql` in a single-use read-only transaction (ExecuteSql's default).
async fn query(
    client: &mut SpannerClient<Channel>,
    session: &str,
    sql: &str,
) -> Result<pb::ResultSet, tonic::Status> {
    let request = pb::ExecuteSqlRequest {
        session: session.into(),
        sql: sql.into(),
        ..Default::default()
    };
    Ok(client.execute_sql(request).await?.into_inner())
}

fn info(id: u64, tag: &str, age_ms: u64) -> TxnInfo {
    TxnInfo {
        id: TxnId(id),
        previous: None,
        age: Age(Duration::from_millis(age_ms)),
        session: "s".into(),
        tag: tag.into(),
        optimistic: false,
    }
}

/// The older transaction holds Accounts(1) Exclusive; the younger asks for it, waits about
/// 300 ms until the older commits, then commits itself. Returns the wait's length, from the journal.
async fn conflict(locks: &Arc<LockTable>) -> Duration {
    let row = LockKey::row("accounts", RowKey::ints(&[1]));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    locks.begin(info(1, "older", 0)).expect("begins");
    locks.begin(info(2, "younger", 1)).expect("begins");
    locks
        .acquire(TxnId(1), row.clone(), LockMode::Exclusive, deadline)
        .await
        .expect("granted at once");
    let waiter = {
        let locks = Arc::clone(locks);
        tokio::spawn(async move {
            locks
                .acquire(TxnId(2), row, LockMode::WriterShared, deadline)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    locks.release_all(TxnId(1), TxnEnd::Committed { timestamp: 1 });
    let granted = waiter.await.expect("joins").expect("granted");
    assert!(granted.waited() >= Duration::from_millis(250));
    locks.release_all(TxnId(2), TxnEnd::Committed { timestamp: 2 });
    let waits = locks.journal(|j| j.waits());
    assert_eq!(waits.len(), 1);
    assert!(matches!(waits[0].ended, Some((_, WaitEnd::Granted))));
    waits[0].duration(Duration::ZERO)
}

fn number(value: &prost_types::Value) -> f64 {
    match &value.kind {
        Some(prost_types::value::Kind::NumberValue(n)) => *n,
        other => panic!("not a number: {other:?}"),
    }
}

fn text(value: &prost_types::Value) -> &str {
    match &value.kind {
        Some(prost_types::value::Kind::StringValue(s)) => s,
        other => panic!("not a string: {other:?}"),
    }
}

fn type_codes(answer: &pb::ResultSet) -> Vec<i32> {
    let fields = &answer
        .metadata
        .as_ref()
        .and_then(|m| m.row_type.as_ref())
        .expect("a row type")
        .fields;
    fields
        .iter()
        .map(|f| f.r#type.as_ref().map_or(0, |t| t.code))
        .collect()
}

#[tokio::test]
async fn lock_stats_top_minute_says_the_row_and_the_wait_the_journal_holds_once_the_minute_closed()
{
    let (instance, mut client, session) = start().await;
    let waited = conflict(instance.locks()).await;
    let top = "SELECT INTERVAL_END, ROW_RANGE_START_KEY, LOCK_WAIT_SECONDS, SAMPLE_LOCK_REQUESTS \
               FROM SPANNER_SYS.LOCK_STATS_TOP_MINUTE ORDER BY INTERVAL_END";
    // Only closed intervals are shown: none ends after now.
    let early = query(&mut client, &session, top).await.expect("runs");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64();
    for row in &early.rows {
        let end = Timestamp::parse(text(&row.values[0])).expect("a TIMESTAMP");
        assert!((end.seconds() as f64) <= now, "{end} is after {now}");
    }
    // Every interval it touched closes within a second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let answer = query(&mut client, &session, top).await.expect("runs");
    let (float, timestamp, bytes, array) = (3, 4, 7, 8);
    assert_eq!(type_codes(&answer), [timestamp, bytes, float, array]);
    assert!(
        !answer.rows.is_empty() && answer.rows.len() <= 2,
        "{answer:?}"
    );
    let mut seconds = 0.0;
    for row in &answer.rows {
        let key = base64::engine::general_purpose::STANDARD
            .decode(text(&row.values[1]))
            .expect("BYTES travel as base64");
        assert_eq!(key, b"Accounts(1)", "the schema's spelling, one row");
        seconds += number(&row.values[2]);
        assert!(text(&row.values[0]).ends_with('Z'));
    }
    assert!(
        (seconds - waited.as_secs_f64()).abs() < 1e-6,
        "{seconds} s against the journal's {waited:?}"
    );
    let samples = format!("{:?}", answer.rows[0].values[3]);
    for word in [
        "accounts._exists",
        "WriterShared",
        "Exclusive",
        "younger",
        "older",
    ] {
        assert!(samples.contains(word), "{word} in {samples}");
    }
    let total = query(
        &mut client,
        &session,
        "SELECT SUM(TOTAL_LOCK_WAIT_SECONDS) FROM SPANNER_SYS.LOCK_STATS_TOTAL_MINUTE",
    )
    .await
    .expect("runs");
    assert!((number(&total.rows[0].values[0]) - seconds).abs() < 1e-9);
    instance.stop(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_statistics_tables_are_filtered_aggregated_and_nothing_else_of_spanner_sys_is_read() {
    let (instance, mut client, session) = start().await;
    conflict(instance.locks()).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let latest = query(
        &mut client,
        &session,
        "SELECT COUNT(*) FROM spanner_sys.lock_stats_top_minute WHERE interval_end = \
         (SELECT MAX(interval_end) FROM spanner_sys.lock_stats_top_minute)",
    )
    .await
    .expect("runs");
    assert_eq!(text(&latest.rows[0].values[0]), "1");
    let txns = query(
        &mut client,
        &session,
        "SELECT TRANSACTION_TAG, SUM(ATTEMPT_COUNT), SUM(COMMIT_ABORT_COUNT) \
         FROM SPANNER_SYS.TXN_STATS_TOP_MINUTE GROUP BY TRANSACTION_TAG ORDER BY TRANSACTION_TAG",
    )
    .await
    .expect("runs");
    let tags: Vec<(&str, &str, &str)> = txns
        .rows
        .iter()
        .map(|r| (text(&r.values[0]), text(&r.values[1]), text(&r.values[2])))
        .collect();
    assert_eq!(tags, [("older", "1", "0"), ("younger", "1", "0")]);
    // The ten-"minute" interval has not closed yet (10 s): its table is there, and empty.
    let ten = query(
        &mut client,
        &session,
        "SELECT * FROM SPANNER_SYS.LOCK_STATS_TOP_10MINUTE",
    )
    .await
    .expect("runs");
    assert!(
        ten.rows.len() <= 1,
        "at most the one closed since the start"
    );
    // As `spanprof profile` asks: PROFILE mode, with a plan and statistics.
    let profiled = client
        .execute_sql(pb::ExecuteSqlRequest {
            session: session.clone(),
            sql: "SELECT * FROM SPANNER_SYS.LOCK_STATS_TOP_MINUTE".into(),
            query_mode: pb::execute_sql_request::QueryMode::Profile as i32,
            ..Default::default()
        })
        .await
        .expect("profiles")
        .into_inner();
    assert!(
        (1..=2).contains(&profiled.rows.len()),
        "the wait's one or two intervals"
    );
    assert!(profiled.stats.is_some_and(|s| s.query_plan.is_some()));
    let refused = query(
        &mut client,
        &session,
        "SELECT * FROM spanner_sys.sqlite_master",
    )
    .await
    .expect_err("only the statistics tables are readable");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("sqlite_master"), "{refused:?}");
    instance.stop(Duration::from_secs(1)).await;
}

/// The official Python client (google-cloud-spanner), which nobody here wrote, reads
/// LOCK_STATS_TOP_MINUTE in a snapshot: the row, the wait and the samples the journal holds.
/// `#[ignore]`d: run with `--include-ignored` and SPANPROF_PYTHON pointing at a Python with the
/// client installed (`scripts/test` sets it up); it fails loudly without one.
#[tokio::test]
#[ignore]
async fn the_official_python_client_reads_the_lock_statistics() {
    let python = match std::env::var("SPANPROF_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!("SPANPROF_PYTHON is not set: point it at a Python with google-cloud-spanner"),
    };
    let (instance, _client, _session) = start().await;
    let waited = conflict(instance.locks()).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/python/read_sys_stats.py"
    );
    let child = std::process::Command::new(python)
        .arg(script)
        .env("SPANNER_EMULATOR_HOST", instance.host_port())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await
    .expect("the client finishes in time")
    .expect("joins")
    .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed: {stderr}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();
    assert!(!rows.is_empty() && rows.len() <= 2, "{rows:?} {stderr}");
    let seconds: f64 = rows
        .iter()
        .map(|r| r["lock_wait_seconds"].as_f64().expect("a FLOAT64"))
        .sum();
    assert!((seconds - waited.as_secs_f64()).abs() < 1e-6, "{rows:?}");
    for row in &rows {
        assert_eq!(row["row_range_start_key"], "Accounts(1)");
        assert!(
            row["interval_end"]
                .as_str()
                .is_some_and(|t| t.ends_with("+00:00")),
            "a UTC TIMESTAMP: {row}"
        );
        let samples = row["samples"].to_string();
        assert!(samples.contains("\"WriterShared\""), "{samples}");
        assert!(samples.contains("\"younger\""), "{samples}");
    }
    instance.stop(Duration::from_secs(1)).await;
}

/// Begins a pessimistic read-write transaction tagged `tag` in `session`.
async fn begin_tagged(client: &mut SpannerClient<Channel>, session: &str, tag: &str) -> Vec<u8> {
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
        request_options: Some(pb::RequestOptions {
            transaction_tag: tag.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    client
        .begin_transaction(request)
        .await
        .expect("begins")
        .into_inner()
        .id
}

/// Runs `sql` in transaction `id`.
async fn run_in(
    client: &mut SpannerClient<Channel>,
    (session, id, tag): (&str, &[u8], &str),
    sql: &str,
    seqno: i64,
) -> pb::ResultSet {
    let request = pb::ExecuteSqlRequest {
        session: session.into(),
        transaction: Some(pb::TransactionSelector {
            selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
        }),
        sql: sql.into(),
        seqno,
        request_options: Some(pb::RequestOptions {
            transaction_tag: tag.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    client
        .execute_sql(request)
        .await
        .expect("runs")
        .into_inner()
}

async fn new_session(client: &mut SpannerClient<Channel>) -> String {
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

/// Two read-write transactions through gRPC conflict on Accounts(7): the older reads it, the
/// younger reads it, writes it and commits, waiting for the older's read lock until the older
/// rolls back 300 ms later. Once the one-second "minute" has closed, LOCK_STATS_TOP_MINUTE says
/// the row and the journal's wait, and TXN_STATS_TOP_MINUTE the two tags' attempts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conflicting_read_write_transactions_show_in_the_lock_and_transaction_statistics() {
    let (instance, mut client, _) = start().await;
    let (a, b) = (
        new_session(&mut client).await,
        new_session(&mut client).await,
    );
    const READ: &str = "SELECT Balance FROM Accounts WHERE AccountId = 7";
    let older = begin_tagged(&mut client, &a, "reader").await;
    run_in(&mut client, (&a, &older, "reader"), READ, 1).await;
    let younger = begin_tagged(&mut client, &b, "writer").await;
    run_in(&mut client, (&b, &younger, "writer"), READ, 1).await;
    let write = "UPDATE Accounts SET Balance = 5 WHERE AccountId = 7";
    run_in(&mut client, (&b, &younger, "writer"), write, 2).await;
    let committing = {
        let (mut client, b, younger) = (client.clone(), b.clone(), younger.clone());
        tokio::spawn(async move {
            let request = pb::CommitRequest {
                session: b,
                transaction: Some(pb::commit_request::Transaction::TransactionId(younger)),
                ..Default::default()
            };
            client.commit(request).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    client
        .rollback(pb::RollbackRequest {
            session: a.clone(),
            transaction_id: older.clone(),
        })
        .await
        .expect("rolls back");
    committing.await.expect("joins").expect("commits");
    let waited: Duration = instance
        .locks()
        .journal(|j| j.waits().iter().map(|w| w.duration(w.started)).sum());
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let locks = query(
        &mut client,
        &a,
        "SELECT ROW_RANGE_START_KEY, SUM(LOCK_WAIT_SECONDS) \
         FROM SPANNER_SYS.LOCK_STATS_TOP_MINUTE GROUP BY ROW_RANGE_START_KEY",
    )
    .await
    .expect("runs");
    assert_eq!(locks.rows.len(), 1, "{locks:?}");
    let key = base64::engine::general_purpose::STANDARD
        .decode(text(&locks.rows[0].values[0]))
        .expect("base64");
    assert_eq!(key, b"Accounts(7)");
    let seconds = number(&locks.rows[0].values[1]);
    assert!(
        (seconds - waited.as_secs_f64()).abs() < 1e-6,
        "{seconds} s against the journal's {waited:?}"
    );
    let txns = query(
        &mut client,
        &a,
        "SELECT TRANSACTION_TAG, SUM(ATTEMPT_COUNT), SUM(COMMIT_ATTEMPT_COUNT) \
         FROM SPANNER_SYS.TXN_STATS_TOP_MINUTE GROUP BY TRANSACTION_TAG ORDER BY TRANSACTION_TAG",
    )
    .await
    .expect("runs");
    let tags: Vec<(&str, &str, &str)> = txns
        .rows
        .iter()
        .map(|r| (text(&r.values[0]), text(&r.values[1]), text(&r.values[2])))
        .collect();
    assert_eq!(
        tags,
        [("reader", "1", "0"), ("writer", "1", "1")],
        "the rollback is no commit attempt"
    );
    instance.stop(Duration::from_secs(1)).await;
}
