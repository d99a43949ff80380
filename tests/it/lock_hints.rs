//! Read's lock hint end to end: `spanprof load --read-write` runs a script whose READ reads the
//! hot row, then writes it, four clients at once, on the built-in local instance. Read with
//! `LOCK EXCLUSIVE`, the transactions queue on the row (lock waits, next to no abort); read
//! shared, they all read it and the commit's write wounds the younger readers (aborts). Either way
//! every commit landed exactly once, and the journal holds the modes the reads took.

use std::process::Command;

use serde_json::Value as Json;
use spanprof::server::KnobSettings;
use spanprof::server::txn::journal::EventKind;
use spanprof::server::txn::lock_key::LockMode;

use crate::contention::committed_waits;
use crate::read_write::{balances, instance};

/// The hot row's read-modify-write, its READ hinted as `lock` says (empty: no hint).
fn script(lock: &str) -> String {
    format!(
        "READ Accounts (Balance) KEY (1){lock}; SLEEP 20ms; \
         UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1"
    )
}

fn number(v: &Json) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// What one load run on a fresh instance gave: its step, and from the journal the modes its
/// reads' row locks were granted in, its waits in mode Exclusive, and its wounds.
struct Ran {
    step: Json,
    read_modes: Vec<LockMode>,
    exclusive_waits: usize,
    wounds: usize,
    /// The waits of the transactions that committed, in all, from the journal.
    committed_wait_ms: f64,
}

async fn load(sql: &str) -> Ran {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("l.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--endpoint", &host, "--read-write"])
        .args(["--concurrency", "4", "--step-duration", "3s"])
        .args(["--sql", sql, "--json", json.to_str().expect("UTF-8")]);
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
    let step = report["steps"][0].clone();
    let committed = step["committed"].as_u64().expect("a count");
    assert_eq!(step["errors"], 0, "{step}");
    // Every committed transaction landed once (the warm-up's too).
    assert_eq!(
        balances(&host, &[1]).await,
        [1000 + 1 + committed as i64],
        "{step}"
    );
    let (read_modes, exclusive_waits, wounds) = server.locks().journal(|journal| {
        let modes = journal
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Granted { key, mode, .. } if key.column.is_none() => Some(*mode),
                _ => None,
            })
            .collect();
        let waits = journal
            .waits()
            .iter()
            .filter(|w| w.mode == LockMode::Exclusive && w.key.column.is_none())
            .count();
        let wounds = journal
            .events()
            .filter(|e| matches!(e.kind, EventKind::Wound { .. }))
            .count();
        let (waited_ms, _) = committed_waits(journal);
        (modes, waits, (wounds, waited_ms))
    });
    let (wounds, committed_wait_ms) = wounds;
    Ran {
        step,
        read_modes,
        exclusive_waits,
        wounds,
        committed_wait_ms,
    }
}

/// The step's figures on one line, for a failure's message and for the record.
fn figures(ran: &Ran) -> String {
    let step = &ran.step;
    format!(
        "committed {} ({}/s), aborts per transaction {}, waits {}, wounds {}, lock wait {} ms \
         a transaction (journal: {} exclusive waits, {} wounds, {} row grants, {:.1} ms waited \
         by the committed)",
        step["committed"],
        step["committed_per_s"],
        step["aborts_per_transaction"],
        step["conflicts"]["waits"],
        step["conflicts"]["wounds"],
        step["parts"]["lock_wait"],
        ran.exclusive_waits,
        ran.wounds,
        ran.read_modes.len(),
        ran.committed_wait_ms
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn exclusive_reads_of_a_hot_row_queue_where_shared_ones_abort() {
    let exclusive = load(&script(" LOCK EXCLUSIVE")).await;
    let shared = load(&script(" LOCK SHARED")).await;
    eprintln!("LOCK EXCLUSIVE: {}", figures(&exclusive));
    eprintln!("LOCK SHARED:    {}", figures(&shared));
    // Exclusive: each read takes the row Exclusive and the next waits for it (the report names
    // the waits, the journal has them), and next to nothing is aborted.
    assert!(
        !exclusive.read_modes.is_empty()
            && exclusive
                .read_modes
                .iter()
                .all(|m| *m == LockMode::Exclusive),
        "{:?}",
        exclusive.read_modes
    );
    let step = &exclusive.step;
    assert!(exclusive.exclusive_waits > 0, "{}", figures(&exclusive));
    assert!(
        step["conflicts"]["waits"].as_u64().is_some_and(|n| n > 0),
        "{}",
        figures(&exclusive)
    );
    // The report counts only the step's waits (not the warm-up's), each one the journal has.
    assert!(
        step["conflicts"]["waits"]
            .as_u64()
            .is_some_and(|n| n as usize <= exclusive.exclusive_waits),
        "{}",
        figures(&exclusive)
    );
    // The reads' waits, which their answers' headers name, are the run's lock wait, as the
    // journal has it (each transaction's, within the figures' rounding).
    let committed = number(&step["committed"]);
    let reported_ms = number(&step["parts"]["lock_wait"]) * committed;
    assert!(
        (reported_ms - exclusive.committed_wait_ms).abs() <= 0.01 * committed + 0.5,
        "reported {reported_ms} ms in all, the journal {} ms: {}",
        exclusive.committed_wait_ms,
        figures(&exclusive)
    );
    let exclusive_aborts = number(&step["aborts_per_transaction"]);
    assert!(exclusive_aborts <= 0.05, "{}", figures(&exclusive));
    // Shared: every row lock is ReaderShared, and the commits wound the younger readers.
    assert!(
        shared
            .read_modes
            .iter()
            .all(|m| *m == LockMode::ReaderShared),
        "{:?}",
        shared.read_modes
    );
    let shared_aborts = number(&shared.step["aborts_per_transaction"]);
    assert!(shared.wounds > 0, "{}", figures(&shared));
    assert!(
        shared_aborts >= 0.3 && shared_aborts > 5.0 * exclusive_aborts,
        "shared {} against exclusive {}",
        figures(&shared),
        figures(&exclusive)
    );
}
