//! The built-in local instance, exercised over real gRPC on a loopback port.

use prost::Message as _;
use spanprof::demo;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof::wire::{Row, Type, Value};
use tonic::Code;

use crate::client::{TestClient, with_params};
use crate::support::s;

/// A local instance with `rows` Seed23 rows and `knobs`, on a free loopback port.
pub async fn start(rows: u64, knobs: KnobSettings) -> LocalInstance {
    LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: rows,
        knobs,
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts")
}

fn small_messages(max: u64) -> KnobSettings {
    KnobSettings {
        max_message_bytes: max,
        ..KnobSettings::default()
    }
}

fn canonical(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|r| r.to_canonical_json().to_string())
        .collect()
}

fn seed23_rows(ids: impl Iterator<Item = i64>) -> Vec<Row> {
    ids.map(|id| Row(demo::seed23::row(id))).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn seed23_in_1_kib_messages_decodes_to_the_stored_rows() {
    let instance = start(1000, small_messages(1024)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let got = client
        .query("SELECT * FROM Seed23 WHERE Id <= 300")
        .await
        .expect("the query runs");
    assert_eq!(canonical(&got.rows), canonical(&seed23_rows(1..=300)));
    let table = demo::seed23::table();
    let types: Vec<&Type> = got.columns.iter().map(|c| &c.ty).collect();
    let want: Vec<&Type> = table.columns.iter().map(|c| &c.ty).collect();
    assert_eq!(types, want, "metadata carries the Spanner types");
    assert!(got.messages.len() > 300, "{} messages", got.messages.len());
    for (i, m) in got.messages.iter().enumerate() {
        // The metadata of the first message and the stats of the last may exceed the data budget.
        let slack = if i == 0 { 2048 } else { 0 };
        assert!(
            m.encoded_len() <= 1024 + slack,
            "message {i}: {} bytes",
            m.encoded_len()
        );
        assert!(
            !m.resume_token.is_empty(),
            "message {i} has no resume token"
        );
        // The columns come with the first message only; the production shape (the default) leaves
        // the field out of every later one, as Google's front end does.
        if i == 0 {
            assert!(
                m.metadata
                    .as_ref()
                    .and_then(|md| md.row_type.as_ref())
                    .is_some_and(|t| !t.fields.is_empty()),
                "message 0 carries the columns"
            );
        } else {
            assert_eq!(m.metadata, None, "message {i}");
        }
    }
    let chunked = got.messages.iter().filter(|m| m.chunked_value).count();
    assert!(chunked > got.messages.len() / 2, "{chunked} chunked");
    assert!(got.messages.last().is_some_and(|m| m.last));
}

#[tokio::test(flavor = "multi_thread")]
async fn blobs_up_to_8_mib_in_1_kib_messages_decode_to_the_stored_bytes() {
    let instance = start(10, small_messages(1024)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let got = client
        .query("SELECT * FROM Blobs ORDER BY Id")
        .await
        .expect("the query runs");
    let want: Vec<Row> = demo::blobs::ids()
        .filter_map(demo::blobs::row)
        .map(Row)
        .collect();
    assert_eq!(got.rows.len(), want.len());
    assert_eq!(got.rows, want);
    let biggest = got
        .rows
        .iter()
        .flat_map(|r| r.values())
        .filter_map(|v| match v {
            Value::Bytes(b) => Some(b.len()),
            _ => None,
        })
        .max();
    assert_eq!(biggest, Some(8 << 20));
    assert!(got.counters.messages > 16_000, "{:?}", got.counters);
}

#[tokio::test(flavor = "multi_thread")]
async fn injected_faults_are_resumed_with_every_row_exactly_once() {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    };
    let instance = start(5000, knobs).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let got = client
        .query("SELECT * FROM Seed23 LIMIT 2000")
        .await
        .expect("the query survives the faults");
    assert!(got.resumes > 10, "{} resumes", got.resumes);
    let ids: Vec<i64> = got
        .rows
        .iter()
        .map(|r| match r.values()[0] {
            Value::Int64(id) => id,
            ref other => panic!("Id is {other:?}"),
        })
        .collect();
    assert_eq!(ids, (1..=2000).collect::<Vec<_>>());
    assert_eq!(canonical(&got.rows), canonical(&seed23_rows(1..=2000)));
}

/// The stream was held for its resume only after the client had been told of the fault: a client
/// quick to resume found nothing held, the query ran again, and the held stream was left over until
/// its time limit (20 official clients at once saw it once, on CI). Many clients at once widen the
/// window; it needs the server's task preempted between the two steps, so it shows only under load.
#[tokio::test(flavor = "multi_thread")]
async fn a_faulted_stream_is_held_before_its_client_hears_of_the_fault() {
    let knobs = KnobSettings {
        max_message_bytes: 4096,
        fail_every: 2,
        ..KnobSettings::default()
    };
    let instance = start(1000, knobs).await;
    let host = instance.host_port();
    let clients: Vec<_> = (0..16)
        .map(|_| tokio::spawn(resume_at_once_through_every_fault(host.clone())))
        .collect();
    let mut faults = 0;
    for client in clients {
        faults += client.await.expect("the client runs");
    }
    assert!(faults > 16 * 20, "{faults} faults");
    let held = instance.occupancy();
    assert_eq!(
        (held.parked_streams, held.queries),
        (0, 0),
        "every resume found its stream held: none is left over"
    );
}

/// Reads `SELECT * FROM Seed23 LIMIT 500`, resuming the moment a fault arrives; returns the faults.
async fn resume_at_once_through_every_fault(host: String) -> u32 {
    let mut client = TestClient::connect(&host).await;
    let mut request = client.request("SELECT * FROM Seed23 LIMIT 500");
    let mut faults = 0;
    loop {
        let mut stream = client
            .client
            .execute_streaming_sql(request.clone())
            .await
            .expect("starts")
            .into_inner();
        loop {
            match stream.message().await {
                Ok(Some(msg)) => request.resume_token = msg.resume_token,
                Ok(None) => return faults,
                Err(status) => {
                    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                    faults += 1;
                    break;
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_from_another_query_is_refused() {
    let instance = start(100, small_messages(1024)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let first = client.query("SELECT * FROM Seed23").await.expect("runs");
    let mut other = client.request("SELECT Name FROM Seed23");
    other.resume_token = first.messages[3].resume_token.clone();
    let err = client.stream(other).await.expect_err("refused");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("another query"), "{}", err.message());
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_errors_are_invalid_argument_with_the_engine_message() {
    let instance = start(100, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let err = client.query("SELEC 1").await.expect_err("bad SQL");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("syntax error"), "{}", err.message());

    let err = client
        .query("SELECT * FROM Nope")
        .await
        .expect_err("unknown table");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("Table not found: Nope"),
        "{}",
        err.message()
    );

    let err = client
        .query("SELECT Nope FROM Singers")
        .await
        .expect_err("unknown column");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("Nope"), "{}", err.message());

    let err = client
        .query("DELETE FROM Singers")
        .await
        .expect_err("a write");
    assert_eq!(err.code(), Code::FailedPrecondition);

    let err = client
        .query("SELECT * FROM Singers WHERE SingerId = @id")
        .await
        .expect_err("a missing parameter");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("id"), "{}", err.message());
}

#[tokio::test(flavor = "multi_thread")]
async fn parameters_expressions_and_types() {
    let instance = start(1000, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let request = with_params(
        client.request("SELECT Id, Name, Tags FROM Seed23 WHERE Id = @id OR Name = @name"),
        &[
            ("id", Type::Int64, s("42")),
            ("name", Type::String, s("nobody at all")),
        ],
    );
    let got = client.stream(request).await.expect("runs");
    assert_eq!(got.rows.len(), 1);
    assert_eq!(got.rows[0].values()[0], Value::Int64(42));
    assert_eq!(got.columns[2].ty, Type::Array(Box::new(Type::String)));

    let got = client
        .query("SELECT COUNT(*) AS n, AVG(Age) AS a, MIN(Country) AS c, NULL AS z FROM Seed23")
        .await
        .expect("runs");
    let types: Vec<Type> = got.columns.iter().map(|c| c.ty.clone()).collect();
    assert_eq!(
        types,
        [Type::Int64, Type::Float64, Type::String, Type::Int64]
    );
    assert_eq!(got.rows[0].values()[0], Value::Int64(1000));

    let got = client
        .query("SELECT s.FirstName, a.AlbumTitle FROM Singers s JOIN Albums a ON s.SingerId = a.SingerId")
        .await
        .expect("a join runs");
    assert_eq!(got.rows.len(), demo::music::album_rows().len());
    assert_eq!(got.columns[0].ty, Type::String);
}

fn with_mode(
    mut request: pb::ExecuteSqlRequest,
    mode: pb::execute_sql_request::QueryMode,
) -> pb::ExecuteSqlRequest {
    request.query_mode = mode as i32;
    request
}

#[tokio::test(flavor = "multi_thread")]
async fn query_modes_return_stats_and_plans_as_production_does() {
    use pb::execute_sql_request::QueryMode;
    let instance = start(2000, small_messages(4096)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let sql = "SELECT Id, Name FROM Seed23 WHERE Id > 500 ORDER BY Name";

    let normal = client.query(sql).await.expect("runs");
    assert!(normal.stats.is_none());

    let with_stats = client
        .stream(with_mode(client.request(sql), QueryMode::WithStats))
        .await
        .expect("runs");
    let stats = with_stats.stats.expect("stats");
    assert_eq!(stats.query_stats.rows_returned, Some(1500));
    assert!(stats.query_stats.rows_scanned >= Some(1500));
    assert!(stats.query_stats.elapsed.is_some() && stats.query_stats.cpu_time.is_some());
    assert!(stats.query_stats.entries["elapsed_time"].ends_with(" msecs"));
    assert_eq!(stats.query_stats.entries["query_text"], sql);
    assert!(stats.plan.is_none());
    let last = with_stats.messages.last().expect("messages");
    assert!(
        last.stats.is_some() && last.last,
        "stats come with the last message"
    );

    let profile = client
        .stream(with_mode(client.request(sql), QueryMode::Profile))
        .await
        .expect("runs");
    assert_eq!(profile.rows.len(), 1500);
    let stats = profile.stats.expect("stats");
    let plan = stats.plan.expect("a plan");
    assert_eq!(plan[0].display_name, "Serialize Result");
    assert!(plan.len() >= 2, "{plan:?}");
    assert!(plan.iter().any(|n| n.display_name == "Sort"), "{plan:?}");
    assert_eq!(plan[0].execution_stats["rows"]["total"], "1500");

    let plan_only = client
        .stream(with_mode(client.request(sql), QueryMode::Plan))
        .await
        .expect("runs");
    assert!(plan_only.rows.is_empty());
    assert!(plan_only.stats.and_then(|s| s.plan).is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_and_read_only_transactions() {
    let instance = start(10, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let batch = |multiplexed| pb::BatchCreateSessionsRequest {
        database: crate::client::DATABASE.into(),
        session_template: Some(pb::Session {
            multiplexed,
            ..Default::default()
        }),
        session_count: 3,
    };
    let regular = client
        .client
        .batch_create_sessions(batch(false))
        .await
        .expect("batch create")
        .into_inner();
    assert_eq!(regular.session.len(), 3);
    assert!(regular.session.iter().all(|s| !s.multiplexed));
    // As production: a multiplexed session comes from CreateSession only.
    let refused = client
        .client
        .batch_create_sessions(batch(true))
        .await
        .expect_err("a multiplexed template is refused");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(
        refused
            .message()
            .contains("Multiplexed sessions may only be created with CreateSession"),
        "{refused:?}"
    );

    let mut gone = client.request("SELECT 1");
    gone.session = format!("{}/sessions/unknown", crate::client::DATABASE);
    assert_eq!(
        client
            .stream(gone)
            .await
            .expect_err("no such session")
            .code(),
        Code::NotFound
    );

    let tx = client
        .client
        .begin_transaction(pb::BeginTransactionRequest {
            session: client.session.clone(),
            options: Some(pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(Default::default())),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("begin")
        .into_inner();
    let mut in_tx = client.request("SELECT COUNT(*) FROM Singers");
    in_tx.transaction = Some(pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Id(tx.id.clone())),
    });
    assert_eq!(client.stream(in_tx).await.expect("runs").rows.len(), 1);

    let read_write = client
        .client
        .begin_transaction(pb::BeginTransactionRequest {
            session: client.session.clone(),
            options: Some(pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("read-write begins")
        .into_inner();
    assert!(!read_write.id.is_empty());
    client
        .client
        .rollback(pb::RollbackRequest {
            session: client.session.clone(),
            transaction_id: read_write.id,
        })
        .await
        .expect("a read-write transaction rolls back");

    client
        .client
        .rollback(pb::RollbackRequest {
            session: client.session.clone(),
            transaction_id: tx.id,
        })
        .await
        .expect("rollback");
    client
        .client
        .delete_session(pb::DeleteSessionRequest {
            name: client.session.clone(),
        })
        .await
        .expect("delete");
    assert_eq!(
        client.query("SELECT 1").await.expect_err("deleted").code(),
        Code::NotFound
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn knobs_change_while_it_runs() {
    let instance = start(500, small_messages(64 * 1024)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let before = client.query("SELECT * FROM Seed23").await.expect("runs");
    let mut knobs = instance.knobs().get();
    knobs.max_message_bytes = 2048;
    knobs.first_byte_delay_ms = 150;
    instance.knobs().set(knobs);
    let started = std::time::Instant::now();
    let after = client.query("SELECT * FROM Seed23").await.expect("runs");
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    assert_eq!(canonical(&before.rows), canonical(&after.rows));
    assert!(
        after.messages.len() > 10 * before.messages.len(),
        "{} then {} messages",
        before.messages.len(),
        after.messages.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unary_execute_sql_returns_the_same_rows() {
    let instance = start(300, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let streamed = client.query("SELECT * FROM Seed23").await.expect("streams");
    let unary = client
        .client
        .execute_sql(client.request("SELECT * FROM Seed23"))
        .await
        .expect("unary")
        .into_inner();
    assert_eq!(unary.rows.len(), 300);
    let metadata = unary.metadata.expect("metadata");
    // Decode the unary rows with the streaming decoder: one message holding every value.
    let msg = pb::PartialResultSet {
        metadata: Some(metadata),
        values: unary.rows.into_iter().flat_map(|r| r.values).collect(),
        ..Default::default()
    };
    let mut decoder = spanprof::wire::StreamDecoder::new();
    let mut rows = Vec::new();
    decoder.feed(msg, &mut rows).expect("decodes");
    assert_eq!(canonical(&rows), canonical(&streamed.rows));
}

/// A client that walks away mid-stream and comes back later with a token: nothing was parked for it,
/// so the server replays the query up to the token and continues right after it.
#[tokio::test(flavor = "multi_thread")]
async fn a_later_resume_continues_right_after_the_token() {
    let instance = start(3000, small_messages(8 * 1024)).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let whole = client
        .query("SELECT * FROM Seed23 LIMIT 1500")
        .await
        .expect("runs");
    for cut in [1, 7, whole.messages.len() / 2, whole.messages.len() - 2] {
        let mut stream = client
            .client
            .execute_streaming_sql(client.request("SELECT * FROM Seed23 LIMIT 1500"))
            .await
            .expect("starts")
            .into_inner();
        let mut first_part = Vec::new();
        while first_part.len() < cut {
            first_part.push(stream.message().await.expect("streams").expect("a message"));
        }
        drop(stream);
        let mut request = client.request("SELECT * FROM Seed23 LIMIT 1500");
        request.resume_token = first_part.last().expect("messages").resume_token.clone();
        let mut rest = client
            .client
            .execute_streaming_sql(request)
            .await
            .expect("resumes")
            .into_inner();
        let mut messages = first_part;
        while let Some(m) = rest.message().await.expect("streams") {
            messages.push(m);
        }
        assert_eq!(
            without_stream_ids(messages),
            without_stream_ids(whole.messages.clone()),
            "cut after {cut} messages"
        );
    }
}

/// Messages with each token's stream id zeroed: two streams of one query differ only in that.
fn without_stream_ids(mut messages: Vec<pb::PartialResultSet>) -> Vec<pb::PartialResultSet> {
    use spanprof::server::stream::ResumePoint;
    for m in &mut messages {
        let mut point = ResumePoint::decode(&m.resume_token).expect("our token");
        point.stamp.stream = 0;
        m.resume_token = point.encode();
    }
    messages
}
