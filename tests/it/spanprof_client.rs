//! `spanprof client`: programs run against the local instance, their time split at the server and
//! every row they print checked. spanprof's own driver (`spanprof driver`, with its deliberate
//! faults) runs in every bare `cargo test`; the official Python, Node and Rust clients, through the
//! drivers in `examples/clients/`, need their installs (`scripts/test` makes them and sets
//! SPANPROF_PYTHON, SPANPROF_NODE_MODULES and SPANPROF_RUST_CLIENT) and are `#[ignore]`d otherwise,
//! failing loudly when run without them.

use std::time::Duration;

use spanprof::engine::{Engine, EngineEvent, Job, SubjectSpec};
use spanprof::part::Part;
use spanprof::report::{IterationRecord, RunReport, Status};
use spanprof::server::{KnobSettings, ServerConfig, Shape};
use spanprof::subject::command::CommandLine;
use spanprof::wire::DecoderKind;

const SMALL_SQL: &str = "SELECT * FROM Seed23 LIMIT 2000";
const SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";

fn driver(args: &[&str]) -> CommandLine {
    let words = std::iter::once(env!("CARGO_BIN_EXE_spanprof"))
        .chain(std::iter::once("driver"))
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    CommandLine::new(words).expect("a command")
}

fn spec(command: CommandLine, sql: &str, knobs: KnobSettings) -> SubjectSpec {
    SubjectSpec {
        sql: sql.into(),
        iterations: 1,
        warmup: 0,
        server: ServerConfig {
            port: 0,
            seed23_rows: 20_000,
            knobs,
            connections: Default::default(),
        },
        compare: None,
        limit: Duration::from_secs(300),
        ..SubjectSpec::new(command)
    }
}

fn knobs(shape: Shape, fail_every: u64) -> KnobSettings {
    KnobSettings {
        max_message_bytes: 16_384,
        fail_every,
        shape,
        ..KnobSettings::default()
    }
}

/// Runs a client profile to its end; its reports.
fn profile(spec: SubjectSpec) -> Vec<RunReport> {
    let engine = Engine::start(Job::Subject(spec), std::sync::Arc::new(|| {})).expect("starts");
    let mut records = spanprof::engine::ReportCollector::default();
    for event in engine.profile_events() {
        if let EngineEvent::Failed(e) = &event {
            panic!("the client profile failed to start: {e}");
        }
        if let Some(reports) = records.take(&event) {
            return reports;
        }
    }
    panic!("the engine ended without a report");
}

fn only(reports: &[RunReport]) -> &IterationRecord {
    let [report] = reports else {
        panic!("one run expected, {} came", reports.len());
    };
    let [record] = report.iterations.as_slice() else {
        panic!("one iteration expected");
    };
    record
}

/// Every iteration of every run ended ok, the program's with every row checked and each of the
/// server's phases measured.
fn assert_all_checked(reports: &[RunReport], rows: u64) {
    for report in reports {
        for r in &report.iterations {
            assert_eq!(
                r.status(),
                Status::Ok,
                "{}, iteration {}: {:?}",
                r.run,
                r.iteration,
                r.error()
            );
            let parts = r.accounting().parts;
            for part in Part::SUBJECT {
                assert!(parts.has(part), "{}: {} not measured", r.run, part.label());
            }
            if !report.config.command.is_empty() {
                assert_eq!(
                    r.subject.and_then(|s| s.check).map(|c| c.as_str()),
                    Some("values"),
                    "{}",
                    r.run
                );
                assert_eq!(
                    (r.answer.rows, r.answer.server_rows),
                    (rows, Some(rows)),
                    "{}",
                    r.run
                );
            }
        }
    }
}

#[test]
fn a_driver_that_drops_the_rows_after_the_first_message_fails_with_the_first_difference_named() {
    let reports = profile(spec(
        driver(&["--drop-after-first"]),
        SMALL_SQL,
        knobs(Shape::Production, 0),
    ));
    let r = only(&reports);
    assert_eq!(r.status(), Status::Error);
    assert!(r.answer.rows > 0 && r.answer.rows < 2000, "{r:?}");
    assert_eq!(
        r.error(),
        Some(
            format!(
                "{} of 2,000 rows: rows after message 1 missing",
                r.answer.rows
            )
            .as_str()
        )
    );
    assert_eq!(r.answer.server_rows, Some(2000));
}

#[test]
fn a_driver_that_duplicates_rows_after_a_broken_stream_fails_too() {
    let reports = profile(spec(
        driver(&["--duplicate-after-resume"]),
        SMALL_SQL,
        knobs(Shape::Production, 40),
    ));
    let r = only(&reports);
    assert_eq!(r.status(), Status::Error);
    let error = r.error().unwrap_or_default();
    assert!(r.answer.rows > 2000, "{r:?}");
    assert!(
        error.starts_with(&format!(
            "{} of 2,000 rows: row ",
            spanprof::text::count(r.answer.rows)
        )) && error.ends_with("repeats row 1: rows duplicated"),
        "{error}"
    );
}

#[test]
fn spanprof_s_own_driver_reads_every_shape_through_faults_beside_the_decoder_and_the_floor() {
    for shape in Shape::ALL {
        let reports = profile(SubjectSpec {
            iterations: 2,
            compare: Some(DecoderKind::Fast),
            ..spec(driver(&[]), SMALL_SQL, knobs(shape, 3))
        });
        assert_eq!(
            reports.len(),
            3,
            "{shape}: the program, spanprof, the floor"
        );
        assert_all_checked(&reports, 2000);
        let resumes: u32 = reports[0].iterations.iter().map(|r| r.answer.resumes).sum();
        assert!(resumes > 0, "{shape}: the faults fired");
        let verdict = spanprof::analysis::subject_comparison(&reports).expect("a verdict");
        assert!(
            verdict.spanprof_ms.is_some() && verdict.floor_ms.is_some(),
            "{verdict:?}"
        );
        assert!(
            verdict.to_string().contains("the client adds"),
            "{shape}: {verdict}"
        );
        // The runs are interleaved: each run's timed iterations alternate with the others'.
        let seqs = |i: usize| -> Vec<u32> {
            reports[i]
                .iterations
                .iter()
                .filter(|r| !r.warmup)
                .filter_map(|r| r.seq)
                .collect()
        };
        assert!(
            seqs(0)[0] < seqs(1)[0] && seqs(1)[0] < seqs(0)[1],
            "{:?} {:?}",
            seqs(0),
            seqs(1)
        );
    }
}

#[test]
fn a_count_only_driver_has_its_count_checked() {
    let reports = profile(spec(driver(&["--count"]), SMALL_SQL, knobs(Shape::Edge, 0)));
    let r = only(&reports);
    assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
    assert_eq!(
        (
            r.subject.and_then(|s| s.check).map(|c| c.as_str()),
            r.answer.rows
        ),
        (Some("count"), 2000)
    );
}

#[test]
fn a_client_that_reads_slowly_keeps_the_server_blocked_about_as_long_as_it_sleeps() {
    let blocked = |sleep_ms: u64| {
        // About 22 MB, well over the driver's 8 MiB stream window: most of it waits on the reader.
        let reports = profile(spec(
            driver(&["--sleep-per-message-ms", &sleep_ms.to_string()]),
            "SELECT * FROM Seed23 LIMIT 20000",
            knobs(Shape::Production, 0),
        ));
        let r = only(&reports).clone();
        assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
        (
            r.subject.and_then(|s| s.blocked_ms).expect("measured"),
            r.answer.messages,
        )
    };
    let (fast, _) = blocked(0);
    let (slow, messages) = blocked(3);
    let slept = messages as f64 * 3.0;
    // The client's transport takes the first 8 MiB without reading, so the server waits for part
    // of the sleeping, never for more than all of it; a client that reads at once leaves it
    // waiting for next to nothing.
    assert!(
        slow > slept / 5.0 && slow < slept * 1.5,
        "blocked {slow:.0} ms for {slept:.0} ms of sleep"
    );
    assert!(
        slow > 10.0 * fast.max(1.0),
        "blocked {slow:.0} ms slow, {fast:.1} ms fast"
    );
}

#[test]
fn the_wire_floor_reads_the_bytes_through_faults_without_waiting_longer_at_each() {
    use spanprof::client::{Decoding, Query, ResumePolicy};
    use spanprof::engine::Target;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let target = Target::Local(ServerConfig {
            port: 0,
            seed23_rows: 5_000,
            knobs: knobs(Shape::Production, 3),
            connections: Default::default(),
        });
        let (_instance, session) = crate::variants::local_session(&target).await;
        let query = session
            .prepare(&Query {
                sql: SMALL_SQL.into(),
                params: Vec::new(),
                mode: spanprof::client::QueryMode::Normal,
                options: Default::default(),
            })
            .expect("prepared");
        let floor = session
            .execute_bytes_only(&query, ResumePolicy::default())
            .await
            .expect("the floor reads it");
        let decoded = session
            .execute(
                &query,
                ResumePolicy::default(),
                Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
            )
            .await
            .expect("the decoder reads it");
        assert_eq!(decoded.rows, 2000);
        assert_eq!(floor.rows, 0, "nothing decoded");
        assert!(floor.resumes > 20, "{} resumes", floor.resumes);
        assert_eq!(floor.resumes, decoded.resumes, "the same faults");
        assert_eq!(floor.counters.messages, decoded.counters.messages);
        // 5 ms before each retry, not doubling across retries that each made progress.
        assert!(
            floor.total < Duration::from_secs(10),
            "{} resumes took {:?}",
            floor.resumes,
            floor.total
        );
    });
}

#[test]
fn the_command_line_prints_each_iteration_and_the_verdict_and_exits_3_on_a_wrong_row() {
    let bin = env!("CARGO_BIN_EXE_spanprof");
    let dir = std::env::temp_dir().join(format!("spanprof-client-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let json = dir.join("client.json");
    let csv = dir.join("client.csv");
    let common = [
        "client",
        "--rows",
        "5000",
        "--iterations",
        "1",
        "--warmup",
        "0",
        "--max-message-bytes",
        "16384",
        "--sql",
        SMALL_SQL,
    ];
    let ok = std::process::Command::new(bin)
        .args(common)
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .args(["--", bin, "driver"])
        .output()
        .expect("spanprof runs");
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(stdout.contains("values ok"), "{stdout}");
    assert!(stdout.contains("the client adds"), "{stdout}");
    assert!(stdout.contains("| blocked |"), "{stdout}");
    let report = std::fs::read_to_string(&json).expect("the JSON report");
    assert!(
        report.contains("\"blocked_ms\"") && report.contains("\"shape\""),
        "{report}"
    );
    let table = std::fs::read_to_string(&csv).expect("the CSV");
    assert!(
        table
            .lines()
            .next()
            .is_some_and(|h| h.contains("blocked_ms,tail_ms,") && h.contains(",check,"))
    );
    assert!(table.contains(",values"), "{table}");

    let broken = std::process::Command::new(bin)
        .args(common)
        .args(["--no-compare", "--", bin, "driver", "--drop-after-first"])
        .output()
        .expect("spanprof runs");
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert_eq!(broken.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("of 2,000 rows: rows after message 1 missing"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// The official clients
// ---------------------------------------------------------------------------------------------

/// What a prerequisite the test command installs is, or a loud failure: never a silent pass.
fn installed(var: &str, what: &str) -> String {
    match std::env::var(var) {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "{var} is not set: run ./scripts/test, which installs {what} and points {var} at it"
        ),
    }
}

fn python_driver() -> CommandLine {
    let python = installed(
        "SPANPROF_PYTHON",
        "the official Python client (google-cloud-spanner)",
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/clients/python_client.py"
    );
    CommandLine::new(vec![python, script.into()]).expect("a command")
}

fn node_driver() -> CommandLine {
    let modules = installed(
        "SPANPROF_NODE_MODULES",
        "the official Node client (@google-cloud/spanner)",
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/clients/node_client.js"
    );
    // `env` puts NODE_PATH in the driver's environment, as the README's one-line command does.
    CommandLine::new(vec![
        "env".into(),
        format!("NODE_PATH={modules}"),
        "node".into(),
        script.into(),
    ])
    .expect("a command")
}

fn rust_driver() -> CommandLine {
    let binary = installed(
        "SPANPROF_RUST_CLIENT",
        "the official Rust client's driver (examples/clients/rust, google-cloud-spanner)",
    );
    CommandLine::new(vec![binary]).expect("a command")
}

/// A client's known bug: the shape that shows it, and whether an iteration's error is it.
type KnownBug = (Shape, fn(&str) -> bool);

/// What the official client must show: 5 iterations of the query through `command`, with a fault
/// every third message, in every shape, every row checked, beside spanprof's decoder and the floor;
/// except in `known_bug`'s shape, where the client's first wrong value must be the one described.
fn official_client_in_every_shape(command: CommandLine, known_bug: Option<KnownBug>) {
    for shape in Shape::ALL {
        let reports = profile(SubjectSpec {
            iterations: 5,
            warmup: 1,
            compare: Some(DecoderKind::Fast),
            ..spec(command.clone(), SQL, knobs(shape, 3))
        });
        if let Some((_, is_the_bug)) = known_bug.filter(|(s, _)| *s == shape) {
            for r in &reports[0].iterations {
                let error = r.error().unwrap_or("no error");
                assert!(is_the_bug(error), "{shape}: {error}");
            }
            continue;
        }
        assert_all_checked(&reports, 10_000);
        let verdict = spanprof::analysis::subject_comparison(&reports).expect("a verdict");
        eprintln!("{shape}: {verdict}");
        assert!(
            verdict.subject_ms > 0.0 && verdict.floor_ms.is_some(),
            "{verdict:?}"
        );
    }
}

#[test]
#[ignore = "needs the official Python client: run ./scripts/test"]
fn the_official_python_client_reads_every_row_right_in_every_shape_through_faults() {
    official_client_in_every_shape(python_driver(), None);
}

#[test]
#[ignore = "needs the official Node client: run ./scripts/test"]
fn the_official_node_client_reads_every_row_right_in_every_shape_through_faults() {
    // Node 8.13 merges a chunked list continued with an empty list (`[]`, legal, and what the
    // edge shape sends) by appending `undefined`: every such row gains a null element.
    let extra_null = |error: &str| {
        error.starts_with("10,000 of 10,000 rows: row ")
            && error.contains("ARRAY<")
            && error.ends_with(",null]")
    };
    official_client_in_every_shape(node_driver(), Some((Shape::Edge, extra_null)));
}

#[test]
#[ignore = "needs the official Node client: run ./scripts/test"]
fn the_official_node_client_resumes_a_single_use_query_it_names_by_its_read_timestamp() {
    // Resuming, Node 8.13 sends back the first message's `metadata.transaction` (a read
    // timestamp, no id) as the transaction's id; it must be served as the single-use read it is.
    let reports = profile(spec(node_driver(), SQL, knobs(Shape::Production, 3)));
    let r = only(&reports);
    assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
    assert_eq!(
        (
            r.subject.and_then(|s| s.check).map(|c| c.as_str()),
            r.answer.rows
        ),
        (Some("values"), 10_000)
    );
    assert!(
        r.answer.resumes > 10,
        "it resumed ({} times)",
        r.answer.resumes
    );
}

#[test]
#[ignore = "needs the official Rust client's driver: run ./scripts/test"]
fn the_official_rust_client_reads_every_row_right_in_every_shape_through_faults() {
    official_client_in_every_shape(rust_driver(), None);
}
