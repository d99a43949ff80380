//! Issue 20 item 4 through egui_kittest: a run on the local instance with its Stall knob set,
//! the timeline of a stalled iteration opened by clicking its bar (and another's by its flag),
//! the stall drawn where the client waited, its figures on hover, its cause in words beside it,
//! the median iteration beneath.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::analysis::{self, CauseKind};
use spanprof::app::SpanprofApp;

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
            .any(|c| c.kind == CauseKind::StreamGap && c.at_message == Some(4) && c.ms > 250.0)
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

    // The stall is drawn, where the client waited 300 ms or so for message 4.
    let stalls = h
        .state_mut()
        .iterations_view()
        .timeline()
        .stalls_shown()
        .to_vec();
    let stall = stalls
        .iter()
        .find(|s| s.iteration == it)
        .copied()
        .unwrap_or_else(|| panic!("no stall drawn for #{it}: {stalls:?}"));
    assert_eq!(stall.message, 4, "{stall:?}");
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
    assert!(
        h.query_by_label_contains("a stall before message 4")
            .is_some(),
        "the cause named"
    );
    assert!(
        h.query_by_label_contains("before message 4 (typically")
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

    // Closed again: the summary is back. The other stalled iteration opens from its flag.
    h.get_by_label("Close timeline").click();
    h.run_steps(2);
    assert_eq!(h.state_mut().iterations_view().timeline().opened(), None);
    assert!(h.query_by_label("Summary").is_some());
    let other = stalled[1];
    let totals: Vec<f64> = h.state().runs()[0]
        .report
        .iterations
        .iter()
        .map(|r| r.total_ms)
        .collect();
    h.query_by_label_contains(&format!("#{other} is an outlier"))
        .unwrap_or_else(|| panic!("#{other} flagged among {totals:?}"))
        .click();
    h.run_steps(3);
    assert_eq!(
        h.state_mut().iterations_view().timeline().opened(),
        Some(other)
    );
    assert!(
        h.state_mut()
            .iterations_view()
            .timeline()
            .stalls_shown()
            .iter()
            .any(|s| s.iteration == other && s.message == 4)
    );
}
