//! Read-write transactions in the window, through egui_kittest against the built-in instance: the
//! query panel's read-write switch makes the editor's text a script, typed and run as one
//! transaction per iteration, the summary saying how the transactions went; a script that does not
//! parse is said under the editor and nothing runs; a statement that fails stops the run, its error
//! beside the editor, the transaction rolled back; with the local instance's Abort knob on, an
//! iteration that aborted once has a timeline of two lanes, its abort marked and its back-off said.

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::analysis::Transactions;
use spanprof::app::{SpanprofApp, Tab};
use spanprof::part::Part;
use spanprof::report::{AttemptOutcome, Status};

use crate::app::{app, run_to_end, set_query};

/// The transfer: one unit from account 1 to account 2.
pub(crate) const TRANSFER: &str = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1; \
                        UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2";

/// Ticks the query panel's read-write switch (it must be off) and types `script` into the
/// editor, which is then the script's.
pub(crate) fn type_script(h: &mut Harness<'static, SpanprofApp>, script: &str, iterations: u32) {
    set_query(h, "", iterations, "transfer");
    h.run_steps(2);
    h.get_by_label("Read-write transaction").click();
    h.run_steps(2);
    assert!(h.state().settings().query.variants[0].read_write);
    let editor = h
        .get_all_by_label("Script")
        .find(|n| n.accesskit_node().role() == egui::accesskit::Role::MultilineTextInput)
        .expect("the editor is the script's");
    editor.focus();
    h.run_steps(1);
    h.get_all_by_label("Script")
        .find(|n| n.accesskit_node().role() == egui::accesskit::Role::MultilineTextInput)
        .expect("the editor")
        .type_text(script);
    h.run_steps(2);
    assert_eq!(h.state().settings().query.variants[0].sql, script);
}

/// The text of `node`: a label's value, another widget's label.
fn text(node: &egui_kittest::Node<'_>) -> String {
    let node = node.accesskit_node();
    node.value().or_else(|| node.label()).unwrap_or_default()
}

#[test]
fn a_transfer_typed_in_read_write_mode_runs_transactions_and_the_summary_says_how_they_went() {
    let mut h = app();
    type_script(&mut h, TRANSFER, 3);
    assert!(
        h.query_by_label("2 DML, then the commit").is_some(),
        "the script's steps under the editor"
    );
    run_to_end(&mut h);
    let report = h.state().runs()[0].report.clone();
    assert!(report.config.read_write.is_some(), "{:?}", report.config);
    assert_eq!(report.iterations.len(), 3);
    for r in &report.iterations {
        assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
        let t = r
            .transaction
            .as_ref()
            .expect("each iteration a transaction");
        assert_eq!(t.last().map(|a| a.outcome), Some(AttemptOutcome::Committed));
    }
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    let sentence = Transactions::of(&report).expect("transactions").to_string();
    assert!(
        sentence.starts_with("3 transactions, 3 committed"),
        "{sentence}"
    );
    assert!(
        h.query_by_label(&format!("{sentence}.")).is_some(),
        "the summary says: {sentence}"
    );
    // A query's run says no such sentence.
    h.get_by_label("Read-write transaction").click();
    set_query(
        &mut h,
        "SELECT Balance FROM Accounts WHERE AccountId = 1",
        2,
        "read",
    );
    h.run_steps(2);
    run_to_end(&mut h);
    h.run_steps(3);
    assert_eq!(h.query_all_by_label_contains(" transactions, ").count(), 0);
}

#[test]
fn a_script_that_does_not_parse_is_said_under_the_editor_and_does_not_run() {
    let mut h = app();
    type_script(
        &mut h,
        "UPDATE Accounts SET Balance = 0 WHERE AccountId = 3;\nCOMMIT",
        3,
    );
    let said: Vec<String> = h
        .query_all_by_label_contains("line 2")
        .map(|n| text(&n))
        .collect();
    assert_eq!(said.len(), 1, "said once, under the editor: {said:?}");
    assert!(said[0].contains("COMMIT"), "{said:?}");
    assert!(h.query_by_label("the script has an error").is_some());
    let run = h.get_by_label("Run");
    assert!(run.accesskit_node().is_disabled(), "Run is disabled");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    h.run_steps(3);
    assert!(!h.state().is_running(), "Ctrl+Enter runs nothing");
    assert!(h.state().runs().is_empty());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    assert!(
        notice.starts_with("the read-write script: line 2"),
        "{notice}"
    );
    // Fixed, the error goes and Run comes back.
    h.state_mut().settings_mut().query.first_mut().sql =
        "UPDATE Accounts SET Balance = 0 WHERE AccountId = 3".into();
    h.run_steps(2);
    let under_editor = h
        .query_all_by_label_contains("line 2")
        .filter(|n| text(n).starts_with("line 2"))
        .count();
    assert_eq!(under_editor, 0);
    assert!(!h.get_by_label("Run").accesskit_node().is_disabled());
    assert!(h.query_by_label("1 DML, then the commit").is_some());
}

#[test]
fn a_statement_that_fails_stops_the_run_its_error_beside_the_editor_and_nothing_applied() {
    let mut h = app();
    let script = TRANSFER.replace("SET Balance = Balance + 1", "SET Balanc = Balance + 1");
    type_script(&mut h, &script, 5);
    run_to_end(&mut h);
    let report = h.state().runs()[0].report.clone();
    assert_eq!(report.iterations.len(), 1, "one iteration, not five");
    let error = report.iterations[0].error().unwrap_or_default().to_owned();
    assert!(
        error.contains("rolled back") && error.contains("Unrecognized name: Balanc"),
        "{error}"
    );
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    let beside: Vec<String> = h
        .query_all_by_label_contains("stopped after the first iteration")
        .map(|n| text(&n))
        .collect();
    assert_eq!(beside.len(), 1, "{beside:?}");
    assert!(
        beside[0].contains("Unrecognized name: Balanc"),
        "{beside:?}"
    );
    assert!(
        h.query_by_label_contains(
            "the server refused a statement of the transaction with an error no retry can fix. \
             Its message is beside the script"
        )
        .is_some()
    );
    // The first UPDATE was rolled back with the rest: account 1 still holds 1,000.
    h.get_by_label("Read-write transaction").click();
    set_query(
        &mut h,
        "SELECT Balance FROM Accounts WHERE AccountId = 1",
        1,
        "read",
    );
    h.run_steps(2);
    run_to_end(&mut h);
    let details = h.state().runs()[1].details.clone().expect("the rows read");
    assert_eq!(details.rows, [["1000".to_owned()]]);
}

#[test]
fn an_iteration_that_aborted_once_has_two_lanes_its_abort_marked_and_its_back_off_said() {
    let mut h = app();
    h.run_steps(2);
    h.get_by_label("Fault injection: none").click();
    h.run_steps(2);
    assert!(h.query_by_value("no abort").is_some(), "off, in words");
    let knobs = &mut h.state_mut().settings_mut().connection.local.knobs;
    knobs.abort_every = 1;
    knobs.abort_retry_delay_ms = 20;
    h.run_steps(2);
    assert!(
        h.query_by_label("Fault injection: aborts").is_some(),
        "the header names the knob"
    );
    assert!(h.query_by_value("every transaction").is_some());
    assert_eq!(
        h.get_by_label("RetryInfo")
            .accesskit_node()
            .value()
            .as_deref(),
        Some("20 ms")
    );
    h.get_by_label("Fault injection: aborts").click();
    h.run_steps(2);
    type_script(&mut h, TRANSFER, 2);
    run_to_end(&mut h);
    let report = h.state().runs()[0].report.clone();
    let run = h.state().runs()[0].id;
    let first = &report.iterations[0];
    let t = first.transaction.as_ref().expect("a transaction");
    assert_eq!(
        t.attempts.len(),
        2,
        "aborted at the commit once, then committed"
    );
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(2);
    // The bars stack the transaction's parts; the legend names them.
    for part in [Part::Aborted, Part::Backoff, Part::Commit] {
        assert!(
            h.query_all_by_label(part.label()).count() >= 2,
            "{} in the legend and the summary",
            part.label()
        );
    }
    let bar = h
        .state_mut()
        .iterations_view()
        .bar_position(first.iteration, first.total_ms / 2.0)
        .expect("the chart was drawn");
    h.hover_at(bar);
    h.run_steps(1);
    h.drag_at(bar);
    h.run_steps(1);
    h.drop_at(bar);
    h.run_steps(3);
    let timeline = h.state_mut().iterations_view().timeline();
    assert_eq!(timeline.opened(), Some(first.iteration));
    assert_eq!(timeline.run(), Some(run));
    let view = timeline.attempts().expect("a transaction's timeline");
    assert_eq!(view.lane_labels(), ["attempt 1", "attempt 2"]);
    let painted = view.painted().to_vec();
    assert!(
        painted
            .iter()
            .any(|p| p.starts_with("back-off ") && p.ends_with("(RetryInfo 20.0 ms)")),
        "{painted:?}"
    );
    assert!(
        painted.iter().any(|p| p == "aborted at commit"),
        "{painted:?}"
    );
    // The back-off's figures on hover: the first lane's last stretch.
    let (at, hover) = (0..16)
        .rev()
        .find_map(|k| view.stretch_at(0, k))
        .map(|(at, hover)| (at, hover.to_owned()))
        .expect("the back-off was drawn");
    assert!(
        hover.contains("the server's RetryInfo asked for 20.0 ms"),
        "{hover}"
    );
    h.hover_at(at);
    let mut tip = false;
    for _ in 0..20 {
        h.run_steps(1);
        tip = h
            .query_by_label_contains("the server's RetryInfo asked for")
            .is_some();
        if tip {
            break;
        }
    }
    assert!(tip, "the hover shows the back-off's figures");
    // The selected iteration's attempts in the summary's table.
    assert!(
        h.query_by_label(&format!("Attempts of #{}", first.iteration))
            .is_some()
    );
    assert!(h.query_by_label("20.0 ms (details)").is_some());
}
