//! The window from the keyboard: the SQL editor has the keys at launch, Ctrl+R runs, Ctrl+.
//! cancels, the arrows move between iterations (the open timeline follows) once Escape has left
//! the editor, Escape closes the timeline.

use egui_kittest::kittest::{NodeT as _, Queryable};

use crate::app::{app, set_query, step_until};

#[test]
fn the_keyboard_runs_cancels_moves_between_iterations_and_closes_the_timeline() {
    let mut h = app();
    // Ctrl+. cancels a run that would take long.
    set_query(&mut h, "SELECT * FROM Seed23", 200, "long");
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::R);
    h.step();
    assert!(h.state().is_running(), "Ctrl+R started a run");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Period);
    step_until(&mut h, "the cancel", |app| !app.is_running());
    let cancelled = h
        .state()
        .runs()
        .first()
        .map_or(0, |r| r.report.iterations.len());
    assert!(cancelled < 200, "cancelled after {cancelled} iterations");

    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 4, "four");
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::R);
    h.step();
    step_until(&mut h, "the run", |app| !app.is_running());
    let run = h.state().runs().last().expect("the run");
    let (id, numbers): (spanprof::report::RunId, Vec<u32>) = (
        run.id,
        run.report.iterations.iter().map(|r| r.iteration).collect(),
    );
    assert_eq!(numbers.len(), 4);
    // The SQL editor has had the keys since the first frame: in it the arrows move its cursor,
    // and Escape leaves it.
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(1);
    assert!(h.state_mut().iterations_view().selection().is_empty());
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    // Nothing selected: the right arrow picks the first, then the next.
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(1);
    let selected = |h: &mut egui_kittest::Harness<'static, spanprof::app::SpanprofApp>| {
        h.state_mut()
            .iterations_view()
            .selection()
            .iter()
            .copied()
            .collect::<Vec<u32>>()
    };
    assert_eq!(selected(&mut h), [numbers[0]]);
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(1);
    assert_eq!(selected(&mut h), [numbers[1]]);
    // With a timeline open, the arrows move it.
    h.state_mut()
        .iterations_view()
        .timeline()
        .open(id, numbers[1]);
    h.run_steps(2);
    assert!(
        h.query_by_label(&format!("Timeline of #{}", numbers[1]))
            .is_some()
    );
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(2);
    assert_eq!(
        h.state_mut().iterations_view().timeline().opened(),
        Some(numbers[2])
    );
    h.key_press(egui::Key::ArrowLeft);
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(
        h.state_mut().iterations_view().timeline().opened(),
        Some(numbers[0])
    );
    // Past the first, it stays.
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(1);
    assert_eq!(selected(&mut h), [numbers[0]]);
    // Escape closes it; the summary is back.
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state_mut().iterations_view().timeline().opened(), None);
    assert!(h.query_by_label("Summary").is_some());
}

/// At launch the keyboard is in the SQL editor: what is typed first is the query (the menus, the
/// tabs and the connection panel came first in Tab's order, some sixteen presses).
#[test]
fn the_sql_editor_has_the_keys_at_launch_and_what_is_typed_goes_into_it() {
    let mut h = app();
    h.run_steps(2);
    let sql = h.get_by_label("SQL");
    assert!(
        sql.accesskit_node().is_focused(),
        "the SQL editor has the keys"
    );
    let before = h.state().settings().query.first_sql().to_owned();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::End);
    h.run_steps(1);
    h.event(egui::Event::Text(" LIMIT 7".into()));
    h.run_steps(2);
    let after = h.state().settings().query.first_sql().to_owned();
    assert!(
        after.ends_with(" LIMIT 7") && after.starts_with(before.trim_end()),
        "{before:?} then {after:?}"
    );
}
