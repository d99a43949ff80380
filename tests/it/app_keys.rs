//! The window from the keyboard: Ctrl+R runs, Ctrl+. cancels, the arrows move
//! between iterations (the open timeline follows), Escape closes the timeline.

use egui_kittest::kittest::Queryable;

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
