//! The official clients, which nobody here wrote, against the built-in local instance through
//! SPANNER_EMULATOR_HOST: the Python client (google-cloud-spanner) gets the rows spanprof's own
//! decoder gets, and reads by key set (Read) the rows it names; and the Python, Node and Rust
//! clients each run read-write transactions there (transfers, with aborts they retry themselves),
//! landing each once; and the Python client creates a table there (UpdateDatabaseDdl), writes it
//! and reads it back.
//!
//! Needs the clients installed: `scripts/test` installs them and sets SPANPROF_PYTHON,
//! SPANPROF_NODE_MODULES and SPANPROF_RUST_CLIENT. The tests are `#[ignore]`d for a bare
//! `cargo test`, and fail loudly when run without a client, so they can never pass by skipping.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value as Json;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

use crate::client::TestClient;
use crate::golden::assert_canonical_eq;

const SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";
const CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

fn python() -> String {
    match std::env::var("SPANPROF_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "SPANPROF_PYTHON is not set: run ./scripts/test, which installs the official Python client \
             (google-cloud-spanner) in a virtual environment and points SPANPROF_PYTHON at it"
        ),
    }
}

async fn official_client_matches_our_decoder(knobs: KnobSettings) {
    let python = python();
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 20_000,
        knobs,
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_rows.py");
    let child = Command::new(python)
        .arg(script)
        .arg(SQL)
        .env("SPANNER_EMULATOR_HOST", host)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let pid = child.id();
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    // A hung client must fail the test, not stall the suite.
    let output = match tokio::time::timeout(CLIENT_TIMEOUT, waiting).await {
        Ok(joined) => joined.expect("joins").expect("the Python client runs"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("the official client did not finish within {CLIENT_TIMEOUT:?}");
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the official client failed: {stderr}"
    );
    let theirs: Vec<Json> = String::from_utf8(output.stdout)
        .expect("UTF-8 rows")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();

    let mut client = TestClient::connect(&instance.host_port()).await;
    let ours = client.query(SQL).await.expect("our client reads it too");
    assert_eq!(theirs.len(), 10_000, "{stderr}");
    assert_eq!(ours.rows.len(), 10_000);
    for (i, (row, theirs)) in ours.rows.iter().zip(&theirs).enumerate() {
        assert_canonical_eq(theirs, &row.to_canonical_json(), &format!("row {i}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_reads_the_local_instance() {
    official_client_matches_our_decoder(KnobSettings::default()).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_resumes_through_faults_in_16_kib_messages() {
    official_client_matches_our_decoder(KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    })
    .await;
}

/// With no faulted stream held for its resume, every resume runs the query again and skips what
/// the client already has: the skipped messages must be cut exactly as before, although the new
/// run's read timestamp (which the official client asks for) may take another number of bytes.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_resumes_through_faults_when_every_resume_runs_the_query_again()
{
    official_client_matches_our_decoder(KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        max_parked_streams: 0,
        ..KnobSettings::default()
    })
    .await;
}

/// The transfer with every third transaction aborted at its commit, then the balances read
/// by the official Python client: each transfer committed exactly once, as a client nobody here
/// wrote sees it.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_reads_each_transfer_committed_exactly_once() {
    let python = python();
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 1_000,
        knobs: KnobSettings {
            abort_every: 3,
            abort_retry_delay_ms: 20,
            ..KnobSettings::default()
        },
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let ran = tokio::task::spawn_blocking({
        let host = host.clone();
        move || {
            Command::new(env!("CARGO_BIN_EXE_spanprof"))
                .args([
                    "profile",
                    "--endpoint",
                    &host,
                    "--no-history",
                    "--read-write",
                    "--sql",
                    "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1; \
                     UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2",
                    "--iterations",
                    "9",
                    "--warmup",
                    "0",
                ])
                .output()
                .expect("spanprof runs")
        }
    })
    .await
    .expect("joins");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stdout)
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_rows.py");
    let read = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg("SELECT AccountId, Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId")
            .env("SPANNER_EMULATOR_HOST", host)
            .output()
            .expect("the Python client runs")
    })
    .await
    .expect("joins");
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(read.status.success(), "{stderr}");
    let rows: Vec<Json> = String::from_utf8_lossy(&read.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();
    assert_eq!(
        rows,
        [
            serde_json::json!(["1", "991"]),
            serde_json::json!(["2", "1009"])
        ],
        "{stderr}"
    );
}

/// An official client (`client`: the program and its arguments before the count) runs nine
/// transfers as read-write transactions on the local instance with every third aborted at its
/// commit: it retries each abort (as the RetryInfo asks) and each transfer lands once, so a client
/// nobody here wrote takes the instance's DML, commits and aborts.
async fn official_client_transfers(client: Vec<String>, env: Vec<(String, String)>) {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 1_000,
        knobs: KnobSettings {
            abort_every: 3,
            abort_retry_delay_ms: 20,
            ..KnobSettings::default()
        },
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let ran = tokio::task::spawn_blocking(move || {
        Command::new(&client[0])
            .args(&client[1..])
            .arg("9")
            .envs(env)
            .env("SPANNER_EMULATOR_HOST", host)
            .output()
            .expect("the official client runs")
    })
    .await
    .expect("joins");
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "{stderr}");
    let balances: Json = serde_json::from_slice(&ran.stdout).expect("the balances as a JSON array");
    assert_eq!(balances, serde_json::json!([991, 1009]), "{stderr}");
    assert!(
        stderr.contains("9 transfers in 12 attempts"),
        "three aborted and retried: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_runs_transfers_and_retries_the_aborted_ones() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/transfer.py");
    official_client_transfers(vec![python(), script.into()], Vec::new()).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Node client: run ./scripts/test"]
async fn the_official_node_client_runs_transfers_and_retries_the_aborted_ones() {
    let modules = match std::env::var("SPANPROF_NODE_MODULES") {
        Ok(m) if !m.is_empty() => m,
        _ => panic!(
            "SPANPROF_NODE_MODULES is not set: run ./scripts/test, which installs the official \
             Node client (@google-cloud/spanner) and points SPANPROF_NODE_MODULES at it"
        ),
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node/transfer.js");
    official_client_transfers(
        vec!["node".into(), script.into()],
        vec![("NODE_PATH".into(), modules)],
    )
    .await;
}

/// The Rust client (0.34.8-preview) runs its transactions on a multiplexed session, begins each
/// inline with its first UPDATE, sends no precommit token (the instance returns none), and names
/// the aborted transaction in the retry's `multiplexed_session_previous_transaction_id`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Rust client's driver: run ./scripts/test"]
async fn the_official_rust_client_runs_transfers_and_retries_the_aborted_ones() {
    let binary = match std::env::var("SPANPROF_RUST_CLIENT") {
        Ok(b) if !b.is_empty() => b,
        _ => panic!(
            "SPANPROF_RUST_CLIENT is not set: run ./scripts/test, which builds the official Rust \
             client's driver (examples/clients/rust) and points SPANPROF_RUST_CLIENT at it"
        ),
    };
    official_client_transfers(vec![binary, "transfer".into()], Vec::new()).await;
}

/// The official Python client reads Accounts by key set (Read and StreamingRead, not a query):
/// two keys asked out of order come back in key order, a half-open range gives its three rows, and
/// `all` with a limit the first rows; so a read that a client nobody here wrote encodes (INT64 keys
/// as strings, its KeyRange, its limit) is served as it expects.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_reads_accounts_by_keys_and_by_a_range() {
    let python = python();
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 1_000,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_keys.py");
    let read = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .env("SPANNER_EMULATOR_HOST", host)
            .output()
            .expect("the Python client runs")
    });
    let read = tokio::time::timeout(CLIENT_TIMEOUT, read)
        .await
        .expect("the official client finishes in time")
        .expect("joins");
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(read.status.success(), "{stderr}");
    let reads: Vec<Json> = String::from_utf8_lossy(&read.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let rows = |ids: &[i64]| -> Json {
        ids.iter()
            .map(|id| serde_json::json!([id.to_string(), "1000"]))
            .collect()
    };
    assert_eq!(
        reads,
        [
            serde_json::json!({"read": "keys", "rows": rows(&[1, 2])}),
            serde_json::json!({"read": "range", "rows": rows(&[5, 6, 7])}),
            serde_json::json!({"read": "all", "rows": rows(&[1, 2, 3])}),
        ],
        "{stderr}"
    );
}

/// The official Python client changes the local instance's schema (UpdateDatabaseDdl, its
/// operation awaited with `result()`): creates a table and an index, writes a row by DML and one by
/// a mutation in one read-write transaction, and reads them back by SQL, typed as the columns were
/// declared (a DATE column as a date), and by key; ALTER TABLE is refused at the call, and a
/// duplicate table fails the operation with Spanner's message.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_python_client_creates_a_table_writes_and_reads_it() {
    let python = python();
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 100,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/update_ddl.py");
    let run = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .env("SPANNER_EMULATOR_HOST", host)
            .output()
            .expect("the Python client runs")
    });
    let run = tokio::time::timeout(CLIENT_TIMEOUT, run)
        .await
        .expect("the official client finishes in time")
        .expect("joins");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let steps: Vec<Json> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        steps,
        [
            serde_json::json!({"step": "ddl", "statements": 2}),
            serde_json::json!({"step": "query", "rows": [
                ["int:1", "str:One", "date:2024-01-02", "float:1.5"],
                ["int:2", "str:Two", "date:2025-03-04", "float:2.5"],
            ]}),
            serde_json::json!({"step": "read", "rows": [["2", "2025-03-04"]]}),
            serde_json::json!({"step": "alter", "refused": "InvalidArgument"}),
            serde_json::json!({"step": "duplicate",
                "failed": "FailedPrecondition: Duplicate name in schema: tracks."}),
        ],
        "{stderr}"
    );
}
