//! `spanprof seed` against the real Cloud Spanner emulator: the demo tables load, read back equal to
//! the generators' rows, and seeding again reuses everything. Each test starts its own emulator on a
//! free loopback port and stops it when done.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use spanprof::cli::{SeedArgs, run_seed};
use spanprof::wire::{Row, Value};

use crate::client::TestClient;

/// How long the emulator may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `emulator_main`, killed when dropped.
struct Emulator {
    child: Child,
    host_port: String,
}

impl Emulator {
    /// Starts the emulator on a free loopback port and waits until it accepts connections.
    fn start() -> Self {
        let binary = emulator_binary();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let host_port = format!("127.0.0.1:{port}");
        let child = Command::new(&binary)
            .args(["--host_port", &host_port])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut emulator = Emulator { child, host_port };
        emulator.wait_until_ready();
        emulator
    }

    fn wait_until_ready(&mut self) {
        let started = Instant::now();
        loop {
            if TcpStream::connect(&self.host_port).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the emulator exited before accepting connections: {status}");
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the emulator did not accept connections on {} within {} s",
                self.host_port,
                START_TIMEOUT.as_secs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `emulator_main`: `$SPANPROF_EMULATOR_MAIN`, else where the Debian package installed it. Panics
/// when it is missing: these tests never pass without running.
fn emulator_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SPANPROF_EMULATOR_MAIN") {
        return PathBuf::from(path);
    }
    let listed = Command::new("dpkg")
        .args(["-L", "google-cloud-cli-spanner-emulator"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|line| line.ends_with("/emulator_main"))
                .map(PathBuf::from)
        });
    match listed {
        Some(path) if path.is_file() => path,
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => panic!(
            "CI: the Cloud Spanner emulator is missing; install google-cloud-cli-spanner-emulator \
             or set SPANPROF_EMULATOR_MAIN"
        ),
        _ => panic!(
            "the Cloud Spanner emulator is missing (no emulator_main in google-cloud-cli-spanner-emulator); \
             install it or set SPANPROF_EMULATOR_MAIN to its emulator_main"
        ),
    }
}

fn seed_args(endpoint: &str, project: &str, rows: u64) -> SeedArgs {
    SeedArgs {
        endpoint: Some(endpoint.to_owned()),
        project: project.to_owned(),
        instance: "test-instance".to_owned(),
        database: "test-db".to_owned(),
        rows,
    }
}

/// Runs the seed in-process and returns what it printed.
fn seed(args: &SeedArgs) -> String {
    let mut out = Vec::new();
    if let Err(e) = run_seed(args, &mut out) {
        panic!(
            "seed failed: {e:#}\nprinted:\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    String::from_utf8(out).expect("the seed prints UTF-8")
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
    let emulator = Emulator::start();
    let args = seed_args(&emulator.host_port, "test-project", 10_000);

    let first = seed(&args);
    assert!(first.contains("instance projects/test-project/instances/test-instance: created"));
    assert!(first.contains(
        "database projects/test-project/instances/test-instance/databases/test-db: created"
    ));
    assert!(first.contains("Seed23: wrote 10000 rows"), "{first}");
    assert!(first.contains("Blobs: wrote 14 rows"), "{first}");

    let (count, rows) = read_back(&emulator.host_port);
    assert_eq!(count, 10_000);
    assert_generated_rows(&rows);

    let second = seed(&args);
    assert!(second.contains("test-instance: reused"), "{second}");
    assert!(second.contains("test-db: reused\n"), "{second}");
    let (count, rows) = read_back(&emulator.host_port);
    assert_eq!(count, 10_000);
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
    let emulator = Emulator::start();
    let mut args = vec!["--endpoint", &emulator.host_port, "--rows", "100"];
    args.extend(TARGET);
    let (output, _) = spanprof_seed(&args, None);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("created"), "{stdout}");
    assert!(stdout.contains("Seed23: wrote 100 rows"), "{stdout}");

    // The endpoint may also come from SPANNER_EMULATOR_HOST; everything is reused then.
    let (output, _) = spanprof_seed(&TARGET, Some(&emulator.host_port));
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
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    let endpoint = format!("127.0.0.1:{port}");
    let mut args = vec!["--endpoint", endpoint.as_str()];
    args.extend(TARGET);
    let (output, took) = spanprof_seed(&args, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(stderr.contains(&endpoint), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn ensure_database_adds_only_the_missing_tables() {
    use spanprof::client::admin::{self, Ensured};

    let emulator = Emulator::start();
    let ddl: Vec<String> = spanprof::demo::tables()
        .iter()
        .map(spanprof::demo::DemoTable::ddl)
        .collect();
    runtime().block_on(async {
        let channel = spanprof::client::connect_plaintext(&emulator.host_port)
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
                added_tables: vec!["Singers".into(), "Albums".into(), "Blobs".into()]
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
        let err = admin::load_rows(channel.clone(), &database, &table, short, 10)
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
    let emulator = Emulator::start();
    seed(&seed_args(&emulator.host_port, "test-project", 10_000));
    let dir = std::env::temp_dir().join(format!("spanprof-emu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let csv = dir.join("run.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            &emulator.host_port,
            "--sql",
            "SELECT * FROM Seed23",
        ])
        .args(["--query-mode", "profile", "--iterations", "5", "--csv"])
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
        assert!(number(r, "server_ms") > 0.0);
        let phases: f64 = ["network_ms", "wire_decode_ms", "row_decode_ms", "other_ms"]
            .iter()
            .map(|p| number(r, p))
            .sum();
        let total = number(r, "total_ms");
        assert!(
            (phases - total).abs() <= 0.02 * total,
            "phases {phases} vs total {total}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn an_unknown_database_is_a_clear_error() {
    let emulator = Emulator::start();
    seed(&seed_args(&emulator.host_port, "test-project", 10));
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            &emulator.host_port,
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
