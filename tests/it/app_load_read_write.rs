//! A read-write load run from the window, through egui_kittest against the built-in instance: with
//! the query panel's read-write switch on, the Load tab's Run load runs the panel's script as one
//! transaction per request, with the panel's transaction options, and the tab shows each step's
//! goodput against its attempts a second and its aborts per transaction.

use egui_kittest::kittest::Queryable;
use spanprof::app::{ATTEMPTS_LINE, GOODPUT_LINE, LoadModel, Tab};

use crate::app::{app, step_until};
use crate::app_read_write::{TRANSFER, type_script};

/// Two steps of clients moving units between the same two rows: the second's transfers overlap,
/// and the built-in instance aborts one of two that do.
#[test]
fn a_read_write_load_run_shows_goodput_against_attempts_and_aborts_per_transaction() {
    let mut h = app();
    type_script(&mut h, TRANSFER, 1);
    {
        let load = &mut h.state_mut().settings_mut().load;
        load.model = LoadModel::Closed;
        load.concurrencies = "1,2".into();
        load.step_seconds = 1.0;
    }
    h.run_steps(1);
    h.get_by_label("Load").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().tab, Tab::Load);
    h.get_by_label("Run load").click();
    h.run_steps(2);
    assert_eq!(
        h.state().load_view().error(),
        None,
        "a read-write load starts"
    );
    assert!(h.state().load_view().is_running());
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });

    let view = h.state().load_view();
    assert_eq!(view.error(), None);
    let report = view.report().expect("a report");
    assert_eq!(report.steps.len(), 2);
    assert_eq!(report.sql, TRANSFER, "the panel's script");
    for step in &report.steps {
        assert!(step.committed.unwrap_or(0) > 0, "transactions committed");
        assert!(step.attempts_per_s.is_some_and(|a| a >= step.achieved_rate));
        assert!(
            step.parts.contains_key("commit"),
            "the transaction's parts: {:?}",
            step.parts
        );
    }
    // Drawn: a point per step on each line, and a row per step with its aborts per transaction.
    let lines: Vec<_> = view.goodput().lines().collect();
    assert_eq!(lines.len(), 2);
    for (name, points) in &lines {
        assert_eq!(points.len(), 2, "{name}");
    }
    assert_eq!(lines[0].0, GOODPUT_LINE);
    assert_eq!(lines[1].0, ATTEMPTS_LINE);
    let rows: Vec<Vec<String>> = view.goodput().rows().map(<[String]>::to_vec).collect();
    assert_eq!(rows.len(), 2);
    for (row, step) in rows.iter().zip(&report.steps) {
        assert_eq!(row[0], step.level().describe());
        assert_eq!(
            row[1],
            format!("{:.1}", step.committed_per_s.expect("goodput"))
        );
        let aborts = step
            .aborts_per_transaction
            .expect("transactions made attempts");
        assert_eq!(row[3], spanprof::text::trimmed(aborts, 3));
    }
    for words in [
        "Goodput against attempts",
        "goodput/s",
        "attempts/s",
        "aborts per transaction",
        GOODPUT_LINE,
        ATTEMPTS_LINE,
    ] {
        assert!(h.query_by_label(words).is_some(), "{words} in the window");
    }
}
