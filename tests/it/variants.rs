//! What a user changes, compared in one run. Variants interleave their iterations, each
//! request option reaches the wire as the API defines it (from the command line and from a
//! workload file), a sweep gives a row per value and a cost model, partitioned reads return the
//! plain query's rows, and the CI gate exits 4 on a real slowdown only.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use spanprof::client::{
    DatabasePath, Decoding, Partitioned, Query, QueryMode, RequestOptions, ResumePolicy, Session,
    Timeouts,
};
use spanprof::engine::{Target, connect};
use spanprof::export::read_json;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::report::RunReport;
use spanprof::server::{KnobSettings, ServerConfig};
use spanprof::wire::{DecoderKind, RowsView};

use crate::standin::{Behaviour, Queries, StandIn};

/// The stand-in's answers: whole ones.
const ANSWER: Behaviour = Behaviour::answering(Queries::OneRow);

fn spanprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("spanprof runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn reports(path: &Path) -> Vec<RunReport> {
    read_json(&std::fs::read(path).expect("the report is written")).expect("a report")
}

#[test]
fn two_queries_interleave_their_iterations_and_the_verdict_names_the_phases() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let csv = dir.path().join("out.csv");
    let csv_arg = csv.to_string_lossy().into_owned();
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 10000",
        "--sql",
        "SELECT Id, Name FROM Seed23 LIMIT 10000",
        "--label",
        "wide",
        "--label",
        "narrow",
        "--iterations",
        "5",
        "--csv",
        &csv_arg,
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    let mut reader = csv::Reader::from_path(&csv).expect("a CSV");
    let headers = reader.headers().expect("a header").clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} column"))
    };
    let (run, warmup, seq, started) = (
        column("run"),
        column("warmup"),
        column("seq"),
        column("started_at"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a row")).collect();
    let timed: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[warmup] == "false").collect();
    assert_eq!(timed.len(), 10, "ten timed rows");
    let labels: Vec<&str> = timed.iter().map(|r| &r[run]).collect();
    assert_eq!(labels.iter().filter(|l| **l == "wide").count(), 5);
    assert!(
        labels.windows(2).all(|w| w[0] != w[1]),
        "alternating in time: {labels:?}"
    );
    let seqs: Vec<u32> = rows
        .iter()
        .map(|r| r[seq].parse().expect("a number"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in the order they ran: {seqs:?}"
    );
    let times: Vec<&str> = timed.iter().map(|r| &r[started]).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("narrow is "))
        .unwrap_or_else(|| panic!("a verdict for narrow: {stdout}"));
    assert!(verdict.contains(" than wide (95% CI "), "{verdict}");
    for phase in ["server ", "network ", "row decode ", "wire decode "] {
        assert!(verdict.contains(phase), "{verdict} names {phase}");
    }
    assert!(verdict.contains(" ms"), "{verdict}");
}

/// The request the stand-in received for each ExecuteStreamingSql, and each PartitionQuery.
fn received(standin: &StandIn) -> (Vec<pb::ExecuteSqlRequest>, Vec<pb::PartitionQueryRequest>) {
    (standin.executes(), standin.partitions())
}

fn read_only(request: &pb::ExecuteSqlRequest) -> &pb::transaction_options::ReadOnly {
    use pb::transaction_options::Mode;
    use pb::transaction_selector::Selector;
    match request
        .transaction
        .as_ref()
        .and_then(|t| t.selector.as_ref())
    {
        Some(Selector::SingleUse(pb::TransactionOptions {
            mode: Some(Mode::ReadOnly(ro)),
            ..
        })) => ro,
        other => panic!("not a single-use read-only selector: {other:?}"),
    }
}

/// The assertions on one request carrying every plain option: `low`, tag `t1`, exact staleness
/// of 10 s, optimizer 5 with package `pkg`, only replicas in us-east1 that are read-only.
fn assert_plain_options(request: &pb::ExecuteSqlRequest) {
    use pb::directed_read_options::Replicas;
    use pb::transaction_options::read_only::TimestampBound;
    let options = request.request_options.as_ref().expect("request options");
    assert_eq!(options.priority, pb::request_options::Priority::Low as i32);
    assert_eq!(options.request_tag, "t1");
    let query = request.query_options.as_ref().expect("query options");
    assert_eq!(query.optimizer_version, "5");
    assert_eq!(query.optimizer_statistics_package, "pkg");
    let ro = read_only(request);
    assert!(ro.return_read_timestamp);
    assert_eq!(
        ro.timestamp_bound,
        Some(TimestampBound::ExactStaleness(prost_types::Duration {
            seconds: 10,
            nanos: 0
        }))
    );
    match request
        .directed_read_options
        .as_ref()
        .and_then(|d| d.replicas.as_ref())
    {
        Some(Replicas::IncludeReplicas(include)) => {
            assert_eq!(include.replica_selections.len(), 1);
            assert_eq!(include.replica_selections[0].location, "us-east1");
            assert_eq!(
                include.replica_selections[0].r#type,
                pb::directed_read_options::replica_selection::Type::ReadOnly as i32
            );
        }
        other => panic!("include replicas: {other:?}"),
    }
    assert!(request.partition_token.is_empty() && !request.data_boost_enabled);
}

/// The assertions on a partitioned read: PartitionQuery in a strong read-only transaction that
/// begins there, asking for 3 partitions; then each partition in that transaction, with Data Boost.
fn assert_partitioned(
    executes: &[pb::ExecuteSqlRequest],
    partitions: &[pb::PartitionQueryRequest],
) {
    use pb::transaction_options::Mode;
    use pb::transaction_options::read_only::TimestampBound;
    use pb::transaction_selector::Selector;
    let [partition] = partitions else {
        panic!("one PartitionQuery: {partitions:?}");
    };
    assert_eq!(partition.sql, "SELECT 1");
    assert_eq!(
        partition
            .partition_options
            .as_ref()
            .map(|o| o.max_partitions),
        Some(3)
    );
    match partition
        .transaction
        .as_ref()
        .and_then(|t| t.selector.as_ref())
    {
        Some(Selector::Begin(pb::TransactionOptions {
            mode: Some(Mode::ReadOnly(ro)),
            ..
        })) => assert_eq!(ro.timestamp_bound, Some(TimestampBound::Strong(true))),
        other => panic!("a read-only transaction begun by PartitionQuery: {other:?}"),
    }
    // The partitions are read at once: in either order.
    let mut tokens: Vec<&[u8]> = executes
        .iter()
        .map(|r| r.partition_token.as_slice())
        .collect();
    tokens.sort();
    assert_eq!(tokens, [&b"first"[..], b"second"]);
    for request in executes {
        assert!(request.data_boost_enabled);
        assert_eq!(
            request
                .transaction
                .as_ref()
                .and_then(|t| t.selector.as_ref()),
            Some(&Selector::Id(b"txn-1".to_vec()))
        );
        assert_eq!(
            request.request_options.as_ref().map(|o| o.priority),
            Some(pb::request_options::Priority::High as i32)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_option_reaches_the_wire_from_the_command_line() {
    let standin = StandIn::start(ANSWER).await;
    let endpoint = standin.host().to_owned();
    let common = [
        "--endpoint",
        &endpoint,
        "--iterations",
        "1",
        "--warmup",
        "0",
    ];
    let run = |extra: &'static [&'static str]| {
        let mut args = vec!["profile", "--sql", "SELECT 1"];
        args.extend(common);
        args.extend(extra);
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        tokio::task::spawn_blocking(move || {
            spanprof(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
    };
    let out = run(&[
        "--priority",
        "low",
        "--request-tag",
        "t1",
        "--staleness",
        "exact:10s",
        "--optimizer-version",
        "5",
        "--optimizer-statistics-package",
        "pkg",
        "--include-replicas",
        "us-east1:READ_ONLY",
    ])
    .await
    .expect("joins");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (executes, partitions) = received(&standin);
    assert!(partitions.is_empty());
    let [request] = executes.as_slice() else {
        panic!("one ExecuteStreamingSql: {executes:?}");
    };
    assert_plain_options(request);

    // The other staleness forms, and excluded replicas.
    use pb::transaction_options::read_only::TimestampBound;
    for (staleness, want) in [
        (
            "max:250ms",
            TimestampBound::MaxStaleness(prost_types::Duration {
                seconds: 0,
                nanos: 250_000_000,
            }),
        ),
        (
            "read:2026-12-01T10:00:00Z",
            TimestampBound::ReadTimestamp(prost_types::Timestamp {
                seconds: 1_796_119_200,
                nanos: 0,
            }),
        ),
        (
            "min-read:2026-12-01T10:00:00Z",
            TimestampBound::MinReadTimestamp(prost_types::Timestamp {
                seconds: 1_796_119_200,
                nanos: 0,
            }),
        ),
        ("strong", TimestampBound::Strong(true)),
    ] {
        standin.forget();
        let args: &'static [&'static str] = Box::leak(Box::new([
            "--staleness",
            staleness,
            "--exclude-replicas",
            "eu-west1",
        ]));
        let out = run(args).await.expect("joins");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let (executes, _) = received(&standin);
        assert_eq!(
            read_only(&executes[0]).timestamp_bound,
            Some(want),
            "{staleness}"
        );
        assert!(matches!(
            executes[0].directed_read_options.as_ref().and_then(|d| d.replicas.as_ref()),
            Some(pb::directed_read_options::Replicas::ExcludeReplicas(e))
                if e.replica_selections[0].location == "eu-west1"
        ));
    }

    standin.forget();
    let out = run(&[
        "--partitioned",
        "--data-boost",
        "--max-partitions",
        "3",
        "--priority",
        "high",
    ])
    .await
    .expect("joins");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (executes, partitions) = received(&standin);
    assert_partitioned(&executes, &partitions);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_option_reaches_the_wire_from_a_workload_file() {
    let standin = StandIn::start(ANSWER).await;
    let endpoint = standin.host().to_owned();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let workload = dir.path().join("workload.toml");
    std::fs::write(
        &workload,
        r#"
        iterations = 1
        warmup = 0
        order = "blocked"

        [[variant]]
        label = "plain options"
        sql = "SELECT 1"
        priority = "low"
        request_tag = "t1"
        staleness = "exact:10s"
        optimizer_version = "5"
        optimizer_statistics_package = "pkg"
        include_replicas = "us-east1:READ_ONLY"

        [[variant]]
        label = "partitioned"
        sql = "SELECT 1"
        partitioned = true
        data_boost = true
        max_partitions = 3
        priority = "high"
        "#,
    )
    .expect("writes");
    let workload = workload.to_string_lossy().into_owned();
    let json = dir.path().join("report.json");
    let json_arg = json.to_string_lossy().into_owned();
    let out = tokio::task::spawn_blocking(move || {
        spanprof(&[
            "profile",
            "--endpoint",
            &endpoint,
            "--workload",
            &workload,
            "--json",
            &json_arg,
        ])
    })
    .await
    .expect("joins");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (executes, partitions) = received(&standin);
    assert_eq!(executes.len(), 3, "one plain request, two partitions");
    assert_plain_options(&executes[0]);
    assert_partitioned(&executes[1..], &partitions);
    let runs = reports(&json);
    let labels: Vec<&str> = runs.iter().map(|r| r.config.label.as_str()).collect();
    assert_eq!(labels, ["plain options", "partitioned"]);
    let options: HashMap<String, String> = runs[1].config.options.iter().cloned().collect();
    assert_eq!(options.get("data-boost").map(String::as_str), Some("true"));
    assert_eq!(runs[0].config.order, "blocked");
}

#[test]
fn bad_combinations_are_refused_before_anything_runs() {
    for (args, said) in [
        (
            &["--partitioned", "--staleness", "max:10s"][..],
            "only for single-use reads",
        ),
        (&["--data-boost"][..], "--partitioned"),
        (
            &["--partitioned", "--query-mode", "with-stats"][..],
            "a partitioned read runs in normal mode",
        ),
        (&["--max-partitions", "4"][..], "--partitioned"),
        (&["--request-tag", "_hidden"][..], "not starting with '_'"),
        (&["--priority", "urgent"][..], "low, medium, high"),
        (&["--staleness", "yesterday"][..], "exact:DUR"),
        (
            &["--include-replicas", "a", "--exclude-replicas", "b"][..],
            "cannot be used with",
        ),
    ] {
        let mut argv = vec!["profile", "--sql", "SELECT 1", "--endpoint", "127.0.0.1:1"];
        argv.extend(args);
        let out = spanprof(&argv);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("cannot reach"),
            "refused before connecting: {stderr}"
        );
    }
}

#[test]
fn a_sweep_reports_each_value_with_its_rows_and_a_positive_cost_per_row() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("sweep.json");
    let json_arg = json.to_string_lossy().into_owned();
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT @n",
        "--sweep",
        "n:INT64=100,1000,5000,20000",
        "--rows",
        "20000",
        "--iterations",
        "3",
        "--json",
        &json_arg,
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    let runs = reports(&json);
    assert_eq!(runs.len(), 4);
    for (run, n) in runs.iter().zip([100u64, 1000, 5000, 20000]) {
        assert_eq!(
            run.config.sweep.as_ref().map(|p| p.value.clone()),
            Some(n.to_string())
        );
        assert!(
            run.timed().all(|i| i.answer.rows == n),
            "{}",
            run.config.label
        );
        assert_eq!(run.timed().count(), 3);
    }
    let refs: Vec<&RunReport> = runs.iter().collect();
    let sweep = spanprof::analysis::sweep(&refs).expect("a sweep");
    let total = sweep
        .models
        .iter()
        .find(|m| m.measure == spanprof::part::Measure::Total)
        .expect("a model of the total");
    assert!(total.ms_per_1000_rows > 0.0, "{total:?}");
    assert!(stdout.contains("sweep of @n:"), "{stdout}");
    assert!(
        stdout.contains("| part | fixed | per 1,000 rows | MB/s | R² |"),
        "{stdout}"
    );
    assert!(stdout.contains("| 20000 | 20,000 |"), "{stdout}");
}

/// Every row of `query` read through one session of the local instance, as canonical JSON, sorted
/// (partitions stream at once, so their rows interleave).
async fn rows_of(session: &Session, query: Query) -> Vec<String> {
    let prepared = session.prepare(&query).expect("prepares");
    let mut rows = Vec::new();
    let mut keep = |batch: RowsView<'_>, _: usize| {
        rows.extend(
            batch
                .to_rows(usize::MAX)
                .iter()
                .map(|r| r.to_canonical_json().to_string()),
        );
    };
    let timing = session
        .execute(
            &prepared,
            ResumePolicy::default(),
            Decoding::new(DecoderKind::Fast, &mut keep),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", query.sql));
    assert_eq!(timing.rows as usize, rows.len());
    rows.sort();
    rows
}

fn partitioned(max: u32) -> RequestOptions {
    RequestOptions {
        partitioned: Some(Partitioned {
            data_boost: true,
            max_partitions: Some(max),
        }),
        ..RequestOptions::default()
    }
}

/// A session on `target`'s local instance, started for it; the instance stops when the first half
/// is dropped.
pub(crate) async fn local_session(target: &Target) -> (spanprof::engine::Connected, Session) {
    let connected = connect(target).await.expect("the local instance starts");
    let session = Session::open(
        &connected.endpoint,
        &DatabasePath::default(),
        Timeouts::DEFAULT,
    )
    .await
    .expect("a session");
    (connected, session)
}

#[tokio::test(flavor = "multi_thread")]
async fn partitioned_reads_of_the_local_instance_return_exactly_the_plain_querys_rows() {
    let target = Target::Local(ServerConfig {
        port: 0,
        seed23_rows: 3000,
        knobs: KnobSettings {
            max_message_bytes: 16 * 1024,
            fail_every: 4,
            ..KnobSettings::default()
        },
        connections: Default::default(),
    });
    let (_instance, session) = local_session(&target).await;
    for sql in [
        "SELECT * FROM Seed23",
        "SELECT Id, Name FROM Seed23 WHERE Id % 7 = 3",
        "SELECT * FROM Singers",
        "SELECT AlbumId, AlbumTitle FROM Albums WHERE SingerId > 2",
    ] {
        let plain = Query {
            sql: sql.into(),
            mode: QueryMode::Normal,
            ..Query::default()
        };
        let want = rows_of(&session, plain.clone()).await;
        assert!(!want.is_empty(), "{sql}");
        for max in [1, 3, 8] {
            let got = rows_of(
                &session,
                Query {
                    options: partitioned(max),
                    ..plain.clone()
                },
            )
            .await;
            assert_eq!(got, want, "{sql} in at most {max} partitions");
        }
    }
    let prepared = session
        .prepare(&Query {
            sql: "SELECT * FROM Seed23".into(),
            mode: QueryMode::Normal,
            options: partitioned(4),
            ..Query::default()
        })
        .expect("prepares");
    let timing = session
        .execute(
            &prepared,
            ResumePolicy::default(),
            Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
        )
        .await
        .expect("runs");
    assert_eq!(
        timing.partitions.len(),
        4,
        "four partitions, each with its figures"
    );
    assert_eq!(timing.partitions.iter().map(|p| p.rows).sum::<u64>(), 3000);
    assert!(
        timing
            .partitions
            .iter()
            .all(|p| p.rows > 0 && p.messages > 0)
    );
    assert!(
        timing.resumes > 0,
        "the faults were resumed partition by partition"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn queries_that_are_not_root_partitionable_are_refused_as_production_words_it() {
    let target = Target::Local(ServerConfig {
        port: 0,
        seed23_rows: 100,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    });
    let (_instance, session) = local_session(&target).await;
    for sql in [
        "SELECT * FROM Seed23 ORDER BY Name",
        "SELECT count(*) FROM Seed23",
        "SELECT * FROM Seed23 LIMIT 10",
        "SELECT s.FirstName, a.AlbumTitle FROM Singers s JOIN Albums a ON a.SingerId = s.SingerId",
        "SELECT * FROM main.Singers",
        "SELECT DISTINCT Country FROM Seed23",
    ] {
        let prepared = session
            .prepare(&Query {
                sql: sql.into(),
                mode: QueryMode::Normal,
                options: partitioned(4),
                ..Query::default()
            })
            .expect("prepares");
        let error = session
            .execute(
                &prepared,
                ResumePolicy::default(),
                Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
            )
            .await
            .expect_err(sql)
            .to_string();
        assert!(
            error.contains("Query is not root partitionable since it does not have a DistributedUnion at the root"),
            "{sql}: {error}"
        );
    }
}

#[test]
fn the_gate_fails_a_real_slowdown_with_exit_code_4() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let base = dir.path().join("base.json");
    let base_arg = base.to_string_lossy().into_owned();
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 100",
        "--label",
        "q",
        "--iterations",
        "8",
        "--json",
        &base_arg,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let slower = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 20000",
        "--rows",
        "20000",
        "--label",
        "q",
        "--iterations",
        "8",
        "--baseline",
        &base_arg,
        "--fail-if-slower",
        "10%",
    ]);
    let stdout = text(&slower.stdout);
    assert_eq!(
        slower.status.code(),
        Some(4),
        "{stdout}\n{}",
        text(&slower.stderr)
    );
    // The baseline and this run share a label: each is called by when it started.
    assert!(stdout.contains("gate: q · "), "{stdout}");
    assert!(
        stdout.contains("more than the 10% allowed: the gate fails"),
        "{stdout}"
    );
}

#[test]
fn the_gate_passes_two_runs_of_the_same_query() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let both = dir.path().join("both.json");
    let both_arg = both.to_string_lossy().into_owned();
    // The same query twice, interleaved: the machine's drift falls on both alike.
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 2000",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 2000",
        "--iterations",
        "12",
        "--json",
        &both_arg,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = reports(&both);
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (run, path) in runs.iter().zip([&a, &b]) {
        let bytes =
            spanprof::export::Exporter::export(&spanprof::export::Json, std::slice::from_ref(run))
                .expect("serialises");
        std::fs::write(path, bytes).expect("writes");
    }
    let out = spanprof(&[
        "compare",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
        "--fail-if-slower",
        "10%",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("gate: "), "{stdout}");
    assert!(stdout.contains("the gate passes"), "{stdout}");
}

/// The local instance takes every option, returns the read timestamp a staleness
/// implies, and says in its statistics which optimizer ran.
#[tokio::test(flavor = "multi_thread")]
async fn the_local_instance_honours_staleness_and_the_optimizer_asked_for() {
    use pb::transaction_options::read_only::TimestampBound;
    let instance = crate::local::start(100, KnobSettings::default()).await;
    let mut client = crate::client::TestClient::connect(&instance.host_port()).await;
    let read_timestamp = |bound: TimestampBound| pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(
            pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(
                    pb::transaction_options::ReadOnly {
                        timestamp_bound: Some(bound),
                        return_read_timestamp: true,
                    },
                )),
                ..Default::default()
            },
        )),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64();
    let cases = [
        (
            TimestampBound::ExactStaleness(prost_types::Duration {
                seconds: 10,
                nanos: 0,
            }),
            now - 10.0,
        ),
        (TimestampBound::Strong(true), now),
        (
            TimestampBound::ReadTimestamp(prost_types::Timestamp {
                seconds: 1_796_119_200,
                nanos: 500_000_000,
            }),
            1_796_119_200.5,
        ),
    ];
    for (bound, want) in cases {
        let request = pb::ExecuteSqlRequest {
            transaction: Some(read_timestamp(bound)),
            request_options: Some(pb::RequestOptions {
                priority: pb::request_options::Priority::Low as i32,
                request_tag: "tagged".into(),
                transaction_tag: String::new(),
            }),
            query_mode: pb::execute_sql_request::QueryMode::WithStats as i32,
            query_options: Some(pb::execute_sql_request::QueryOptions {
                optimizer_version: "3".into(),
                optimizer_statistics_package: "auto_20261201".into(),
            }),
            ..client.request("SELECT Id FROM Seed23 LIMIT 5")
        };
        let got = client.stream(request).await.expect("the query runs");
        assert_eq!(got.rows.len(), 5);
        let ts = got.messages[0]
            .metadata
            .as_ref()
            .and_then(|m| m.transaction.as_ref())
            .and_then(|t| t.read_timestamp.as_ref())
            .expect("the read timestamp, asked for");
        let at = ts.seconds as f64 + f64::from(ts.nanos) / 1e9;
        assert!(
            (at - want).abs() < 3.0,
            "{bound:?}: read at {at}, wanted {want}"
        );
        let stats = got.stats.expect("with stats");
        assert_eq!(stats.query_stats.optimizer_version.as_deref(), Some("3"));
        assert_eq!(
            stats
                .query_stats
                .entries
                .get("optimizer_statistics_package")
                .map(String::as_str),
            Some("auto_20261201")
        );
    }
    let unsupported = pb::ExecuteSqlRequest {
        query_options: Some(pb::execute_sql_request::QueryOptions {
            optimizer_version: "99".into(),
            ..Default::default()
        }),
        ..client.request("SELECT 1")
    };
    let error = client
        .stream(unsupported)
        .await
        .expect_err("no optimizer 99");
    assert_eq!(error.code(), tonic::Code::InvalidArgument);
    assert!(
        error
            .message()
            .contains("Query optimizer version: 99 is not supported"),
        "{error:?}"
    );
}
