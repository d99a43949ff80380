//! The profiling engine and `spanprof profile`/`compare`, against the built-in local instance.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use spanprof::engine::{
    DatabasePath, Engine, EngineEvent, Job, ProfileSpec, QueryMode, Target, Variant,
    collect_reports,
};
use spanprof::report::{RunReport, Status};
use spanprof::server::{KnobSettings, ServerConfig};
use spanprof::wire::DecoderKind;

use crate::support::ClosedPort;

fn local(knobs: KnobSettings) -> Target {
    Target::Local(ServerConfig {
        port: 0,
        seed23_rows: 10_000,
        knobs,
        connections: Default::default(),
    })
}

fn spec(sql: &str, iterations: u32) -> ProfileSpec {
    ProfileSpec {
        database: DatabasePath::default(),
        variants: vec![Variant {
            mode: QueryMode::WithStats,
            ..Variant::new("test", sql)
        }],
        iterations,
        warmup: 1,
        ..ProfileSpec::default()
    }
}

/// Runs to the end and returns the events.
fn run(target: Target, spec: ProfileSpec) -> Vec<EngineEvent> {
    let engine = Engine::start(Job::Profile(target, spec), Arc::new(|| {})).expect("starts");
    engine.profile_events().collect()
}

fn report(events: &[EngineEvent]) -> RunReport {
    collect_reports(events)
        .and_then(|reports| reports.into_iter().next())
        .expect("a Finished event")
}

#[test]
fn iterations_have_all_rows_and_phases_that_add_up() {
    let events = run(
        local(KnobSettings::default()),
        spec("SELECT * FROM Seed23 LIMIT 2000", 5),
    );
    assert!(matches!(events[0], EngineEvent::Connected { session_ms, .. } if session_ms > 0.0));
    let report = report(&events);
    assert_eq!(report.iterations.len(), 6);
    assert!(report.iterations[0].warmup);
    assert_eq!(report.timed().count(), 5);
    for it in &report.iterations {
        assert_eq!(it.status(), Status::Ok, "{:?}", it.error());
        assert_eq!(it.answer.rows, 2000);
        assert_eq!(it.answer.server_rows, Some(2000));
        assert!(it.query.server_elapsed_ms.is_some() && it.query.server_cpu_ms.is_some());
        let phases = it.query.stream_wait_ms.unwrap_or(0.0)
            + it.query.wire_decode_wall_ms.unwrap_or(0.0)
            + it.query.row_decode_wall_ms.unwrap_or(0.0)
            + it.query.outside_wait_and_decode_ms.unwrap_or(0.0);
        assert!(
            (phases - it.total_ms).abs() <= 0.02 * it.total_ms,
            "{phases} vs {}",
            it.total_ms
        );
        assert!(it.answer.wire_bytes > 2_000_000 && it.answer.messages > 0);
    }
}

/// Each record crosses the engine's channel once, in its `Iteration` event (`Finished` carries
/// only what the reports hold besides their records), and the reports collected from the events
/// hold exactly the records sent, each variant's in the order they ran, with the variant's
/// configuration and its database.
#[test]
fn the_records_cross_once_and_the_collected_reports_hold_exactly_them() {
    let events = run(
        local(KnobSettings::default()),
        ProfileSpec {
            variants: vec![
                Variant::new("narrow", "SELECT Id FROM Seed23 LIMIT 100"),
                Variant::new("wide", "SELECT * FROM Seed23 LIMIT 100"),
            ],
            ..spec("", 3)
        },
    );
    let mut sent: [Vec<spanprof::report::IterationRecord>; 2] = Default::default();
    for event in &events {
        if let EngineEvent::Iteration { variant, record } = event {
            assert_eq!(record.run, ["narrow", "wide"][*variant]);
            sent[*variant].push(record.as_ref().clone());
        }
    }
    let Some(EngineEvent::Finished(heads)) = events.last() else {
        panic!("the run ends with Finished: {:?}", events.last());
    };
    let labels: Vec<&str> = heads.iter().map(|h| h.config.label.as_str()).collect();
    assert_eq!(labels, ["narrow", "wide"]);
    let reports = collect_reports(&events).expect("a Finished event");
    assert_eq!(reports.len(), 2);
    for (report, sent) in reports.iter().zip(&sent) {
        assert_eq!(sent.len(), 4, "a warm-up and three timed iterations");
        assert_eq!(&report.iterations, sent);
        assert_eq!(report.config.database, DatabasePath::default().name());
        assert_eq!(report.config.target, "local");
    }
}

/// `Engine::reports`, for a caller that reads no event on the way: a variant's report per
/// variant, each with its warm-up and timed iterations; a run that cannot start is its error.
#[test]
fn waiting_for_the_reports_gives_one_per_variant_or_why_the_run_could_not_start() {
    let two = ProfileSpec {
        variants: vec![
            Variant::new("narrow", "SELECT Id FROM Seed23 LIMIT 100"),
            Variant::new("wide", "SELECT * FROM Seed23 LIMIT 100"),
        ],
        ..spec("", 2)
    };
    let engine = Engine::start(
        Job::Profile(local(KnobSettings::default()), two),
        Arc::new(|| {}),
    )
    .expect("starts");
    let reports = engine.reports().expect("runs").expect("finishes");
    let shape: Vec<(&str, usize)> = reports
        .iter()
        .map(|r| (r.config.label.as_str(), r.iterations.len()))
        .collect();
    assert_eq!(shape, [("narrow", 3), ("wide", 3)]);

    let closed = ClosedPort::new();
    let engine = Engine::start(
        Job::Profile(
            Target::Endpoint(closed.host_port.clone()),
            spec("SELECT 1", 1),
        ),
        Arc::new(|| {}),
    )
    .expect("starts");
    let error = engine.reports().expect_err("the endpoint refuses");
    assert!(error.to_string().contains(&closed.host_port), "{error}");
}

#[test]
fn either_decoder_runs_a_profile_and_the_report_names_it() {
    let mut seen = Vec::new();
    for decoder in [DecoderKind::Fast, DecoderKind::Reference] {
        let events = run(
            local(KnobSettings::default()),
            ProfileSpec {
                decoder,
                ..spec("SELECT * FROM Seed23 WHERE Id > 100 LIMIT 1500", 2)
            },
        );
        let report = report(&events);
        assert_eq!(report.config.decoder.as_str(), decoder.as_str());
        for it in report.timed() {
            assert_eq!(it.status(), Status::Ok, "{decoder:?}: {:?}", it.error());
            assert!(
                it.query.wire_decode_wall_ms.is_some_and(|ms| ms > 0.0),
                "{decoder:?}"
            );
            assert!(
                it.query.row_decode_wall_ms.is_some_and(|ms| ms > 0.0),
                "{decoder:?}"
            );
        }
        let it = report.timed().next().expect("an iteration");
        seen.push((it.answer.rows, it.answer.wire_bytes, it.answer.messages));
    }
    let ((rows_a, bytes_a, messages_a), (rows_b, bytes_b, messages_b)) = (seen[0], seen[1]);
    assert_eq!(
        (rows_a, messages_a),
        (rows_b, messages_b),
        "same stream, same counts"
    );
    // The same rows in the same messages; only the query statistics' figures (elapsed and CPU
    // time as text, "9.87 msecs" against "10.12 msecs") may differ in width between two runs.
    assert!(
        bytes_a.abs_diff(bytes_b) <= 16,
        "same stream, nearly the same bytes: {bytes_a} and {bytes_b}"
    );
    assert_eq!(rows_a, 1500);
}

#[test]
fn faults_are_resumed_in_every_iteration() {
    let knobs = KnobSettings {
        max_message_bytes: 32 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    };
    let events = run(local(knobs), spec("SELECT * FROM Seed23 LIMIT 1000", 3));
    for it in &report(&events).iterations {
        assert_eq!(it.status(), Status::Ok, "{:?}", it.error());
        assert_eq!(it.answer.rows, 1000);
        assert!(
            it.answer.resumes > 0,
            "iteration {} had no resume",
            it.iteration
        );
    }
}

#[test]
fn bad_sql_is_an_error_iteration_with_the_server_message() {
    let events = run(
        local(KnobSettings::default()),
        spec("SELECT * FROM Nope", 2),
    );
    let report = report(&events);
    assert!(
        report
            .iterations
            .iter()
            .all(|i| i.status() == Status::Error)
    );
    let error = report.iterations[0].error().unwrap_or("");
    assert!(error.contains("Table not found: Nope"), "{error}");
}

#[test]
fn an_unreachable_endpoint_fails_within_5_seconds() {
    let closed = ClosedPort::new();
    let started = Instant::now();
    let events = run(
        Target::Endpoint(closed.host_port.clone()),
        spec("SELECT 1", 1),
    );
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    match events.as_slice() {
        [EngineEvent::Failed(message)] => {
            assert!(message.to_string().contains(&closed.host_port), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cancelling_stops_the_run_at_once() {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        message_delay_ms: 20,
        ..KnobSettings::default()
    };
    let engine = Engine::start(
        Job::Profile(local(knobs), spec("SELECT * FROM Seed23", 50)),
        Arc::new(|| {}),
    )
    .expect("starts");
    // Wait until the first iteration is streaming; progress counts its rows and their bytes.
    loop {
        match engine.profile_events().next().expect("events") {
            EngineEvent::Progress {
                rows, wire_bytes, ..
            } => {
                // A Seed23 row is about 1.1 KB on the wire, never under 300 bytes.
                assert!(rows > 0, "progress before any row");
                assert!(
                    wire_bytes >= rows * 300,
                    "{wire_bytes} bytes for {rows} rows"
                );
                break;
            }
            EngineEvent::Failed(m) => panic!("{m}"),
            _ => {}
        }
    }
    let cancelled = Instant::now();
    engine.cancel();
    let mut last = None;
    // The first iteration was streaming when it was cancelled: no record came before.
    let mut records = spanprof::engine::ReportCollector::default();
    for event in engine.profile_events() {
        if let EngineEvent::Iteration { record, .. } = &event {
            last = Some(record.as_ref().clone());
        }
        if let Some(report) = records.take(&event) {
            let waited = cancelled.elapsed();
            eprintln!("cancel to Finished: {waited:?}");
            // 100 ms is the target; the bound leaves room for a loaded 2-core machine.
            assert!(waited < Duration::from_millis(500), "{waited:?}");
            assert_eq!(
                report[0].iterations.len(),
                1,
                "no iteration after the cancel"
            );
            break;
        }
    }
    assert_eq!(last.map(|r| r.status()), Some(Status::Cancelled));
}

fn spanprof(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("spanprof runs")
}

#[test]
fn profile_writes_exports_and_compare_reads_them() {
    let dir = std::env::temp_dir().join(format!("spanprof-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let (csv, a, b) = (dir.join("a.csv"), dir.join("a.json"), dir.join("b.json"));
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 500",
        "--iterations",
        "3",
        "--rows",
        "1000",
        "--label",
        "wide",
        "--csv",
        csv.to_str().expect("utf-8"),
        "--json",
        a.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| **total** |"), "{stdout}");
    let text = std::fs::read_to_string(&csv).expect("the CSV");
    let mut lines = text.lines();
    assert!(lines.next().expect("a header").starts_with(
        "run,iteration,warmup,status,started_at,total_ms,dns_ms,tcp_ms,tls_ms,http2_ms,token_ms,session_ms,partition_query_ms,aborted_ms,begin_ms,lock_wait_ms,server_ms,network_ms,backoff_ms,wire_decode_ms,row_decode_ms,client_work_ms,descheduled_ms,batch_dml_ms,think_ms,commit_ms,untimed_ms,"
    ));
    assert_eq!(lines.count(), 4, "a warm-up and 3 timed iterations");

    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT Id FROM Seed23 LIMIT 500",
        "--iterations",
        "3",
        "--rows",
        "1000",
        "--label",
        "narrow",
        "--decoder",
        "reference",
        "--json",
        b.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success());
    let json = std::fs::read_to_string(&b).expect("the JSON report");
    assert!(json.contains(r#""decoder": "reference""#), "{json}");
    let json = std::fs::read_to_string(&a).expect("the JSON report");
    assert!(json.contains(r#""decoder": "fast""#), "the default: {json}");
    let out = spanprof(&[
        "compare",
        a.to_str().expect("utf-8"),
        b.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("narrow is") && stdout.contains("than wide"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unwritable_csv_path_is_a_clear_error() {
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT 1",
        "--iterations",
        "1",
        "--rows",
        "10",
        "--csv",
        "/nonexistent-dir/x.csv",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot write /nonexistent-dir/x.csv"),
        "{stderr}"
    );
}

#[test]
fn a_failed_iteration_makes_the_exit_code_non_zero() {
    let out = spanprof(&[
        "profile",
        "--sql",
        "SELECT * FROM Nope",
        "--iterations",
        "1",
        "--rows",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Table not found"));
}

#[test]
fn a_recording_made_through_faults_replays_to_the_same_rows() {
    let knobs = KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    };
    let recording =
        spanprof::engine::record(local(knobs), &spec("SELECT * FROM Seed23 LIMIT 800", 1))
            .expect("records");
    assert!(recording.timing.resumes > 0);
    let replayed = spanprof::wire::decode_stream_file(&recording.file).expect("the file decodes");
    let want: Vec<String> = (1..=800)
        .map(|id| {
            spanprof::wire::Row(spanprof::demo::seed23::row(id))
                .to_canonical_json()
                .to_string()
        })
        .collect();
    let got: Vec<String> = replayed
        .rows
        .iter()
        .map(|r| r.to_canonical_json().to_string())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn record_then_decode_on_the_command_line() {
    let path = std::env::temp_dir().join(format!("spanprof-record-{}.bin", std::process::id()));
    let out = spanprof(&[
        "record",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 120",
        "--rows",
        "500",
        "--out",
        path.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("recorded 120 rows"));
    let out = spanprof(&["decode", path.to_str().expect("utf-8")]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 120);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_missing_credentials_file_is_named_and_nothing_runs() {
    let out = spanprof(&[
        "profile",
        "--cloud",
        "--credentials",
        "/nonexistent/key.json",
        "--sql",
        "SELECT 1",
        "--project",
        "p",
        "--instance",
        "i",
        "--database",
        "d",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/key.json"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn findings_flag_a_slow_cold_start_and_outliers() {
    let events = run(local(KnobSettings::default()), spec("SELECT 1", 3));
    let mut report = report(&events);
    // Shape the totals: a cold first iteration, then 8 steady ones and one outlier.
    let totals = [50.0, 10.0, 10.5, 9.8, 10.2, 10.1, 9.9, 10.0, 10.3, 40.0];
    let template = report.iterations[1].clone();
    report.iterations = totals
        .iter()
        .enumerate()
        .map(|(i, &t)| spanprof::report::IterationRecord {
            iteration: i as u32,
            warmup: i == 0,
            total_ms: t,
            ..template.clone()
        })
        .collect();
    let text = spanprof::cli::findings(&report);
    assert!(text.contains("a slow cold start"), "{text}");
    assert!(
        text.contains("outlying iterations (MAD rule): #9 (40.0 ms)"),
        "{text}"
    );
}

#[test]
fn the_last_iteration_reports_a_bounded_preview_its_plan_and_stats() {
    let events = run(local(KnobSettings::default()), {
        let mut profile = spec("SELECT * FROM Seed23 LIMIT 2500", 2);
        profile.variants[0].mode = QueryMode::Profile;
        profile
    });
    let details: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Details(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(details.len(), 1, "one Details, for the last iteration");
    let d = details[0];
    assert_eq!(d.iteration, 2);
    assert_eq!(d.rows_total, 2500);
    assert_eq!(d.rows.len(), spanprof::engine::PREVIEW_ROWS);
    assert_eq!(d.columns.len(), 23);
    assert_eq!(d.columns[0], "Id INT64");
    assert!(d.rows.iter().all(|row| row.len() == 23));
    assert_eq!(d.rows[0][0], "1");
    let stats = d.stats.as_ref().expect("PROFILE returns statistics");
    assert!(stats.plan.as_ref().is_some_and(|plan| !plan.is_empty()));
    // Details come after the last Iteration and before Finished.
    let position = |f: fn(&EngineEvent) -> bool| events.iter().position(f).expect("event");
    assert!(
        position(|e| matches!(e, EngineEvent::Details(_)))
            < position(|e| matches!(e, EngineEvent::Finished(_)))
    );
}

#[test]
fn a_failed_last_iteration_reports_no_details() {
    let events = run(
        local(KnobSettings::default()),
        spec("SELECT * FROM NoSuchTable", 1),
    );
    assert!(!events.iter().any(|e| matches!(e, EngineEvent::Details(_))));
}
