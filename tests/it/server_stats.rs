//! `spanprof load --read-write --server-stats`: after a contention run, the target's own lock and
//! transaction statistics beside the run's figures. On the built-in instance (a statistics
//! interval of 2 s, so that one closes without waiting a minute) LOCK_STATS_TOP_MINUTE's rows start
//! at the hot row and hold the lock wait the run was told of, and TXN_STATS for the run's tag count
//! its attempts; the same table read by the official Python client from a `spanprof serve` child
//! gives the same row range and seconds; the emulator, which serves no statistics, is said to serve
//! none, with no figure made up for it.

use std::process::Command;

use serde_json::Value as Json;

use crate::emulator::{seed, seed_args, start_emulator};
use crate::serve_process::ServeProcess;
use spanprof::analysis::server_stats::lock_waits_agree;

/// The contention lab's hot row: read it, hold it 50 ms, write it.
const HOT: &str = "SELECT Balance FROM Accounts WHERE AccountId = 1; SLEEP 50ms; \
                   UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";

/// `spanprof load --read-write --server-stats` of the hot row at concurrency 4 for 3 s, with
/// `target` arguments: the JSON report and the summary printed.
async fn load(target: &[&str]) -> (Json, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("load.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--read-write", "--server-stats"])
        .args(["--concurrency", "4", "--step-duration", "3s"])
        .args(["--server-stats-wait", "30s"])
        .args(["--sql", HOT, "--json", json.to_str().expect("UTF-8")])
        .args(target);
    let out = tokio::task::spawn_blocking(move || command.output().expect("spanprof runs"))
        .await
        .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    (report, stdout)
}

/// The run's own lock wait in seconds: every wait the target named to it, over its steps.
fn run_lock_wait(report: &Json) -> f64 {
    report["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["conflicts"]["wait_ms"].as_f64().expect("a step's waits") / 1e3)
        .sum()
}

/// The run's attempts: each step's histogram of attempts per transaction, summed.
fn run_attempts(report: &Json) -> u64 {
    let steps = report["steps"].as_array().expect("steps");
    let histograms = steps.iter().flat_map(|s| {
        s["attempts"]
            .as_object()
            .expect("a histogram of attempts")
            .iter()
    });
    histograms
        .map(|(k, n)| k.parse::<u64>().expect("attempts") * n.as_u64().expect("a count"))
        .sum()
}

/// The served rows of the report's `server_stats`, checked to be served.
fn served(report: &Json) -> &Json {
    let read = &report["server_stats"]["read"];
    assert_eq!(read["status"], "served", "{read}");
    read
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_instances_lock_statistics_hold_the_hot_row_and_the_runs_own_lock_wait() {
    let (report, summary) = load(&["--local", "--stats-interval", "2s"]).await;
    let stats = &report["server_stats"];
    let tag = stats["tag"].as_str().expect("a tag");
    assert!(tag.starts_with("spanprof-load-"), "{tag}");
    let read = served(&report);
    let rows = read["lock_rows"].as_array().expect("lock rows");
    assert!(
        !rows.is_empty(),
        "a contention run leaves lock waits: {read}"
    );
    for row in rows {
        assert_eq!(row["row_range_start_key"], "Accounts(1)", "{row}");
    }
    let theirs: f64 = rows
        .iter()
        .map(|r| r["lock_wait_seconds"].as_f64().expect("seconds"))
        .sum();
    let ours = run_lock_wait(&report);
    assert!(ours > 0.0, "the run was told of its waits: {report}");
    assert!(
        lock_waits_agree(ours, theirs),
        "LOCK_STATS say {theirs} s, the run was told of {ours} s"
    );
    let attempts: u64 = read["txn_rows"]
        .as_array()
        .expect("txn rows")
        .iter()
        .inspect(|r| assert_eq!(r["tag"], tag, "only the run's tag: {r}"))
        .map(|r| r["attempt_count"].as_u64().expect("a count"))
        .sum();
    assert_eq!(attempts, run_attempts(&report), "{read}");
    assert!(summary.contains("The target's own statistics"), "{summary}");
    assert!(
        summary.contains("attempts: the run counted") && summary.contains("they agree"),
        "{summary}"
    );
    assert!(
        summary.contains("hottest key: the run's accounts(1) is LOCK_STATS'"),
        "{summary}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_emulator_serves_no_lock_statistics_and_none_are_made_up() {
    let emulator = start_emulator();
    let host = emulator.address().to_owned();
    let seeding = host.clone();
    tokio::task::spawn_blocking(move || seed(&seed_args(&seeding, "test-project", 10)))
        .await
        .expect("joins");
    let (report, summary) = load(&["--endpoint", &host]).await;
    let read = &report["server_stats"]["read"];
    assert_eq!(read["status"], "not_served", "{read}");
    assert!(read.get("lock_rows").is_none(), "no rows: {read}");
    let why = read["why"].as_str().expect("the server's answer");
    assert!(!why.is_empty());
    let block = summary
        .split("The target's own statistics")
        .nth(1)
        .expect("the block")
        .split("\nnote:")
        .next()
        .unwrap_or_default();
    assert!(
        block.contains("no lock statistics on this target"),
        "{summary}"
    );
    for made_up in ["0.000 s", "TXN_STATS 0", "they agree", "LOCK_STATS say"] {
        assert!(!block.contains(made_up), "{made_up:?} in {block}");
    }
}

/// The official Python client's rows of SPANNER_SYS.LOCK_STATS_TOP_MINUTE on `host`.
fn python_lock_rows(host: &str) -> Vec<Json> {
    let python = std::env::var("SPANPROF_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .expect("SPANPROF_PYTHON is set (scripts/test installs the official Python client)");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/read_sys_stats.py"
    );
    let out = Command::new(python)
        .arg(script)
        .env("SPANNER_EMULATOR_HOST", host)
        .output()
        .expect("the Python client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python client failed: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the official Python client: SPANPROF_PYTHON (scripts/test sets it)"]
async fn the_official_python_client_reads_the_lock_statistics_the_run_reported() {
    let server = ServeProcess::start(&["--stats-interval", "2s"]);
    let (report, _) = load(&["--endpoint", &server.host]).await;
    let read = served(&report);
    let intervals: Vec<&str> = read["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .map(|i| i.as_str().expect("an interval's end"))
        .collect();
    let host = server.host.clone();
    let theirs = tokio::task::spawn_blocking(move || python_lock_rows(&host))
        .await
        .expect("joins");
    // The run's intervals, as the Python client spells a TIMESTAMP (`+00:00`, not `Z`).
    let ours_in_python: Vec<&Json> = theirs
        .iter()
        .filter(|r| {
            let end = r["interval_end"].as_str().expect("an end");
            intervals
                .iter()
                .any(|i| end.replace("+00:00", "Z") == *i || end.starts_with(&i[..19]))
        })
        .collect();
    assert!(!ours_in_python.is_empty(), "{theirs:?} {intervals:?}");
    for row in &ours_in_python {
        assert_eq!(row["row_range_start_key"], "Accounts(1)", "{row}");
    }
    let python_seconds: f64 = ours_in_python
        .iter()
        .map(|r| r["lock_wait_seconds"].as_f64().expect("seconds"))
        .sum();
    let reported: f64 = read["lock_rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["lock_wait_seconds"].as_f64().expect("seconds"))
        .sum();
    assert!(
        (python_seconds - reported).abs() < 1e-6,
        "Python reads {python_seconds} s, spanprof read {reported} s"
    );
    let ours = run_lock_wait(&report);
    assert!(
        lock_waits_agree(ours, python_seconds),
        "Python reads {python_seconds} s, the run was told of {ours} s"
    );
}

/// With `--vary`, each variant is a run of its own: its transactions carry a tag of their own, and
/// the target's statistics are read after it, for it (the pessimistic run's attempts are its
/// tag's in TXN_STATS; the optimistic run's are counted by neither table, and it is said so).
#[tokio::test(flavor = "multi_thread")]
async fn each_variant_reads_the_targets_statistics_of_its_own_run() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("v.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--read-write", "--server-stats"])
        .args(["--stats-interval", "1s", "--server-stats-wait", "30s"])
        .args(["--concurrency", "2", "--step-duration", "1s"])
        .args(["--vary", "lock-mode=pessimistic,optimistic"])
        .args(["--sql", HOT, "--json", json.to_str().expect("UTF-8")]);
    let out = tokio::task::spawn_blocking(move || command.output().expect("spanprof runs"))
        .await
        .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Json = serde_json::from_slice(&std::fs::read(&json).expect("the JSON")).expect("JSON");
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let tags: Vec<&str> = runs
        .iter()
        .map(|r| r["server_stats"]["tag"].as_str().expect("a tag per run"))
        .collect();
    assert_ne!(tags[0], tags[1], "each run its own tag");
    let pessimistic = served(&runs[0]);
    let attempts: u64 = pessimistic["txn_rows"]
        .as_array()
        .expect("txn rows")
        .iter()
        .inspect(|r| assert_eq!(r["tag"], tags[0], "{r}"))
        .map(|r| r["attempt_count"].as_u64().expect("a count"))
        .sum();
    assert_eq!(attempts, run_attempts(&runs[0]), "{pessimistic}");
    // The optimistic run's transactions are in neither table: said so, no figure held against it.
    served(&runs[1]);
    assert_eq!(runs[1]["server_stats"]["lock_free"], true);
    assert!(runs[0]["server_stats"].get("lock_free").is_none());
    assert!(
        stdout.contains("the target's lock and transaction statistics count none of them"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("The target's own statistics").count(),
        2,
        "{stdout}"
    );
}
