//! One timed iteration against the local instance: the phases, resume through faults, and errors.

use std::time::{Duration, Instant};

use spanprof::client::Timeouts;
use spanprof::client::connect_plaintext;
use spanprof::client::iteration::{Decoding, run_iteration};
use spanprof::client::{IterationError, ResumePolicy};
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof::wire::{DecoderKind, RowsView, Value};
use tonic::Code;

use crate::client::TestClient;
use crate::support::ClosedPort;

async fn instance(knobs: KnobSettings) -> (LocalInstance, tonic::transport::Channel, String) {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 5000,
        knobs,
        connections: Default::default(),
    })
    .await
    .expect("starts");
    let session = TestClient::connect(&instance.host_port()).await.session;
    let channel = connect_plaintext(&instance.host_port())
        .await
        .expect("connects");
    (instance, channel, session)
}

fn request(
    session: &str,
    sql: &str,
    mode: pb::execute_sql_request::QueryMode,
) -> pb::ExecuteSqlRequest {
    pb::ExecuteSqlRequest {
        session: session.into(),
        sql: sql.into(),
        query_mode: mode as i32,
        ..Default::default()
    }
}

fn view_ids(rows: RowsView<'_>, into: &mut Vec<i64>) {
    ids(&rows.to_rows(usize::MAX), into);
}

fn ids(rows: &[spanprof::wire::Row], into: &mut Vec<i64>) {
    for row in rows {
        if let Value::Int64(id) = row.values()[0] {
            into.push(id);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_iteration_times_its_phases_and_checks_the_row_count() {
    for decoder in [DecoderKind::Fast, DecoderKind::Reference] {
        times_its_phases(decoder).await;
    }
}

async fn times_its_phases(decoder: DecoderKind) {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        ..KnobSettings::default()
    };
    let (_instance, channel, session) = instance(knobs).await;
    let req = request(
        &session,
        "SELECT * FROM Seed23 LIMIT 2000",
        pb::execute_sql_request::QueryMode::WithStats,
    );
    let mut seen = Vec::new();
    let timing = run_iteration(
        channel,
        &req,
        Default::default(),
        ResumePolicy::default(),
        Timeouts::DEFAULT,
        Decoding::new(decoder, &mut |rows, _| view_ids(rows, &mut seen)),
    )
    .await
    .expect("the iteration runs");
    let columns = timing.columns.as_deref().expect("columns");
    assert_eq!(columns.len(), 23, "{decoder:?}");
    assert_eq!(columns[0].name, "Id");
    assert_eq!(timing.rows, 2000);
    assert_eq!(seen, (1..=2000).collect::<Vec<_>>());
    let stats = timing.stats.as_ref().expect("WITH_STATS returns stats");
    assert_eq!(stats.query_stats.rows_returned, Some(2000));
    assert!(timing.counters.messages > 100, "{:?}", timing.counters);
    assert!(timing.counters.chunked_values > 0);
    assert!(timing.counters.wire_bytes > 2_000_000);
    assert!(
        !timing.network.is_zero() && !timing.wire_decode.is_zero() && !timing.row_decode.is_zero()
    );
    let ttfb = timing.ttfb.expect("a first byte");
    assert!(ttfb <= timing.total);
    let phases = timing.network + timing.wire_decode + timing.row_decode + timing.other();
    assert_eq!(phases, timing.total, "the phases partition the total");
    assert_eq!(timing.resumes, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn faults_are_resumed_with_every_row_once() {
    for decoder in [DecoderKind::Fast, DecoderKind::Reference] {
        resumes_through_faults(decoder).await;
    }
}

async fn resumes_through_faults(decoder: DecoderKind) {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    };
    let (_instance, channel, session) = instance(knobs).await;
    let req = request(
        &session,
        "SELECT * FROM Seed23 LIMIT 3000",
        pb::execute_sql_request::QueryMode::WithStats,
    );
    let mut seen = Vec::new();
    let mut recording = Vec::new();
    let timing = run_iteration(
        channel,
        &req,
        Default::default(),
        ResumePolicy::default(),
        Timeouts::DEFAULT,
        Decoding {
            decoder,
            on_rows: &mut |rows, _| view_ids(rows, &mut seen),
            recording: Some(&mut recording),
            kept_messages: 100_000,
        },
    )
    .await
    .expect("the iteration survives the faults");
    assert!(timing.resumes > 10, "{} resumes", timing.resumes);
    // The timeline holds every resume, each request re-sent after its back-off.
    let lane = &timing.lanes[0];
    assert_eq!(lane.resumes.len(), timing.resumes as usize);
    assert_eq!(lane.requests_us.len(), lane.resumes.len() + 1);
    assert!(
        lane.resumes
            .iter()
            .all(|r| r.resent_us >= r.at_us && r.status.starts_with("Unavailable")),
        "{:?}",
        lane.resumes.first()
    );
    let fed: u64 = lane.messages.iter().map(|m| m.rows).sum();
    assert_eq!(
        fed, 3000,
        "every row counted once, at the message that completed it"
    );
    assert_eq!(seen, (1..=3000).collect::<Vec<_>>());
    assert_eq!(timing.rows, 3000);
    // What the decoder consumed, after the resumes, replays offline to the same rows.
    let replayed = spanprof::wire::decode_stream_file(&recording).expect("the recording decodes");
    let mut replayed_ids = Vec::new();
    ids(&replayed.rows, &mut replayed_ids);
    assert_eq!(replayed_ids, seen);
    assert_eq!(replayed.counters.messages, timing.counters.messages);
}

#[tokio::test(flavor = "multi_thread")]
async fn giving_up_on_resumes_is_a_clear_error() {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 1,
        ..KnobSettings::default()
    };
    let (_instance, channel, session) = instance(knobs).await;
    let req = request(
        &session,
        "SELECT * FROM Seed23",
        pb::execute_sql_request::QueryMode::Normal,
    );
    let policy = ResumePolicy {
        max_resumes: 3,
        ..ResumePolicy::default()
    };
    let err = run_iteration(
        channel,
        &req,
        Default::default(),
        policy,
        Timeouts::DEFAULT,
        Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
    )
    .await
    .expect_err("too many faults");
    assert!(matches!(err, IterationError::CannotResume(_)), "{err}");
    assert!(err.to_string().contains("3 resumes"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_sql_ends_the_iteration_with_the_server_message() {
    let (_instance, channel, session) = instance(KnobSettings::default()).await;
    let req = request(
        &session,
        "SELECT * FROM Nope",
        pb::execute_sql_request::QueryMode::Normal,
    );
    let err = run_iteration(
        channel,
        &req,
        Default::default(),
        ResumePolicy::default(),
        Timeouts::DEFAULT,
        Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
    )
    .await
    .expect_err("bad SQL");
    match &err {
        IterationError::Status(s) => assert_eq!(s.code(), Code::InvalidArgument),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("Table not found: Nope"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_host_fails_fast() {
    let closed = ClosedPort::new();
    let started = Instant::now();
    let result = connect_plaintext(&closed.host_port).await;
    assert!(result.is_err(), "nothing listens there");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
