//! `spanprof profile --read-write` against the built-in local instance: the transfer with
//! scripted aborts (every third transaction aborted at its commit with a 20 ms RetryInfo), every
//! attempt in the report, the parts adding up in the JSON and the CSV, and each transfer committed
//! exactly once; a statement that fails after a successful UPDATE rolls the transaction back; on
//! a multiplexed session each commit carries its precommit token (no retry reply) and the server's
//! statistics give the server's part; a commit whose answer is lost is asked again, and the
//! server's answer (the commit it made) tells that it committed, once.

use std::process::Command;

use serde_json::Value as Json;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof::wire::Value;

use crate::client::TestClient;

pub(crate) const TRANSFER: &str = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1; \
                        UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2";

pub(crate) async fn instance(knobs: KnobSettings) -> LocalInstance {
    LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 1_000,
        knobs,
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts")
}

/// The balances of `ids`, read in a new session.
pub(crate) async fn balances(host: &str, ids: &[i64]) -> Vec<i64> {
    let mut client = TestClient::connect(host).await;
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    let sql = format!(
        "SELECT Balance FROM Accounts WHERE AccountId IN ({}) ORDER BY AccountId",
        list.join(", ")
    );
    let read = client.query(&sql).await.expect("the balances read");
    read.rows
        .iter()
        .map(|row| match row.values().first() {
            Some(Value::Int64(n)) => *n,
            other => panic!("a balance is an INT64: {other:?}"),
        })
        .collect()
}

fn spanprof(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .output()
        .expect("spanprof runs")
}

fn ms(value: &Json) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("a number: {value}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_third_transfer_aborts_once_at_its_commit_and_each_commits_exactly_once() {
    let server = instance(KnobSettings {
        abort_every: 3,
        abort_retry_delay_ms: 20,
        ..KnobSettings::default()
    })
    .await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let out = tokio::task::spawn_blocking({
        let (host, json, csv) = (host.clone(), json.clone(), csv.clone());
        move || {
            spanprof(&[
                "profile",
                "--endpoint",
                &host,
                "--no-history",
                "--read-write",
                "--sql",
                TRANSFER,
                "--iterations",
                "9",
                "--warmup",
                "0",
                "--json",
                json.to_str().expect("UTF-8"),
                "--csv",
                csv.to_str().expect("UTF-8"),
            ])
        }
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("9 transactions, 9 committed; 1.33 attempts per transaction"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 aborts (3 at commit; 3 with RetryInfo)"),
        "{stdout}"
    );

    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    let iterations = report["runs"][0]["iterations"]
        .as_array()
        .expect("iterations");
    assert_eq!(iterations.len(), 9);
    for (i, it) in iterations.iter().enumerate() {
        let attempts = it["attempts"].as_array().expect("a transaction's attempts");
        let parts = it["parts"].as_object().expect("parts");
        let sum: f64 = parts.values().map(ms).sum();
        assert!(
            (sum - ms(&it["total_ms"])).abs() < 0.0015,
            "iteration {i}: parts {sum} against total {}",
            it["total_ms"]
        );
        assert_eq!(attempts.last().expect("one")["outcome"], "committed", "{i}");
        if i % 3 == 2 {
            assert_eq!(attempts.len(), 2, "iteration {i}: {it}");
            let aborted = &attempts[0];
            assert_eq!(aborted["outcome"], "aborted");
            assert_eq!(aborted["ended_at"], "commit");
            assert_eq!(ms(&aborted["retry_delay_ms"]), 20.0);
            assert!(ms(&aborted["backoff_ms"]) >= 20.0, "{aborted}");
            assert!(ms(&parts["aborted"]) > 0.0, "{it}");
            assert!(ms(&parts["backoff"]) >= 20.0, "{it}");
            // Each attempt sends its calls under the first attempt's request numbers.
            let first = aborted["request_id"].as_str().expect("an id");
            let second = attempts[1]["request_id"].as_str().expect("an id");
            assert_eq!(
                first.rsplit_once('.').map(|(r, _)| r),
                second.rsplit_once('.').map(|(r, _)| r)
            );
            assert!(
                first.ends_with(".1") && second.ends_with(".2"),
                "{first} {second}"
            );
        } else {
            assert_eq!(attempts.len(), 1, "iteration {i}: {it}");
            assert!(parts.get("aborted").is_none(), "{it}");
        }
    }

    let mut rows = csv::Reader::from_path(&csv).expect("the CSV");
    let headers = rows.headers().expect("a header").clone();
    let total_at = headers
        .iter()
        .position(|h| h == "total_ms")
        .expect("total_ms");
    let parts_at: Vec<usize> = spanprof::part::Part::ALL
        .iter()
        .map(|p| {
            headers
                .iter()
                .position(|h| h == p.column())
                .expect("a part's column")
        })
        .collect();
    let attempts_at = headers
        .iter()
        .position(|h| h == "transaction_attempts")
        .expect("transaction_attempts");
    let mut attempts = Vec::new();
    for row in rows.records() {
        let row = row.expect("a row");
        let number = |at: usize| {
            row.get(at)
                .filter(|v| !v.is_empty())
                .map_or(0.0, |v| v.parse::<f64>().expect("a number"))
        };
        let sum: f64 = parts_at.iter().map(|&at| number(at)).sum();
        assert!((sum - number(total_at)).abs() < 0.0015, "{row:?}");
        attempts.push(number(attempts_at) as u32);
    }
    assert_eq!(attempts, [1, 1, 2, 1, 1, 2, 1, 1, 2]);

    assert_eq!(balances(&host, &[1, 2]).await, [991, 1009]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_column_after_a_successful_update_rolls_the_transaction_back() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let out = tokio::task::spawn_blocking({
        let host = host.clone();
        move || {
            spanprof(&[
                "profile",
                "--endpoint",
                &host,
                "--no-history",
                "--read-write",
                "--sql",
                "UPDATE Accounts SET Balance = Balance - 5 WHERE AccountId = 3; \
                 UPDATE Accounts SET Balanse = 0 WHERE AccountId = 4",
                "--iterations",
                "5",
                "--warmup",
                "0",
            ])
        }
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("iterations 1") && stdout.contains("failed 1"),
        "one iteration, then the run stops as for bad SQL: {stdout}"
    );
    assert!(
        format!("{stdout}{stderr}").contains("Balanse"),
        "the error names the column: {stdout}\n{stderr}"
    );
    assert!(
        format!("{stdout}{stderr}").contains("rolled back"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(balances(&host, &[3, 4]).await, [1000, 1000]);
}

/// A profile's `--param` goes on each statement of its read-write transaction that names it,
/// with the type it was given (before, none was bound and every statement failed): the transfers move money between the accounts the parameters name.
#[tokio::test(flavor = "multi_thread")]
async fn a_profiles_parameters_are_bound_on_the_transactions_statements() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let out = tokio::task::spawn_blocking({
        let host = host.clone();
        move || {
            spanprof(&[
                "profile",
                "--endpoint",
                &host,
                "--no-history",
                "--read-write",
                "--param",
                "from:INT64=5",
                "--param",
                "to:INT64=6",
                "--param",
                "amount:INT64=7",
                "--sql",
                "UPDATE Accounts SET Balance = Balance - @amount WHERE AccountId = @from; \
                 UPDATE Accounts SET Balance = Balance + @amount WHERE AccountId = @to",
                "--iterations",
                "3",
                "--warmup",
                "0",
            ])
        }
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(balances(&host, &[5, 6]).await, [1000 - 21, 1000 + 21]);
}

/// A run cancelled while a transaction holds an UPDATE (its script sleeping before the commit)
/// rolls it back: the balance is unchanged and the instance holds no open transaction.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_mid_transaction_rolls_it_back() {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use spanprof::client::read_write::ReadWriteOptions;
    use spanprof::engine::{Engine, EngineEvent, Job, ProfileSpec, ReadWrite, Target, Variant};

    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let sql = "UPDATE Accounts SET Balance = Balance - 7 WHERE AccountId = 5; SLEEP 30s";
    let variant = Variant {
        read_write: Some(ReadWrite {
            script: spanprof::script::parse(sql).expect("a script"),
            options: ReadWriteOptions::default(),
        }),
        ..Variant::new("rw", sql)
    };
    let spec = ProfileSpec {
        variants: vec![variant],
        iterations: 1,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let started = Instant::now();
    let events = tokio::task::spawn_blocking({
        let target = Target::Endpoint(host.clone());
        move || {
            let engine =
                Engine::start(Job::Profile(target, spec), Arc::new(|| {})).expect("starts");
            let canceller = engine.canceller();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                canceller.cancel();
            });
            engine.profile_events().collect::<Vec<_>>()
        }
    })
    .await
    .expect("joins");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the cancel ended the 30 s sleep: {:?}",
        started.elapsed()
    );
    let records: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Iteration { record, .. } => Some(record),
            _ => None,
        })
        .collect();
    assert_eq!(records.len(), 1, "{events:?}");
    assert!(
        records[0].outcome.is_cancelled(),
        "{:?}",
        records[0].outcome
    );
    assert_eq!(balances(&host, &[5]).await, [1000]);
    assert_eq!(
        server.occupancy().read_write_transactions,
        0,
        "rolled back, not left open"
    );
}

/// `profile --read-write --session multiplexed`: every transfer commits on its first commit (the
/// client sent the latest precommit token, so no retry reply), and the server's statistics of
/// each statement split the wait into server and network.
#[tokio::test(flavor = "multi_thread")]
async fn a_multiplexed_transfer_commits_with_its_token_and_its_server_time_is_measured() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("r.json");
    let out = tokio::task::spawn_blocking({
        let (host, json) = (host.clone(), json.clone());
        move || {
            spanprof(&[
                "profile",
                "--endpoint",
                &host,
                "--no-history",
                "--read-write",
                "--session",
                "multiplexed",
                "--query-mode",
                "with-stats",
                "--sql",
                TRANSFER,
                "--iterations",
                "4",
                "--warmup",
                "0",
                "--json",
                json.to_str().expect("UTF-8"),
            ])
        }
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("4 transactions, 4 committed"), "{stdout}");
    assert!(
        !stdout.contains("no query statistics returned"),
        "the statements' statistics came back: {stdout}"
    );
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    let iterations = report["runs"][0]["iterations"]
        .as_array()
        .expect("iterations");
    assert_eq!(iterations.len(), 4);
    for (i, it) in iterations.iter().enumerate() {
        let attempts = it["attempts"].as_array().expect("a transaction's attempts");
        assert_eq!(attempts.len(), 1, "iteration {i}: {it}");
        assert_eq!(attempts[0]["outcome"], "committed", "iteration {i}");
        let actions = attempts[0]["actions"].as_array().expect("actions");
        let commits: Vec<&Json> = actions.iter().filter(|a| a["kind"] == "commit").collect();
        assert_eq!(commits.len(), 1, "iteration {i}: {it}");
        // Zero is left out of the report.
        assert_eq!(
            commits[0].get("commit_retries"),
            None,
            "iteration {i}: {it}"
        );
        for dml in actions.iter().filter(|a| a["kind"] == "dml") {
            let query = &dml["query"];
            assert!(
                ms(&query["server_elapsed_ms"]) > 0.0,
                "iteration {i}: {dml}"
            );
            assert!(query["server_lock_wait_ms"].is_number(), "{dml}");
        }
        let parts = it["parts"].as_object().expect("parts");
        assert!(
            parts.get("server").is_some_and(|s| ms(s) > 0.0),
            "iteration {i}: the server's part, measured: {it}"
        );
    }
    assert_eq!(balances(&host, &[1, 2]).await, [996, 1004]);
}

/// `serve --lose-commit-answer-every 3`: the 3rd, 6th and 9th commits are applied and answered
/// UNAVAILABLE. spanprof sends the same Commit again (same request number, its attempt counted
/// up), the server answers with the commit it made, and the transaction is counted committed in
/// one attempt: never run again, never applied twice.
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_whose_answer_is_lost_is_asked_again_and_counted_once() {
    let server = instance(KnobSettings {
        lose_commit_answer_every: 3,
        ..KnobSettings::default()
    })
    .await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("r.json");
    let out = tokio::task::spawn_blocking({
        let (host, json) = (host.clone(), json.clone());
        move || {
            spanprof(&[
                "profile",
                "--endpoint",
                &host,
                "--no-history",
                "--read-write",
                "--sql",
                TRANSFER,
                "--iterations",
                "9",
                "--warmup",
                "0",
                "--json",
                json.to_str().expect("UTF-8"),
            ])
        }
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("9 transactions, 9 committed; 1.00 attempts per transaction")
            && stdout
                .contains("3 commits lost their answer and were asked again (3 outcomes learned)"),
        "{stdout}"
    );
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    let iterations = report["runs"][0]["iterations"]
        .as_array()
        .expect("iterations");
    assert_eq!(iterations.len(), 9);
    for (i, it) in iterations.iter().enumerate() {
        let attempts = it["attempts"].as_array().expect("attempts");
        assert_eq!(attempts.len(), 1, "iteration {i}: {it}");
        let attempt = &attempts[0];
        assert_eq!(attempt["outcome"], "committed", "{i}: {it}");
        let parts = it["parts"].as_object().expect("parts");
        let sum: f64 = parts.values().map(ms).sum();
        assert!((sum - ms(&it["total_ms"])).abs() < 0.0015, "{i}: {it}");
        let commit = attempt["actions"]
            .as_array()
            .expect("actions")
            .iter()
            .find(|a| a["kind"] == "commit")
            .expect("a commit action");
        if i % 3 == 2 {
            assert_eq!(commit["commit_asked_again"], 1, "{i}: {it}");
            let words = attempt["commit_resolution"].as_str().expect("resolution");
            assert!(
                words.contains("asked again, the server answered with the commit it had made"),
                "{words}"
            );
            // The wait before asking is part of the commit's time, not another part.
            assert!(ms(&commit["ms"]) >= 250.0, "{commit}");
            assert!(ms(&parts["commit"]) >= 250.0, "{it}");
        } else {
            assert!(commit.get("commit_asked_again").is_none(), "{i}: {it}");
            assert!(attempt.get("commit_resolution").is_none(), "{i}: {it}");
        }
    }
    assert_eq!(balances(&host, &[1, 2]).await, [991, 1009]);
}
