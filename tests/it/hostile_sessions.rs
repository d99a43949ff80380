//! Sessions filled the local instance for an hour. Each `--cold` iteration created a
//! multiplexed session that nobody may delete and that expired only after an hour, so a long cold
//! profile (and a hostile client, in seconds) left every client's CreateSession refused.

use std::sync::Arc;
use std::time::Duration;

use spanprof::engine::{
    DatabasePath, Engine, Job, ProfileSpec, QueryMode, SessionKind, Target, Variant,
};
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::report::Status;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
use tonic::transport::Channel;

use crate::client::DATABASE;

async fn connection(host: &str) -> SpannerClient<Channel> {
    let channel = Channel::from_shared(format!("http://{host}"))
        .expect("a valid URI")
        .connect()
        .await
        .expect("connects");
    SpannerClient::new(channel)
}

async fn create(
    client: &mut SpannerClient<Channel>,
    multiplexed: bool,
) -> Result<String, tonic::Status> {
    let session = multiplexed.then(|| pb::Session {
        multiplexed: true,
        ..Default::default()
    });
    let request = pb::CreateSessionRequest {
        database: DATABASE.into(),
        session,
    };
    Ok(client.create_session(request).await?.into_inner().name)
}

/// A local instance of at most `max_sessions` sessions, on a runtime of its own.
fn instance(max_sessions: u64) -> (tokio::runtime::Runtime, LocalInstance) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let config = ServerConfig {
        seed23_rows: 100,
        knobs: KnobSettings {
            max_sessions,
            ..KnobSettings::default()
        },
        ..ServerConfig::default()
    };
    let instance = runtime
        .block_on(LocalInstance::start(config))
        .expect("starts");
    (runtime, instance)
}

/// Scaled from `profile --cold --iterations 10000` against a cap of 10,000 sessions: 60 cold
/// iterations, each on a multiplexed session, against a cap of 20. Against the tree before the
/// fix (765f72c) the iterations from the 21st on failed (CreateSession: RESOURCE_EXHAUSTED) and
/// 20 sessions stayed for an hour. Now a multiplexed session goes when the last connection that
/// used it closes: every iteration succeeds and none is left once the profile has ended.
#[test]
fn cold_iterations_leave_no_session_behind() {
    const ITERATIONS: u32 = 60;
    let (runtime, instance) = instance(20);
    let spec = ProfileSpec {
        database: DatabasePath::default(),
        variants: vec![Variant {
            mode: QueryMode::WithStats,
            cold: true,
            session: Some(SessionKind::Multiplexed),
            ..Variant::new("cold", "SELECT * FROM Seed23 LIMIT 10")
        }],
        iterations: ITERATIONS,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let engine = Engine::start(
        Job::Profile(Target::Endpoint(instance.host_port()), spec),
        Arc::new(|| {}),
    )
    .expect("starts");
    let events: Vec<_> = engine.profile_events().collect();
    drop(engine);
    let report = spanprof::engine::collect_reports(&events)
        .and_then(|runs| runs.into_iter().next())
        .expect("a Finished event");
    let failed: Vec<_> = report
        .iterations
        .iter()
        .filter(|it| it.status() != Status::Ok)
        .map(|it| it.error().map(str::to_owned).unwrap_or_default())
        .collect();
    let left = (0..40)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            instance.occupancy().sessions
        })
        .find(|&n| n == 0);
    eprintln!(
        "{} of {ITERATIONS} cold iterations failed (first: {:?}); sessions left: {}",
        failed.len(),
        failed.first(),
        instance.occupancy().sessions
    );
    assert!(failed.is_empty(), "every cold iteration has a session");
    assert_eq!(left, Some(0), "no session is left behind");
    drop(instance);
    drop(runtime);
}

/// A hostile client filled the sessions in seconds (12 s of multiplexed CreateSession, 2.8 s of
/// BatchCreateSessions) and every other client's CreateSession was refused for an hour. Scaled:
/// a cap of 200, filled through BatchCreateSessions on one connection and multiplexed sessions on
/// another. Against the tree before the fix (765f72c) the newcomers were refused. Now a session
/// of the connection that holds the most makes room: every newcomer gets one, and the hostile
/// connection cannot take more than its share back.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_fills_the_sessions_locks_nobody_out() {
    const MAX: u64 = 200;
    let server = crate::serve_process::ServeProcess::start(&[
        "--rows",
        "10",
        "--max-sessions",
        &MAX.to_string(),
    ]);
    let mut batches = connection(&server.host).await;
    for _ in 0..2 {
        let made = batches
            .batch_create_sessions(pb::BatchCreateSessionsRequest {
                database: DATABASE.into(),
                session_template: None,
                session_count: 100,
            })
            .await
            .expect("within the cap")
            .into_inner()
            .session;
        assert_eq!(made.len(), 100);
    }
    let refused = batches
        .batch_create_sessions(pb::BatchCreateSessionsRequest {
            database: DATABASE.into(),
            session_template: None,
            session_count: 100,
        })
        .await
        .expect_err("it holds them all already");
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    let mut multiplexed = connection(&server.host).await;
    let mut made = 0;
    while made < MAX && create(&mut multiplexed, true).await.is_ok() {
        made += 1;
    }
    eprintln!("a second connection made {made} multiplexed sessions at the cap");
    let mut answered = 0;
    for n in 0..20 {
        let mut newcomer = connection(&server.host).await;
        match create(&mut newcomer, false).await {
            Ok(_) => answered += 1,
            Err(e) => eprintln!("newcomer {n}: {e:?}"),
        }
    }
    eprintln!("{answered} of 20 newcomers got a session");
    assert_eq!(answered, 20, "every newcomer gets a session");
    assert!(
        (MAX / 2 - 20..=MAX / 2 + 1).contains(&made),
        "the second connection took about half of the first one's sessions, no more ({made})"
    );
}
