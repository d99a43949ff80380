//! The window at 900x600: Run stays in view whatever the side panel's scroll,
//! the summary is there with a timeline open, and a warm-up far above the timed iterations is cut
//! so that they fill the chart.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{AppOptions, SpanprofApp};

use crate::app::run_to_end;

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
