//! Many read-write transactions at once on the built-in local instance, under its lock table (a
//! model of Spanner's locking): one hot row read, held 50 ms, then written, by four clients. The
//! transactions serialise on the row (at most one commit per 50 ms), the older wounds the younger,
//! every committed transaction landed exactly once, and the lock wait the report gives is the
//! lock table's own, as its journal records it.

use std::collections::HashSet;
use std::process::Command;
use std::time::Duration;

use serde_json::Value as Json;
use spanprof::server::KnobSettings;
use spanprof::server::txn::journal::{EventKind, Journal};
use spanprof::server::txn::lock_key::TxnId;

use crate::read_write::{balances, instance};

const HOT: &str = "SELECT Balance FROM Accounts WHERE AccountId = 1; SLEEP 50ms; \
                   UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";

fn number(v: &Json) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// The waits of the transactions that committed, in milliseconds in all, and how many committed,
/// as `journal` has them.
pub(crate) fn committed_waits(journal: &Journal) -> (f64, u64) {
    let committed: HashSet<TxnId> = journal
        .events()
        .filter_map(|e| match e.kind {
            EventKind::Committed { txn, .. } => Some(txn),
            _ => None,
        })
        .collect();
    let waits: Duration = journal
        .waits()
        .iter()
        .filter(|w| committed.contains(&w.txn))
        .map(|w| w.duration(w.started))
        .sum();
    (waits.as_secs_f64() * 1e3, committed.len() as u64)
}

#[tokio::test(flavor = "multi_thread")]
async fn four_clients_on_one_hot_row_commit_one_at_a_time_and_wait_as_the_journal_says() {
    hot_row(HOT, &[]).await;
}

/// The same in NORMAL mode, the row read first by a DML: the answers carry no query statistics
/// (a DML's only its row count), so the waits come in the answers' headers, and the report still
/// gives the journal's lock wait and names the hot row (before, a NORMAL-mode DML's wait was told
/// to nobody and counted as network).
#[tokio::test(flavor = "multi_thread")]
async fn in_normal_mode_a_dmls_waits_on_the_hot_row_are_still_the_journals() {
    const DML_FIRST: &str = "UPDATE Accounts SET Balance = Balance WHERE AccountId = 1; \
                             SLEEP 50ms; \
                             UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";
    hot_row(DML_FIRST, &["--query-mode", "normal"]).await;
}

/// Four clients of `sql` for 4 s with `extra` arguments, checked against the journal.
async fn hot_row(sql: &str, extra: &[&str]) {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("l.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--endpoint", &host, "--read-write"])
        .args(["--concurrency", "4", "--step-duration", "4s"])
        .args(["--sql", sql, "--json", json.to_str().expect("UTF-8")])
        .args(extra);
    let out = tokio::task::spawn_blocking(move || command.output().expect("spanprof runs"))
        .await
        .expect("joins");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).expect("JSON");
    // The summary printed says who blocked whom, the hot row first.
    let printed = String::from_utf8_lossy(&out.stdout);
    let blocked = printed
        .split("who blocked whom (the local instance's lock table, a model of Spanner's locking)")
        .nth(1)
        .unwrap_or_else(|| panic!("who blocked whom is printed: {printed}"));
    let hottest = blocked.lines().nth(2).unwrap_or_default().trim();
    assert!(hottest.starts_with("accounts(1)"), "{printed}");
    let step = &report["steps"][0];
    let committed = step["committed"].as_u64().expect("a count");
    assert_eq!(step["errors"], 0, "{step}");
    // Each committed transaction held the row from its read to its commit, 50 ms at least, and no
    // two such spans overlap: 20 a second at most (a step's edge lets one more in).
    let goodput = number(&step["committed_per_s"]);
    let duration = number(&step["duration_s"]);
    assert!(
        committed as f64 <= duration / 0.050 + 1.0,
        "{goodput}/s: {step}"
    );
    // Close to it: the next transaction reads the row as soon as the last commit lets it go (a
    // loaded two-core machine runs the debug build's transactions well above 50 ms each).
    assert!(goodput >= 12.0, "{goodput}/s: {step}");
    assert!(
        number(&step["aborts_per_transaction"]) > 0.0,
        "the older wounded the younger: {step}"
    );
    // Who blocked whom: the step's conflicts name the hot row first, with its waits and wounds.
    let conflicts = &step["conflicts"];
    assert_eq!(conflicts["keys"][0]["key"], "accounts(1)", "{conflicts}");
    assert!(
        conflicts["wounds"].as_u64().is_some_and(|n| n > 0),
        "{conflicts}"
    );
    assert!(
        conflicts["waits"].as_u64().is_some_and(|n| n > 0),
        "{conflicts}"
    );
    // Every committed transaction landed once (the warm-up's too).
    assert_eq!(
        balances(&host, &[1]).await,
        [1000 + 1 + committed as i64],
        "{step}"
    );
    // The lock wait the report gives per transaction is the lock table's, from its journal: the
    // waits of the attempts that committed (an aborted attempt's time is `aborted` whole).
    let (journal_total_ms, journal_committed) = server.locks().journal(committed_waits);
    assert_eq!(
        journal_committed,
        committed + 1,
        "the warm-up, then the step's"
    );
    let reported_ms = number(&step["parts"]["lock_wait"]) * committed as f64;
    assert!(
        journal_total_ms > 1.0,
        "a retry's read waited for the winner's commit: {journal_total_ms} ms"
    );
    // Within the figures' rounding: a statement's lock wait in microseconds, per transaction.
    assert!(
        (reported_ms - journal_total_ms).abs() <= 0.01 * committed as f64 + 0.5,
        "reported {reported_ms} ms in all, the journal {journal_total_ms} ms"
    );
}
