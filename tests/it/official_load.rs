//! The official Python client (google-cloud-spanner) under load against the bounded local instance:
//! 20 clients at once, with and without injected faults, each gets every row; and a query whose
//! column would change type gets a clean error instead of values of another type.
//!
//! Needs the client installed (SPANPROF_PYTHON, set by `scripts/test`); `#[ignore]`d for a bare
//! `cargo test`, and failing loudly when run without it, as in `official.rs`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

use crate::client::TestClient;
use crate::golden::assert_canonical_eq;

const CLIENTS: usize = 20;
const ROWS: usize = 3000;
const CLIENT_TIMEOUT: Duration = Duration::from_secs(600);

fn python() -> String {
    match std::env::var("SPANPROF_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "SPANPROF_PYTHON is not set: run ./scripts/test, which installs the official Python client \
             (google-cloud-spanner) in a virtual environment and points SPANPROF_PYTHON at it"
        ),
    }
}

/// Starts `tests/python/read_rows.py SQL` against `host`.
fn read_rows(host: &str, sql: &str) -> Child {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_rows.py");
    Command::new(python())
        .arg(script)
        .arg(sql)
        .env("SPANNER_EMULATOR_HOST", host)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client starts")
}

/// Waits for `children` together, killing them all if they are not done by the timeout.
async fn outputs(children: Vec<Child>) -> Vec<std::process::Output> {
    let pids: Vec<u32> = children.iter().map(Child::id).collect();
    let waiting = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("the Python client runs"))
            .collect::<Vec<_>>()
    });
    match tokio::time::timeout(CLIENT_TIMEOUT, waiting).await {
        Ok(joined) => joined.expect("joins"),
        Err(_) => {
            for pid in pids {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
            panic!("the official clients did not finish within {CLIENT_TIMEOUT:?}");
        }
    }
}

async fn twenty_clients_each_get_every_row(knobs: KnobSettings) {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 20_000,
        knobs,
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let sql = format!("SELECT * FROM Seed23 LIMIT {ROWS}");
    let started = Instant::now();
    let children = (0..CLIENTS).map(|_| read_rows(&host, &sql)).collect();
    let outputs = outputs(children).await;
    eprintln!(
        "{CLIENTS} official clients read {ROWS} rows each in {:?}",
        started.elapsed()
    );

    let mut client = TestClient::connect(&host).await;
    let ours = client.query(&sql).await.expect("our client reads it too");
    assert_eq!(ours.rows.len(), ROWS);
    for (n, output) in outputs.into_iter().enumerate() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "client {n} failed: {stderr}");
        let theirs: Vec<Json> = String::from_utf8(output.stdout)
            .expect("UTF-8 rows")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON row"))
            .collect();
        assert_eq!(theirs.len(), ROWS, "client {n}: {stderr}");
        for (i, (row, theirs)) in ours.rows.iter().zip(&theirs).enumerate() {
            assert_canonical_eq(
                theirs,
                &row.to_canonical_json(),
                &format!("client {n}, row {i}"),
            );
        }
    }
    assert_eq!(
        instance.occupancy().parked_streams,
        0,
        "no stream left held"
    );
    // A query's thread gives its slot back just after its last message: allow it that moment.
    let ended = Instant::now();
    while instance.occupancy().queries > 0 && ended.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(instance.occupancy().queries, 0, "nothing left running");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn twenty_official_clients_at_once_each_get_every_row() {
    twenty_clients_each_get_every_row(KnobSettings::default()).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn twenty_official_clients_resuming_through_faults_each_get_every_row() {
    twenty_clients_each_get_every_row(KnobSettings {
        max_message_bytes: 16 * 1024,
        fail_every: 3,
        ..KnobSettings::default()
    })
    .await;
}

/// The official client raised ValueError on text sent in an INT64 column; now a clean error.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: run ./scripts/test"]
async fn the_official_client_gets_a_clean_error_for_a_column_that_changes_type() {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 10,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 300) \
               SELECT CASE WHEN x < 200 THEN x ELSE 'abc' END AS v FROM c";
    // read_rows.py run so that an exception leaves at once too (interpreter finalization can hang
    // in grpcio, as read_rows.py explains), with the exception's text on stderr.
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_rows.py");
    let wrapper = "import os, runpy, sys, traceback\n\
                   script = sys.argv[1]\n\
                   sys.argv = sys.argv[1:]\n\
                   try:\n    runpy.run_path(script, run_name='read_rows')['main']()\n\
                   except BaseException:\n    traceback.print_exc()\n    sys.stderr.flush()\n    os._exit(1)\n\
                   os._exit(0)\n";
    let child = Command::new(python())
        .args(["-c", wrapper, script, sql])
        .env("SPANNER_EMULATOR_HOST", instance.host_port())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let output = outputs(vec![child]).await.remove(0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the query failed for it too");
    assert!(stderr.contains("InvalidArgument"), "{stderr}");
    assert!(stderr.contains("\"v\""), "{stderr}");
    assert!(!stderr.contains("ValueError"), "{stderr}");
}
