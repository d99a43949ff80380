//! The run history in the window, through egui_kittest: runs saved by earlier launches (through the
//! store, as a launch saves them) are found in the History tab by their query, two of them
//! picked and opened in Compare.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::app::{AppOptions, SpanprofApp, Tab, TargetKind};
use spanprof::client::DatabasePath;
use spanprof::history::{HistoryStore, Location, Retention, SqliteStore, StoredRun};
use spanprof::kind::QueryMode;
use spanprof::report::{IterationRecord, RunConfig, RunReport};

fn report(label: &str, sql: &str, started_at: &str, totals: &[f64]) -> RunReport {
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: sql.into(),
            query_mode: QueryMode::WithStats,
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
        h.state()
            .notice()
            .unwrap_or("")
            .contains("imported 1 run from"),
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

/// `r` asked in `mode`.
fn in_mode(mut r: RunReport, mode: QueryMode) -> RunReport {
    r.config.query_mode = mode;
    r
}

/// The app on the history file `path` holding `reports` (one launch each), at `size`, the
/// History tab shown.
fn app_with(
    path: &std::path::Path,
    reports: &[RunReport],
    size: egui::Vec2,
) -> Harness<'static, SpanprofApp> {
    let mut store = SqliteStore::open(path, Retention::default()).expect("opens");
    for r in reports {
        store
            .save(&[StoredRun::new(r, "db").expect("serialises")])
            .expect("saves");
    }
    let path = path.to_owned();
    Harness::builder().with_size(size).build_eframe(move |cc| {
        let options = AppOptions {
            history: Location::File(path.clone()),
            tab: Some(Tab::History),
            ..AppOptions::in_memory(1_000)
        };
        SpanprofApp::new(cc, options)
    })
}

/// The first thing a new user's hour found: the store keeps a run under a fingerprint that hashes its mode, and
/// the list showed one entry per fingerprint without the mode, so one SQL appeared twice with one
/// run each and could not be compared. One SQL is one entry; its mode is a column of each run; a
/// run of each mode picked opens in Compare.
#[test]
fn one_sql_run_in_two_modes_is_one_entry_with_the_mode_a_column_and_both_open_in_compare() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sql = "SELECT * FROM Seed23 WHERE Id < 100";
    let stats = in_mode(
        report("with stats", sql, "2026-03-01T10:00:00Z", &[12.0, 13.0]),
        QueryMode::WithStats,
    );
    // The same SQL as a person writes it again, spaced otherwise, in another mode.
    let profiled = in_mode(
        report(
            "profiled",
            "select *  from Seed23 where Id < 100",
            "2026-03-02T10:00:00Z",
            &[15.0, 16.0],
        ),
        QueryMode::Profile,
    );
    let fingerprint = |r: &RunReport| StoredRun::new(r, "db").expect("serialises").summary;
    assert_ne!(
        fingerprint(&stats).fingerprint,
        fingerprint(&profiled).fingerprint,
        "the store keeps them apart"
    );
    let other = report("another query", "SELECT 2", "2026-03-03T10:00:00Z", &[1.0]);
    let path = dir.path().join("history.sqlite");
    let mut h = app_with(&path, &[stats, profiled, other], egui::vec2(1280.0, 800.0));
    until(&mut h, "the queries", |app| {
        app.history_view().queries().len() == 2
    });
    let entry = h.state_mut().history_view().queries()[1].clone();
    assert_eq!((entry.runs, entry.fingerprints.len()), (2, 2), "{entry:?}");
    let count = |h: &Harness<'static, SpanprofApp>, word: &str| h.query_all_by_label(word).count();
    let before = [count(&h, "With stats"), count(&h, "Profile")];
    // Listed by the SQL as its latest run wrote it.
    h.get_by_label_contains("where Id < 100").click();
    until(&mut h, "the trend of both modes", |app| {
        app.history_view().points().len() == 2
    });
    // The mode is a column: its heading, and each run's mode in its row.
    assert!(h.query_by_label("mode").is_some(), "a mode column");
    assert_eq!(
        [count(&h, "With stats"), count(&h, "Profile")],
        [before[0] + 1, before[1] + 1],
        "each run's mode in its row"
    );
    h.get_by_label("with stats").click();
    h.run_steps(1);
    h.get_by_label("profiled").click();
    h.run_steps(1);
    assert_eq!(h.state_mut().history_view().picked().len(), 2);
    h.get_by_label("Open in Compare").click();
    until(&mut h, "the Compare tab", |app| {
        app.settings().tab == Tab::Compare
    });
    let modes: Vec<QueryMode> = h
        .state()
        .runs()
        .iter()
        .map(|r| r.report.config.query_mode)
        .collect();
    assert_eq!(modes, [QueryMode::WithStats, QueryMode::Profile]);
}

/// Picks span entries: a run picked under one query stays picked (and named) while another
/// query's run is picked, and the two open in Compare.
#[test]
fn runs_picked_under_two_entries_open_together_in_compare() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let reports = [
        report(
            "the wide one",
            "SELECT * FROM Seed23",
            "2026-03-01T10:00:00Z",
            &[9.0],
        ),
        report(
            "the narrow one",
            "SELECT Id FROM Seed23",
            "2026-03-02T10:00:00Z",
            &[3.0],
        ),
    ];
    let mut h = app_with(&path, &reports, egui::vec2(1280.0, 800.0));
    until(&mut h, "the queries", |app| {
        app.history_view().queries().len() == 2
    });
    h.get_by_label_contains("SELECT * FROM Seed23").click();
    until(&mut h, "the wide trend", |app| {
        app.history_view().points().len() == 1
    });
    h.get_by_label("the wide one").click();
    h.run_steps(1);
    h.get_by_label_contains("SELECT Id FROM Seed23").click();
    until(&mut h, "the narrow trend", |app| {
        app.history_view()
            .points()
            .first()
            .is_some_and(|p| p.summary.label == "the narrow one")
    });
    assert!(
        h.query_by_label_contains("picked: the wide one").is_some(),
        "the pick under the other entry is named"
    );
    h.get_by_label("the narrow one").click();
    h.run_steps(1);
    assert_eq!(h.state_mut().history_view().picked().len(), 2);
    h.get_by_label("Open in Compare").click();
    until(&mut h, "the Compare tab", |app| {
        app.settings().tab == Tab::Compare
    });
    let labels: Vec<String> = h
        .state()
        .runs()
        .iter()
        .map(|r| r.report.config.label.clone())
        .collect();
    assert_eq!(labels, ["the wide one", "the narrow one"]);
}

/// "Run, quit, relaunch, run" in another mode: two app instances on one history file, the second
/// run in Profile where the first ran With stats. The History of the second lists one query with
/// both runs, and they open in Compare.
#[test]
fn run_quit_relaunch_run_in_another_mode_are_compared_from_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sql = "SELECT * FROM Seed23 LIMIT 10";
    for (label, mode) in [
        ("first launch", QueryMode::WithStats),
        ("second launch", QueryMode::Profile),
    ] {
        let mut h = app_on(dir.path());
        crate::app::set_query(&mut h, sql, 2, label);
        h.state_mut().settings_mut().query.mode = mode;
        crate::app::run_to_end(&mut h);
        assert_eq!(h.state().runs()[0].report.config.query_mode, mode);
        if label == "first launch" {
            // Quit: the run is saved before the window goes.
            until(&mut h, "the first run saved", |app| {
                app.history_view().queries().len() == 1
            });
            continue;
        }
        h.state_mut().set_tab(Tab::History);
        until(&mut h, "both launches' runs under one query", |app| {
            app.history_view()
                .queries()
                .first()
                .is_some_and(|q| q.runs == 2)
        });
        assert_eq!(h.state_mut().history_view().queries().len(), 1);
        h.get_by_label_contains("Seed23 LIMIT").click();
        until(&mut h, "the trend", |app| {
            app.history_view().points().len() == 2
        });
        for label in ["first launch", "second launch"] {
            h.get_by_label(label).click();
            h.run_steps(1);
        }
        h.get_by_label("Open in Compare").click();
        until(&mut h, "the verdict", |app| app.verdicts().len() == 1);
        let modes: Vec<QueryMode> = h
            .state()
            .runs()
            .iter()
            .map(|r| r.report.config.query_mode)
            .collect();
        assert_eq!(modes, [QueryMode::Profile, QueryMode::WithStats]);
    }
}

/// How a newcomer got there: picking the emulator set Profile, and going back to the local instance kept
/// it without a word. Back on the local instance, the mode the person had there is restored, and
/// the status line says what changed and from what.
#[test]
fn switching_from_the_emulator_back_to_local_restores_the_mode_and_says_what_changed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = app_on(dir.path());
    h.state_mut().set_tab(Tab::Iterations);
    h.state_mut().settings_mut().query.mode = QueryMode::Normal;
    h.run_steps(1);
    h.get_by_label("Emulator").click();
    h.run_steps(2);
    // Normal is not the default: a choice of the person's, kept on a target not visited.
    assert_eq!(h.state().settings().query.mode, QueryMode::Normal);
    h.state_mut().settings_mut().query.mode = QueryMode::Profile;
    h.get_by_label("Local instance").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().query.mode, QueryMode::Normal);
    let said = "Mode set to Normal: as you had it on the local instance (it was Profile)";
    assert!(
        h.query_by_label_contains(said).is_some(),
        "{:?}",
        h.state().notice()
    );
    // And the emulator keeps what the person had there.
    h.get_by_label("Emulator").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().query.mode, QueryMode::Profile);
}

/// One of a thing is said in the singular: "1 query", "1 run" (the list said "1 queries" and the
/// import "imported 1 runs").
#[test]
fn one_query_and_one_run_are_said_in_the_singular() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let one = report("the only run", "SELECT 1", "2026-03-01T10:00:00Z", &[2.0]);
    let mut h = app_with(&path, &[one], egui::vec2(1280.0, 800.0));
    until(&mut h, "the query", |app| {
        app.history_view().queries().len() == 1
    });
    h.get_by_label_contains("SELECT 1").click();
    until(&mut h, "the trend", |app| {
        app.history_view().points().len() == 1
    });
    assert!(h.query_by_label("1 query").is_some(), "the list's count");
    assert!(
        h.query_by_label_contains("1 run · last").is_some(),
        "the entry's count"
    );
    assert!(h.query_by_label("1 run").is_some(), "the trend's count");
    for plural in ["1 queries", "1 runs"] {
        assert!(
            h.query_by_label_contains(plural).is_none(),
            "{plural} is said"
        );
    }
}

/// Relative luminance of `c` (WCAG).
fn luminance(c: egui::Color32) -> f64 {
    let channel = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(c.r()) + 0.7152 * channel(c.g()) + 0.0722 * channel(c.b())
}

/// "plan changed" and "pinned" were one yellow. Each mark of the trend has its own colour, apart
/// from every other's, and each reads on the dark plot (at least 3:1); a pinned run says so in its
/// row.
#[test]
fn the_trends_marks_have_distinct_legible_colours_and_a_pinned_run_says_so() {
    let legend = spanprof::app::HistoryView::legend();
    let colour = |name: &str| legend.iter().find(|(n, _)| *n == name).expect(name).1;
    assert_ne!(colour("plan changed"), colour("pinned"));
    let background = luminance(egui::Visuals::dark().extreme_bg_color);
    for (k, (name, c)) in legend.iter().enumerate() {
        let contrast = (luminance(*c) + 0.05) / (background + 0.05);
        assert!(contrast >= 3.0, "{name}: {contrast:.1}:1");
        for (other, d) in &legend[k + 1..] {
            assert_ne!(c, d, "{name} and {other}");
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let pinned = report("kept", "SELECT 1", "2026-03-01T10:00:00Z", &[2.0]);
    let mut h = app_with(&path, &[pinned], egui::vec2(1280.0, 800.0));
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let id = store.list(&Default::default()).expect("lists")[0]
        .id
        .clone();
    assert!(store.set_pinned(&id, true).expect("pins"));
    until(&mut h, "the query", |app| {
        app.history_view().queries().len() == 1
    });
    h.get_by_label_contains("SELECT 1").click();
    until(&mut h, "the trend", |app| {
        app.history_view()
            .points()
            .first()
            .is_some_and(|p| p.pinned)
    });
    assert_eq!(
        h.query_all_by_label("pinned").count(),
        2,
        "the legend's and the row's flag"
    );
}

/// History's rows ran off the right edge. At 1280x800 and at 900x600 every cell of the runs' table
/// ends inside the window.
#[test]
fn the_runs_table_ends_inside_the_window_at_any_size() {
    for size in [egui::vec2(1280.0, 800.0), egui::vec2(900.0, 600.0)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("history.sqlite");
        let sql = "SELECT * FROM Seed23 WHERE Id < 100";
        let mut reports = Vec::new();
        for (k, mode) in [QueryMode::WithStats, QueryMode::Profile, QueryMode::Normal]
            .into_iter()
            .enumerate()
        {
            let mut r = in_mode(
                report(
                    &format!("a run with a long label that a person wrote, number {k}"),
                    sql,
                    &format!("2026-03-0{}T10:00:00Z", k + 1),
                    &[12.0, 13.0],
                ),
                mode,
            );
            r.config.options = vec![
                (
                    "request_tag".into(),
                    "a-long-request-tag-for-the-dashboard".into(),
                ),
                ("priority".into(), "low".into()),
            ];
            reports.push(r);
        }
        let mut h = app_with(&path, &reports, size);
        until(&mut h, "the query", |app| {
            app.history_view().queries().len() == 1
        });
        h.get_by_label_contains("WHERE Id < 100").click();
        until(&mut h, "the trend", |app| {
            app.history_view().points().len() == 3
        });
        // The cells drawn (a node clipped out of view has no bounds).
        let drawn = |n: egui_kittest::Node<'_>| n.accesskit_node().bounding_box().map(|_| n.rect());
        let mut cells: Vec<egui::Rect> = h
            .query_all_by_label_contains("a run with a long label")
            .filter_map(drawn)
            .collect();
        for name in [
            "run",
            "started",
            "median",
            "mode",
            "plan · flags",
            "Profile",
        ] {
            cells.extend(h.query_all_by_label(name).filter_map(drawn));
        }
        assert!(cells.len() >= 8, "{size:?}: {} cells found", cells.len());
        for rect in cells {
            assert!(
                rect.right() <= size.x,
                "{size:?}: a cell ends at {}",
                rect.right()
            );
        }
    }
}
