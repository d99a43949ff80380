//! `spanprof profile --read-write` against the real Cloud Spanner emulator started with fault
//! injection, which aborts about one first commit in twenty at random and sends no RetryInfo:
//! every abort it made is in the report and was retried, and the balances show exactly one
//! transfer per committed transaction. And the fact spanprof's answer to a lost commit answer
//! rests on: the emulator answers a Commit sent again for a committed transaction with the same
//! commit, applying nothing twice.

use std::process::Command;

use serde_json::Value as Json;
use spanprof::wire::Value;

use crate::client::TestClient;
use crate::emulator::{seed, seed_args, start_emulator_with};

const TRANSFER: &str = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1; \
                        UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2";

/// Runs `transactions` transfers on the emulator at `host`; the report's iterations.
fn transfers(host: &str, transactions: u32, dir: &std::path::Path) -> Vec<Json> {
    let json = dir.join(format!("r{transactions}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            host,
            "--no-history",
            "--read-write",
            "--sql",
            TRANSFER,
            "--iterations",
            &transactions.to_string(),
            "--warmup",
            "0",
            "--json",
            json.to_str().expect("UTF-8"),
        ])
        .output()
        .expect("spanprof runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the report")).expect("JSON");
    report["runs"][0]["iterations"]
        .as_array()
        .expect("iterations")
        .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_abort_the_emulator_makes_is_reported_and_retried_and_each_transfer_lands_once() {
    let emulator = start_emulator_with(&["--enable_fault_injection"]);
    let host = emulator.address().to_owned();
    tokio::task::spawn_blocking({
        let host = host.clone();
        move || seed(&seed_args(&host, "test-project", 10))
    })
    .await
    .expect("joins");
    let dir = tempfile::tempdir().expect("a temp dir");
    let (mut committed, mut aborts) = (0i64, 0usize);
    // About one first commit in twenty aborts: a hundred transactions have none about once in 170
    // runs, so a second hundred runs then, and a third.
    for _ in 0..3 {
        let iterations = tokio::task::spawn_blocking({
            let (host, dir) = (host.clone(), dir.path().to_owned());
            move || transfers(&host, 100, &dir)
        })
        .await
        .expect("joins");
        assert_eq!(iterations.len(), 100);
        for it in &iterations {
            let attempts = it["attempts"].as_array().expect("attempts");
            let (last, before) = attempts.split_last().expect("an attempt");
            assert_eq!(last["outcome"], "committed", "{it}");
            for aborted in before {
                assert_eq!(aborted["outcome"], "aborted", "{it}");
                assert!(aborted["message"].is_string(), "{it}");
                assert!(
                    aborted.get("retry_delay_ms").is_none(),
                    "the emulator sends no RetryInfo: {it}"
                );
                assert!(
                    aborted["backoff_ms"].as_f64().is_some_and(|b| b >= 10.0),
                    "{it}"
                );
            }
            aborts += before.len();
            committed += 1;
        }
        if aborts > 0 {
            break;
        }
    }
    assert!(
        aborts > 0,
        "fault injection aborted nothing in {committed} transactions"
    );
    let mut client = TestClient::connect(&host).await;
    let read = client
        .query("SELECT Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId")
        .await
        .expect("the balances read");
    let balances: Vec<i64> = read
        .rows
        .iter()
        .map(|row| match row.values().first() {
            Some(Value::Int64(n)) => *n,
            other => panic!("a balance: {other:?}"),
        })
        .collect();
    assert_eq!(
        balances,
        [1000 - committed, 1000 + committed],
        "{aborts} aborts"
    );
}

/// A Commit sent again for a transaction that committed (as spanprof sends it when the first
/// answer was lost) gets the same commit timestamp from the emulator, and the transfer lands once.
#[tokio::test(flavor = "multi_thread")]
async fn the_emulator_answers_a_commit_sent_again_with_the_same_commit_and_applies_it_once() {
    use spanprof::proto::google::spanner::v1 as pb;

    let emulator = start_emulator_with(&[]);
    let host = emulator.address().to_owned();
    tokio::task::spawn_blocking({
        let host = host.clone();
        move || seed(&seed_args(&host, "test-project", 10))
    })
    .await
    .expect("joins");
    let mut client = TestClient::connect(&host).await;
    let options = pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
        ..Default::default()
    };
    let id = client
        .client
        .begin_transaction(pb::BeginTransactionRequest {
            session: client.session.clone(),
            options: Some(options),
            ..Default::default()
        })
        .await
        .expect("begins")
        .into_inner()
        .id;
    let debit = pb::ExecuteSqlRequest {
        transaction: Some(pb::TransactionSelector {
            selector: Some(pb::transaction_selector::Selector::Id(id.clone())),
        }),
        seqno: 1,
        ..client.request("UPDATE Accounts SET Balance = Balance - 5 WHERE AccountId = 9")
    };
    client.client.execute_sql(debit).await.expect("debits");
    let commit = pb::CommitRequest {
        session: client.session.clone(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
        ..Default::default()
    };
    let first = client
        .client
        .commit(commit.clone())
        .await
        .expect("commits")
        .into_inner();
    let again = client
        .client
        .commit(commit)
        .await
        .expect("a Commit sent again is answered")
        .into_inner();
    assert!(first.commit_timestamp.is_some(), "{first:?}");
    assert_eq!(again.commit_timestamp, first.commit_timestamp);
    let read = client
        .query("SELECT Balance FROM Accounts WHERE AccountId = 9")
        .await
        .expect("the balance read");
    assert!(
        matches!(read.rows[0].values().first(), Some(Value::Int64(995))),
        "applied once: {:?}",
        read.rows
    );
}
