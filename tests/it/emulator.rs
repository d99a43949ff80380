//! `spanprof seed` against the real Cloud Spanner emulator: the demo tables load, read back equal to
//! the generators' rows, and seeding again reuses everything. Each test starts its own emulator
//! through `spanprof::emulator` on a loopback port the emulator binds itself, and stops it when done.

use std::net::TcpStream;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use spanprof::cli::{SeedArgs, run_seed};
use spanprof::client::admin::Ensured;
use spanprof::client::error_chain;
use spanprof::emulator::{Emulator, SeedSummary, SeedTarget, seed_blocking};
use spanprof::wire::{Row, Value};

use crate::client::TestClient;
use crate::support::ClosedPort;

/// Starts the installed emulator on a loopback port it picks itself. Panics when it is missing or
/// does not start: these tests never pass without running.
pub(crate) fn start_emulator() -> Emulator {
    start_emulator_with(&[])
}

/// [`start_emulator`] with the emulator's own `flags`.
pub(crate) fn start_emulator_with(flags: &[&str]) -> Emulator {
    match Emulator::start_with_flags("127.0.0.1:0", flags) {
        Ok(emulator) => emulator,
        Err(e) => {
            let ci = if std::env::var("CI").is_ok_and(|v| v == "true") {
                "CI: "
            } else {
                ""
            };
            panic!(
                "{ci}the Cloud Spanner emulator did not start: {}",
                error_chain(&e)
            )
        }
    }
}

pub(crate) fn seed_args(endpoint: &str, project: &str, rows: u64) -> SeedArgs {
    SeedArgs {
        endpoint: Some(endpoint.to_owned()),
        project: project.to_owned(),
        instance: "test-instance".to_owned(),
        database: "test-db".to_owned(),
        rows,
        connect_timeout: spanprof::client::Timeouts::DEFAULT.connect,
        call_timeout: spanprof::client::Timeouts::DEFAULT.call,
    }
}

/// Runs the seed in-process and returns what it printed.
pub(crate) fn seed(args: &SeedArgs) -> String {
    let mut out = Vec::new();
    if let Err(e) = run_seed(args, &mut out) {
        panic!(
            "seed failed: {e:#}\nprinted:\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    String::from_utf8(out).expect("the seed prints UTF-8")
}

/// Seeds through the library, as the app does; panics if it fails.
fn seed_library(host_port: &str, project: &str, rows: u64) -> SeedSummary {
    let target = SeedTarget {
        endpoint: host_port.to_owned(),
        project: project.to_owned(),
        instance: "test-instance".to_owned(),
        database: "test-db".to_owned(),
        seed23_rows: rows,
        timeouts: spanprof::client::Timeouts::DEFAULT,
    };
    seed_blocking(&target).unwrap_or_else(|e| panic!("seed failed: {}", error_chain(&e)))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// `SELECT COUNT(*) FROM Seed23` and the rows with `Id <= 50`, in key order, through the test client.
fn read_back(host_port: &str) -> (i64, Vec<Row>) {
    runtime().block_on(async {
        let mut client = TestClient::connect(host_port).await;
        let count = client
            .query("SELECT COUNT(*) FROM Seed23")
            .await
            .expect("the count query runs");
        let count = match count.rows.first().map(|r| &r.0[..]) {
            Some([Value::Int64(n)]) => *n,
            other => panic!("COUNT(*) gave {other:?}"),
        };
        let rows = client
            .query("SELECT * FROM Seed23 WHERE Id <= 50 ORDER BY Id")
            .await
            .expect("the rows query runs")
            .rows;
        (count, rows)
    })
}

/// Asserts that `rows` are Seed23's rows 1 to 50 as the generator makes them, in canonical JSON
/// (numbers compared as numbers).
fn assert_generated_rows(rows: &[Row]) {
    assert_eq!(rows.len(), 50, "rows with Id <= 50");
    for (id, row) in (1..).zip(rows) {
        let expected = Row(spanprof::demo::seed23::row(id)).to_canonical_json();
        let got = row.to_canonical_json();
        if got != expected {
            let columns = spanprof::demo::seed23::table().columns;
            let diffs: Vec<String> = columns
                .iter()
                .zip(got.as_array().into_iter().flatten())
                .zip(expected.as_array().into_iter().flatten())
                .filter(|((_, g), e)| !same_json(g, e))
                .map(|((c, g), e)| format!("{}: got {g}, expected {e}", c.name))
                .collect();
            panic!("row {id} differs:\n{}", diffs.join("\n"));
        }
    }
}

/// JSON equality with numbers compared by value.
fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        _ => a == b,
    }
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn seed_loads_the_demo_tables_into_the_emulator() {
    let emulator = start_emulator();
    let args = seed_args(emulator.address(), "test-project", 10_000);

    let first = seed(&args);
    assert!(first.contains("instance projects/test-project/instances/test-instance: created"));
    assert!(first.contains(
        "database projects/test-project/instances/test-instance/databases/test-db: created"
    ));
    assert!(first.contains("Seed23: wrote 10000 rows"), "{first}");
    assert!(first.contains("Blobs: wrote 14 rows"), "{first}");

    let (count, rows) = read_back(emulator.address());
    assert_eq!(count, 10_000);
    assert_generated_rows(&rows);

    let second = seed(&args);
    assert!(second.contains("test-instance: reused"), "{second}");
    assert!(second.contains("test-db: reused\n"), "{second}");
    let (count, rows) = read_back(emulator.address());
    assert_eq!(count, 10_000);
    assert_generated_rows(&rows);
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn an_emulator_started_on_port_0_listens_until_dropped() {
    let emulator = start_emulator();
    let address = emulator.address().to_owned();
    let port: u16 = address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("{address} is not host:port"));
    assert_ne!(port, 0, "the emulator says the port it bound");
    assert!(TcpStream::connect(&address).is_ok(), "{address} accepts");
    drop(emulator);
    assert!(
        TcpStream::connect(&address).is_err(),
        "{address} still accepts connections after the emulator was dropped"
    );
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn the_library_seed_says_what_it_created_reused_and_wrote() {
    let emulator = start_emulator();
    let first = seed_library(emulator.address(), "test-project", 250);
    assert_eq!(
        first.instance_name,
        "projects/test-project/instances/test-instance"
    );
    assert_eq!(first.instance, Ensured::Created);
    assert_eq!(first.database, Ensured::Created);
    let written: Vec<(&str, u64)> = first.tables.iter().map(|t| (t.table, t.rows)).collect();
    let demo = spanprof::demo::music::singer_rows().len() as u64
        + spanprof::demo::music::album_rows().len() as u64
        + spanprof::demo::blobs::ids().count() as u64
        + spanprof::demo::accounts::ids().count() as u64;
    assert_eq!(written[0], ("Seed23", 250));
    assert_eq!(written.last(), Some(&("Accounts", 1_000)));
    assert_eq!(first.rows(), 250 + demo);
    assert!(
        first.elapsed
            >= first
                .tables
                .iter()
                .map(|t| t.elapsed)
                .sum::<std::time::Duration>()
    );

    let second = seed_library(emulator.address(), "test-project", 250);
    let reused = Ensured::Reused {
        added_tables: Vec::new(),
    };
    assert_eq!((&second.instance, &second.database), (&reused, &reused));
    assert_eq!(second.rows(), first.rows());
    let (count, rows) = read_back(emulator.address());
    assert_eq!(count, 250);
    assert_generated_rows(&rows);
}

fn spanprof_seed(args: &[&str], emulator_host: Option<&str>) -> (Output, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command.arg("seed").args(args);
    match emulator_host {
        Some(host) => command.env("SPANNER_EMULATOR_HOST", host),
        None => command.env_remove("SPANNER_EMULATOR_HOST"),
    };
    let started = Instant::now();
    let output = command.output().expect("the spanprof binary runs");
    (output, started.elapsed())
}

const TARGET: [&str; 6] = [
    "--project",
    "p1",
    "--instance",
    "test-instance",
    "--database",
    "test-db",
];

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn seed_cli_reports_what_it_did() {
    let emulator = start_emulator();
    let mut args = vec!["--endpoint", emulator.address(), "--rows", "100"];
    args.extend(TARGET);
    let (output, _) = spanprof_seed(&args, None);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("created"), "{stdout}");
    assert!(stdout.contains("Seed23: wrote 100 rows"), "{stdout}");

    // The endpoint may also come from SPANNER_EMULATOR_HOST; everything is reused then.
    let (output, _) = spanprof_seed(&TARGET, Some(emulator.address()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("test-db: reused"), "{stdout}");
}

#[test]
fn seed_cli_rejects_a_missing_or_unreachable_endpoint() {
    let (output, _) = spanprof_seed(&TARGET, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--endpoint"), "{stderr}");
    assert!(stderr.contains("SPANNER_EMULATOR_HOST"), "{stderr}");

    // A port nobody listens on.
    let closed = ClosedPort::new();
    let endpoint = closed.host_port.as_str();
    let mut args = vec!["--endpoint", endpoint];
    args.extend(TARGET);
    let (output, took) = spanprof_seed(&args, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(stderr.contains(endpoint), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn ensure_database_adds_only_the_missing_tables() {
    use spanprof::client::admin::{self, Ensured};
    use spanprof::client::rows;

    let emulator = start_emulator();
    let ddl: Vec<String> = spanprof::demo::tables()
        .iter()
        .map(spanprof::demo::DemoTable::ddl)
        .collect();
    runtime().block_on(async {
        let channel = spanprof::client::connect_plaintext(emulator.address())
            .await
            .expect("connects to the emulator");
        let ensure = |statements: Vec<String>| {
            let channel = channel.clone();
            async move {
                admin::ensure_database(
                    channel,
                    "test-project",
                    "test-instance",
                    "test-db",
                    &statements,
                )
                .await
                .expect("ensure_database succeeds")
            }
        };
        let instance = admin::ensure_instance(channel.clone(), "test-project", "test-instance")
            .await
            .expect("ensure_instance succeeds");
        assert_eq!(instance, Ensured::Created);
        assert_eq!(ensure(ddl[..1].to_vec()).await, Ensured::Created);
        assert_eq!(
            ensure(ddl.clone()).await,
            Ensured::Reused {
                added_tables: vec![
                    "Singers".into(),
                    "Albums".into(),
                    "Blobs".into(),
                    "Accounts".into()
                ]
            }
        );
        assert_eq!(
            ensure(ddl.clone()).await,
            Ensured::Reused {
                added_tables: Vec::new()
            }
        );

        // Rows of the wrong width are refused before anything is sent.
        let database = admin::database_name("test-project", "test-instance", "test-db");
        let table = spanprof::demo::blobs::table();
        let short = std::iter::once(vec![Value::Int64(1)]);
        let err = rows::load_rows(channel.clone(), &database, &table, short, 10)
            .await
            .expect_err("a short row is refused");
        assert!(err.to_string().contains("Blobs"), "{err}");
    });
}

/// The acceptance run: 10,000 seeded rows profiled in PROFILE mode for 5 iterations; every
/// timed iteration has all its rows, the server agrees, and the phases add up to the total.
#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn profile_against_the_emulator_in_profile_mode() {
    let emulator = start_emulator();
    seed_library(emulator.address(), "test-project", 10_000);
    let dir = std::env::temp_dir().join(format!("spanprof-emu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let csv = dir.join("run.csv");
    let json = dir.join("run.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            emulator.address(),
            "--sql",
            "SELECT * FROM Seed23",
        ])
        .args(["--query-mode", "profile", "--iterations", "5", "--csv"])
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("spanprof runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::Reader::from_path(&csv).expect("the CSV");
    let header = reader.headers().expect("a header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a record")).collect();
    let timed: Vec<&csv::StringRecord> = records
        .iter()
        .filter(|r| &r[col("warmup")] == "false")
        .collect();
    assert_eq!(timed.len(), 5);
    let number = |r: &csv::StringRecord, name: &str| -> f64 {
        r[col(name)]
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {:?}", &r[col(name)]))
    };
    for r in timed {
        assert_eq!(&r[col("status")], "ok", "{:?}", &r[col("error")]);
        assert_eq!(&r[col("rows")], "10000");
        assert_eq!(&r[col("server_rows")], "10000");
        assert!(number(r, "server_elapsed_ms") > 0.0);
        // The raw measurements: the whole wait, the decodes' wall time and the rest.
        let phases: f64 = [
            "stream_wait_ms",
            "wire_decode_wall_ms",
            "row_decode_wall_ms",
            "outside_wait_and_decode_ms",
        ]
        .iter()
        .map(|p| number(r, p))
        .sum();
        let total = number(r, "total_ms");
        assert!(
            (phases - total).abs() <= 0.02 * total,
            "phases {phases} vs total {total}"
        );
    }
    // The emulator's PROFILE answers carry an empty plan: the report keeps none.
    let report = std::fs::read(&json).expect("the JSON report");
    let runs = spanprof::export::read_json(&report).expect("a report");
    assert!(runs[0].plans.is_empty(), "{:?}", runs[0].plans);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn an_unknown_database_is_a_clear_error() {
    let emulator = start_emulator();
    seed_library(emulator.address(), "test-project", 10);
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            emulator.address(),
            "--sql",
            "SELECT 1",
        ])
        .args(["--database", "no-such-db", "--iterations", "1"])
        .output()
        .expect("spanprof runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no-such-db") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// `spanprof profile` against the emulator with `extra` arguments: 1,000 seeded rows, three
/// iterations; returns stdout and the CSV's records by column name.
fn profile_emulator(extra: &[&str]) -> (String, Vec<std::collections::HashMap<String, String>>) {
    let emulator = start_emulator();
    seed_library(emulator.address(), "test-project", 1_000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let csv = dir.path().join("run.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(["profile", "--endpoint", emulator.address()])
        .args(["--sql", "SELECT * FROM Seed23", "--iterations", "3"])
        .args(extra)
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("spanprof runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::Reader::from_path(&csv).expect("the CSV");
    let header = reader.headers().expect("a header").clone();
    let records = reader
        .records()
        .map(|r| {
            let r = r.expect("a record");
            header
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect();
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    (stdout, records)
}

/// The emulator returns no query statistics in with-stats mode; the findings say so,
/// and what it costs, instead of leaving the server's columns silently empty.
#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn with_stats_on_the_emulator_says_no_statistics_were_returned() {
    let (stdout, records) = profile_emulator(&["--query-mode", "with-stats"]);
    assert!(
        stdout.contains(
            "no query statistics returned: server time and the lost-row check are unavailable; \
             the emulator returns them only in profile mode"
        ),
        "{stdout}"
    );
    assert_eq!(records.len(), 4, "a warm-up and three iterations");
    for r in &records {
        assert_eq!(r["status"], "ok", "{:?}", r["error"]);
        assert_eq!(r["rows"], "1000");
        assert_eq!(
            (r["server_elapsed_ms"].as_str(), r["server_rows"].as_str()),
            ("", "")
        );
    }
}

/// Against the emulator, the default mode is one that returns the statistics: the
/// server's row count is there to check every iteration's rows against, from the command line
/// and from the app (picking the emulator target).
#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn the_emulator_default_mode_returns_server_rows() {
    use egui_kittest::kittest::Queryable as _;
    let (stdout, records) = profile_emulator(&[]);
    assert!(!stdout.contains("no query statistics"), "{stdout}");
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(r["status"], "ok", "{:?}", r["error"]);
        assert_eq!(
            (r["rows"].as_str(), r["server_rows"].as_str()),
            ("1000", "1000")
        );
        assert!(
            r["server_elapsed_ms"]
                .parse::<f64>()
                .is_ok_and(|ms| ms > 0.0),
            "{r:?}"
        );
    }

    let emulator = start_emulator();
    seed_library(emulator.address(), "test-project", 1_000);
    let mut h = crate::app::app();
    h.get_by_label("Emulator").click();
    h.run_steps(2);
    h.state_mut().settings_mut().connection.emulator.host_port = emulator.address().to_owned();
    crate::app::set_query(&mut h, "SELECT * FROM Seed23", 2, "emulated");
    crate::app::run_to_end(&mut h);
    let report = &h.state().runs()[0].report;
    assert_eq!(report.config.query_mode, spanprof::kind::QueryMode::Profile);
    assert_eq!(report.iterations.len(), 2);
    for i in &report.iterations {
        assert_eq!(i.status(), spanprof::report::Status::Ok, "{:?}", i.error());
        assert_eq!((i.answer.rows, i.answer.server_rows), (1000, Some(1000)));
    }
    assert!(h.query_by_label_contains("no query statistics").is_none());
}

/// A partitioned read against the real emulator returns exactly the plain query's rows
/// (the emulator implements PartitionQuery; its partitions come back in any order).
#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn partitioned_reads_of_the_emulator_return_exactly_the_plain_querys_rows() {
    use spanprof::client::{
        DatabasePath, Decoding, Endpoint, Partitioned, Query, QueryMode, RequestOptions,
        ResumePolicy, Session, Timeouts,
    };
    use spanprof::wire::{DecoderKind, RowsView};
    let emulator = start_emulator();
    seed_library(emulator.address(), "test-project", 3000);
    let endpoint = Endpoint::plaintext(emulator.address());
    runtime().block_on(async {
        let session = Session::open(&endpoint, &DatabasePath::default(), Timeouts::DEFAULT)
            .await
            .expect("a session");
        let read = async |options: RequestOptions| {
            let prepared = session
                .prepare(&Query {
                    sql: "SELECT Id, Name, Counter FROM Seed23".into(),
                    mode: QueryMode::Normal,
                    options,
                    ..Query::default()
                })
                .expect("prepares");
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
                .expect("the read runs");
            rows.sort();
            (rows, timing.partitions.len())
        };
        let (plain, _) = read(RequestOptions::default()).await;
        assert_eq!(plain.len(), 3000);
        let (partitioned, partitions) = read(RequestOptions {
            partitioned: Some(Partitioned {
                data_boost: false,
                max_partitions: Some(4),
            }),
            ..RequestOptions::default()
        })
        .await;
        assert!(partitions >= 1, "read as partitions");
        assert_eq!(partitioned, plain);
    });
}
