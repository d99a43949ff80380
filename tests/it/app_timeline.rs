//! An iteration's timeline through egui_kittest: a run on the local instance with its Stall knob
//! set, the timeline of a stalled iteration opened by clicking its bar (and another's by its flag),
//! the stall drawn where the client waited, its figures on hover, its cause in words beside it, the
//! median iteration beneath.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::analysis;
use spanprof::app::SpanprofApp;
use spanprof::part::Part;

use crate::app::{app, run_to_end, set_query};

/// A click at `pos`: the pointer moves there, presses and lets go.
fn click_at(h: &mut Harness<'static, SpanprofApp>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.run_steps(1);
    h.drag_at(pos);
    h.run_steps(1);
    h.drop_at(pos);
    h.run_steps(2);
}

/// Every third query stalls 300 ms before its fourth message (8 KiB messages, so it has one; a
/// stall long enough that the outlier rule flags it on a busy machine too).
fn stalled_run(h: &mut Harness<'static, SpanprofApp>) -> Vec<u32> {
    set_query(h, "SELECT * FROM Seed23 LIMIT 1000", 6, "stalled");
    let knobs = &mut h.state_mut().settings_mut().connection.local.knobs;
    knobs.max_message_bytes = 8_192;
    knobs.stall_every = 3;
    knobs.stall_ms = 300;
    knobs.stall_at_message = 4;
    run_to_end(h);
    let report = &h.state().runs()[0].report;
    let explained = analysis::explain(report).expect("the run kept its timelines");
    let gap_at_4 = |i: &analysis::IterationCauses| {
        i.causes
            .iter()
            .any(|c| c.kind == Part::Server && c.at_message == Some(4) && c.ms > 250.0)
    };
    let stalled: Vec<u32> = explained
        .iterations
        .iter()
        .filter(|i| gap_at_4(i))
        .map(|i| i.iteration)
        .collect();
    assert_eq!(stalled.len(), 2, "every third of six: {explained:#?}");
    stalled
}

#[test]
fn a_stalled_iteration_s_timeline_shows_the_stall_and_its_cause() {
    let mut h = app();
    let stalled = stalled_run(&mut h);
    let it = stalled[0];
    let total = h.state().runs()[0]
        .report
        .iterations
        .iter()
        .find(|r| r.iteration == it)
        .map(|r| r.total_ms)
        .expect("the stalled iteration");
    assert!(
        h.query_by_label("Summary").is_some(),
        "no timeline open yet: the summary"
    );
    assert_eq!(h.state_mut().iterations_view().timeline().opened(), None);

    // A click on its bar opens its timeline.
    let bar = h
        .state_mut()
        .iterations_view()
        .bar_position(it, total / 2.0)
        .expect("the chart was drawn");
    click_at(&mut h, bar);
    assert_eq!(
        h.state_mut().iterations_view().timeline().opened(),
        Some(it)
    );
    h.run_steps(2);
    assert!(h.query_by_label(&format!("Timeline of #{it}")).is_some());
    let labels = h.state_mut().iterations_view().timeline().row_labels();
    assert!(
        labels.contains(&format!("#{it} waits")) && labels.contains(&format!("#{it} decode")),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.contains(" median waits")),
        "the median iteration beneath: {labels:?}"
    );

    // The stall is drawn, where the client waited 300 ms or so for message 4 (a loaded machine
    // may make a shorter gap elsewhere that the causes name too).
    let stalls = h
        .state_mut()
        .iterations_view()
        .timeline()
        .stalls_shown()
        .to_vec();
    let stall = stalls
        .iter()
        .find(|s| s.iteration == it && s.message == 4)
        .copied()
        .unwrap_or_else(|| panic!("no stall drawn at message 4 of #{it}: {stalls:?}"));
    assert!((290.0..600.0).contains(&stall.wait_ms), "{stall:?}");
    assert!(
        stalls.iter().all(|s| s.iteration == it),
        "the median iteration has no stall: {stalls:?}"
    );
    assert!(
        h.query_by_label_contains("ms before message 4 (from ")
            .is_some(),
        "the gap said in words"
    );

    // Its cause in words beside it.
    assert!(
        h.query_by_label_contains(&format!("Why #{it} took"))
            .is_some()
    );
    // At least once: a run slow enough may show the stall among its causes more than once. The
    // local instance stalled: the server is named, at the message it held back.
    assert!(
        h.query_all_by_label_contains("the server stalled before message 4")
            .next()
            .is_some(),
        "the cause named"
    );
    assert!(
        h.query_all_by_label_contains("before message 4 (waited ")
            .next()
            .is_some()
    );

    // Its figures on hover.
    h.hover_at(stall.at);
    let mut tip = false;
    for _ in 0..20 {
        h.run_steps(1);
        tip = h
            .query_by_label_contains("message 4 (a stall): waited ")
            .is_some();
        if tip {
            break;
        }
    }
    assert!(tip, "the stall's tooltip");

    // Closed again: the summary is back.
    h.get_by_label("Close timeline").click();
    h.run_steps(2);
    assert_eq!(h.state_mut().iterations_view().timeline().opened(), None);
    assert!(h.query_by_label("Summary").is_some());
}

/// The parts of each bar of [`stalled_report`]: server, network, wire decode, row decode, client
/// work, descheduled, untimed.
const PARTS_PER_BAR: usize = 7;

/// A report of nine iterations of 20 messages, 1 ms apart; iteration 4 waited 50 ms more before
/// its seventh message. Nothing in it depends on the machine, so the outlier rule flags #4 alone.
fn stalled_report() -> spanprof::report::RunReport {
    use spanprof::report::{IterationRecord, Lane, Message, RunConfig, RunReport, Span, Timeline};
    let iterations = (1..=9)
        .map(|i| {
            let mut at = 100u64;
            let mut lane = Lane {
                name: "stream".into(),
                requests_us: vec![0],
                headers_us: Some(60),
                ..Lane::default()
            };
            for number in 1..=20u32 {
                let wait =
                    1_000 + if i == 4 && number == 7 { 50_000 } else { 0 } + u64::from(i) * 3;
                let arrived = at + wait;
                lane.messages.push(Message {
                    number,
                    waited_from_us: at,
                    arrived_us: arrived,
                    bytes: 16_384,
                    values: 400,
                    rows: 40,
                    resume_token: true,
                    wire: Span {
                        start_us: arrived,
                        wall_us: 100,
                        cpu_us: Some(90),
                    },
                    row: Some(Span {
                        start_us: arrived + 100,
                        wall_us: 200,
                        cpu_us: Some(150),
                    }),
                    ..Message::default()
                });
                at = arrived + 300;
            }
            lane.end_us = at;
            let total_us = at + 50;
            let waits: u64 = lane
                .messages
                .iter()
                .map(|m| m.arrived_us - m.waited_from_us)
                .sum();
            {
                let mut r = IterationRecord::new("synthetic", i, false, "2026-03-01T10:00:00Z");
                r.total_ms = total_us as f64 / 1000.0;
                r.query.stream_wait_ms = Some(waits as f64 / 1000.0);
                r.query.wire_decode_wall_ms = Some(2.0);
                r.query.wire_decode_cpu_ms = Some(1.8);
                r.query.row_decode_wall_ms = Some(4.0);
                r.query.row_decode_cpu_ms = Some(3.0);
                r.query.client_work_wall_ms = Some(0.1);
                r.query.client_work_cpu_ms = Some(0.1);
                r.query.descheduled_ms = Some(1.2);
                r.query.server_elapsed_ms = Some(12.0);
                r.timeline = Some(Timeline {
                    lanes: vec![lane],
                    total_us,
                    setup: Vec::new(),
                });
                r
            }
        })
        .collect();
    RunReport {
        config: RunConfig {
            label: "synthetic".into(),
            target: "local".into(),
            sql: "SELECT * FROM Seed23".into(),
            query_mode: spanprof::kind::QueryMode::Normal,
            iterations: 9,
            decoder: spanprof::kind::Reader::Fast,
            ..Default::default()
        },
        started_at: "2026-03-01T10:00:00Z".into(),
        iterations,
        plans: Default::default(),
        stopped: None,
    }
}

#[test]
fn an_outlier_s_flag_opens_its_timeline_with_the_median_beneath()
-> Result<(), Box<dyn std::error::Error>> {
    use spanprof::export::Exporter as _;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("stalled.json");
    std::fs::write(&path, spanprof::export::Json.export(&[stalled_report()])?)?;
    let mut h = app();
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    h.state_mut().set_tab(spanprof::app::Tab::Iterations);
    h.run_steps(3);
    h.get_by_label_contains("#4 is an outlier").click();
    h.run_steps(3);
    assert_eq!(h.state_mut().iterations_view().timeline().opened(), Some(4));
    assert_eq!(
        h.state_mut()
            .iterations_view()
            .selection()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [4],
        "its bar selected"
    );
    let stalls = h
        .state_mut()
        .iterations_view()
        .timeline()
        .stalls_shown()
        .to_vec();
    assert!(
        matches!(stalls.as_slice(), [s] if s.iteration == 4 && s.message == 7 && (s.wait_ms - 51.012).abs() < 1e-6),
        "{stalls:?}"
    );
    let labels = h.state_mut().iterations_view().timeline().row_labels();
    assert_eq!(
        labels,
        [
            "#4 server",
            "#4 waits",
            "#4 decode",
            "#6 median server",
            "#6 median waits",
            "#6 median decode"
        ]
    );
    assert!(
        h.query_by_label_contains("a stall before message 7 (network)")
            .is_some()
    );
    assert!(h.query_by_label_contains("Why #4 took ").is_some());
    assert!(
        h.query_by_label_contains("The named causes cover ")
            .is_some(),
        "how much of the extra time the causes explain"
    );
    assert!(
        h.query_by_label_contains("The server reports 12.0 ms elapsed: ")
            .is_some(),
        "the server's time against the client's"
    );
    // The median iteration says so instead of causes.
    h.get_by_label("Close timeline").click();
    h.run_steps(2);
    let run = h.state().runs()[0].id;
    h.state_mut().iterations_view().timeline().open(run, 6);
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("#6 is the median iteration")
            .is_some()
    );
    assert!(
        h.state_mut()
            .iterations_view()
            .timeline()
            .stalls_shown()
            .is_empty()
    );
    Ok(())
}

/// The bars' rectangles in the chart (narrow ones inside the plot) with an outline, by where
/// their middle is.
fn outlined_bars(h: &mut Harness<'static, SpanprofApp>) -> (usize, Vec<(f32, egui::Color32)>) {
    fn rects(shape: &egui::Shape, out: &mut Vec<egui::epaint::RectShape>) {
        match shape {
            egui::Shape::Rect(r) => out.push(r.clone()),
            egui::Shape::Vec(all) => all.iter().for_each(|s| rects(s, out)),
            _ => {}
        }
    }
    let plot = h
        .state_mut()
        .iterations_view()
        .plot_rect()
        .expect("the chart was drawn");
    // Only what the plot painted (clipped to its area): opening a timeline may scroll the chart
    // up under the legend, whose swatches are then inside the plot's rectangle too.
    let mut all = Vec::new();
    for clipped in &h.output().shapes {
        if plot.expand(1.0).contains_rect(clipped.clip_rect) {
            rects(&clipped.shape, &mut all);
        }
    }
    let bars: Vec<_> = all
        .into_iter()
        .filter(|r| plot.contains_rect(r.rect) && r.rect.width() < plot.width() / 4.0)
        .filter(|r| r.fill != egui::Color32::TRANSPARENT)
        .collect();
    // Every segment has a hairline in the plot's dark (the cue besides hue between stacked
    // segments, `theme::SEPARATOR`); an outline is any other stroke.
    let separator = egui::Color32::from_rgb(0x10, 0x10, 0x10);
    assert!(
        bars.iter()
            .all(|r| r.stroke.width > 0.0 && (r.stroke.color != separator || r.stroke.width <= 1.0)),
        "every segment is parted from the next"
    );
    let outlined = bars
        .iter()
        .filter(|r| r.stroke.width > 0.0 && r.stroke.color != separator)
        .map(|r| (r.rect.center().x, r.stroke.color))
        .collect();
    (bars.len(), outlined)
}

/// The selection outline marks only selected bars (and the flagged one its
/// warning); every other bar has only the dark hairline between segments (before, each carried
/// a rim in its own colour, which read as selected).
#[test]
fn the_selection_outline_marks_only_the_selected_bars() -> Result<(), Box<dyn std::error::Error>> {
    use spanprof::export::Exporter as _;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("stalled.json");
    std::fs::write(&path, spanprof::export::Json.export(&[stalled_report()])?)?;
    let mut h = app();
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    h.state_mut().set_tab(spanprof::app::Tab::Iterations);
    h.run_steps(3);
    let x_of = |h: &mut Harness<'static, SpanprofApp>, i: u32| {
        h.state_mut()
            .iterations_view()
            .bar_position(i, 1.0)
            .expect("the chart was drawn")
            .x
    };
    let (bars, outlined) = outlined_bars(&mut h);
    assert_eq!(bars, 9 * PARTS_PER_BAR, "a rectangle per part per bar");
    let flagged = x_of(&mut h, 4);
    assert_eq!(
        outlined.len(),
        PARTS_PER_BAR,
        "only the flagged bar: {outlined:?}"
    );
    assert!(outlined.iter().all(|(x, _)| (x - flagged).abs() < 1.0));
    // A click selects #2: its bar is outlined in white, and no other.
    let pos = h
        .state_mut()
        .iterations_view()
        .bar_position(2, 10.0)
        .expect("the chart was drawn");
    click_at(&mut h, pos);
    h.run_steps(1);
    let selected = x_of(&mut h, 2);
    let flagged = x_of(&mut h, 4);
    let (_, outlined) = outlined_bars(&mut h);
    let white: Vec<f32> = outlined
        .iter()
        .filter(|(_, c)| *c == egui::Color32::WHITE)
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(white.len(), PARTS_PER_BAR, "{outlined:?}");
    assert!(white.iter().all(|x| (x - selected).abs() < 1.0));
    assert!(
        outlined
            .iter()
            .all(|(x, _)| (x - selected).abs() < 1.0 || (x - flagged).abs() < 1.0),
        "{outlined:?}"
    );
    Ok(())
}
