//! The window's Load tab through egui_kittest, as a person drives it: rates typed in, the
//! built-in instance made a known queue, the side panel's Run load; each step appears as a row, a
//! stacked bar of its parts and a line of its percentiles while the run goes on, the knee is said
//! above the curve; a step that cannot keep up is seen draining; bad levels and an unreachable
//! target are said in the view and start nothing; Cancel keeps the steps measured; the report
//! exports.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{SpanprofApp, Tab, TargetKind};
use spanprof::load::StepLevel;
use spanprof::part::Part;
use spanprof::text::ms;

use crate::app::{app, set_query, step_until};
use crate::app_accounting::label_containing;

/// The Load tab open, the query a short one, steps of `step_seconds`, and the built-in instance a
/// queue of one query thread holding each query `service_ms`.
fn load_tab(step_seconds: f64, service_ms: u64) -> Harness<'static, SpanprofApp> {
    load_tab_of(app(), step_seconds, service_ms)
}

/// [`load_tab`] of the app `h`.
fn load_tab_of(
    mut h: Harness<'static, SpanprofApp>,
    step_seconds: f64,
    service_ms: u64,
) -> Harness<'static, SpanprofApp> {
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

/// The open model's steps field.
const RATES: &str = "Steps (requests a second)";

/// Types `rates` into the open model's steps field, replacing what is there.
fn type_rates(h: &mut Harness<'static, SpanprofApp>, rates: &str) {
    h.get_by_label(RATES).focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get_by_label(RATES).type_text(rates);
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
    assert!(h.query_by_label("Queries served at once").is_some());
    assert!(h.query_by_label_contains("No load run yet").is_some());
    type_rates(&mut h, "40,200");
    run_load(&mut h);
    assert!(h.state().load_view().is_running(), "Run load started a run");
    assert!(h.query_by_label("Cancel").is_some());

    step_until(&mut h, "the first step", |app| {
        !app.load_view().steps().is_empty()
    });
    assert!(
        h.state().load_view().is_running(),
        "the second step is still going"
    );
    // The first step's row and its percentile line's legend; nothing of the second yet.
    assert!(
        h.query_all_by_label("40 req/s").count() >= 1,
        "the first row"
    );
    assert!(h.query_all_by_label("200 req/s").next().is_none());
    let view = h.state().load_view();
    assert_eq!(view.parts_chart().drawn(), 1, "a bar as the step ends");
    assert_eq!(
        view.percentile_plot().drawn().0,
        1,
        "a line as the step ends"
    );
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
        assert!(h.query_all_by_label(row).count() >= 1, "the row {row}");
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

/// Cancel while the second of three long steps runs: the run ends at once, the first step stays
/// in the table, the chart and the plot, and the view says the run was stopped.
#[test]
fn stop_keeps_the_steps_measured() {
    let mut h = load_tab(1.0, 0);
    type_rates(&mut h, "20,20,20");
    h.state_mut().settings_mut().load.step_seconds = 1.0;
    run_load(&mut h);
    step_until(&mut h, "the first step", |app| {
        !app.load_view().steps().is_empty()
    });
    h.get_by_label("Cancel").click();
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
    // Each step's row (the table scrolled into view, up to the sentences under it: its rows
    // out of view are not laid out), and its percentile line's legend.
    h.get_by_label("Each step in words").scroll_to_me();
    h.run_steps(3);
    assert_eq!(
        h.query_all_by_label("20 req/s").count(),
        2 * report.steps.len()
    );
    let view = h.state().load_view();
    assert_eq!(view.parts_chart().drawn(), report.steps.len());
    assert_eq!(view.percentile_plot().drawn().0, report.steps.len());
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

/// File > Export the load run offers a load run's formats, the HDR interval log among them
/// (the Load tab's buttons read the same list); the dialog saves the log, the same bytes as
/// `spanprof load --hdr-log` writes of that run.
#[test]
fn the_file_menu_exports_the_load_run_s_hdr_log() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut h = load_tab(0.5, 0);
    h.state_mut().settings_mut().last_folder = Some(dir.path().to_owned());
    type_rates(&mut h, "20");
    run_load(&mut h);
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    assert!(
        h.query_by_label("Export HDR log…").is_some(),
        "the tab's button"
    );
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Export the load run").hover();
    h.run_steps(2);
    h.get_by_label("HDR interval log…").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Export the load run's HDR interval log")
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
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        name.starts_with("spanprof-load-loaded-") && name.ends_with(".hlog"),
        "{name}"
    );
    let report = h.state().load_view().report().ok_or("no report")?;
    assert_eq!(
        std::fs::read(&path)?,
        spanprof::export::load_hdr_log(report)?
    );
    Ok(())
}

/// On the Load tab the side panel's Run says Run load and starts a load run (a step
/// row appears), not an Iterations run; its Cancel stops it; Ctrl+Enter starts one too.
#[test]
fn the_side_panel_s_run_on_the_load_tab_starts_a_load_run_not_an_iterations_run() {
    let mut h = load_tab(1.0, 0);
    assert!(
        h.query_by_label("Run").is_none(),
        "the Iterations run's button is not offered on the Load tab"
    );
    type_rates(&mut h, "20,20,20");
    run_load(&mut h);
    assert!(
        h.state().load_view().is_running(),
        "Run load started a load run"
    );
    assert!(!h.state().is_running(), "and no Iterations run");
    step_until(&mut h, "the first step's row", |app| {
        !app.load_view().steps().is_empty()
    });
    assert!(h.query_all_by_label("20 req/s").count() >= 1, "its row");
    assert!(
        h.state().runs().is_empty(),
        "no Iterations run joined the list"
    );
    h.get_by_label("Cancel").click();
    step_until(&mut h, "the cancelled run to end", |app| {
        !app.load_view().is_running()
    });
    assert!(h.state().load_view().report().expect("a report").cancelled);

    // Ctrl+Enter on the Load tab: a load run again.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    h.run_steps(2);
    assert!(
        h.state().load_view().is_running(),
        "Ctrl+Enter started a load run"
    );
    assert!(!h.state().is_running());
    h.get_by_label("Cancel").click();
    step_until(&mut h, "the second run to end", |app| {
        !app.load_view().is_running()
    });
    assert!(h.state().runs().is_empty());

    // Back on Iterations, the side panel's Run is the query's again.
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(2);
    assert!(h.query_by_label("Run").is_some());
    assert!(h.query_by_label("Run load").is_none());
}

/// `label figure` lines of a tooltip whose label is a part's, as label -> figure.
fn part_lines(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let part = Part::ALL
                .into_iter()
                .find(|p| line.starts_with(&format!("{} ", p.label())))?;
            let figure = line.strip_prefix(&format!("{} ", part.label()))?;
            Some((part.label().to_owned(), figure.to_owned()))
        })
        .collect()
}

/// Hovers the middle of step `index`'s `part` segment until the chart says it is hovered; the
/// tooltip's text.
fn hover_segment(h: &mut Harness<'static, SpanprofApp>, index: usize, part: Part) -> String {
    let at = h
        .state()
        .load_view()
        .parts_chart()
        .segment_position(index, part)
        .expect("the segment was drawn");
    h.hover_at(at);
    h.run_steps(2);
    assert_eq!(
        h.state().load_view().parts_chart().hovered(),
        Some((index, Some(part))),
        "the pointer at {at:?} is over step {index}'s {part:?}"
    );
    let level = h.state().load_view().steps()[index].level().describe();
    label_containing(h, &format!("{level} · {}: ", part.label())).expect("the segment's tooltip")
}

/// After a real load run, the parts chart has a bar per step whose segments' figures (read
/// off their tooltips) are the steps' own `parts`, and the percentile plot a line per step read
/// off its histogram, its 99% the step's p99; the uncorrected lines on the toggle.
#[test]
fn each_step_s_parts_and_percentiles_are_drawn_with_its_own_figures() {
    // A 1 ms service time: the server's part is the largest of every step; every step has more
    // than 100 requests, so its line reaches 99%.
    let mut h = load_tab(1.0, 1);
    type_rates(&mut h, "150,300,450");
    run_load(&mut h);
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    let steps = h.state().load_view().steps().to_vec();
    assert_eq!(steps.len(), 3);
    let view = h.state().load_view();
    assert_eq!(view.parts_chart().drawn(), steps.len(), "one bar per step");
    assert_eq!(
        view.percentile_plot().drawn(),
        (3, 1),
        "a line per step, the last dashed"
    );
    for (step, (name, points)) in steps.iter().zip(view.percentile_plot().lines()) {
        assert_eq!(name, step.level().describe());
        let at_99 = points
            .iter()
            .find(|p| (p.x - 2.0).abs() < 1e-9)
            .expect("a point at 99%");
        // Drawn on a log axis and read back: equal but for the logarithm's last bits.
        let p99 = step.p99_ms.expect("a p99");
        assert!(
            (at_99.y - p99).abs() <= 1e-9 * p99,
            "{name}'s 99%: {} against {p99}",
            at_99.y
        );
    }
    // The charts whole, as a person would see them: the steps' table under them scrolled to the
    // window's edge (the controls above, and a knee said in two lines, can push them past it).
    h.get_by_label("achieved/s").scroll_to_me();
    h.run_steps(3);
    for (index, step) in steps.iter().enumerate() {
        assert!(step.parts.contains_key("server"), "{:?}", step.parts);
        // The tallest segment is always big enough to point at.
        let (key, value) = step
            .parts
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("parts");
        let part = Part::from_key(key).expect("a part's key");
        let tooltip = hover_segment(&mut h, index, part);
        let first = tooltip.lines().next().unwrap_or_default().to_owned();
        let level = step.level().describe();
        assert_eq!(first, format!("{level} · {}: {}", part.label(), ms(*value)));
        // Every part of the step, each as its figures say.
        let want: BTreeMap<String, String> = step
            .parts
            .iter()
            .filter_map(|(k, v)| Some((Part::from_key(k)?.label().to_owned(), ms(*v))))
            .collect();
        assert_eq!(part_lines(&tooltip), want, "{tooltip}");
    }
    // Every bar as shares of its step's mean, the same height whatever the step's latency; "in
    // ms" draws the figures themselves.
    for index in 0..steps.len() {
        let shares = h.state().load_view().parts_chart().segments(index);
        let total: f64 = shares.iter().map(|(_, v)| v).sum();
        assert!((total - 100.0).abs() < 1e-6, "step {index}: {shares:?}");
    }
    h.get_by_label("in ms").click();
    h.run_steps(2);
    for (index, step) in steps.iter().enumerate() {
        for (part, value) in h.state().load_view().parts_chart().segments(index) {
            assert_eq!(value, step.parts[part.key()], "{part:?}");
        }
    }
    // The plot is below the table: scrolled to, as a person would, then the toggle.
    h.hover_at(egui::pos2(1.0, 1.0));
    h.get_by_label("every step from the actual start")
        .scroll_to_me();
    h.run_steps(3);
    h.get_by_label("every step from the actual start").click();
    h.run_steps(2);
    assert_eq!(h.state().load_view().percentile_plot().drawn(), (3, 3));
}

/// A step that cannot keep up stops generating with requests still in flight; while they drain
/// (up to 30 s) the tab says so, and how many are left, rather than looking idle.
#[test]
fn a_step_that_cannot_keep_up_is_seen_draining_its_requests_in_flight() {
    // One 20 ms thread serves 50 a second: 150/s for half a second leaves about a second's work.
    let mut h = load_tab(0.5, 20);
    type_rates(&mut h, "150");
    run_load(&mut h);
    step_until(&mut h, "the drain", |app| {
        app.load_view()
            .progress()
            .is_some_and(|p| p.phase(Instant::now()).drain.is_some())
    });
    assert!(h.state().load_view().is_running(), "still in flight");
    let said = label_containing(&mut h, "still in flight: ").expect("the drain said in the tab");
    assert!(said.contains("(up to 30 s)"), "{said}");
    // "draining the N requests still in flight" (or "the 1 request"), N read from the engine.
    let left: u32 = said
        .split("draining the ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("a count of the requests in flight: {said}"));
    assert!(left >= 1, "{said}");
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    let step = &h.state().load_view().steps()[0];
    assert!(step.count > 0 && step.unfinished == 0, "drained: {step:?}");
    assert!(h.query_by_label_contains("draining").is_none());
}

/// A load run in flight when the window closes is stopped, and what it measured is kept in the
/// history, as Ctrl-C keeps `spanprof load`'s.
#[test]
fn a_closed_window_keeps_what_the_load_run_measured_in_the_history() {
    use spanprof::history::{Filter, HistoryStore, Location, Retention, SqliteStore};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("history.sqlite");
    let history = Location::File(path.clone());
    let h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = spanprof::app::AppOptions {
                history,
                ..spanprof::app::AppOptions::in_memory(10_000)
            };
            SpanprofApp::new(cc, options)
        });
    let mut h = load_tab_of(h, 1.0, 0);
    type_rates(&mut h, "20,20,20,20,20");
    run_load(&mut h);
    step_until(&mut h, "the first step", |app| {
        !app.load_view().steps().is_empty()
    });
    let closing = Instant::now();
    eframe::App::on_exit(h.state_mut(), None);
    // The app goes with the window: its history worker finishes the save as it goes.
    drop(h);
    assert!(
        closing.elapsed() < Duration::from_secs(6),
        "{:?}",
        closing.elapsed()
    );
    let mut store = SqliteStore::open(&path, Retention::default()).expect("the store");
    let loads = store.list_loads(&Filter::default()).expect("lists");
    assert_eq!(loads.len(), 1, "{loads:?}");
    let report = store
        .get_load(&loads[0].id)
        .expect("reads")
        .expect("the load run");
    assert!(report.cancelled);
    assert!(
        (1..5).contains(&report.steps.len()),
        "{} steps",
        report.steps.len()
    );
    assert!(report.steps[0].count > 0);
}

/// The controls say what they do in plain words: load as requests a second (arrivals) or as
/// clients at once, a sentence under them on what the chosen one means, and words for the cap in
/// flight and the built-in instance's queue and pauses where there were "Max in flight", "Query
/// threads" and "Freeze every/for".
#[test]
fn the_load_tab_says_its_controls_in_plain_words() {
    let mut h = load_tab(1.0, 0);
    for label in [
        "Requests a second (arrivals)",
        "Clients at once",
        "Find the knee",
        RATES,
        "Each step lasts",
        "Unanswered requests, at most",
        "Stop the ramp at the knee",
        "Queries served at once",
        "Each query holds its place for",
        "Pause all answers every",
        "Each pause lasts",
    ] {
        assert!(h.query_by_label(label).is_some(), "the control {label}");
    }
    for gone in [
        "Max in flight",
        "Query threads",
        "Freeze every",
        "Freeze for",
    ] {
        assert!(h.query_by_label(gone).is_none(), "{gone} is said in words");
    }
    let open = label_containing(&mut h, "Requests start on a schedule").expect("the open model");
    assert!(
        open.contains("whether or not the earlier ones have answered"),
        "{open}"
    );
    assert!(
        h.query_by_label_contains("A fixed number of clients")
            .is_none()
    );

    h.get_by_label("Clients at once").click();
    h.run_steps(2);
    assert!(h.query_by_label("Steps (clients at once)").is_some());
    assert!(h.query_by_label(RATES).is_none());
    assert!(
        h.query_by_label("Unanswered requests, at most").is_none(),
        "clients at once have no schedule to fall behind"
    );
    let closed = label_containing(&mut h, "A fixed number of clients").expect("the closed model");
    assert!(closed.contains("wait for its answer"), "{closed}");
    assert!(
        h.query_by_label_contains("Requests start on a schedule")
            .is_none()
    );
}

/// "Find the knee" sets an open doubling ramp that stops at the knee; run on a queue that serves
/// 200 a second, it stops one step past the knee and says so. The tab then reads without knowing
/// load tools: each step in a sentence (the knee's marked), the latency on a log axis where the
/// light steps stand apart, the two p99 lines in colours of their own, and every column of the
/// steps' table inside the 1280-wide window.
#[test]
fn find_the_knee_ramps_until_latency_departs_and_the_tab_reads_it_in_words() {
    // One query thread of 5 ms serves 200 a second.
    let mut h = load_tab(0.5, 5);
    h.state_mut().settings_mut().load.model = spanprof::app::LoadModel::Closed;
    h.run_steps(1);
    h.get_by_label("Find the knee").click();
    h.run_steps(2);
    let load = h.state().settings().load.clone();
    assert_eq!(load.model, spanprof::app::LoadModel::Open);
    assert_eq!(load.rates, "50,100,200,400,800,1600,3200,6400");
    assert!(load.stop_at_knee && h.query_by_label(RATES).is_some());
    // Shorter steps than the preset's, as a person in a hurry sets them.
    h.state_mut().settings_mut().load.step_seconds = 0.5;
    run_load(&mut h);
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    let report = h.state().load_view().report().expect("a report").clone();
    let knee = report.knee.expect("a knee");
    let at = report
        .steps
        .iter()
        .position(|s| s.level().value() == knee)
        .expect("the knee's step");
    assert_eq!(
        report.steps.len(),
        at + 2,
        "the knee and one step that confirms it: {}",
        report.knee_words
    );
    assert!(
        report.steps.len() < 8 && knee <= 800.0,
        "{}",
        report.knee_words
    );
    assert!(
        h.query_by_label_contains("the ramp stopped at the knee")
            .is_some()
    );

    // Each step in words, from the table's own cells.
    for step in &report.steps {
        let StepLevel::Rate(rate) = step.level() else {
            panic!("an open ramp")
        };
        let said = format!(
            "At {} requests a second, p99 was {}; {} late, {} dropped",
            spanprof::text::trimmed(rate, 3),
            spanprof::text::maybe_ms(step.p99_ms),
            spanprof::text::count(step.late),
            spanprof::text::count(step.dropped)
        );
        assert!(h.query_by_label_contains(&said).is_some(), "{said}");
    }
    assert!(h.query_by_label("(the knee)").is_some());

    // The latency axis is logarithmic: marks at 1, 2 and 5 of each decade, equal ratios equal
    // heights, and the first step's p50 stands clear of twice itself.
    let figures = h.state().load_view().figures();
    let marks = figures.latency_marks().to_vec();
    assert!(marks.len() >= 4, "{marks:?}");
    for mark in &marks {
        let leading = mark / 10f64.powf(mark.log10().floor());
        assert!(
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .any(|f| (leading - f).abs() < 1e-6),
            "{marks:?}"
        );
    }
    let height = |ms: f64| figures.latency_height(ms).expect("the curve was drawn");
    let decade = height(2.0) - height(20.0);
    assert!(decade > 20.0, "a decade is {decade} px");
    assert!((decade - (height(20.0) - height(200.0))).abs() < 0.5);
    let low = report.steps[0].p50_ms.expect("a p50");
    assert!(
        height(low) - height(2.0 * low) > 10.0,
        "the light steps lie flat"
    );
    let colours: Vec<(egui::Color32, bool)> = figures
        .lines()
        .filter(|(line, _)| line.name.starts_with("p99"))
        .map(|(line, _)| (line.colour, line.dashed))
        .collect();
    assert_eq!(colours.len(), 2);
    assert_ne!(colours[0].0, colours[1].0, "the two p99s share one colour");
    assert!(colours[0].1 != colours[1].1, "one is dashed");

    // Every column of the table, its heading and its last row's level, within the window.
    h.get_by_label("dropped").scroll_to_me();
    h.run_steps(3);
    let last = report.steps.last().expect("a step").level().describe();
    for label in [
        "step",
        "achieved/s",
        "p99 actual",
        "errors",
        "late",
        "dropped",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([last])
    {
        let right = h
            .query_all_by_label(&label)
            .map(|n| n.rect().right())
            .fold(0.0f32, f32::max);
        assert!(right > 0.0 && right <= 1280.0, "{label} ends at {right}");
    }
}

/// At 900x600 the controls keep to their rows: Find the knee, beside the radios, wrapped under them
/// and lay over the steps' field (a grid row keeps one line's height).
#[test]
fn at_900x600_find_the_knee_lies_over_no_other_control() {
    let h = egui_kittest::Harness::builder()
        .with_size(egui::vec2(900.0, 600.0))
        .build_eframe(|cc| SpanprofApp::new(cc, spanprof::app::AppOptions::in_memory(10_000)));
    let mut h = load_tab_of(h, 0.5, 1);
    h.run_steps(2);
    let knee = h.get_by_label("Find the knee").rect();
    for other in [RATES, "Requests a second (arrivals)", "Clients at once"] {
        let rect = h.get_by_label(other).rect();
        let overlap = knee.intersect(rect);
        assert!(
            overlap.width() <= 0.0 || overlap.height() <= 0.0,
            "Find the knee {knee:?} lies over {other} {rect:?}"
        );
    }
}
