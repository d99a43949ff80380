//! One accounting of time in the window, through egui_kittest: an iteration's figures
//! read off its bar's tooltip, the summary table and Compare's mean per part are the same text;
//! Compare's verdict says where the difference is; and a report and a history store written by
//! the previous release open in the window.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{AppOptions, SpanprofApp, Tab};
use spanprof::history::Location;
use spanprof::part::Part;

use crate::app::{app, run_to_end, set_query};

/// A node's text: a label widget's is its value (AccessKit keeps it there), another's its label.
pub(crate) fn text_of<'t>(node: &impl egui_kittest::kittest::NodeT<'t>) -> Option<String> {
    let n = node.accesskit_node();
    if n.role() == egui::accesskit::Role::Label {
        n.value()
    } else {
        n.label()
    }
}

/// Steps frames until a node whose label contains `text` shows, for at most ten seconds; its
/// whole label.
pub(crate) fn label_containing(
    h: &mut Harness<'static, SpanprofApp>,
    text: &str,
) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        h.run_steps(1);
        if let Some(node) = h.query_by_label_contains(text) {
            return text_of(&node);
        }
    }
    None
}

/// `name figure` lines of a tooltip, as name -> figure.
fn figures(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        for part in Part::ALL {
            if let Some(figure) = line.strip_prefix(&format!("{} ", part.label())) {
                out.insert(part.label().to_owned(), figure.to_owned());
            }
        }
        if let Some(figure) = line.strip_prefix("total ") {
            out.insert("total".to_owned(), figure.to_owned());
        }
    }
    out
}

/// The summary table's cell of the row named `name` under the column headed `heading`, both
/// below `below` (the chart): figures are right-aligned under their headings.
fn summary_cell(
    h: &Harness<'static, SpanprofApp>,
    name: &str,
    heading: &str,
    below: f32,
) -> Option<String> {
    let row = h
        .query_all_by_label(name)
        .map(|n| n.rect())
        .find(|r| r.top() > below)?;
    let head = h
        .query_all_by_label(heading)
        .map(|n| n.rect())
        .find(|r| r.top() > below)?;
    h.query_all(
        egui_kittest::kittest::by()
            .include_labels()
            .role(egui::accesskit::Role::Label),
    )
    .find(|n| {
        let r = n.rect();
        (r.center().y - row.center().y).abs() < 2.0 && (r.right() - head.right()).abs() < 3.0
    })
    .and_then(|n| text_of(&n))
}

#[test]
fn one_iteration_s_figures_are_the_same_in_its_tooltip_the_summary_and_compare() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 3000", 1, "wide");
    run_to_end(&mut h);
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 300", 1, "narrow");
    run_to_end(&mut h);
    let runs: Vec<(spanprof::report::RunId, String)> = h
        .state()
        .runs()
        .iter()
        .map(|r| (r.id, r.report.config.label.clone()))
        .collect();
    assert_eq!(runs.len(), 2);
    // The Iterations tab shows the last run: its one bar's tooltip.
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    let plot = h
        .state_mut()
        .iterations_view()
        .plot_rect()
        .expect("the chart was drawn");
    let bar = h
        .state_mut()
        .iterations_view()
        .bar_position(0, 0.0)
        .expect("the bar of #0");
    for dx in [0.0, 1.0, -1.0, 2.0] {
        h.hover_at(egui::pos2(bar.x + dx, plot.center().y));
        h.run_steps(1);
        if h.state_mut().iterations_view().hovered() == Some(0) {
            break;
        }
    }
    assert_eq!(h.state_mut().iterations_view().hovered(), Some(0));
    let tooltip = label_containing(&mut h, "#0 · ok").expect("the bar's tooltip");
    let from_tooltip = figures(&tooltip);
    for part in [
        Part::Server,
        Part::WireDecode,
        Part::RowDecode,
        Part::ClientWork,
    ] {
        assert!(
            from_tooltip.contains_key(part.label()),
            "{} in {tooltip}",
            part.label()
        );
    }
    // The summary table over its one timed iteration: its own figures (no spread over one),
    // each the tooltip's.
    h.hover_at(egui::pos2(1.0, 1.0));
    h.run_steps(3);
    assert!(h.query_by_label("σ").is_none(), "no σ over one iteration");
    for (name, figure) in &from_tooltip {
        let own = summary_cell(&h, name, "#0", plot.bottom());
        assert_eq!(own.as_deref(), Some(figure.as_str()), "{name}");
    }
    // Compare: both runs picked, the mean per part of the shown one.
    h.state_mut().set_tab(Tab::Compare);
    for (id, _) in &runs {
        h.state_mut().compare_view().set_picked(*id, true);
    }
    h.run_steps(3);
    let heading = h
        .query_by_label("Mean per part")
        .map(|n| n.rect())
        .expect("Compare's mean per part");
    let shown = &runs[1].1;
    let mut means = None;
    // Over the chart below the heading, at the second run's bar (the right half).
    'scan: for dy in (40..600).step_by(20) {
        for fx in [0.70_f32, 0.75, 0.65, 0.8, 0.55, 0.6, 0.85, 0.9] {
            let x = heading.left() + (1280.0 - heading.left()) * fx;
            h.hover_at(egui::pos2(x, heading.bottom() + dy as f32));
            for _ in 0..6 {
                h.run_steps(1);
                // Compare names a run by its label and when it started: "narrow · 02:05:01".
                if let Some(node) = h.query_by_label_contains(": means")
                    && let Some(text) = text_of(&node)
                    && text
                        .lines()
                        .next()
                        .is_some_and(|l| l.contains(shown.as_str()))
                {
                    means = Some(text);
                    break 'scan;
                }
            }
        }
    }
    let means = means.expect("the mean per part's tooltip");
    assert_eq!(figures(&means), from_tooltip, "{means}\n{tooltip}");
    // The verdict says where the difference is, as changes of the means.
    let verdict = label_containing(&mut h, " in the mean: ").expect("the verdict");
    assert!(verdict.starts_with("narrow is "), "{verdict}");
}

/// The previous release's files (`tests/data/previous-release/`).
fn previous_release(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/previous-release")
        .join(name)
}

#[test]
fn a_report_and_a_history_store_of_the_previous_release_open_in_the_window() {
    let mut h = app();
    assert_eq!(
        h.state_mut().open_report(&previous_release("report.json")),
        Ok(1)
    );
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    assert!(h.query_by_label_contains("Time (mean ± σ): ").is_some());
    // Its client work is derived from its timelines, its parts shown.
    for part in [Part::Server, Part::RowDecode, Part::ClientWork] {
        assert!(
            h.query_all_by_label(part.label()).count() >= 2,
            "{} in the legend and the summary",
            part.label()
        );
    }

    let dir = tempfile::tempdir().expect("a temp dir");
    let store = dir.path().join("history.sqlite");
    std::fs::copy(previous_release("history.sqlite"), &store).expect("a copy of the store");
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                history: Location::File(store.clone()),
                tab: Some(Tab::History),
                ..AppOptions::in_memory(1_000)
            };
            SpanprofApp::new(cc, options)
        });
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.state_mut().history_view().queries().len() != 1 {
        assert!(Instant::now() < deadline, "the stored query listed");
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
    h.get_by_label_contains("SELECT * FROM Seed23 LIMIT 2000")
        .click();
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.state_mut().history_view().points().len() != 2 {
        assert!(Instant::now() < deadline, "both stored runs on the trend");
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
    let points = h.state_mut().history_view().points().to_vec();
    assert!(
        points.iter().all(|p| !p.failed && p.measures.len() > 3),
        "each run's total and parts: {points:?}"
    );
}

/// `spanprof a.json b.json`: the reports open at start, their runs picked in Compare; one that
/// cannot be read is said in the status bar.
#[test]
fn reports_given_at_start_open_side_by_side_in_compare() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let missing = dir.path().join("missing.json");
    let open = vec![
        previous_release("report.json"),
        previous_release("report.json"),
        missing.clone(),
    ];
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                open: open.clone(),
                ..AppOptions::in_memory(1_000)
            };
            SpanprofApp::new(cc, options)
        });
    h.run_steps(3);
    assert_eq!(h.state().settings().tab, Tab::Compare);
    assert_eq!(h.state().runs().len(), 2);
    assert_eq!(h.state_mut().compare_view().picked().len(), 2);
    let notice = h.state().notice().unwrap_or_default().to_owned();
    assert!(
        notice.starts_with("cannot open ") && notice.contains("missing.json"),
        "{notice}"
    );
    assert!(h.query_by_label("Mean per part").is_some());
}
