//! The run history in the window, through egui_kittest: runs saved by earlier launches (through the
//! store, as a launch saves them) are found in the History tab by their query, two of them
//! picked and opened in Compare.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{AppOptions, SpanprofApp, Tab, TargetKind};
use spanprof::client::DatabasePath;
use spanprof::history::{HistoryStore, Location, Retention, SqliteStore, StoredRun};
use spanprof::report::{IterationRecord, RunConfig, RunReport};

fn report(label: &str, sql: &str, started_at: &str, totals: &[f64]) -> RunReport {
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: sql.into(),
            query_mode: spanprof::kind::QueryMode::WithStats,
            iterations: totals.len() as u32,
            ..RunConfig::default()
        },
        started_at: started_at.into(),
        iterations: totals
            .iter()
            .enumerate()
            .map(|(i, &t)| IterationRecord {
                total_ms: t,
                ..IterationRecord::new(label, i as u32, false, started_at)
            })
            .collect(),
        plans: Default::default(),
        stopped: None,
    }
}

/// Runs until `done` holds (the store is read on a thread), at most ten seconds.
fn until(
    h: &mut Harness<'static, SpanprofApp>,
    what: &str,
    done: impl Fn(&mut SpanprofApp) -> bool,
) {
    let start = Instant::now();
    while !done(h.state_mut()) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "waited for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
    h.run_steps(2);
}

#[test]
fn two_runs_of_earlier_launches_are_found_in_history_and_opened_in_compare() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let sql = "SELECT * FROM Seed23 WHERE Id < 100";
    let earlier = [
        report(
            "before the index",
            sql,
            "2026-03-01T10:00:00Z",
            &[12.0, 14.0, 13.0],
        ),
        report("a quiet day", sql, "2026-03-02T10:00:00Z", &[11.0, 12.0]),
        report(
            "after the index",
            sql,
            "2026-03-05T10:00:00Z",
            &[4.0, 5.0, 4.5],
        ),
        report("another query", "SELECT 2", "2026-03-06T10:00:00Z", &[1.0]),
    ];
    {
        let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
        for r in &earlier {
            // One launch each.
            store
                .save(&[StoredRun::new(r, "db").expect("serialises")])
                .expect("saves");
        }
    }
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                history: Location::File(path.clone()),
                tab: Some(Tab::History),
                ..AppOptions::in_memory(1_000)
            };
            SpanprofApp::new(cc, options)
        });
    until(&mut h, "the queries", |app| {
        app.history_view().queries().len() == 2
    });
    h.get_by_label_contains("WHERE Id < 100").click();
    until(&mut h, "the trend", |app| {
        app.history_view().points().len() == 3
    });
    h.get_by_label("before the index").click();
    h.run_steps(1);
    h.get_by_label("after the index").click();
    h.run_steps(1);
    assert_eq!(h.state_mut().history_view().picked().len(), 2);
    h.get_by_label("Open in Compare").click();
    until(&mut h, "the Compare tab", |app| {
        app.settings().tab == Tab::Compare
    });
    let titles: Vec<String> = h.state().runs().iter().map(|r| r.title()).collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles[0].starts_with("before the index (history #"),
        "{titles:?}"
    );
    assert!(
        titles[1].starts_with("after the index (history #"),
        "{titles:?}"
    );
    let ids: Vec<spanprof::report::RunId> = h.state().runs().iter().map(|r| r.id).collect();
    let picked: Vec<spanprof::report::RunId> = h
        .state_mut()
        .compare_view()
        .picked()
        .iter()
        .copied()
        .collect();
    assert_eq!(picked, ids, "both are picked in Compare");
    // The verdict of the later against the earlier is computed off the UI thread.
    until(&mut h, "the verdict", |app| app.verdicts().len() == 1);
    // Runs of different days: the verdict names each with its date.
    let verdict = h.state_mut().verdicts().remove(0);
    for label in ["before the index · ", "after the index · "] {
        assert!(verdict.contains(label), "{verdict}");
    }
    for label in ["before the index", "after the index"] {
        assert!(
            h.query_all_by_label_contains(label).next().is_some(),
            "{label} is in the Compare tab's list"
        );
    }
}

/// The app on a fresh history file in `dir`, the History tab shown.
fn app_on(dir: &std::path::Path) -> Harness<'static, SpanprofApp> {
    let path = dir.join("history.sqlite");
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                history: Location::File(path.clone()),
                tab: Some(Tab::History),
                ..AppOptions::in_memory(1_000)
            };
            SpanprofApp::new(cc, options)
        })
}

#[test]
fn a_run_of_this_launch_and_an_imported_report_appear_in_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = app_on(dir.path());
    h.run_steps(2);
    assert!(h.state_mut().history_view().queries().is_empty());
    crate::app::set_query(&mut h, "SELECT * FROM Seed23 LIMIT 10", 1, "this launch");
    crate::app::run_to_end(&mut h);
    h.state_mut().set_tab(Tab::History);
    until(&mut h, "the run just saved", |app| {
        app.history_view().queries().len() == 1
    });
    let older = report("from last year", "SELECT 2", "2025-03-01T10:00:00Z", &[3.0]);
    let file = dir.path().join("old.json");
    spanprof::app::export_to(&file, spanprof::app::Format::Json, &[older])
        .expect("writes a report");
    h.state_mut().history_view().import(file);
    until(&mut h, "the imported run", |app| {
        app.history_view().queries().len() == 2
    });
    assert!(
        h.state().notice().unwrap_or("").contains("imported 1 runs"),
        "{:?}",
        h.state().notice()
    );
}

#[test]
fn runs_of_two_launches_have_names_a_person_tells_apart_in_history_and_compare() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sql = "SELECT * FROM Seed23 LIMIT 10";
    let mut labels = Vec::new();
    for launch in 0..2 {
        if launch == 1 {
            // Names carry the time to the second: a person does not launch twice in one.
            let second = chrono::Local::now().timestamp();
            while chrono::Local::now().timestamp() == second {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let mut h = app_on(dir.path());
        crate::app::set_query(&mut h, sql, 2, "");
        crate::app::run_to_end(&mut h);
        labels.push(h.state().runs()[0].report.config.label.clone());
    }
    // Unnamed, each launch's first run is called by its query's first words and its time,
    // never "run 1" twice.
    assert_ne!(labels[0], labels[1]);
    for label in &labels {
        assert!(
            label.starts_with("SELECT * FROM Seed23 LIMIT…")
                || label.starts_with("SELECT * FROM Seed23 LIMIT 10 "),
            "{label}"
        );
    }
    let mut h = app_on(dir.path());
    until(&mut h, "the query", |app| {
        app.history_view().queries().len() == 1
    });
    h.get_by_label_contains("Seed23 LIMIT").click();
    until(&mut h, "the trend", |app| {
        app.history_view().points().len() == 2
    });
    for label in &labels {
        h.get_by_label(label).click();
        h.run_steps(1);
    }
    h.get_by_label("Open in Compare").click();
    until(&mut h, "the verdict", |app| app.verdicts().len() == 1);
    let verdicts = h.state_mut().verdicts();
    let verdict = &verdicts[0];
    // The labels are long (the query's words, then the time): the verdict calls each run by its
    // number, the list beside it by its label.
    let numbers: Vec<String> = h
        .state()
        .runs()
        .iter()
        .map(|r| format!("run {}", r.id))
        .collect();
    assert!(
        numbers.iter().all(|n| verdict.contains(n.as_str())),
        "the verdict says which run is which: {verdict}"
    );
    for label in &labels {
        assert!(
            h.query_all_by_label_contains(label).next().is_some(),
            "{label} listed"
        );
    }
    // Compare's list says when each started.
    let started = h
        .query_all_by_label_contains(&chrono::Local::now().format("%Y-%m-%d").to_string())
        .count();
    assert!(started >= 2, "a started column: {started}");
}

/// A run is kept under the database it was started on: the connection panel switched to
/// another target while it streamed does not move it (the history once read the panel at the end).
/// And the run keeps the id it had in flight, so what was picked while it streamed stays picked.
#[test]
fn a_run_is_kept_under_the_database_it_started_on_and_keeps_its_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let mut h = app_on(dir.path());
    h.state_mut().set_tab(Tab::Iterations);
    crate::app::set_query(
        &mut h,
        "SELECT * FROM Seed23 LIMIT 2000",
        30,
        "started on local",
    );
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().is_running(), "Run started a run");
    let in_flight = h.state().running_id().expect("a run in flight has an id");
    // While it streams, the panel moves to the emulator and another database.
    let connection = &mut h.state_mut().settings_mut().connection;
    connection.kind = TargetKind::Emulator;
    connection.emulator.host_port = "127.0.0.1:1".into();
    connection.emulator.database = "elsewhere".into();
    crate::app::step_until(&mut h, "the run to finish", |app| !app.is_running());
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, in_flight, "the finished run keeps its id");
    let report = runs[0].report.clone();
    until(&mut h, "the run saved", |app| {
        !app.history_view().queries().is_empty()
    });
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let stored = store.list(&Default::default()).expect("lists");
    assert_eq!(stored.len(), 1);
    let started_on = DatabasePath::default().name();
    let as_started = StoredRun::new(&report, &started_on).expect("serializes");
    let as_panel = StoredRun::new(&report, "elsewhere").expect("serializes");
    assert_ne!(as_started.summary.fingerprint, as_panel.summary.fingerprint);
    assert_eq!(
        stored[0].fingerprint, as_started.summary.fingerprint,
        "kept under {started_on}, not the panel's database at the end"
    );
}

/// Runs of this launch opened from the History tab are the runs already in the list, under the
/// RunIds they had since Run: the history's id of each (a row in its database) is noted when it
/// is saved and mapped back, where Open in Compare once added each a second time.
#[test]
fn runs_of_this_launch_opened_from_history_are_the_ones_in_the_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = app_on(dir.path());
    let sql = "SELECT * FROM Seed23 LIMIT 10";
    for label in ["mapped one", "mapped two"] {
        crate::app::set_query(&mut h, sql, 2, label);
        crate::app::run_to_end(&mut h);
    }
    let ids: Vec<spanprof::report::RunId> = h.state().runs().iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 2);
    h.state_mut().set_tab(Tab::History);
    until(&mut h, "the query", |app| {
        app.history_view().queries().len() == 1
    });
    h.get_by_label_contains("Seed23 LIMIT").click();
    until(&mut h, "both runs saved", |app| {
        app.history_view().points().len() == 2
    });
    for label in ["mapped one", "mapped two"] {
        h.get_by_label(label).click();
        h.run_steps(1);
    }
    assert_eq!(h.state_mut().history_view().picked().len(), 2);
    h.get_by_label("Open in Compare").click();
    until(&mut h, "the Compare tab", |app| {
        app.settings().tab == Tab::Compare
    });
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2, "no run added twice");
    assert!(runs.iter().all(|r| r.saved_as.is_some()), "each saved");
    let picked: Vec<spanprof::report::RunId> = h
        .state_mut()
        .compare_view()
        .picked()
        .iter()
        .copied()
        .collect();
    assert_eq!(
        picked, ids,
        "the runs of this launch are picked, under their ids"
    );
}
