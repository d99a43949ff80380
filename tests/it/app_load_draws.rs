//! The window's Load tab draws each request's parameters over a key space and, for a read-write
//! load, reads the target's own statistics after the run, through egui_kittest against the
//! built-in instance: a zipf draw typed into the tab, the statistics' checkbox ticked (the built-in
//! instance's interval a second), and the run's report holds the draws and the statistics read,
//! the tab showing the comparison's words; a draw that cannot be read is said under its field and
//! Run load refuses; a query load has no statistics' switch and asks for none.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{
    DRAW_PARAMETERS, LoadModel, LoadTargetStats, READ_TARGET_STATS, STATS_HEADINGS, SpanprofApp,
    Tab,
};
use spanprof::load::{Dist, StatsRead};

use crate::app::{app, set_query, step_until};
use crate::app_read_write::type_script;

/// Reads an account the draw picks and adds to it: a hot account under Zipf.
const HOT_DRAWN: &str = "SELECT Balance FROM Accounts WHERE AccountId = @id; \
                         UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = @id";

/// The Load tab open, one short step of two clients.
fn load_tab(h: &mut Harness<'static, SpanprofApp>) {
    {
        let load = &mut h.state_mut().settings_mut().load;
        load.model = LoadModel::Closed;
        load.concurrencies = "2".into();
        load.step_seconds = 1.0;
    }
    h.run_steps(1);
    h.get_by_label("Load").click();
    h.run_steps(2);
    assert_eq!(h.state().settings().tab, Tab::Load);
}

/// Types `text` into the draw parameters' field, replacing what is there.
fn type_draws(h: &mut Harness<'static, SpanprofApp>, text: &str) {
    h.get_by_label(DRAW_PARAMETERS).focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get_by_label(DRAW_PARAMETERS).type_text(text);
    h.run_steps(2);
    assert_eq!(h.state().settings().load.params, text);
}

#[test]
fn a_read_write_load_draws_zipf_keys_and_shows_the_target_s_own_statistics_beside_its_figures() {
    let mut h = app();
    type_script(&mut h, HOT_DRAWN, 1);
    load_tab(&mut h);
    type_draws(&mut h, "id=zipf:1..10");
    assert!(
        h.query_by_label("each request draws id=zipf:1..10:0.99 (seed 1)")
            .is_some(),
        "the draws said under the field"
    );
    h.get_by_label(READ_TARGET_STATS).click();
    h.run_steps(2);
    assert!(h.state().settings().load.target_stats.read);
    h.state_mut().settings_mut().load.target_stats.interval_s = 1;
    h.run_steps(1);
    assert!(h.query_by_label("Statistics interval").is_some());

    h.get_by_label("Run load").click();
    h.run_steps(2);
    assert_eq!(h.state().load_view().error(), None, "the run starts");
    step_until(&mut h, "the run and the statistics' wait to end", |app| {
        !app.load_view().is_running()
    });

    let view = h.state().load_view();
    assert_eq!(view.error(), None);
    let report = view.report().expect("a report");
    let draws = report.draws.as_ref().expect("the run's draws");
    assert_eq!(draws.params.len(), 1);
    assert_eq!(draws.params[0].name, "id");
    assert!(
        matches!(draws.params[0].dist, Dist::Zipf { lo: 1, hi: 10, .. }),
        "{draws:?}"
    );
    let stats = report.server_stats.as_ref().expect("the statistics asked");
    assert!(stats.tag.starts_with("spanprof-load-"), "{}", stats.tag);
    assert!(
        matches!(stats.read, StatsRead::Served(_)),
        "the built-in instance serves them: {:?}",
        stats.read
    );
    let Some(LoadTargetStats::Compared { rows, words, .. }) = view.target_stats() else {
        panic!("compared: {:?}", view.target_stats());
    };
    let figures: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        figures,
        ["lock wait", "hottest key", "attempts", "aborts", "commits"]
    );
    let words = words.clone();
    for said in STATS_HEADINGS
        .iter()
        .copied()
        .chain(["The target's own statistics"])
        .chain(words.iter().map(String::as_str))
    {
        assert!(h.query_by_label(said).is_some(), "{said:?} in the window");
    }
}

#[test]
fn a_draw_that_cannot_be_read_is_said_under_its_field_and_run_load_refuses() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 10", 1, "drawn");
    load_tab(&mut h);
    type_draws(&mut h, "id=zipf:100..1");
    let error = h
        .state()
        .load_view()
        .draw_error()
        .expect("an error")
        .to_owned();
    assert!(
        error.contains("the range 100..1 ends below its start"),
        "{error}"
    );
    assert!(h.query_by_label(&error).is_some(), "said in the tab");
    h.get_by_label("Run load").click();
    h.run_steps(2);
    assert!(!h.state().load_view().is_running(), "Run load refused");
    assert!(h.state().load_view().report().is_none());
    type_draws(&mut h, "id=uniform:1..100");
    assert_eq!(h.state().load_view().draw_error(), None, "fixed");
    assert!(h.query_by_label(&error).is_none(), "no longer said");
}

#[test]
fn a_query_load_has_no_statistics_switch_and_asks_for_none() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 10", 1, "plain");
    h.state_mut().settings_mut().load.target_stats.read = true;
    load_tab(&mut h);
    assert!(
        h.query_by_label(READ_TARGET_STATS).is_none(),
        "a read-write load's switch"
    );
    h.get_by_label("Run load").click();
    h.run_steps(2);
    step_until(&mut h, "the run to end", |app| {
        !app.load_view().is_running()
    });
    let view = h.state().load_view();
    assert_eq!(view.error(), None);
    let report = view.report().expect("a report");
    assert!(report.steps[0].count > 0, "the queries ran");
    assert_eq!(report.draws, None);
    assert_eq!(report.server_stats, None);
    assert_eq!(view.target_stats(), None);
    assert!(h.query_by_label("The target's own statistics").is_none());
}

/// With production's minute, the run waits for the interval holding its end: the tab says so in
/// the run's words, and Cancel ends the wait, keeping the run and saying the statistics were not
/// read. (Should the minute close as the run ends, there is no wait to cancel: the run is then
/// only checked to have read them.)
#[test]
fn cancel_ends_the_wait_for_the_target_s_interval_and_keeps_the_run() {
    let mut h = app();
    type_script(&mut h, HOT_DRAWN, 1);
    {
        let load = &mut h.state_mut().settings_mut().load;
        load.params = "id=uniform:1..5".into();
        load.target_stats.read = true;
        load.target_stats.interval_s = 60;
    }
    load_tab(&mut h);
    h.get_by_label("Run load").click();
    h.run_steps(2);
    step_until(&mut h, "the wait or the run's end", |app| {
        let view = app.load_view();
        !view.is_running() || view.progress().and_then(|p| p.waiting()).is_some()
    });
    if h.state().load_view().is_running() {
        let words = h
            .state()
            .load_view()
            .progress()
            .and_then(|p| p.waiting())
            .expect("waiting")
            .to_owned();
        assert_eq!(
            words,
            "waiting for the target's statistics interval to close (up to 75 s)"
        );
        assert_eq!(
            h.query_all_by_label_contains(&words).count(),
            2,
            "said in the tab and beside Run load"
        );
        h.get_by_label("Cancel").click();
        h.run_steps(2);
        step_until(&mut h, "the run to end", |app| {
            !app.load_view().is_running()
        });
        let view = h.state().load_view();
        let report = view.report().expect("the run is kept");
        assert!(!report.cancelled, "every step ran");
        assert_eq!(report.steps.len(), 1);
        let stats = report.server_stats.as_ref().expect("asked");
        assert!(matches!(stats.read, StatsRead::NotRead { .. }), "{stats:?}");
        let said = view.target_stats().expect("said").words()[0].clone();
        assert!(said.contains("cancelled"), "{said}");
        assert!(h.query_by_label(&said).is_some(), "{said} in the tab");
    } else {
        let report = h.state().load_view().report().expect("a report");
        assert!(report.server_stats.is_some());
    }
}
