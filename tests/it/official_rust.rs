//! Google's official Rust client (the google-cloud-spanner crate, which nobody here wrote) reads
//! `spanprof serve` through the driver in `examples/clients/rust/`, plain and through faults, in
//! the production and emulator shapes, and every row it prints equals the row spanprof's own
//! client reads from a fault-free instance.
//!
//! Needs the driver built: `scripts/test` builds it and sets SPANPROF_RUST_CLIENT. The tests are
//! `#[ignore]`d for a bare `cargo test`, and fail loudly when run without it, so they can never
//! pass by skipping.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value as Json;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

use crate::client::TestClient;
use crate::golden::assert_canonical_eq;
use crate::serve_process::ServeProcess;

const SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";
const ROWS: &str = "20000";
const CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

/// The driver's binary, or a loud failure.
fn rust_client() -> String {
    match std::env::var("SPANPROF_RUST_CLIENT") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "SPANPROF_RUST_CLIENT is not set: run ./scripts/test, which builds the official Rust \
             client's driver (examples/clients/rust) and points SPANPROF_RUST_CLIENT at it"
        ),
    }
}

/// Runs the driver against `host`; its rows, or what it printed on failing.
async fn read_through_the_crate(host: &str) -> Result<Vec<Json>, String> {
    let child = Command::new(rust_client())
        .env("SPANNER_EMULATOR_HOST", host)
        .env("SPANPROF_SQL", SQL)
        .env("SPANPROF_PROJECT", "test-project")
        .env("SPANPROF_INSTANCE", "test-instance")
        .env("SPANPROF_DATABASE", "test-db")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Rust client's driver starts");
    let pid = child.id();
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    // A hung client must fail the test, not stall the suite.
    let output = match tokio::time::timeout(CLIENT_TIMEOUT, waiting).await {
        Ok(joined) => joined.expect("joins").expect("the driver runs"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("the official Rust client did not finish within {CLIENT_TIMEOUT:?}");
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(stderr);
    }
    String::from_utf8(output.stdout)
        .expect("UTF-8 rows")
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{e}: {l}")))
        .collect()
}

/// The query's rows as spanprof's own client reads them from a fault-free instance.
async fn reference_rows() -> Vec<Json> {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: ROWS.parse().expect("a number"),
        knobs: KnobSettings::default(),
    })
    .await
    .expect("the local instance starts");
    let mut client = TestClient::connect(&instance.host_port()).await;
    let ours = client.query(SQL).await.expect("our client reads it");
    ours.rows.iter().map(|r| r.to_canonical_json()).collect()
}

/// `spanprof serve` with `args` and a Seed23 of 20,000 rows, read by the crate: 10,000 of 10,000
/// rows, each equal to ours.
async fn the_crate_reads_serve(args: &[&str]) {
    let server = ServeProcess::start(&[&["--rows", ROWS], args].concat());
    let theirs = match read_through_the_crate(&server.host).await {
        Ok(rows) => rows,
        Err(stderr) => panic!("serve {args:?}: the official Rust client failed: {stderr}"),
    };
    let ours = reference_rows().await;
    assert_eq!(ours.len(), 10_000);
    assert_eq!(theirs.len(), 10_000, "serve {args:?}");
    for (i, (theirs, ours)) in theirs.iter().zip(&ours).enumerate() {
        assert_canonical_eq(theirs, ours, &format!("serve {args:?}, row {i}"));
    }
}

const FAULTS: [&str; 4] = ["--max-message-bytes", "16384", "--fail-every", "3"];

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Rust client's driver: run ./scripts/test"]
async fn the_official_rust_client_reads_serve_in_the_production_shape_plain_and_through_faults() {
    the_crate_reads_serve(&[]).await;
    the_crate_reads_serve(&FAULTS).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Rust client's driver: run ./scripts/test"]
async fn the_official_rust_client_reads_serve_in_the_emulator_shape_plain_and_through_faults() {
    the_crate_reads_serve(&["--shape", "emulator"]).await;
    the_crate_reads_serve(&[&["--shape", "emulator"][..], &FAULTS].concat()).await;
}
