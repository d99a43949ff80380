//! `spanprof load --read-write` against the built-in local instance: each request one transfer
//! transaction. Alone (one client), every third new transaction is scripted to abort at its commit,
//! and the step's aborts, attempts and goodput follow exactly; with two clients the instance's own
//! conflicts abort some, and whatever the count, the step's bookkeeping matches the balances read
//! back (every committed transfer landed exactly once); under an arrival rate with a session
//! allowed one transaction at a time, overlapping transactions never share a session.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value as Json;
use spanprof::load::Latencies;
use spanprof::server::KnobSettings;

use crate::read_write::{TRANSFER, balances, instance};

/// `spanprof load --read-write` on `host` with `args`; the JSON report's steps.
async fn load(host: &str, sql: &str, args: &[&str]) -> Vec<Json> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("load.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--endpoint", host, "--read-write"])
        .args(["--sql", sql, "--json", json.to_str().expect("UTF-8")])
        .args(args);
    let out = tokio::task::spawn_blocking(move || command.output().expect("spanprof runs"))
        .await
        .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("goodput"), "the summary says it: {stdout}");
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    report["steps"].as_array().expect("steps").clone()
}

fn number(v: &Json) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

pub(crate) fn count(v: &Json) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a count: {v}"))
}

/// The step's histogram of attempts, attempts → transactions.
fn attempts(step: &Json) -> BTreeMap<u64, u64> {
    step["attempts"]
        .as_object()
        .expect("an attempts histogram")
        .iter()
        .map(|(k, n)| (k.parse().expect("a number of attempts"), count(n)))
        .collect()
}

/// Checks what holds in every read-write step: the histogram counts every transaction, the
/// aborts per transaction and the attempts per second follow from it, goodput is at most the
/// attempts, and the parts add up to the mean latency from the actual start. Returns the step's
/// committed transactions.
pub(crate) fn bookkeeping(step: &Json) -> u64 {
    let committed = count(&step["committed"]);
    assert!(committed > 0, "{step}");
    assert_eq!(committed, count(&step["count"]));
    let errors = count(&step["errors"]);
    let hist = attempts(step);
    let transactions: u64 = hist.values().sum();
    assert_eq!(transactions, committed + errors, "{step}");
    let all_attempts: u64 = hist.iter().map(|(k, n)| k * n).sum();
    let aborts: u64 = step["aborts_at"]
        .as_object()
        .map_or(0, |m| m.values().map(count).sum());
    if errors == 0 {
        assert_eq!(all_attempts, transactions + aborts, "{step}");
    }
    let per_transaction = number(&step["aborts_per_transaction"]);
    assert!(
        (per_transaction - aborts as f64 / transactions as f64).abs() < 1e-9,
        "{step}"
    );
    let duration = number(&step["duration_s"]);
    let (goodput, attempts_per_s) = (
        number(&step["committed_per_s"]),
        number(&step["attempts_per_s"]),
    );
    assert!(attempts_per_s >= goodput, "{step}");
    assert!(
        (goodput * duration - committed as f64).abs() < 1e-6,
        "{step}"
    );
    assert!(
        (attempts_per_s * duration - all_attempts as f64).abs() < 1e-6,
        "{step}"
    );
    let parts: f64 = step["parts"]
        .as_object()
        .expect("parts")
        .values()
        .map(number)
        .sum();
    let from_start = Latencies::decode(step["histogram_uncorrected"].as_str().expect("encoded"))
        .expect("a histogram");
    let mean_ms = from_start.histogram().mean() / 1e3;
    // The histogram keeps three significant digits; the parts start once the request has its
    // session and headers.
    assert!(
        (parts - mean_ms).abs() <= 0.01 * mean_ms + 0.1,
        "parts {parts} ms against a mean of {mean_ms} ms: {step}"
    );
    committed
}

#[tokio::test(flavor = "multi_thread")]
async fn alone_every_third_new_transfer_aborts_once_at_its_commit_and_each_commits_once() {
    let server = instance(KnobSettings {
        abort_every: 3,
        abort_retry_delay_ms: 20,
        ..KnobSettings::default()
    })
    .await;
    let host = server.host_port();
    let steps = load(
        &host,
        TRANSFER,
        &["--concurrency", "1", "--step-duration", "1s"],
    )
    .await;
    let [step] = steps.as_slice() else {
        panic!("one step: {steps:?}")
    };
    let committed = bookkeeping(step);
    assert_eq!(count(&step["errors"]), 0, "{step}");
    // The warm-up is the first new transaction, the step's are the next `committed`: of those
    // 1 + committed, every third aborted once at its commit and committed on its retry.
    let aborted = (1 + committed) / 3;
    assert_eq!(
        attempts(step),
        BTreeMap::from([(1, committed - aborted), (2, aborted)]),
        "{step}"
    );
    assert_eq!(step["aborts_at"]["commit"], aborted, "{step}");
    assert!(step["parts"]["backoff"].as_f64().is_some_and(|ms| ms > 0.0));
    let moved = 1 + committed as i64;
    assert_eq!(balances(&host, &[1, 2]).await, [1000 - moved, 1000 + moved]);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_clients_abort_each_other_and_every_committed_transfer_lands_exactly_once() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let steps = load(
        &host,
        TRANSFER,
        &["--concurrency", "2", "--step-duration", "2s"],
    )
    .await;
    let [step] = steps.as_slice() else {
        panic!("one step: {steps:?}")
    };
    let committed = bookkeeping(step);
    // Without scripted aborts every abort is a conflict between the two clients, retried: a
    // transaction that gave up would be an ABORTED error, and would have moved nothing.
    let given_up = step["errors_by_status"]["ABORTED"].as_u64().unwrap_or(0);
    assert_eq!(given_up, count(&step["errors"]), "{step}");
    let moved = 1 + committed as i64;
    assert_eq!(balances(&host, &[1, 2]).await, [1000 - moved, 1000 + moved]);
}

#[tokio::test(flavor = "multi_thread")]
async fn under_an_arrival_rate_overlapping_transactions_never_share_a_session() {
    // A session allowed one open transaction: a second begun in it would be refused.
    let server = instance(KnobSettings {
        max_transactions_per_session: 1,
        ..KnobSettings::default()
    })
    .await;
    let host = server.host_port();
    // 40 ms each, one every 20 ms: two or three always in flight at once.
    let steps = load(
        &host,
        "SELECT AccountId FROM Accounts WHERE AccountId = 1; SLEEP 40ms",
        &["--rate", "50", "--step-duration", "1s"],
    )
    .await;
    let [step] = steps.as_slice() else {
        panic!("one step: {steps:?}")
    };
    assert_eq!(count(&step["errors"]), 0, "no session refused one: {step}");
    assert_eq!(count(&step["unfinished"]), 0, "{step}");
    assert_eq!(count(&step["dropped"]), 0, "{step}");
    let committed = bookkeeping(step);
    assert_eq!(committed, 50, "every start committed: {step}");
    assert_eq!(attempts(step), BTreeMap::from([(1, 50)]), "{step}");
    assert!(number(&step["p50_ms"]) >= 40.0, "they overlapped: {step}");
}

/// A read-write transaction is not read as partitions: `load --read-write --partitioned` is refused
/// before anything connects, as `profile` refuses it.
#[test]
fn a_partitioned_read_write_load_is_refused_before_it_connects() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "load",
            "--endpoint",
            "127.0.0.1:9",
            "--read-write",
            "--partitioned",
            "--sql",
            "UPDATE Accounts SET Balance = 1 WHERE AccountId = 1",
            "--concurrency",
            "1",
        ])
        .output()
        .expect("spanprof runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("leave out --partitioned with --read-write"),
        "{stderr}"
    );
}
