//! The contention lab's scripts on the real Cloud Spanner emulator, through a witness
//! (`grpc_witness`) that writes down every call's method and grpc-status as it crosses the wire.
//! The emulator holds one lock for the whole database and never waits: a second read-write
//! transaction aborts the holder (one time in five by default) or itself, and sends no RetryInfo.
//! Whatever it aborts, `spanprof load --read-write` counts exactly what the wire shows: its aborts
//! are the calls answered ABORTED, its commits the Commits answered OK, its attempts those that
//! began and ended on the wire, and the balances grew by its commits.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value as Json;
use spanprof::emulator::Emulator;

use crate::emulator::{seed, seed_args, start_emulator_with};
use crate::grpc_witness::Witness;
use crate::read_write::balances;

/// The contention lab's hot row: read it, hold it 50 ms, write it.
const HOT: &str = "SELECT Balance FROM Accounts WHERE AccountId = 1; SLEEP 50ms; \
                   UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";
/// The same on a key drawn per transaction (`--param id=zipf:1..20`: 1 the hottest).
const SKEWED: &str = "SELECT Balance FROM Accounts WHERE AccountId = @id; SLEEP 50ms; \
                      UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = @id";
const ABORTED: u32 = 10;
const OK: u32 = 0;

/// The emulator (with its `flags`), seeded, and a witness in front of it.
async fn witnessed_emulator(flags: &[&str]) -> (Emulator, Witness) {
    let emulator = start_emulator_with(flags);
    let host = emulator.address().to_owned();
    tokio::task::spawn_blocking(move || seed(&seed_args(&host, "test-project", 10)))
        .await
        .expect("joins");
    let witness = Witness::start(emulator.address()).await;
    (emulator, witness)
}

/// `spanprof load --read-write --concurrency 4` of `sql` for 3 s through the witness, with
/// `extra` arguments; its one step from the JSON report.
async fn load(witness: &Witness, sql: &str, extra: &[&str]) -> Json {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("load.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--endpoint", witness.address(), "--read-write"])
        .args([
            "--concurrency",
            "4",
            "--step-duration",
            "3s",
            "--no-history",
        ])
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
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 1, "{report}");
    steps[0].clone()
}

fn count(v: &Json) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a count: {v}"))
}

/// A map of counts in the step (`attempts`, `aborts_at`, `errors_by_status`), by its keys.
fn counts(step: &Json, field: &str) -> BTreeMap<String, u64> {
    step[field]
        .as_object()
        .map(|m| m.iter().map(|(k, n)| (k.clone(), count(n))).collect())
        .unwrap_or_default()
}

/// What the step reported, in exact counts.
#[derive(Debug)]
struct Reported {
    committed: u64,
    /// Transactions that failed after an attempt (the retry policy gave up).
    failed: u64,
    /// Attempts made, aborted ones included: the histogram's attempts times its transactions.
    attempts: u64,
    aborts_at: BTreeMap<String, u64>,
}

impl Reported {
    fn of(step: &Json) -> Reported {
        assert_eq!(count(&step["unfinished"]), 0, "nothing abandoned: {step}");
        let errors = counts(step, "errors_by_status");
        // A transaction the retry policy gave up on fails ABORTED; nothing else may fail.
        assert!(errors.keys().all(|k| k == "ABORTED"), "{step}");
        let histogram = counts(step, "attempts");
        let attempts = histogram
            .iter()
            .map(|(k, n)| k.parse::<u64>().expect("a number of attempts") * n)
            .sum();
        let aborts_at = counts(step, "aborts_at");
        assert!(
            aborts_at
                .keys()
                .all(|k| ["query", "dml", "commit"].contains(&k.as_str())),
            "{step}"
        );
        let reported = Reported {
            committed: count(&step["committed"]),
            failed: count(&step["errors"]),
            attempts,
            aborts_at,
        };
        assert_eq!(
            histogram.values().sum::<u64>(),
            reported.committed + reported.failed,
            "the histogram counts every transaction: {step}"
        );
        reported
    }

    fn aborts(&self) -> u64 {
        self.aborts_at.values().sum()
    }

    fn aborts_at(&self, action: &str) -> u64 {
        self.aborts_at.get(action).copied().unwrap_or(0)
    }
}

/// How the run's transactions begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Begin {
    /// With the first statement (the default).
    Inline,
    /// With a BeginTransaction call first (`--begin explicit`).
    Explicit,
}

/// Checks the step against the witness: each attempt of the script (read, sleep, write, commit)
/// is on the wire as one ExecuteStreamingSql for the read (carrying the begin, unless a
/// BeginTransaction came first), a second for the write unless the read was aborted, and one
/// Commit unless a statement was aborted; it ends with exactly one call answered ABORTED or one
/// Commit answered OK. The warm-up's transaction (one attempt, alone on the emulator, so never
/// aborted) went through too.
fn check_against_the_wire(step: &Json, witness: &Witness, begin: Begin) -> Reported {
    let r = Reported::of(step);
    let warm_up = 1;
    assert_eq!(witness.unrecorded(), 0);
    let calls = witness.calls();
    // Every call of a transaction ended OK or ABORTED, none was cut off, none rolled back (an
    // aborted transaction has nothing to roll back).
    for c in calls
        .iter()
        .filter(|c| c.path.ends_with("/ExecuteStreamingSql") || c.path.ends_with("/Commit"))
    {
        assert!(
            c.status == Some(OK) || c.status == Some(ABORTED),
            "{c:?} in {calls:?}"
        );
    }
    assert_eq!(witness.count("Rollback", None), 0, "{calls:?}");
    assert_eq!(witness.count("ExecuteSql", None), 0, "{calls:?}");

    let summary = format!("reported {r:?}\nstep {step}\nthe wire {calls:?}");
    // Begun explicitly, each attempt is one BeginTransaction (the emulator takes its lock at the
    // first read, never aborting a begin); inline, none.
    let begins = match begin {
        Begin::Inline => 0,
        Begin::Explicit => r.attempts + warm_up,
    };
    assert_eq!(
        witness.count("BeginTransaction", Some(OK)) as u64,
        begins,
        "{summary}"
    );
    assert_eq!(
        witness.count("BeginTransaction", None) as u64,
        begins,
        "{summary}"
    );
    assert_eq!(
        witness.count_status(ABORTED) as u64,
        r.aborts(),
        "every abort counted, exactly: {summary}"
    );
    assert_eq!(
        witness.count("Commit", Some(OK)) as u64,
        r.committed + warm_up,
        "every commit counted: {summary}"
    );
    assert_eq!(
        witness.count("Commit", Some(ABORTED)) as u64,
        r.aborts_at("commit"),
        "{summary}"
    );
    assert_eq!(
        witness.count("ExecuteStreamingSql", Some(ABORTED)) as u64,
        r.aborts_at("query") + r.aborts_at("dml"),
        "an abort at a statement is counted at it: {summary}"
    );
    // Each attempt ends with one ABORTED or one OK Commit...
    assert_eq!(
        (witness.count_status(ABORTED) + witness.count("Commit", Some(OK))) as u64,
        r.attempts + warm_up,
        "every attempt counted: {summary}"
    );
    // ...and sends its read, then its write unless the read was aborted.
    assert_eq!(
        witness.count("ExecuteStreamingSql", None) as u64,
        2 * (r.attempts + warm_up) - r.aborts_at("query"),
        "{summary}"
    );
    r
}

/// The sum of the balances of accounts `ids`, read from the emulator itself.
async fn total(emulator: &Emulator, ids: &[i64]) -> i64 {
    balances(emulator.address(), ids).await.iter().sum()
}

/// Four clients on the hot row, the emulator's default (the newcomer aborts the holder one time in
/// five, else itself): every abort, commit and attempt the wire shows is in the report, exactly.
#[tokio::test(flavor = "multi_thread")]
async fn the_emulators_aborts_on_the_hot_row_are_counted_exactly_as_the_wire_shows_them() {
    let (emulator, witness) = witnessed_emulator(&[]).await;
    let before = total(&emulator, &[1]).await;
    let step = load(&witness, HOT, &[]).await;
    let r = check_against_the_wire(&step, &witness, Begin::Inline);
    assert!(r.aborts() > 0, "four clients on one row collide: {step}");
    assert!(r.committed > 0, "{step}");
    assert_eq!(
        total(&emulator, &[1]).await - before,
        r.committed as i64 + 1,
        "each commit landed once (the warm-up's too): {step}"
    );
}

/// With `--abort_current_transaction_probability=0` the emulator always aborts the newcomer, at
/// its first statement: a transaction that read the row is never aborted, so every abort is at
/// the read, and no Commit is ever answered ABORTED.
#[tokio::test(flavor = "multi_thread")]
async fn when_the_emulator_always_aborts_the_newcomer_every_abort_is_at_the_first_read() {
    let (emulator, witness) =
        witnessed_emulator(&["--abort_current_transaction_probability=0"]).await;
    let before = total(&emulator, &[1]).await;
    let step = load(&witness, HOT, &[]).await;
    let r = check_against_the_wire(&step, &witness, Begin::Inline);
    assert!(r.aborts() > 0, "{step}");
    assert_eq!(r.aborts_at.keys().collect::<Vec<_>>(), ["query"], "{step}");
    assert_eq!(witness.count("Commit", Some(ABORTED)), 0);
    assert_eq!(
        total(&emulator, &[1]).await - before,
        r.committed as i64 + 1,
        "{step}"
    );
}

/// The skewed script (a Zipf-drawn key of 20, the first the hottest): with one lock for the whole
/// database the emulator aborts as if every key were the same one, and counts stay exact.
#[tokio::test(flavor = "multi_thread")]
async fn the_skewed_script_on_the_emulator_is_counted_exactly_as_the_wire_shows_it() {
    let (emulator, witness) = witnessed_emulator(&[]).await;
    let ids: Vec<i64> = (1..=20).collect();
    let before = total(&emulator, &ids).await;
    let step = load(
        &witness,
        SKEWED,
        &["--param", "id=zipf:1..20", "--seed", "7"],
    )
    .await;
    let r = check_against_the_wire(&step, &witness, Begin::Inline);
    assert!(r.aborts() > 0, "{step}");
    // One lock for all keys: each committed transaction held it from its read to its commit, 50 ms
    // at least, and no two overlapped, whichever keys they drew (a step's edge lets one more in).
    let duration = step["duration_s"].as_f64().expect("a duration");
    assert!(
        r.committed as f64 <= duration / 0.050 + 1.0,
        "{} committed in {duration} s: {step}",
        r.committed
    );
    assert_eq!(
        total(&emulator, &ids).await - before,
        r.committed as i64 + 1,
        "{step}"
    );
}

/// Begun explicitly, each attempt is one BeginTransaction on the wire: the attempts counted
/// directly, and still exactly the report's.
#[tokio::test(flavor = "multi_thread")]
async fn begun_explicitly_each_attempt_the_report_counts_is_one_begin_on_the_wire() {
    let (emulator, witness) = witnessed_emulator(&[]).await;
    let before = total(&emulator, &[1]).await;
    let step = load(&witness, HOT, &["--begin", "explicit"]).await;
    let r = check_against_the_wire(&step, &witness, Begin::Explicit);
    assert!(r.aborts() > 0, "{step}");
    assert_eq!(
        total(&emulator, &[1]).await - before,
        r.committed as i64 + 1,
        "{step}"
    );
}
