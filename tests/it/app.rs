//! The desktop app driven through egui_kittest (no window, no GPU) against the built-in local
//! instance: runs, cancel, a server error in the window, a comparison, an export.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::app::{AppOptions, Format, SpanprofApp, Tab};
use spanprof::report::Status;

/// The real app on a local instance with 10,000 Seed23 rows, nothing persisted. A glyph that no
/// font has panics, so the app's own text is checked to be drawable.
pub(crate) fn app() -> Harness<'static, SpanprofApp> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| SpanprofApp::new(cc, AppOptions::in_memory(10_000)))
}

/// Like [`app`], for views that show row data: Seed23 holds scripts the built-in fonts lack, which
/// the app draws as boxes (as it does outside tests).
fn app_showing_rows() -> Harness<'static, SpanprofApp> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .allow_missing_glyphs()
        .build_eframe(|cc| SpanprofApp::new(cc, AppOptions::in_memory(10_000)))
}

pub(crate) fn set_query(
    h: &mut Harness<'static, SpanprofApp>,
    sql: &str,
    iterations: u32,
    label: &str,
) {
    let q = &mut h.state_mut().settings_mut().query;
    q.first_mut().sql = sql.into();
    q.iterations = iterations;
    q.warmup = 0;
    q.first_mut().label = label.into();
}

/// Steps frames (the engine works on its own thread meanwhile) until `done`, for at most 60 s.
pub(crate) fn step_until(
    h: &mut Harness<'static, SpanprofApp>,
    what: &str,
    done: impl Fn(&SpanprofApp) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        h.step();
        if done(h.state()) {
            break;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
    // A few more frames so the window shows the result.
    h.run_steps(3);
}

pub(crate) fn run_to_end(h: &mut Harness<'static, SpanprofApp>) {
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().is_running(), "Run started a run");
    step_until(h, "the run to finish", |app| !app.is_running());
}

#[test]
fn ctrl_enter_runs_five_iterations_and_shows_five_bars_and_the_summary() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 500", 5, "five");
    h.run_steps(2);
    assert!(h.query_by_label("No run yet").is_some());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    h.step();
    assert!(h.state().is_running(), "Ctrl+Enter started a run");
    step_until(&mut h, "the run to finish", |app| !app.is_running());

    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    let report = &runs[0].report;
    assert_eq!(report.config.label, "five");
    assert_eq!(report.iterations.len(), 5);
    assert!(
        report
            .iterations
            .iter()
            .all(|i| i.status() == Status::Ok && i.answer.rows == 500)
    );
    assert_eq!(h.state_mut().iterations_view().bars_drawn(), 5);
    assert!(h.query_by_label("5 iterations (0 warm-up)").is_some());
    assert!(h.query_by_label("Summary").is_some());
    for heading in ["median", "mean", "σ", "min", "max", "p90", "p99"] {
        assert!(
            h.query_by_label(heading).is_some(),
            "summary column {heading}"
        );
    }
    // Part rows (the chart's legend names the parts too; "total" is the table's own).
    assert!(h.query_by_label("part").is_some());
    assert!(h.query_by_label("total").is_some());
    // The recent queries remember it.
    assert_eq!(
        h.state()
            .settings()
            .query
            .recent
            .first()
            .map(String::as_str),
        Some("SELECT * FROM Seed23 LIMIT 500")
    );
}

#[test]
fn cancel_stops_a_long_run_at_once() {
    let mut h = app();
    {
        let knobs = &mut h.state_mut().settings_mut().connection.local.knobs;
        knobs.max_message_bytes = 16 * 1024;
        knobs.message_delay_ms = 20;
    }
    set_query(&mut h, "SELECT * FROM Seed23", 50, "long");
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().is_running());
    step_until(&mut h, "rows to stream", |app| {
        app.progress().is_some_and(|p| p.rows > 0)
    });
    assert!(
        h.state().is_running(),
        "a 50-iteration slow run is still going"
    );
    h.get_by_label("Cancel").click();
    let cancelled = Instant::now();
    step_until(&mut h, "the cancelled run to end", |app| !app.is_running());
    assert!(
        cancelled.elapsed() < Duration::from_secs(3),
        "{:?}",
        cancelled.elapsed()
    );
    let report = &h.state().runs()[0].report;
    assert!(report.iterations.len() < 50, "{}", report.iterations.len());
    assert_eq!(
        report.iterations.last().map(|i| i.status()),
        Some(Status::Cancelled)
    );
    assert!(!h.state().is_running());
}

#[test]
fn bad_sql_shows_the_servers_message_in_the_window() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM NoSuchTable", 1, "bad");
    run_to_end(&mut h);
    let shown = h
        .query_all_by_label_contains("Table not found: NoSuchTable")
        .count();
    assert!(shown >= 1, "the server's message is in the window");
    assert!(
        h.state()
            .log()
            .entries()
            .iter()
            .any(|e| e.message.contains("Table not found: NoSuchTable"))
    );
    // And in the Details tab's log.
    h.state_mut().set_tab(Tab::Details);
    h.run_steps(2);
    h.get_by_label("Log (1)").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("NoSuchTable").count() >= 1);
}

#[test]
fn two_runs_compared_show_the_ratio_in_words() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 3000", 8, "wide");
    run_to_end(&mut h);
    set_query(&mut h, "SELECT Id FROM Seed23 LIMIT 3000", 8, "narrow");
    run_to_end(&mut h);
    assert_eq!(h.state().runs().len(), 2);

    h.get_by_label("Compare").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("Pick two or more").is_some());
    h.get_by_label("wide").click();
    h.run_steps(1);
    assert!(h.query_by_label_contains("Pick two or more").is_some());
    h.get_by_label("narrow").click();
    h.run_steps(3);
    assert!(h.query_by_label_contains("Pick two or more").is_none());
    // The verdict is computed off the UI thread and shown once it is in.
    step_until(&mut h, "the verdict", |app| !app.verdicts().is_empty());
    let verdicts = h.state().verdicts();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    let verdict = &verdicts[0];
    assert!(
        verdict.starts_with("narrow is ") && verdict.contains("× ± ") && verdict.contains("wide"),
        "{verdict}"
    );
    assert!(
        verdict.contains("faster than") || verdict.contains("slower than"),
        "{verdict}"
    );
    assert!(
        h.query_by_label(verdict).is_some(),
        "the verdict is in the window"
    );
}

/// A report of one run labelled `label`: a slow warm-up, then `n` timed totals spread over
/// `base..base + 60` ms in a scrambled order, in quarter milliseconds (exact in JSON).
fn spread_report(label: &str, n: u32, base: f64, step: f64) -> spanprof::report::RunReport {
    use spanprof::report::{IterationRecord, RunConfig, RunReport};
    let iterations = (0..=n)
        .map(|i| {
            let spread = 60.0 * (f64::from(i) * step).fract();
            IterationRecord {
                total_ms: if i == 0 {
                    400.0
                } else {
                    ((base + spread) * 4.0).round() / 4.0
                },
                ..IterationRecord::new(label, i, i == 0, "2026-03-01T10:00:00Z")
            }
        })
        .collect();
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: "SELECT * FROM Seed23".into(),
            params: vec![],
            query_mode: spanprof::kind::QueryMode::Normal,
            iterations: n,
            warmup: 1,
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
fn the_window_and_the_command_line_give_the_same_verdict_for_the_same_reports()
-> Result<(), Box<dyn std::error::Error>> {
    use spanprof::export::Exporter as _;
    let before = spread_report("before", 24, 100.0, 0.618_034);
    let after = spread_report("after", 24, 90.0, 0.414_214);
    let dir = tempfile::tempdir()?;
    let (a, b) = (
        dir.path().join("before.json"),
        dir.path().join("after.json"),
    );
    std::fs::write(
        &a,
        spanprof::export::Json.export(std::slice::from_ref(&before))?,
    )?;
    std::fs::write(
        &b,
        spanprof::export::Json.export(std::slice::from_ref(&after))?,
    )?;

    let mut printed = Vec::new();
    let args = spanprof::cli::CompareArgs {
        a: a.clone(),
        b: b.clone(),
        ..Default::default()
    };
    spanprof::cli::run_compare(&args, &mut printed)?;
    let printed = String::from_utf8(printed)?;
    let cli_verdict = printed.lines().last().unwrap_or_default();
    assert!(
        cli_verdict.starts_with("after is ")
            || cli_verdict.starts_with("no significant difference between after and before"),
        "{printed}"
    );
    assert!(
        printed.starts_with("| part | before mean | after mean | change |\n"),
        "{printed}"
    );
    assert_eq!(printed.matches("\n| **total** | ").count(), 1, "{printed}");

    // These runs are ones where the settings matter: the app's own before they were shared (2,000
    // resamples, another seed) give another interval.
    let totals = |r: &spanprof::report::RunReport| r.samples(spanprof::part::Measure::Total);
    let old = spanprof::stats::compare(&totals(&before), &totals(&after), 0.95, 2000, 0x5ba_17ab)
        .map(|c| spanprof::stats::verdict(&c, "before", "after"));
    assert_ne!(old.as_deref(), Some(cli_verdict));

    let mut h = app();
    assert_eq!(h.state_mut().open_report(&a), Ok(1));
    assert_eq!(h.state_mut().open_report(&b), Ok(1));
    h.get_by_label("Compare").click();
    h.run_steps(2);
    // Listed with the file each came from; the verdict calls them by their labels, as the CLI.
    h.get_by_label("before (from before.json)").click();
    h.run_steps(1);
    h.get_by_label("after (from after.json)").click();
    step_until(&mut h, "the verdict", |app| !app.verdicts().is_empty());
    assert_eq!(h.state().verdicts(), [cli_verdict]);
    assert!(
        h.query_by_label(cli_verdict).is_some(),
        "the verdict is in the window"
    );
    Ok(())
}

#[test]
fn export_writes_a_csv_with_the_engines_columns() -> Result<(), Box<dyn std::error::Error>> {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 3, "exported");
    run_to_end(&mut h);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("runs.csv");
    h.state().export_selected(Format::Csv, &path)?;
    let mut reader = csv::Reader::from_path(&path)?;
    let header: Vec<String> = reader.headers()?.iter().map(str::to_owned).collect();
    assert_eq!(header, spanprof::export::COLUMNS);
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.get(0) == Some("exported")));

    // The JSON export reads back into the compare view.
    let json = dir.path().join("runs.json");
    h.state().export_selected(Format::Json, &json)?;
    assert_eq!(h.state_mut().open_report(&json), Ok(1));
    assert_eq!(h.state().runs().len(), 2);
    Ok(())
}

#[test]
fn details_show_a_bounded_preview_of_the_last_iteration() {
    let mut h = app_showing_rows();
    h.state_mut().settings_mut().query.mode = spanprof::engine::QueryMode::Profile;
    set_query(&mut h, "SELECT * FROM Seed23", 2, "preview");
    run_to_end(&mut h);
    h.get_by_label("Details").click();
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("the first 1000 of 10000 rows")
            .is_some()
    );
    assert!(h.query_by_label("Id INT64").is_some(), "column headings");
    h.get_by_label("Raw plan").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("No plan").is_none());
}

/// A join with a filter and an aggregate over the music tables.
const JOIN_SQL: &str = "SELECT s.FirstName, COUNT(*) AS albums, SUM(a.MarketingBudget) AS budget \
     FROM Albums a JOIN Singers s ON s.SingerId = a.SingerId \
     WHERE s.FirstName <> 'Lea' GROUP BY s.FirstName ORDER BY budget DESC";

#[test]
fn the_plan_view_after_a_profile_run_shows_the_icicle_and_the_hottest_operator_first() {
    let mut h = app();
    h.state_mut().settings_mut().query.mode = spanprof::engine::QueryMode::Profile;
    set_query(&mut h, JOIN_SQL, 4, "join");
    run_to_end(&mut h);
    h.get_by_label("Plan").click();
    h.run_steps(3);
    // Headed by the run's name, not the plan's hash.
    assert!(h.query_by_label("Plan of join").is_some());

    assert!(
        h.query_by_label("Icicle chart of the plan's operators")
            .is_some(),
        "the icicle is drawn"
    );
    for heading in [
        "operator",
        "self ms",
        "total ms",
        "% of server",
        "rows",
        "scanned",
        "executions",
    ] {
        assert!(
            h.query_by_label(heading).is_some(),
            "table column {heading}"
        );
    }
    assert_eq!(
        h.state_mut().plan_view().sorted_by(),
        (spanprof::app::PlanColumn::SelfMs, true),
        "hottest first"
    );
    assert!(
        h.query_by_label("↓").is_some(),
        "the sorted column is marked"
    );
    // The hottest operator, as the plan module ranks the run's aggregate, is the first row.
    let report = h.state().runs()[0].report.clone();
    let aggregate = report
        .plan_aggregates(&Default::default())
        .into_iter()
        .next()
        .expect("the run kept its plan");
    let tree = &aggregate.tree;
    let hottest = tree.operators[tree.hottest()[0]].title();
    let rows = h.state_mut().plan_view().rows_shown().to_vec();
    let titles: Vec<String> = rows.iter().map(|&p| tree.operators[p].title()).collect();
    assert_eq!(rows.len(), tree.operators.len());
    assert_eq!(titles[0], hottest, "{titles:?}");
    assert!(tree.operators.len() >= 4, "{titles:?}");
    assert_eq!(
        h.state_mut().plan_view().icicle_cells(),
        tree.operators.len(),
        "one icicle cell per operator"
    );
    // In the window: an icicle cell and a table row carry the hottest operator's name; the
    // table row sits above the rows of every other operator.
    let lowest = |title: &str| {
        h.query_all_by_label(title)
            .map(|n| n.rect().top())
            .fold(f32::MIN, f32::max)
    };
    assert!(
        h.query_all_by_label(&hottest).count() >= 2,
        "icicle cell and table row"
    );
    let hottest_row = lowest(&hottest);
    // (An operator title can repeat, "Sort" under "Sort": compare rows by unique titles.)
    let unique = |t: &String| titles.iter().filter(|u| *u == t).count() == 1;
    if unique(&hottest) {
        for other in titles.iter().filter(|t| **t != hottest && unique(t)) {
            assert!(
                lowest(other) > hottest_row,
                "{other} is below {hottest} in the table"
            );
        }
    }

    // Clicking a column heading sorts by it; clicking an icicle cell selects its operator.
    h.get_by_label("rows").click();
    h.run_steps(2);
    assert_eq!(
        h.state_mut().plan_view().sorted_by(),
        (spanprof::app::PlanColumn::Rows, true)
    );
    let by_rows = h.state_mut().plan_view().rows_shown().to_vec();
    let figures: Vec<Option<f64>> = by_rows
        .iter()
        .map(|&p| tree.operators[p].figures.rows)
        .collect();
    let known: Vec<f64> = figures.iter().flatten().copied().collect();
    assert!(known.windows(2).all(|w| w[0] >= w[1]), "{figures:?}");
    assert!(
        figures.iter().skip(known.len()).all(Option::is_none),
        "{figures:?}"
    );
    let root = tree.operators[0].title();
    h.query_all_by_label(&root)
        .min_by(|a, b| a.rect().top().total_cmp(&b.rect().top()))
        .expect("the root's icicle cell")
        .click();
    h.run_steps(2);
    assert_eq!(h.state_mut().plan_view().selected(), Some(root));
}

#[test]
fn test_connection_says_what_is_wrong_and_when_it_works() {
    let mut h = app();
    h.get_by_label("Test connection").click();
    step_until(&mut h, "the local test to end", |app| {
        !matches!(
            app.connection_outcome(),
            None | Some(spanprof::app::TestOutcome::Testing)
        )
    });
    assert!(h.query_by_label("connected").is_some());
    assert!(h.query_by_label_contains("SELECT 1 in").is_some());

    // An emulator address nobody listens on.
    let closed = crate::support::ClosedPort::new();
    {
        let connection = &mut h.state_mut().settings_mut().connection;
        connection.kind = spanprof::app::TargetKind::Emulator;
        connection.emulator.host_port = closed.host_port.clone();
    }
    h.run_steps(1);
    h.get_by_label("Test connection").click();
    step_until(&mut h, "the failing test to end", |app| {
        matches!(
            app.connection_outcome(),
            Some(spanprof::app::TestOutcome::Failed(_))
        )
    });
    assert!(h.query_by_label("failed").is_some());
    assert!(
        h.query_by_label_contains(&format!("cannot reach {}", closed.host_port))
            .is_some()
    );
}

/// The app's Test connection keeps the client's limits too. An emulator address
/// that takes the connection and never answers is named, with the call it did not answer.
#[test]
fn test_connection_names_an_endpoint_that_never_answers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = listener.local_addr().expect("bound").to_string();
    let held = std::thread::spawn(move || {
        // Accepts and holds connections, answering nothing, until the test ends.
        listener
            .incoming()
            .take(4)
            .filter_map(Result::ok)
            .collect::<Vec<_>>()
    });
    let mut h = app();
    {
        let connection = &mut h.state_mut().settings_mut().connection;
        connection.kind = spanprof::app::TargetKind::Emulator;
        connection.emulator.host_port = address.clone();
    }
    h.run_steps(1);
    h.get_by_label("Test connection").click();
    step_until(&mut h, "the test to give up", |app| {
        matches!(
            app.connection_outcome(),
            Some(spanprof::app::TestOutcome::Failed(_))
        )
    });
    assert!(
        h.query_by_label_contains(&format!(
            "{address} accepted the connection but did not answer CreateSession within 10 s"
        ))
        .is_some()
    );
    drop(held);
}

#[test]
fn the_decoder_is_chosen_in_the_query_panel_and_recorded_with_the_run() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 300", 2, "ref");
    h.run_steps(2);
    // The combo box carries its label; the open popup lists both decoders.
    h.query_all_by_label("Decoder")
        .last()
        .expect("the decoder combo box")
        .click();
    h.run_steps(2);
    h.get_by_label("Reference (prost)").click();
    h.run_steps(2);
    assert_eq!(
        h.state().settings().query.decoder,
        spanprof::wire::DecoderKind::Reference
    );
    run_to_end(&mut h);
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 300", 2, "fast");
    h.state_mut().settings_mut().query.decoder = spanprof::wire::DecoderKind::Fast;
    run_to_end(&mut h);
    let runs = h.state().runs();
    let decoders: Vec<&str> = runs
        .iter()
        .map(|r| r.report.config.decoder.as_str())
        .collect();
    assert_eq!(decoders, ["reference", "fast"]);
    assert!(
        runs.iter()
            .all(|r| r.report.iterations.iter().all(|i| i.answer.rows == 300))
    );
}

/// Closing the window while a run streams must not wait for the server: here the query never ends
/// and DeleteSession stalls for 30 s. Cancel keeps every frame quick while the engine waits on the
/// deletion, and dropping the app mid-run returns at once; the engine still asks for the deletion,
/// on its own thread.
#[test]
fn dropping_a_run_in_flight_never_waits_for_the_server() {
    use crate::standin::{Behaviour, Queries, StandIn};
    let runtime = tokio::runtime::Runtime::new().expect("a runtime for the test server");
    let behaviour = Behaviour {
        stall_delete: Some(Duration::from_secs(30)),
        ..Behaviour::answering(Queries::Stall)
    };
    let standin = runtime.block_on(StandIn::start(behaviour));
    let host_port = standin.host().to_owned();
    let deletions = || standin.count("DeleteSession");
    let streaming = |app: &SpanprofApp| app.progress().and_then(|p| p.iteration).is_some();

    // Cancel: the engine waits on the deletion; the frames do not.
    let mut h = app();
    h.state_mut().settings_mut().connection.kind = spanprof::app::TargetKind::Emulator;
    h.state_mut().settings_mut().connection.emulator.host_port = host_port.clone();
    set_query(&mut h, "SELECT 1", 3, "stalled");
    run_until(&mut h, "the run to stream", streaming);
    h.get_by_label("Cancel").click();
    let mut slowest = Duration::ZERO;
    let deadline = Instant::now() + Duration::from_secs(10);
    while deletions() == 0 && Instant::now() < deadline {
        let frame = Instant::now();
        h.step();
        slowest = slowest.max(frame.elapsed());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(deletions(), 1, "the engine asked for the deletion");
    for _ in 0..20 {
        let frame = Instant::now();
        h.step();
        slowest = slowest.max(frame.elapsed());
    }
    assert!(
        slowest < Duration::from_millis(500),
        "a frame took {slowest:?}"
    );

    // Drop mid-run: the window closes at once, the deletion is still asked for.
    let mut h = app();
    h.state_mut().settings_mut().connection.kind = spanprof::app::TargetKind::Emulator;
    h.state_mut().settings_mut().connection.emulator.host_port = host_port;
    set_query(&mut h, "SELECT 1", 3, "dropped");
    run_until(&mut h, "the run to stream", streaming);
    let dropping = Instant::now();
    drop(h);
    let took = dropping.elapsed();
    assert!(took < Duration::from_millis(500), "dropping took {took:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while deletions() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        deletions(),
        2,
        "the dropped run's session deletion was asked for"
    );
}

/// Presses Run and steps frames until `done`.
fn run_until(
    h: &mut Harness<'static, SpanprofApp>,
    what: &str,
    done: impl Fn(&SpanprofApp) -> bool,
) {
    h.run_steps(1);
    h.get_by_label("Run").click();
    step_until(h, what, done);
}

/// The Export menu's write happens on a thread of its own; the window says where it went.
#[test]
fn an_export_is_written_off_the_ui_thread_and_the_window_says_where() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 2, "exported");
    run_to_end(&mut h);
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("runs.csv");
    h.state_mut().save_export(Format::Csv, path.clone());
    step_until(&mut h, "the export to be written", |app| !app.files_busy());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    assert_eq!(notice, format!("exported to {}", path.display()));
    assert!(h.query_by_label_contains("exported to").is_some());
    let csv = std::fs::read_to_string(&path).expect("the CSV exists");
    assert_eq!(
        csv.lines().count(),
        3,
        "a header and two iterations:\n{csv}"
    );

    // A write that fails is said in the window and in the log, and writes nothing.
    let missing = dir.path().join("no-such-dir").join("runs.csv");
    h.state_mut().save_export(Format::Csv, missing.clone());
    step_until(&mut h, "the failed export to end", |app| !app.files_busy());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    assert!(notice.contains("no-such-dir"), "{notice}");
    assert_eq!(
        h.state().log().last().map(|e| e.message.clone()),
        Some(notice)
    );
    assert!(!missing.exists());
}

/// Opens Export > `item` through the menu, as a person would.
fn menu_export(h: &mut Harness<'static, SpanprofApp>, item: &str) {
    h.get_by_label("Export").click();
    h.run_steps(2);
    h.get_by_label(item).click();
    h.run_steps(2);
}

/// Export > HTML report through the menu writes one offline page (the in-window dialog, Enter);
/// File > Open report opens that page back as the run it shows.
#[test]
fn the_menu_exports_an_html_report_that_opens_back_as_its_run()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut h = finished_run_in(dir.path(), "paged");
    menu_export(&mut h, "HTML report (one offline page)…");
    assert!(h.query_by_label("Export an HTML report").is_some());
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    step_until(&mut h, "the export to be written", |app| !app.files_busy());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    let path = std::path::PathBuf::from(
        notice
            .strip_prefix("exported to ")
            .ok_or_else(|| format!("no export: {notice}"))?,
    );
    assert_eq!(path.extension().and_then(|e| e.to_str()), Some("html"));
    let page = std::fs::read_to_string(&path)?;
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("Time (mean ± σ)"));
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].report.iterations, runs[0].report.iterations);
    Ok(())
}

/// Types `text` into the in-window dialog's name field (it has the focus), replacing what is
/// there.
fn type_in_dialog(h: &mut Harness<'static, SpanprofApp>, text: &str) {
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.event(egui::Event::Text(text.to_owned()));
    h.run_steps(1);
}

/// A finished run of [`app`] whose exports and dialogs start in `folder`.
fn finished_run_in(folder: &std::path::Path, label: &str) -> Harness<'static, SpanprofApp> {
    finished_run_of(app(), folder, label)
}

fn finished_run_of(
    mut h: Harness<'static, SpanprofApp>,
    folder: &std::path::Path,
    label: &str,
) -> Harness<'static, SpanprofApp> {
    h.state_mut().settings_mut().last_folder = Some(folder.to_owned());
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 2, label);
    run_to_end(&mut h);
    h
}

/// With no desktop dialog, Export > CSV opens spanprof's own in the window, in the last
/// folder used, proposing `spanprof-<label>-<date>.csv`; Enter saves there, and the window says
/// where.
#[test]
fn the_in_window_dialog_saves_the_proposed_name_in_the_last_folder_on_enter()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("older.csv"), "x")?;
    let mut h = finished_run_in(dir.path(), "scan");
    menu_export(&mut h, "CSV of iterations…");
    assert!(h.state().file_dialog_open());
    assert!(h.query_by_label("Export the CSV of iterations").is_some());
    // The folder is listed off the UI thread; its file shows once it is in.
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.query_by_label("older.csv").is_none() {
        assert!(
            Instant::now() < deadline,
            "the listing never showed older.csv"
        );
        h.step();
    }
    let date = h.state().runs()[0]
        .report
        .started_at
        .get(..10)
        .unwrap_or_default()
        .to_owned();
    let expected = dir.path().join(format!("spanprof-scan-{date}.csv"));

    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert!(
        !h.state().file_dialog_open(),
        "Enter chose the proposed name"
    );
    step_until(&mut h, "the export to be written", |app| !app.files_busy());
    assert_eq!(
        h.state().notice(),
        Some(format!("exported to {}", expected.display()).as_str())
    );
    assert!(h.query_by_label_contains("exported to").is_some());
    let mut reader = csv::Reader::from_path(&expected)?;
    assert_eq!(reader.headers()?, spanprof::export::COLUMNS.as_slice());
    assert_eq!(reader.records().count(), 2);
    assert_eq!(
        h.state().settings().last_folder.as_deref(),
        Some(dir.path())
    );

    // The same name again: the dialog asks before it replaces the file, and Enter confirms.
    menu_export(&mut h, "CSV of iterations…");
    let deadline = Instant::now() + Duration::from_secs(10);
    while h
        .query_by_label(&format!("spanprof-scan-{date}.csv"))
        .is_none()
    {
        assert!(
            Instant::now() < deadline,
            "the listing never showed the export"
        );
        h.step();
    }
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert!(
        h.state().file_dialog_open(),
        "an existing file is not replaced at once"
    );
    assert!(h.query_by_label_contains("already exists").is_some());
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert!(!h.state().file_dialog_open());
    step_until(&mut h, "the export to be replaced", |app| !app.files_busy());
    assert!(
        h.state()
            .notice()
            .is_some_and(|n| n.starts_with("exported to"))
    );
    Ok(())
}

/// Escape and Cancel close spanprof's own dialog, write nothing, and say so.
#[test]
fn cancelling_the_in_window_dialog_writes_nothing_and_says_so()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut h = finished_run_in(dir.path(), "kept");
    menu_export(&mut h, "JSON report…");
    assert!(h.query_by_label("Export the JSON report").is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(!h.state().file_dialog_open());
    assert!(h.query_by_label("Export the JSON report").is_none());
    assert_eq!(
        h.state().notice(),
        Some("export cancelled: nothing was written")
    );

    menu_export(&mut h, "Markdown summary…");
    assert!(h.query_by_label("Export the Markdown summary").is_some());
    // The dialog's Cancel (the query panel's is there too, disabled while nothing runs).
    h.query_all_by_label("Cancel")
        .find(|n| !n.accesskit_node().is_disabled())
        .expect("the dialog's Cancel")
        .click();
    h.run_steps(2);
    assert!(!h.state().file_dialog_open());
    assert_eq!(
        h.state().notice(),
        Some("export cancelled: nothing was written")
    );
    assert!(!h.state().files_busy());
    assert_eq!(std::fs::read_dir(dir.path())?.count(), 0, "nothing written");
    // Cancelling is the user's choice, not an error.
    assert!(h.state().log().entries().is_empty());
    Ok(())
}

/// A path typed into spanprof's own dialog whose folder does not exist: the write fails, and the
/// window and the Log tab say why.
#[test]
fn a_write_that_fails_after_the_dialog_is_said_in_the_window_and_the_log()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    // The Details tab shows the rows before its log: scripts the built-in fonts lack.
    let mut h = finished_run_of(app_showing_rows(), dir.path(), "lost");
    menu_export(&mut h, "CSV of iterations…");
    type_in_dialog(&mut h, "no-such-dir/runs.csv");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert!(!h.state().file_dialog_open());
    step_until(&mut h, "the write to fail", |app| !app.files_busy());
    let notice = h.state().notice().unwrap_or_default().to_owned();
    let missing = dir.path().join("no-such-dir").join("runs.csv");
    assert!(
        notice.contains(&missing.display().to_string()),
        "the notice names the path: {notice}"
    );
    assert!(h.query_by_label(&notice).is_some(), "the window shows it");
    assert_eq!(
        h.state().log().last().map(|e| e.message.as_str()),
        Some(notice.as_str())
    );
    assert!(!missing.exists());
    h.get_by_label("Details").click();
    h.run_steps(2);
    h.get_by_label("Log (1)").click();
    h.run_steps(2);
    assert!(
        h.query_all_by_label(&notice).count() >= 2,
        "in the Log tab as well as the status bar"
    );
    Ok(())
}

/// Every dialog the app opens works in the window: File > Open report reads the report
/// typed, Cloud Spanner's Key file… sets the credentials file.
#[test]
fn open_report_and_the_key_file_choose_their_files_in_the_window()
-> Result<(), Box<dyn std::error::Error>> {
    use spanprof::export::Exporter as _;
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("before.json");
    std::fs::write(
        &report,
        spanprof::export::Json.export(&[spread_report("before", 5, 100.0, 0.618_034)])?,
    )?;
    let key = dir.path().join("key.json");
    std::fs::write(&key, "{}")?;

    let mut h = app();
    h.state_mut().settings_mut().last_folder = Some(dir.path().to_owned());
    h.run_steps(1);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open report…").click();
    h.run_steps(2);
    assert!(h.query_by_label("Open a report (JSON or HTML)").is_some());
    type_in_dialog(&mut h, "before.json");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    step_until(&mut h, "the report to be read", |app| !app.files_busy());
    assert_eq!(h.state().runs().len(), 1);
    assert_eq!(
        h.state().notice(),
        Some(format!("opened 1 runs from {}", report.display()).as_str())
    );

    h.get_by_label("Cloud Spanner").click();
    h.run_steps(2);
    h.get_by_label("Key file…").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Choose a service-account key file")
            .is_some()
    );
    // A click on the listed file names it; Open chooses it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.query_by_label("key.json").is_none() {
        assert!(
            Instant::now() < deadline,
            "the listing never showed key.json"
        );
        h.step();
    }
    h.get_by_label("key.json").click();
    h.run_steps(1);
    h.get_by_label("Open").click();
    h.run_steps(2);
    assert_eq!(
        h.state()
            .settings()
            .connection
            .cloud
            .credentials_file
            .as_deref(),
        Some(key.as_path())
    );
    Ok(())
}

/// A bar's tooltip near the window's right edge stays inside the window.
#[test]
fn the_tooltip_of_the_last_bar_stays_inside_the_window() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 10, "edge");
    run_to_end(&mut h);
    let plot = h
        .state_mut()
        .iterations_view()
        .plot_rect()
        .expect("the plot was drawn");
    let last = 9;
    // Move the pointer in from the plot's right edge until it is over the last bar.
    let y = plot.center().y;
    let mut x = plot.right() - 2.0;
    while h.state_mut().iterations_view().hovered() != Some(last) {
        assert!(
            x > plot.center().x,
            "no pointer position hovers bar #{last}"
        );
        x -= 4.0;
        h.hover_at(egui::pos2(x, y));
        h.run_steps(1);
    }
    let mut tooltip = None;
    for _ in 0..20 {
        h.run_steps(1);
        tooltip = h
            .query_by_label_contains(&format!("#{last} · ok"))
            .map(|n| n.rect());
        if tooltip.is_some() {
            break;
        }
    }
    let tooltip = tooltip.expect("the bar's tooltip is shown");
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0));
    assert!(
        window.contains_rect(tooltip),
        "tooltip {tooltip:?} is outside the window {window:?}"
    );
    assert!(
        tooltip.width() > 200.0,
        "the tooltip holds its whole text: {tooltip:?}"
    );
}

/// The legend is a row of its own above the plot, never over its bars.
#[test]
fn the_legend_is_above_the_plot_and_never_over_its_bars() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 3, "legend");
    run_to_end(&mut h);
    let plot = h
        .state_mut()
        .iterations_view()
        .plot_rect()
        .expect("the plot was drawn");
    use spanprof::part::Part;
    let parts = [
        Part::Server,
        Part::Network,
        Part::WireDecode,
        Part::RowDecode,
        Part::ClientWork,
        Part::Untimed,
    ];
    for name in parts.map(Part::label) {
        let rects: Vec<egui::Rect> = h.query_all_by_label(name).map(|n| n.rect()).collect();
        assert!(
            rects.iter().any(|r| r.bottom() <= plot.top()),
            "{name} is named above the plot {plot:?}: {rects:?}"
        );
        assert!(
            rects.iter().all(|r| !r.intersects(plot)),
            "nothing named {name} is drawn over the plot {plot:?}: {rects:?}"
        );
    }
}

/// A run in a mode that asks for statistics and got none (the emulator in with-stats
/// mode) says so in the window, with what that costs.
#[test]
fn statistics_asked_for_and_not_returned_are_said_in_the_window()
-> Result<(), Box<dyn std::error::Error>> {
    use spanprof::export::Exporter as _;
    let mut report = spread_report("quiet", 5, 100.0, 0.618_034);
    report.config.query_mode = spanprof::kind::QueryMode::WithStats;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("quiet.json");
    std::fs::write(&path, spanprof::export::Json.export(&[report])?)?;
    let mut h = app();
    assert_eq!(h.state_mut().open_report(&path), Ok(1));
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    assert!(
        h.query_by_label_contains(
            "no query statistics returned: server time and the lost-row check are unavailable; \
             the emulator returns them only in profile mode"
        )
        .is_some()
    );
    // A run that got them says nothing of the kind.
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 2, "talkative");
    run_to_end(&mut h);
    assert!(
        h.state().runs()[1]
            .report
            .iterations
            .iter()
            .all(|i| i.answer.server_rows == Some(100))
    );
    assert!(h.query_by_label_contains("no query statistics").is_none());
    Ok(())
}

/// Picking the emulator target picks the query mode that returns statistics there, and says so;
/// a mode the person then chooses on the emulator is theirs there: switching to the local instance
/// and back restores it, each switch saying what it changed.
#[test]
fn picking_the_emulator_picks_the_mode_that_returns_statistics() {
    use spanprof::engine::QueryMode;
    let mut h = app();
    assert_eq!(h.state().settings().query.mode, QueryMode::WithStats);
    h.get_by_label("Emulator").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().query.mode, QueryMode::Profile);
    assert!(
        h.query_by_label_contains("the emulator returns query statistics only in profile mode")
            .is_some()
    );
    // A mode the person chose on the emulator stays chosen there.
    h.state_mut().settings_mut().query.mode = QueryMode::Normal;
    h.get_by_label("Local instance").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().query.mode, QueryMode::WithStats);
    h.get_by_label("Emulator").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().query.mode, QueryMode::Normal);
    assert!(
        h.query_by_label_contains("Mode set to Normal: as you had it on the emulator")
            .is_some(),
        "{:?}",
        h.state().notice()
    );
}

/// Two variants built in the window run interleaved, and the Compare view shows where
/// they differ: the verdict names the phases, and the phases are drawn side by side.
#[test]
fn two_variants_built_in_the_window_are_compared_phase_by_phase() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 3000", 5, "wide");
    h.run_steps(2);
    h.get_by_label("+ variant").click();
    h.run_steps(2);
    {
        let query = &mut h.state_mut().settings_mut().query;
        assert_eq!(query.variants[1..].len(), 1, "a copy of the first");
        assert_eq!(query.variants[1].sql, "SELECT * FROM Seed23 LIMIT 3000");
        query.variants[1].sql = "SELECT Id FROM Seed23 LIMIT 3000".into();
        query.variants[1].label = "narrow".into();
    }
    h.run_steps(2);
    // Both variants have their tab; the second is the one being edited.
    assert!(h.query_by_label("wide").is_some() && h.query_by_label("narrow").is_some());
    run_to_end(&mut h);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2);
    let seqs: Vec<u32> = runs
        .iter()
        .flat_map(|r| r.report.iterations.iter())
        .filter(|i| !i.warmup)
        .filter_map(|i| i.seq)
        .collect();
    assert_eq!(seqs.len(), 10);
    let first: Vec<u32> = runs[0]
        .report
        .iterations
        .iter()
        .filter(|i| !i.warmup)
        .filter_map(|i| i.seq)
        .collect();
    assert!(
        first.windows(2).all(|w| w[1] == w[0] + 2),
        "interleaved: {first:?}"
    );
    assert_eq!(
        h.state().settings().tab,
        Tab::Compare,
        "the comparison is shown"
    );
    step_until(&mut h, "the verdict", |app| !app.verdicts().is_empty());
    let verdicts = h.state().verdicts();
    let [verdict] = verdicts.as_slice() else {
        panic!("one verdict: {verdicts:?}");
    };
    assert!(verdict.starts_with("narrow is "), "{verdict}");
    assert!(
        verdict.contains("row decode ") && verdict.contains("network "),
        "{verdict}"
    );
    assert!(
        h.query_by_label_contains(verdict).is_some(),
        "the window shows it"
    );
    assert!(h.query_by_label("Mean per part").is_some());
}

/// A sweep run in the window gives a run per value, and the Compare view draws how each
/// phase grows with it.
#[test]
fn a_sweep_run_in_the_window_draws_its_curve() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT @n", 2, "");
    h.state_mut().settings_mut().query.sweep = "n:INT64=100,1000,3000,6000".into();
    // The panel grows an Order row for a sweep: draw it before pressing Run.
    h.run_steps(2);
    run_to_end(&mut h);
    assert_eq!(h.state().runs().len(), 4);
    h.run_steps(3);
    assert!(h.query_by_label("Sweep of @n").is_some());
    let curves = h.state_mut().compare_view().sweep_curves().to_vec();
    let total = curves
        .iter()
        .find(|c| c.measure == spanprof::part::Measure::Total)
        .expect("the total's curve");
    let xs: Vec<f64> = total.points.iter().map(|p| p[0]).collect();
    assert_eq!(xs, [100.0, 1000.0, 3000.0, 6000.0]);
    assert!(
        total.points[3][1] > total.points[0][1],
        "6,000 rows take longer than 100: {total:?}"
    );
    assert!(curves.len() >= 3, "the phases measured: {curves:?}");
}

#[test]
fn a_client_program_run_shows_the_server_s_phases_and_its_rows_checked() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 500", 2, "");
    h.run_steps(2);
    h.get_by_label("Client program").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Command").is_some(),
        "the command line field"
    );
    h.state_mut().settings_mut().query.command =
        format!("{} driver", env!("CARGO_BIN_EXE_spanprof"));
    run_to_end(&mut h);

    let runs = h.state().runs();
    let labels: Vec<&str> = runs
        .iter()
        .map(|r| r.report.config.label.as_str())
        .collect();
    assert_eq!(
        labels,
        ["spanprof driver", "spanprof (fast decoder)", "wire floor"]
    );
    let program = &runs[0].report;
    assert_eq!(
        program.config.command.last().map(String::as_str),
        Some("driver")
    );
    for r in &program.iterations {
        assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
        assert_eq!(
            (
                r.subject.and_then(|s| s.check).map(|c| c.as_str()),
                r.answer.rows
            ),
            (Some("values"), 500)
        );
        assert!(
            r.subject
                .is_some_and(|s| s.blocked_ms.is_some() && s.startup_ms.is_some())
        );
    }
    // Three runs compared: the window shows them side by side; the program's own bars and summary
    // are a tab away.
    assert_eq!(h.state().settings().tab, Tab::Compare);
    h.state_mut().set_tab(Tab::Iterations);
    h.run_steps(3);
    assert!(h.query_by_label("Summary").is_some());
    // The program's bars stack its time as the server saw it, blocked time its own part; the
    // legend and the summary name the same parts (each label twice).
    for part in spanprof::part::Part::SUBJECT {
        let shown = h.query_all_by_label(part.label()).count();
        assert!(
            shown >= 2,
            "the bars' legend and the summary name {}: {shown}",
            part.label()
        );
    }
}

/// What is picked in a run while it streams stays picked when it ends: the selected bars and the
/// open timeline belong to its RunId, which its report keeps in the run list (a run once got a
/// new id at its end, and the views let go of what they held).
#[test]
fn what_is_picked_in_a_run_in_flight_stays_picked_under_its_run_id_when_it_ends() {
    let mut h = app();
    h.state_mut().set_tab(Tab::Iterations);
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 2000", 100, "picked");
    h.get_by_label("Run").click();
    h.step();
    let in_flight = h.state().running_id().expect("a run in flight has an id");
    step_until(&mut h, "three iterations in flight", |app| {
        app.progress().and_then(|p| p.iteration) >= Some(3)
    });
    assert!(h.state().is_running(), "still streaming");
    assert_eq!(h.state_mut().iterations_view().run(), Some(in_flight));
    h.state_mut().iterations_view().select([1, 2]);
    h.state_mut()
        .iterations_view()
        .timeline()
        .open(in_flight, 2);
    h.run_steps(2);
    step_until(&mut h, "the run to finish", |app| !app.is_running());
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, in_flight, "the finished run keeps its id");
    assert_eq!(runs[0].report.iterations.len(), 100);
    let view = h.state_mut().iterations_view();
    assert_eq!(view.run(), Some(in_flight));
    assert_eq!(
        view.selection().iter().copied().collect::<Vec<u32>>(),
        [1, 2],
        "the selection made in flight"
    );
    assert_eq!(view.timeline().run(), Some(in_flight));
    assert_eq!(
        view.timeline().opened(),
        Some(2),
        "the timeline opened in flight"
    );
    assert!(
        h.query_by_label("Timeline of #2").is_some(),
        "and drawn from the finished run"
    );
}
