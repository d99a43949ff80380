//! The conflict view in the window, through egui_kittest: a read-write load run on one hot row of
//! the built-in instance (its lock table, a model of Spanner's locking) shows the row as the
//! step's hottest key under the goodput, saying where the figures come from; and an opened
//! read-write run whose attempts waited on one another shows who blocked whom under the summary,
//! its timeline marking a wait inside its action with a hover that names the key and whom it
//! waited behind.

use egui_kittest::kittest::Queryable;
use spanprof::app::{LoadModel, Tab};
use spanprof::export::{Exporter, Json};
use spanprof::report::{
    Action, ActionKind, Attempt, AttemptOutcome, IterationRecord, LockWaitSeen, ReportHead,
    RunConfig, RunReport, TransactionRecord, WoundSeen,
};

use crate::app::{app, step_until};
use crate::app_read_write::type_script;

/// One hot row read, held 20 ms, then written: clients at once wait on it and wound one another.
const HOT: &str = "SELECT Balance FROM Accounts WHERE AccountId = 1; SLEEP 20ms; \
                   UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";

#[test]
fn a_hot_row_load_shows_the_row_as_the_step_s_hottest_key_under_the_goodput() {
    let mut h = app();
    type_script(&mut h, HOT, 1);
    {
        let load = &mut h.state_mut().settings_mut().load;
        load.model = LoadModel::Closed;
        load.concurrencies = "3".into();
        load.step_seconds = 2.0;
    }
    h.run_steps(1);
    h.get_by_label("Load").click();
    h.run_steps(2);
    h.get_by_label("Run load").click();
    h.run_steps(2);
    assert_eq!(h.state().load_view().error(), None);
    step_until(&mut h, "the load run to end", |app| {
        !app.load_view().is_running()
    });
    h.run_steps(2);
    let view = h.state().load_view();
    let step = &view.report().expect("a report").steps[0];
    let conflicts = step.conflicts.as_ref().expect("the instance named waits");
    assert_eq!(conflicts.keys[0].key, "accounts(1)");
    let rows: Vec<Vec<String>> = view
        .goodput()
        .conflicts()
        .rows()
        .map(<[String]>::to_vec)
        .collect();
    assert_eq!(rows[0][0], step.level().describe());
    assert_eq!(rows[0][1], "accounts(1)", "{rows:?}");
    assert_eq!(rows[0][3], spanprof::text::count(conflicts.keys[0].waits));
    assert!(h.query_by_label("The hottest keys").is_some());
    assert!(
        h.query_by_label("accounts(1)").is_some(),
        "the key is drawn"
    );
    assert!(
        h.query_by_label_contains("a model of Spanner's locking")
            .is_some(),
        "where the figures come from"
    );
}

/// Iteration 1's first attempt waited 4 ms at its DML on `accounts(1).balance` behind iteration
/// 0 and was wounded by iteration 2; its second committed.
fn conflicted_run() -> RunReport {
    let attempt = |id: &str, outcome, actions: Vec<Action>, total_ms| {
        let mut a = Attempt::new(outcome);
        a.transaction_id = Some(id.into());
        a.total_ms = total_ms;
        a.actions = actions;
        a
    };
    let dml = |lock_waits| Action {
        kind: Some(ActionKind::Dml),
        index: 1,
        at_ms: 1.0,
        ms: 8.0,
        lock_waits,
        ..Action::default()
    };
    let mut wounded = attempt(
        "bb01",
        AttemptOutcome::Aborted,
        vec![dml(vec![LockWaitSeen {
            key: "accounts(1)".into(),
            column: Some("balance".into()),
            mode: "WriterShared".into(),
            ms: 4.0,
            holders: vec!["aa01".into()],
        }])],
        10.0,
    );
    wounded.ended_at = Some(ActionKind::Dml);
    wounded.backoff_ms = Some(2.0);
    wounded.wounded_by = Some(WoundSeen {
        by: "cc01".into(),
        key: "accounts(1)".into(),
        column: None,
        mode: "Exclusive".into(),
    });
    let committed = |id: &str| attempt(id, AttemptOutcome::Committed, vec![dml(vec![])], 10.0);
    let iteration = |n: u32, attempts: Vec<Attempt>| {
        let mut r = IterationRecord::new("contended", n, false, "2026-12-05T00:00:00Z");
        r.total_ms = attempts
            .iter()
            .map(|a| a.total_ms + a.backoff_ms.unwrap_or(0.0))
            .sum();
        r.transaction = Some(TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
        r
    };
    ReportHead::new(
        RunConfig {
            label: "contended".into(),
            target: "local".into(),
            read_write: Some("isolation default".into()),
            iterations: 3,
            ..RunConfig::default()
        },
        "2026-12-05T00:00:00Z".into(),
    )
    .with_records(vec![
        iteration(0, vec![committed("aa01")]),
        iteration(1, vec![wounded, committed("bb02")]),
        iteration(2, vec![committed("cc01")]),
    ])
}

#[test]
fn an_opened_run_says_who_blocked_whom_and_its_timeline_names_the_key_a_wait_was_on() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("contended.json");
    let bytes = Json.export(&[conflicted_run()]).expect("JSON");
    std::fs::write(&path, bytes).expect("written");
    let mut h = app();
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    let run = h.state().runs()[0].id;
    assert!(
        h.query_by_label_contains("Who blocked whom · 1 waits (4.0 ms) and 1 wounds")
            .is_some(),
        "the conflict view under the summary"
    );
    assert!(
        h.query_by_label("accounts(1).balance").is_some(),
        "the pair's key"
    );
    assert!(
        h.query_by_label("iteration 0, attempt 1").is_some(),
        "whom it waited behind"
    );
    h.state_mut().iterations_view().timeline().open(run, 1);
    h.run_steps(3);
    let timeline = h.state_mut().iterations_view().timeline();
    let view = timeline.attempts().expect("a transaction's timeline");
    assert_eq!(view.lane_labels(), ["attempt 1", "attempt 2"]);
    assert!(
        view.painted()
            .iter()
            .any(|p| p == "aborted at DML, wounded by iteration 2, attempt 1"),
        "{:?}",
        view.painted()
    );
    let (at, hover) = view
        .stretch_at(0, 0)
        .map(|(at, hover)| (at, hover.to_owned()))
        .expect("the DML was drawn");
    assert!(
        hover.contains(
            "waited 4.0 ms for accounts(1).balance (WriterShared) behind iteration 0, attempt 1"
        ),
        "{hover}"
    );
    h.hover_at(at);
    let mut tip = false;
    for _ in 0..20 {
        h.run_steps(1);
        tip = h
            .query_by_label_contains("for accounts(1).balance (WriterShared)")
            .is_some();
        if tip {
            break;
        }
    }
    assert!(
        tip,
        "the hover names the key, the mode and whom it waited behind"
    );
}
