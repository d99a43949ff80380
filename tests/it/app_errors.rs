//! Errors where the eye is: a query the server refuses for good stops after its
//! first iteration and says so once, beside the editor, the span the server pointed at marked; an
//! empty query cannot be run, and the window says why; the command line stops alike and underlines
//! the span.

use std::process::Command;

use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::app::{Tab, TestOutcome};

use crate::app::{app, run_to_end, set_query, step_until};

/// What a node says: a label's text, another widget's label.
fn text(node: &egui_kittest::Node<'_>) -> Option<String> {
    let node = node.accesskit_node();
    node.value().or_else(|| node.label())
}

#[test]
fn bad_sql_stops_after_its_first_iteration_and_says_so_once_beside_the_editor() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 WHERE Nme = 'x'", 10, "typo");
    run_to_end(&mut h);
    let report = &h.state().runs()[0].report;
    assert_eq!(report.iterations.len(), 1, "one iteration, not ten");
    let stopped = report.stopped.clone().expect("the run says it stopped");
    assert!(
        stopped.starts_with("stopped after the first iteration: ")
            && stopped.contains("Unrecognized name: Nme")
            && stopped.ends_with("(an error no retry can fix)"),
        "{stopped}"
    );
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    // Beside the editor, once.
    assert_eq!(
        h.query_all_by_label_contains("stopped after the first iteration")
            .count(),
        1
    );
    // The central area points there, with no chart of the one failure and no second copy.
    assert_eq!(h.query_all_by_label_contains("failed: ").count(), 0);
    assert!(
        h.query_by_label_contains("This run stopped after its first iteration")
            .is_some()
    );
    assert!(
        h.state()
            .notice()
            .is_some_and(|n| n.contains("Unrecognized name")),
        "the status bar says it: {:?}",
        h.state().notice()
    );
    // Edited, the query is no longer the refused one: the editor's message goes, the status
    // bar's red error with it, and the central area says the refusal itself instead of pointing
    // at a message that is gone.
    h.state_mut().settings_mut().query.first_mut().sql =
        "SELECT * FROM Seed23 WHERE Name = 'x'".into();
    h.run_steps(2);
    assert_eq!(
        h.query_all_by_label_contains("beside the SQL editor")
            .count(),
        0
    );
    assert_eq!(h.state().notice(), None);
    let centre: Vec<_> = h
        .query_all_by_label_contains("This run stopped after its first iteration")
        .collect();
    assert_eq!(centre.len(), 1);
    let centre = text(&centre[0]).unwrap_or_default();
    assert!(centre.contains("Unrecognized name: Nme"), "{centre}");
    assert_eq!(centre.matches("stopped after").count(), 1, "{centre}");
    assert_eq!(centre.matches("no retry can fix").count(), 1, "{centre}");
    assert_eq!(
        h.query_all_by_label_contains("Unrecognized name").count(),
        1,
        "said once, in the central area"
    );
}

#[test]
fn an_empty_query_cannot_be_run_and_the_window_says_why() {
    let mut h = app();
    set_query(&mut h, "   ", 3, "empty");
    h.run_steps(2);
    assert!(h.query_by_label("the query is empty").is_some());
    let run = h.get_by_label("Run");
    assert!(run.accesskit_node().is_disabled(), "Run is disabled");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    h.run_steps(2);
    assert!(!h.state().is_running(), "Ctrl+Enter runs nothing");
    assert_eq!(
        h.state().notice(),
        Some("nothing to run: the query is empty")
    );
    assert!(
        h.state().log().entries().is_empty(),
        "a notice, not an error"
    );
}

#[test]
fn the_command_line_stops_alike_and_underlines_where_the_server_pointed() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("typo.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--no-history",
            "--sql",
            "SELECT * FROM Seed23 WHERE Nme = 'x'",
            "--iterations",
            "10",
            "--json",
        ])
        .arg(&json)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("spanprof runs");
    assert_eq!(out.status.code(), Some(3), "an iteration failed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("**Stopped after the first iteration: "),
        "{stdout}"
    );
    // The name the server did not know, underlined where it stands (4 + 27 columns in).
    let underlined = format!(
        "    SELECT * FROM Seed23 WHERE Nme = 'x'\n{}^^^\n",
        " ".repeat(4 + 27)
    );
    assert!(stdout.contains(&underlined), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("Unrecognized name").count(), 1, "{stderr}");
    let runs =
        spanprof::export::read_json(&std::fs::read(&json).expect("the report")).expect("a report");
    assert_eq!(runs[0].iterations.len(), 1);
    assert!(runs[0].stopped.is_some());
    assert_eq!(
        runs[0].iterations[0].outcome.code().map(|c| c.as_str()),
        Some("InvalidArgument")
    );
}

#[test]
fn a_target_error_sits_in_the_connection_panel_and_goes_when_the_field_changes() {
    let mut h = app();
    // A run of the local instance first: its figures must not pass for the failed run's.
    set_query(&mut h, "SELECT 1", 2, "before");
    run_to_end(&mut h);
    assert!(h.state().runs().len() == 1);

    let closed = crate::support::ClosedPort::new();
    {
        let connection = &mut h.state_mut().settings_mut().connection;
        connection.kind = spanprof::app::TargetKind::Emulator;
        connection.emulator.host_port = closed.host_port.clone();
    }
    h.run_steps(1);
    h.get_by_label("Test connection").click();
    step_until(&mut h, "the failing test", |app| {
        matches!(app.connection_outcome(), Some(TestOutcome::Failed(_)))
    });
    // Another port: the error of the one before is no longer said.
    let other = crate::support::ClosedPort::new();
    h.state_mut().settings_mut().connection.emulator.host_port = other.host_port.clone();
    h.run_steps(2);
    assert!(h.state().connection_outcome().is_none());
    assert!(
        h.query_by_label_contains(&format!("cannot reach {}", closed.host_port))
            .is_none()
    );

    // A run on the dead port: said once, in the central area, with the next step (start the
    // emulator); the fields at fault are marked in the panel; the earlier run's bars are not
    // shown as if they were its, nor an empty run picker under an error that points "above".
    set_query(&mut h, "SELECT 1", 2, "");
    run_to_end(&mut h);
    assert!(h.query_by_label("The run could not start").is_some());
    assert!(
        h.state().runs().len() == 1,
        "no report for a run that never started"
    );
    let said: Vec<String> = h
        .query_all_by_label_contains(&other.host_port)
        .filter_map(|n| text(&n))
        .filter(|l| !l.starts_with("emulator "))
        .collect();
    assert_eq!(said.len(), 1, "said once: {said:?}");
    let said = &said[0];
    assert!(said.contains("Start emulator"), "{said}");
    assert!(
        !said.contains("tcp connect error: tcp connect error"),
        "{said}"
    );
    assert!(
        matches!(
            h.state().connection_outcome(),
            Some(TestOutcome::Failed(text)) if text == "the last run could not reach this target"
        ),
        "{:?}",
        h.state().connection_outcome()
    );
    assert_eq!(h.state().notice(), Some("the run could not start"));
    assert!(h.query_by_label_contains("the list above").is_none());
    let says = |h: &egui_kittest::Harness<'static, spanprof::app::SpanprofApp>, words: &str| {
        let mut nodes = h.query_all(egui_kittest::kittest::by());
        nodes.any(|n| text(&n).is_some_and(|t| t.contains(words)))
    };
    assert!(
        says(&h, "Pick a run (1 in the list)"),
        "the run picker says what it holds"
    );
    // Back to the local instance: the panel's error goes; a run there clears the central one.
    h.state_mut().settings_mut().connection.kind = spanprof::app::TargetKind::Local;
    h.run_steps(2);
    assert!(h.state().connection_outcome().is_none());
    run_to_end(&mut h);
    assert!(h.query_by_label("The run could not start").is_none());
}
