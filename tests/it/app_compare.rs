//! Compare read as a diff, through egui_kittest, the way a person reads a before and after:
//! A -> B in the order the runs started, per part A, B, Δ and its interval as the analysis
//! computes them, the settings that differ called out, the verdict in the text's neutral colour
//! with short names, nothing wider than the window at 1280x800 or 900x600, a run list that says
//! how many runs it holds, and File > Export writing what is in view unless more is ticked.

use std::path::{Path, PathBuf};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::analysis::{self, BootstrapSettings, PairNames};
use spanprof::app::{AppOptions, SpanprofApp, Tab};
use spanprof::export::Exporter as _;
use spanprof::kind::{QueryMode, Reader};
use spanprof::report::{IterationRecord, RunConfig, RunReport};

use crate::app::{run_to_end, set_query, step_until};

/// A SQL text longer than the list's column, as a person's real query is.
const LONG_SQL: &str = "SELECT Id, Name, Payload, CreatedAt, UpdatedAt, Region, Score FROM Seed23 \
                        WHERE Region IN ('emea', 'apac', 'amer') AND Score > 10 ORDER BY \
                        CreatedAt DESC LIMIT 500";

/// A run labelled `label` that started at `started`: `n` timed totals spread over `base..base +
/// 20` ms in a scrambled order, in quarter milliseconds.
fn report(label: &str, started: &str, base: f64, n: u32) -> RunReport {
    let iterations = (0..n)
        .map(|i| IterationRecord {
            total_ms: ((base + 20.0 * (f64::from(i) * 0.618_034).fract()) * 4.0).round() / 4.0,
            ..IterationRecord::new(label, i, false, started)
        })
        .collect();
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: LONG_SQL.into(),
            query_mode: QueryMode::WithStats,
            iterations: n,
            decoder: Reader::Fast,
            ..Default::default()
        },
        started_at: started.into(),
        iterations,
        plans: Default::default(),
        stopped: None,
    }
}

/// `reports` written as one JSON report in `dir`.
fn written(dir: &Path, name: &str, reports: &[RunReport]) -> PathBuf {
    let path = dir.join(name);
    let json = spanprof::export::Json
        .export(reports)
        .expect("a JSON report");
    std::fs::write(&path, json).expect("written");
    path
}

/// The app at `size` on a local instance, nothing persisted.
fn app_at(width: f32, height: f32) -> Harness<'static, SpanprofApp> {
    Harness::builder()
        .with_size(egui::vec2(width, height))
        .build_eframe(|cc| SpanprofApp::new(cc, AppOptions::in_memory(10_000)))
}

/// Shows Compare with the runs at `at` (places in the list) picked, until their verdicts are in.
fn compare(h: &mut Harness<'static, SpanprofApp>, at: &[usize]) {
    h.state_mut().set_tab(Tab::Compare);
    let ids: Vec<_> = at.iter().map(|&k| h.state().runs()[k].id).collect();
    for id in ids {
        h.state_mut().compare_view().set_picked(id, true);
    }
    step_until(h, "the verdicts", |app| {
        app.verdicts().len() + 1 == at.len()
    });
}

/// Sixteen runs (one report), ten minutes apart, alike but in time.
fn sixteen(dir: &Path) -> PathBuf {
    let runs: Vec<RunReport> = (0..16)
        .map(|k| {
            let started = format!("2026-12-05T01:{:02}:00Z", 10 + k * 2);
            report(&format!("nightly {k:02}"), &started, 100.0 + k as f64, 12)
        })
        .collect();
    written(dir, "nightly.json", &runs)
}

#[test]
fn two_runs_read_oldest_first_as_a_to_b_whatever_order_they_were_opened_in() {
    let dir = tempfile::tempdir().expect("temp dir");
    let older = report("older", "2026-12-05T01:00:00Z", 100.0, 24);
    let newer = report("newer", "2026-12-05T02:00:00Z", 80.0, 24);
    let mut h = app_at(1280.0, 800.0);
    // The newer is opened first, as a history lists its runs.
    for (name, run) in [("newer.json", &newer), ("older.json", &older)] {
        let path = written(dir.path(), name, std::slice::from_ref(run));
        assert_eq!(h.state_mut().open_report(&path), Ok(1));
    }
    compare(&mut h, &[0, 1]);
    assert!(
        h.query_by_label("older -> newer").is_some(),
        "A -> B, A older"
    );
    let names = PairNames {
        a: "older",
        b: "newer",
    };
    let cli = analysis::compare_runs_named(&older, &newer, names, BootstrapSettings::DEFAULT)
        .verdict_with_deltas()
        .expect("a verdict");
    assert!(cli.starts_with("newer is "), "{cli}");
    assert_eq!(
        h.state().verdicts(),
        std::slice::from_ref(&cli),
        "newer against older"
    );
    assert!(
        h.query_by_label(&cli).is_some(),
        "the verdict is in the window"
    );
}

#[test]
fn each_part_shows_a_b_the_change_and_its_interval_as_the_analysis_computes_them() {
    let mut h = app_at(1280.0, 800.0);
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 3000", 4, "wide");
    run_to_end(&mut h);
    set_query(&mut h, "SELECT Id FROM Seed23 LIMIT 300", 4, "narrow");
    run_to_end(&mut h);
    compare(&mut h, &[0, 1]);
    let runs = h.state().runs();
    let deltas = analysis::deltas(&runs[0].report, &runs[1].report, BootstrapSettings::DEFAULT)
        .expect("deltas");
    assert!(deltas.rows.len() > 2, "the total and its parts: {deltas:?}");
    for heading in ["A: wide", "B: narrow", "Δ = B − A", "95% interval of Δ"] {
        assert!(h.query_by_label(heading).is_some(), "{heading}");
    }
    for row in &deltas.rows {
        let interval = format!(
            "{} to {}",
            spanprof::text::signed_ms(row.low),
            spanprof::text::signed_ms(row.high)
        );
        for text in [
            spanprof::text::ms(row.a_mean),
            spanprof::text::ms(row.b_mean),
            spanprof::text::signed_ms(row.change()),
            interval,
        ] {
            assert!(
                h.query_all_by_label(&text).next().is_some(),
                "{} row: {text}",
                row.measure.label()
            );
        }
    }
    // The means are those `spanprof compare` prints: the parts' changes add up to the total's.
    let total = deltas.rows[0];
    let parts: f64 = deltas.rows[1..].iter().map(|r| r.change()).sum();
    assert!(
        (total.change() - parts).abs() < 1e-6,
        "{total:?} against {parts}"
    );
    assert!(total.low <= total.change() && total.change() <= total.high);
}

#[test]
fn the_settings_that_differ_between_the_runs_are_called_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = report("stats", "2026-12-05T01:00:00Z", 100.0, 12);
    let mut b = report("profiled", "2026-12-05T01:05:00Z", 100.0, 12);
    b.config.query_mode = QueryMode::Profile;
    b.config.decoder = Reader::Reference;
    b.config.options = vec![("priority".into(), "low".into())];
    let alike = report("again", "2026-12-05T01:10:00Z", 101.0, 12);
    let path = written(dir.path(), "modes.json", &[a, b, alike]);
    let mut h = app_at(1280.0, 800.0);
    assert_eq!(h.state_mut().open_report(&path), Ok(3));
    compare(&mut h, &[0, 1]);
    let line = "Differs in mode with-stats -> profile; decoder fast -> reference; options none -> \
                priority low";
    assert!(h.query_by_label(line).is_some(), "the settings called out");
    h.state_mut().compare_view().pick_only(&[]);
    compare(&mut h, &[0, 2]);
    assert!(h.query_by_label_contains("Differs in").is_none());
    assert!(h.query_by_label_contains("Same settings").is_some());
}

/// Every text shape of the last frame whose text is `text`, with the colour it is drawn in.
fn colours_of(h: &Harness<'static, SpanprofApp>, text: &str) -> Vec<egui::Color32> {
    fn walk(shape: &egui::Shape, text: &str, out: &mut Vec<egui::Color32>) {
        match shape {
            egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| walk(s, text, out)),
            egui::Shape::Text(t) if t.galley.text() == text => {
                out.extend(t.galley.job.sections.iter().map(|s| {
                    let drawn = if s.format.color == egui::Color32::PLACEHOLDER {
                        t.fallback_color
                    } else {
                        s.format.color
                    };
                    t.override_text_color.unwrap_or(drawn)
                }));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for clipped in &h.output().shapes {
        walk(&clipped.shape, text, &mut out);
    }
    out
}

#[test]
fn the_verdict_is_in_the_text_s_neutral_colour_and_calls_the_runs_by_short_names() {
    let mut h = app_at(1280.0, 800.0);
    // Unnamed: each is called by its query's first words and its time, 37 characters and more.
    for limit in [3000, 300] {
        set_query(
            &mut h,
            &format!("SELECT * FROM Seed23 LIMIT {limit}"),
            4,
            "",
        );
        run_to_end(&mut h);
    }
    let labels: Vec<String> = h
        .state()
        .runs()
        .iter()
        .map(|r| r.report.config.label.clone())
        .collect();
    assert!(labels.iter().all(|l| l.chars().count() > 32), "{labels:?}");
    compare(&mut h, &[0, 1]);
    let (a, b) = (h.state().runs()[0].id, h.state().runs()[1].id);
    let verdict = h.state().verdicts().remove(0);
    let (short_a, short_b) = (format!("run {a}"), format!("run {b}"));
    assert!(verdict.starts_with(&format!("{short_b} is ")), "{verdict}");
    assert!(verdict.contains(&format!("than {short_a}")), "{verdict}");
    assert!(
        !labels.iter().any(|l| verdict.contains(l.as_str())),
        "{verdict}"
    );
    assert!(
        h.query_by_label(&format!("{short_a} -> {short_b}"))
            .is_some()
    );
    h.run_steps(1);
    let colours = colours_of(&h, &verdict);
    assert!(!colours.is_empty(), "the verdict was drawn");
    let neutral = h
        .ctx
        .style_of(egui::Theme::Dark)
        .visuals
        .strong_text_color();
    assert!(colours.iter().all(|&c| c == neutral), "{colours:?}");
    for [r, g, b] in spanprof::part::RUN_COLOURS {
        assert!(!colours.contains(&egui::Color32::from_rgb(r, g, b)));
    }
}

#[test]
fn nothing_in_compare_is_wider_than_the_window_at_1280x800_or_900x600() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = sixteen(dir.path());
    for (width, height) in [(1280.0, 800.0), (900.0, 600.0)] {
        let mut h = app_at(width, height);
        assert_eq!(h.state_mut().open_report(&path), Ok(16));
        compare(&mut h, &[3, 12]);
        let verdict = h.state().verdicts().remove(0);
        let node = h.get_by_label(&verdict);
        assert!(
            node.rect().right() <= width,
            "the verdict is whole at {width}"
        );
        let boxed = h
            .query_all_by(|_| true)
            .filter(|n| n.accesskit_node().bounding_box().is_some())
            .count();
        assert!(
            boxed > 50,
            "the window's widgets have their places: {boxed}"
        );
        let wide: Vec<String> = h
            .query_all_by(|_| true)
            .filter_map(|n| {
                let b = n.accesskit_node().bounding_box()?;
                let (right, left) = (b.x1 as f32, b.x0 as f32);
                (right > width + 0.5 && left < width)
                    .then(|| format!("{:?} {b:?}", n.accesskit_node().label()))
            })
            .collect();
        assert!(wide.is_empty(), "wider than {width}: {wide:?}");
        // The diff's table is in view: its total row and its interval heading.
        let heading = h.get_by_label("95% interval of Δ");
        assert!(heading.rect().right() <= width);
    }
}

#[test]
fn the_run_list_says_how_many_runs_it_holds_and_how_many_export_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = sixteen(dir.path());
    let mut h = app_at(1280.0, 800.0);
    assert_eq!(h.state_mut().open_report(&path), Ok(16));
    compare(&mut h, &[3, 12]);
    assert!(
        h.query_by_label("16 runs · 2 picked · Export writes 2")
            .is_some()
    );
    // Newest first: the last run is at the top, and a box ticks one more for export.
    h.get_by_label("export nightly 15 (from nightly.json)")
        .click();
    h.run_steps(2);
    assert!(
        h.query_by_label("16 runs · 2 picked · Export writes 3 (1 ticked)")
            .is_some()
    );
}

#[test]
fn export_writes_the_runs_in_view_unless_more_are_ticked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = sixteen(dir.path());
    let mut h = app_at(1280.0, 800.0);
    assert_eq!(h.state_mut().open_report(&path), Ok(16));
    let exported = |h: &Harness<'static, SpanprofApp>| -> Vec<String> {
        let reports = h.state().export_reports();
        reports.into_iter().map(|r| r.config.label).collect()
    };
    // Viewing one run: the one shown (the last opened).
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(2);
    assert_eq!(exported(&h), ["nightly 15"]);
    // Comparing two: those two, oldest first.
    compare(&mut h, &[12, 3]);
    assert_eq!(exported(&h), ["nightly 03", "nightly 12"]);
    // One more ticked: it is written too.
    h.get_by_label("export nightly 15 (from nightly.json)")
        .click();
    h.run_steps(2);
    assert_eq!(exported(&h), ["nightly 03", "nightly 12", "nightly 15"]);
    // The CSV File > Export writes holds those runs' rows and no other's.
    let csv = dir.path().join("runs.csv");
    h.state()
        .export_selected(spanprof::app::Format::Csv, &csv)
        .expect("exported");
    let mut reader = csv::Reader::from_path(&csv).expect("a CSV");
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
    let mut labels: Vec<&str> = rows.iter().filter_map(|r| r.get(0)).collect();
    assert_eq!(labels.len(), 3 * 12, "12 rows a run");
    labels.dedup();
    assert_eq!(labels, ["nightly 03", "nightly 12", "nightly 15"]);
}

#[test]
fn runs_of_this_launch_are_not_all_exported_while_one_is_viewed() {
    let mut h = app_at(1280.0, 800.0);
    for (k, limit) in [10, 20, 30].into_iter().enumerate() {
        set_query(
            &mut h,
            &format!("SELECT * FROM Seed23 LIMIT {limit}"),
            2,
            &format!("r{k}"),
        );
        run_to_end(&mut h);
    }
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(2);
    let labels: Vec<String> = h
        .state()
        .export_reports()
        .into_iter()
        .map(|r| r.config.label)
        .collect();
    assert_eq!(labels, ["r2"], "the run viewed, not the three");
}
