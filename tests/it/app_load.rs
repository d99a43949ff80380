//! The window's Load tab through egui_kittest, as a person drives it: rates typed in, the
//! built-in instance made a known queue, Run load; each step appears as a row while the run goes
//! on, the knee is said above the curve; bad levels and an unreachable target are said in the
//! view and start nothing; Stop keeps the steps measured; the report exports.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{SpanprofApp, Tab, TargetKind};

use crate::app::{app, set_query, step_until};

/// The Load tab open, the query a short one, steps of `step_seconds`, and the built-in instance a
/// queue of one query thread holding each query `service_ms`.
fn load_tab(step_seconds: f64, service_ms: u64) -> Harness<'static, SpanprofApp> {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 10", 1, "loaded");
    {
        let load = &mut h.state_mut().settings_mut().load;
        load.step_seconds = step_seconds;
        load.queue.query_threads = 1;
        load.queue.service_ms = service_ms;
    }
    h.run_steps(1);
    h.get_by_label("Load").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().tab, Tab::Load);
    h
}

/// Types `rates` into the Rates field, replacing what is there.
fn type_rates(h: &mut Harness<'static, SpanprofApp>, rates: &str) {
    h.get_by_label("Rates").focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get_by_label("Rates").type_text(rates);
    h.run_steps(2);
    assert_eq!(h.state().settings().load.rates, rates);
}

fn run_load(h: &mut Harness<'static, SpanprofApp>) {
    h.get_by_label("Run load").click();
    h.run_steps(2);
}

/// One query thread of 10 ms serves 100 a second: 40/s is served at once, 200/s cannot be, and
/// the knee is there. The first step's row is in the window before the second one ends.
#[test]
fn a_load_run_shows_each_step_as_it_ends_and_the_knee_past_the_queues_capacity() {
    let mut h = load_tab(1.0, 10);
    assert!(h.query_by_label("Query threads").is_some());
    assert!(h.query_by_label_contains("No load run yet").is_some());
    type_rates(&mut h, "40,200");
    run_load(&mut h);
    assert!(h.state().load_view().is_running(), "Run load started a run");
    assert!(h.query_by_label("Stop").is_some());

    step_until(&mut h, "the first step", |app| {
        !app.load_view().steps().is_empty()
    });
    assert!(
        h.state().load_view().is_running(),
        "the second step is still going"
    );
    assert!(h.query_by_label("40 req/s").is_some(), "the first row");
    assert!(h.query_by_label("200 req/s").is_none());
    assert!(
        h.query_by_label_contains("No knee yet").is_some(),
        "one step makes no knee"
    );

    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    let view = h.state().load_view();
    assert_eq!(view.error(), None);
    let report = view.report().expect("a report");
    assert_eq!(report.steps.len(), 2);
    assert!(!report.cancelled);
    assert!(
        report.steps[1].achieved_rate < 180.0,
        "one 10 ms thread cannot serve 200/s: {}",
        report.steps[1].achieved_rate
    );
    assert_eq!(report.knee, Some(200.0), "{}", report.knee_words);
    for row in ["40 req/s", "200 req/s"] {
        assert!(h.query_by_label(row).is_some(), "the row {row}");
    }
    for heading in ["achieved/s", "p50", "p99.9", "max", "p99 actual", "dropped"] {
        assert!(h.query_by_label(heading).is_some(), "the column {heading}");
    }
    let knee = format!("Knee at 200 req/s: {}", report.knee_words);
    assert!(
        h.query_by_label(&knee).is_some(),
        "the knee's words: {knee}"
    );
    assert!(h.query_by_label("Run load").is_some(), "ready again");
    assert!(
        h.query_by_label_contains("load run finished: 2 steps")
            .is_some(),
        "the status bar says it"
    );
}

/// A rate that is not one, or zero, is said in the view and starts nothing.
#[test]
fn bad_rates_are_said_in_the_view_and_start_nothing() {
    let mut h = load_tab(1.0, 0);
    for (rates, said) in [("abc", "`abc` is not a rate"), ("0", "`0` is not a rate")] {
        type_rates(&mut h, rates);
        run_load(&mut h);
        assert!(!h.state().load_view().is_running(), "{rates} started a run");
        assert!(h.state().load_view().steps().is_empty());
        let error = h.state().load_view().error().unwrap_or_default().to_owned();
        assert!(error.contains(said), "{rates}: {error}");
        assert!(h.query_by_label(&error).is_some(), "shown: {error}");
        assert!(h.query_by_label("The load run could not run").is_some());
    }
}

/// A target nobody answers on: the engine's failure is said in the view, and the tab is ready
/// for another run.
#[test]
fn an_unreachable_target_is_said_in_the_view() {
    let mut h = load_tab(1.0, 0);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    {
        let connection = &mut h.state_mut().settings_mut().connection;
        connection.kind = TargetKind::Emulator;
        connection.emulator.host_port = format!("127.0.0.1:{port}");
    }
    type_rates(&mut h, "10");
    run_load(&mut h);
    step_until(&mut h, "the failure", |app| !app.load_view().is_running());
    let error = h.state().load_view().error().unwrap_or_default().to_owned();
    assert!(!error.is_empty(), "an error is said");
    assert!(h.query_by_label(&error).is_some(), "shown: {error}");
    assert!(h.query_by_label("The load run could not run").is_some());
    assert!(h.state().load_view().report().is_none());
    assert!(h.query_by_label("Run load").is_some());
}

/// Stop while the second of three long steps runs: the run ends at once, the first step stays in
/// the table, and the view says the run was stopped.
#[test]
fn stop_keeps_the_steps_measured() {
    let mut h = load_tab(1.0, 0);
    type_rates(&mut h, "20,20,20");
    h.state_mut().settings_mut().load.step_seconds = 1.0;
    run_load(&mut h);
    step_until(&mut h, "the first step", |app| {
        !app.load_view().steps().is_empty()
    });
    h.get_by_label("Stop").click();
    let stopped = Instant::now();
    step_until(&mut h, "the stopped run to end", |app| {
        !app.load_view().is_running()
    });
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopped.elapsed()
    );
    let report = h.state().load_view().report().expect("a report").clone();
    assert!(report.cancelled);
    assert!(
        (1..3).contains(&report.steps.len()),
        "{} steps",
        report.steps.len()
    );
    assert!(report.steps[0].count > 0);
    assert_eq!(h.query_all_by_label("20 req/s").count(), report.steps.len());
    assert!(
        h.query_by_label_contains("Stopped: the steps measured")
            .is_some()
    );
}

/// The ended run's report exports from the view through the in-window dialog: Enter saves the
/// proposed name in the last folder, and the file is the load report.
#[test]
fn the_load_report_exports_as_json_from_the_view() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut h = load_tab(0.5, 0);
    h.state_mut().settings_mut().last_folder = Some(dir.path().to_owned());
    assert!(h.query_by_label("Export JSON…").is_none(), "nothing yet");
    type_rates(&mut h, "20");
    run_load(&mut h);
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    h.get_by_label("Export JSON…").click();
    h.run_steps(2);
    assert!(h.state().file_dialog_open());
    assert!(
        h.query_by_label("Export the load run's JSON report")
            .is_some()
    );
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    step_until(&mut h, "the export to be written", |app| !app.files_busy());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    let path = std::path::PathBuf::from(
        notice
            .strip_prefix("exported to ")
            .ok_or_else(|| format!("no export: {notice}"))?,
    );
    assert_eq!(path.parent(), Some(dir.path()));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(name.starts_with("spanprof-load-loaded-"), "{name}");
    let report = spanprof::load::LoadReport::from_json(&std::fs::read(&path)?)?;
    assert_eq!(Some(&report), h.state().load_view().report());
    Ok(())
}
