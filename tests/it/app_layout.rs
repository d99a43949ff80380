//! The window at 900x600: Run stays in view whatever the side panel's scroll and the panel's edge
//! drags either way; the summary is there with a timeline open; a clicked bar's timeline shows its
//! rows and its causes at once; the summary keeps its part names and headings while its figures
//! scroll, and one iteration's own figures without a spread; a warm-up far above the timed
//! iterations is cut so that they fill the chart; a long first iteration's axis spans the run,
//! and a cancelled iteration reads as a stop with the rows that had arrived.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{AppOptions, SpanprofApp};
use spanprof::report::Status;

use crate::app::{run_to_end, step_until};
use crate::app_accounting::label_containing;

fn small() -> Harness<'static, SpanprofApp> {
    Harness::builder()
        .with_size(egui::vec2(900.0, 600.0))
        .build_eframe(|cc| SpanprofApp::new(cc, AppOptions::in_memory(10_000)))
}

#[test]
fn at_900x600_run_stays_in_view_and_a_timeline_keeps_the_summary() {
    let mut h = small();
    {
        let q = &mut h.state_mut().settings_mut().query;
        q.first_mut().sql = "SELECT * FROM Seed23 LIMIT 2000".into();
        q.iterations = 4;
        q.warmup = 1;
    }
    h.run_steps(2);
    let run = h.get_by_label("Run").rect();
    assert!(
        run.max.y <= 600.0 && run.min.y >= 0.0,
        "Run is in the window: {run:?}"
    );
    run_to_end(&mut h);
    let (id, timed) = {
        let r = h.state().runs().last().expect("a run");
        let timed = r.report.timed().map(|i| i.iteration).collect::<Vec<_>>();
        (r.id, timed)
    };
    h.state_mut()
        .iterations_view()
        .timeline()
        .open(id, timed[0]);
    h.run_steps(3);
    assert!(
        h.query_by_label(&format!("Timeline of #{}", timed[0]))
            .is_some()
    );
    assert!(
        h.query_by_label("Summary").is_some(),
        "the summary is still there with the timeline open"
    );
    // The chart keeps its height (and so its axes' numbers) with the timeline open: its data
    // area was about 106 points when the timeline took the room, the axes' numbers gone.
    let plot = h
        .state_mut()
        .iterations_view()
        .plot_rect()
        .expect("the chart");
    assert!(plot.height() >= 130.0, "{plot:?}");
    let run = h.get_by_label("Run").rect();
    assert!(run.max.y <= 600.0, "Run is still in view: {run:?}");
}

#[test]
fn a_warm_up_far_above_the_rest_is_cut_so_the_timed_bars_fill_the_chart() {
    use spanprof::report::{IterationRecord, RunConfig, RunReport};
    let totals = [
        (true, 722.0),
        (false, 140.0),
        (false, 150.0),
        (false, 145.0),
    ];
    let report = RunReport {
        config: RunConfig {
            label: "cold".into(),
            target: "local".into(),
            sql: "SELECT 1".into(),
            iterations: 3,
            warmup: 1,
            ..RunConfig::default()
        },
        started_at: "2026-12-03T10:00:00Z".into(),
        iterations: totals
            .iter()
            .enumerate()
            .map(|(i, &(warmup, total_ms))| IterationRecord {
                total_ms,
                ..IterationRecord::new("cold", i as u32, warmup, "2026-12-03T10:00:00Z")
            })
            .collect(),
        plans: Default::default(),
        stopped: None,
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("cold.json");
    spanprof::app::export_to(&path, spanprof::app::Format::Json, &[report])
        .expect("writes a report");
    let mut h = small();
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    h.run_steps(3);
    let view = h.state_mut().iterations_view();
    let plot = view.plot_rect().expect("the chart");
    let top = |view: &mut spanprof::app::IterationsView, i: u32, ms: f64| {
        view.bar_position(i, ms).expect("drawn").y
    };
    // The tallest timed bar reaches most of the way up; the warm-up's top is past the chart's.
    let timed_top = top(view, 2, 150.0);
    let zero = top(view, 2, 0.0);
    assert!(
        (zero - timed_top) > 0.7 * plot.height(),
        "the timed bars fill the chart: {} of {}",
        zero - timed_top,
        plot.height()
    );
    assert!(top(view, 0, 722.0) < plot.min.y, "the warm-up is cut");
}

#[test]
fn at_900x600_the_side_panel_s_edge_drags() {
    let mut h = small();
    h.run_steps(2);
    // "No run yet" is centred in the central area, which begins at the side panel's edge (its
    // margins alike on both sides): the edge dragged 120 points right moves its centre 60.
    let centre = |h: &Harness<'static, SpanprofApp>| h.get_by_label("No run yet").rect().center().x;
    let before = centre(&h);
    let edge = egui::pos2(2.0 * before - 900.0, 300.0);
    h.hover_at(edge);
    h.run_steps(1);
    h.drag_at(edge);
    h.run_steps(1);
    for dx in [30.0, 60.0, 90.0, 120.0] {
        h.hover_at(edge + egui::vec2(dx, 0.0));
        h.run_steps(1);
    }
    h.drop_at(edge + egui::vec2(120.0, 0.0));
    h.run_steps(2);
    let after = centre(&h);
    assert!(
        (after - before - 60.0).abs() <= 6.0,
        "the side panel widened by the drag: the central area's centre was at {before}, now \
         {after} (the edge taken at {edge:?})"
    );
    let run = h.get_by_label("Run").rect();
    assert!(run.max.y <= 600.0, "Run is still in view: {run:?}");
}

/// The bottom of the central area: the top of the status bar (after a run that ended).
fn status_top(h: &Harness<'static, SpanprofApp>) -> f32 {
    h.get_by_label("ready").rect().top()
}

/// A wheel turned by `delta` points with the pointer at `at`.
fn wheel_at(h: &mut Harness<'static, SpanprofApp>, at: egui::Pos2, delta: egui::Vec2) {
    h.hover_at(at);
    h.run_steps(1);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta,
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(3);
}

/// A finished run of four timed iterations at 900x600.
fn small_run() -> Harness<'static, SpanprofApp> {
    let mut h = small();
    {
        let q = &mut h.state_mut().settings_mut().query;
        q.first_mut().sql = "SELECT * FROM Seed23 LIMIT 2000".into();
        q.iterations = 4;
        q.warmup = 0;
    }
    h.run_steps(2);
    run_to_end(&mut h);
    h
}

#[test]
fn at_900x600_a_clicked_bar_s_timeline_shows_every_row_and_its_causes_at_once() {
    let mut h = small_run();
    let (it, total) = {
        let r = h.state().runs().last().expect("a run");
        let i = &r.report.iterations[1];
        (i.iteration, i.total_ms)
    };
    let bar = h
        .state_mut()
        .iterations_view()
        .bar_position(it, total / 2.0)
        .expect("the chart");
    h.hover_at(bar);
    h.run_steps(1);
    h.drag_at(bar);
    h.run_steps(1);
    h.drop_at(bar);
    h.run_steps(4);
    assert_eq!(
        h.state_mut().iterations_view().timeline().opened(),
        Some(it)
    );
    let bottom = status_top(&h);
    // Opening it scrolled it into view: every row (the iteration's and the median's beneath) in
    // the window at once, far enough apart to read their labels.
    let rows: Vec<egui::Rect> = (0..)
        .map_while(|k| h.state_mut().iterations_view().timeline().row_rect(k))
        .collect();
    assert!(rows.len() >= 3, "{rows:?}");
    for pair in rows.windows(2) {
        let pitch = pair[1].center().y - pair[0].center().y;
        assert!(pitch >= 20.0, "rows {pitch} points apart: {rows:?}");
    }
    for row in &rows {
        assert!(
            row.top() >= 30.0 && row.bottom() <= bottom,
            "a row in view (the status bar from {bottom}): {row:?}"
        );
    }
    // Its causes beside the plot, their first line level with its rows.
    let plot = h
        .state_mut()
        .iterations_view()
        .timeline()
        .plot_rect()
        .expect("the timeline's plot");
    let causes = h.get_by_label_contains("The longest wait").rect();
    assert!(causes.left() > plot.right(), "{causes:?} beside {plot:?}");
    assert!(
        causes.top() >= plot.top() - 2.0 && causes.bottom() <= bottom,
        "{causes:?} in view beside {plot:?}"
    );
    // The wheel over the causes scrolls them in their own box (or, when they fit, the view
    // around, a little): the rows stay in view beside them.
    wheel_at(&mut h, causes.center(), egui::vec2(0.0, -400.0));
    let after: Vec<egui::Rect> = (0..)
        .map_while(|k| h.state_mut().iterations_view().timeline().row_rect(k))
        .collect();
    assert_eq!(after.len(), rows.len());
    for row in &after {
        assert!(
            row.top() >= 30.0 && row.bottom() <= bottom,
            "a row still in view after the wheel: {row:?}"
        );
    }
}

#[test]
fn at_900x600_the_summary_keeps_its_part_names_its_headings_and_a_readable_note() {
    let mut h = small_run();
    let name = |h: &Harness<'static, SpanprofApp>, text: &str| {
        h.query_all_by_label(text)
            .map(|n| n.rect())
            .max_by(|a, b| a.top().total_cmp(&b.top()))
            .expect(text)
    };
    // The note under the table at the text's own size, wrapped inside the window.
    let note = h
        .get_by_label_contains("The parts' means add up to the mean total")
        .rect();
    assert!(note.right() <= 900.0, "the note is not cut: {note:?}");
    assert!(
        note.height() >= 15.0,
        "a line of body text, not the small style's: {note:?}"
    );
    // The figures scroll sideways under the wheel; the part names stay put.
    let server = name(&h, "server");
    let median = name(&h, "median");
    wheel_at(&mut h, median.center(), egui::vec2(-600.0, 0.0));
    let server_after = name(&h, "server");
    let p99_after = name(&h, "p99");
    assert!(
        (server_after.left() - server.left()).abs() < 0.5,
        "the name stayed: {server_after:?} was {server:?}"
    );
    assert!(
        p99_after.right() <= 900.0,
        "the last column is in view: {p99_after:?}"
    );
    // The headings are above the rows, over the figures they name.
    let median = name(&h, "median");
    let total = name(&h, "total");
    assert!(
        median.bottom() <= total.top() + 1.0,
        "{median:?} over {total:?}"
    );
    // No spread for one iteration: selected alone, it shows its own figure and share.
    assert!(h.query_by_label("σ").is_some(), "the spread over four");
    h.state_mut().iterations_view().select([1]);
    h.run_steps(3);
    assert!(h.query_by_label("σ").is_none(), "no σ over one iteration");
    assert!(
        h.query_by_label("p99").is_none(),
        "no p99 over one iteration"
    );
    assert!(h.query_by_label("#1").is_some(), "its own column");
}

#[test]
fn at_900x600_the_side_panel_narrows_and_keeps_run_in_view() {
    let mut h = small();
    h.run_steps(2);
    let centre = |h: &Harness<'static, SpanprofApp>| h.get_by_label("No run yet").rect().center().x;
    let before = centre(&h);
    // The panel starts at a third of the window, not its old 420 points.
    let edge = 2.0 * before - 900.0;
    assert!((edge - 300.0).abs() <= 8.0, "the edge at {edge}");
    let edge = egui::pos2(edge, 300.0);
    h.hover_at(edge);
    h.run_steps(1);
    h.drag_at(edge);
    h.run_steps(1);
    for dx in [-10.0, -20.0, -30.0, -40.0] {
        h.hover_at(edge + egui::vec2(dx, 0.0));
        h.run_steps(1);
    }
    h.drop_at(edge + egui::vec2(-40.0, 0.0));
    h.run_steps(2);
    let after = centre(&h);
    assert!(
        (before - after - 20.0).abs() <= 4.0,
        "the side panel narrowed by the drag: the central area's centre was at {before}, now \
         {after}"
    );
    let edge = 2.0 * after - 900.0;
    let run = h.get_by_label("Run").rect();
    assert!(
        run.max.y <= 600.0 && run.right() <= edge,
        "Run is in the narrowed panel: {run:?}"
    );
    // Its rows wrap at the narrowed edge: the target's kinds and the connection's buttons end
    // inside it, none cut at the edge (a sideways scroll once cut "Cloud Spanne" and "Ti…").
    for label in [
        "Local instance",
        "Emulator",
        "Cloud Spanner",
        "Test connection",
    ] {
        let rect = h.get_by_label(label).rect();
        assert!(
            rect.right() <= edge,
            "{label} ends at {}, past the panel's edge at {edge}",
            rect.right()
        );
    }
    let timeouts = h.get_by_label("Timeouts").rect();
    assert!(
        timeouts.right() <= edge,
        "Timeouts ends at {}, past the panel's edge at {edge}",
        timeouts.right()
    );
}

#[test]
fn a_long_first_iteration_spans_the_run_s_axis_and_its_cancel_reads_as_a_stop() {
    let mut h = small();
    {
        let knobs = &mut h.state_mut().settings_mut().connection.local.knobs;
        knobs.max_message_bytes = 16 * 1024;
        knobs.message_delay_ms = 20;
        let q = &mut h.state_mut().settings_mut().query;
        q.first_mut().sql = "SELECT * FROM Seed23".into();
        q.iterations = 50;
        q.warmup = 0;
    }
    h.run_steps(2);
    h.get_by_label("Run").click();
    h.step();
    step_until(&mut h, "rows to stream", |app| {
        app.progress().is_some_and(|p| p.rows > 0)
    });
    // While the first iteration streams, the axis spans the run's fifty (with the plot's margin),
    // not -0.3..0.3.
    let (from, to) = h
        .state_mut()
        .iterations_view()
        .iteration_span()
        .expect("the chart of the run in flight");
    assert!(
        from <= -0.5 && from > -4.0 && (49.5..55.0).contains(&to),
        "{from}..{to}"
    );
    h.get_by_label("Cancel").click();
    step_until(&mut h, "the cancelled run to end", |app| !app.is_running());
    let (it, total, rows) = {
        let r = h.state().runs().last().expect("the run");
        let last = r.report.iterations.last().expect("its cancelled iteration");
        assert_eq!(last.status(), Status::Cancelled);
        (last.iteration, last.total_ms, last.answer.rows)
    };
    assert!(rows > 0, "the rows that had arrived are kept");
    // Said as a stop, in grey: in the legend, the summary's words and the status bar.
    assert!(h.query_by_label("cancelled (stopped early)").is_some());
    assert!(h.query_by_label("No timed iteration yet.").is_none());
    assert!(
        h.query_by_label_contains("the run was cancelled before one ended")
            .is_some()
    );
    assert!(h.query_by_label("cancelled").is_some(), "the status bar");
    assert!(h.query_by_label("ready").is_none());
    // Its tooltip counts the rows that had arrived.
    let bar = h
        .state_mut()
        .iterations_view()
        .bar_position(it, total / 2.0)
        .expect("its bar");
    h.hover_at(bar);
    h.run_steps(2);
    let tooltip = label_containing(&mut h, "had arrived").expect("the bar's tooltip");
    assert!(
        tooltip.contains(&format!("at least {} rows", spanprof::text::count(rows))),
        "{tooltip}"
    );
}
