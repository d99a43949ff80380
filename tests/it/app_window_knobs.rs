//! Knobs in the window, through egui_kittest: the client's timeouts set in the window (and
//! persisted), repeated runs of a client program labelled apart, the local instance's stream
//! shape as a knob, its faults folded away and said in words where a figure means "off".

use egui_kittest::kittest::{NodeT as _, Queryable};
use spanprof::report::Status;
use spanprof::server::Shape;

use crate::app::{app, run_to_end, set_query};

fn client_program(h: &mut egui_kittest::Harness<'static, spanprof::app::SpanprofApp>) {
    h.get_by_label("Client program").click();
    h.run_steps(2);
    h.state_mut().settings_mut().query.command =
        format!("{} driver", env!("CARGO_BIN_EXE_spanprof"));
}

#[test]
fn the_timeouts_are_typed_in_the_window_hold_the_run_and_persist() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 100", 1, "timed");
    h.get_by_label("Timeouts").click();
    h.run_steps(2);
    for field in [
        "Connect timeout",
        "Call timeout",
        "First response timeout",
        "Iteration timeout",
    ] {
        assert!(h.query_by_label(field).is_some(), "the field {field}");
    }
    assert_eq!(
        h.state().settings().connection.timeouts.first_response,
        "60 s",
        "the client's default, as the field shows it"
    );
    h.state_mut()
        .settings_mut()
        .connection
        .timeouts
        .first_response
        .clear();
    h.run_steps(1);
    assert!(
        h.query_by_label_contains("the first response timeout")
            .is_some(),
        "an empty field is said in the window"
    );
    h.get_by_label("First response timeout").focus();
    h.run_steps(1);
    h.get_by_label("First response timeout").type_text("300ms");
    h.run_steps(2);
    assert_eq!(
        h.state().settings().connection.timeouts.first_response,
        "300ms"
    );
    // A server slower to its first byte than that: the run's iteration fails on that limit.
    h.state_mut()
        .settings_mut()
        .connection
        .local
        .knobs
        .first_byte_delay_ms = 3_000;
    // The menu closed again, then Run.
    h.get_by_label("Timeouts").click();
    h.run_steps(2);
    run_to_end(&mut h);
    let run = &h.state().runs()[0].report;
    let error = run.iterations[0]
        .error()
        .map(str::to_owned)
        .unwrap_or_default();
    assert_ne!(run.iterations[0].status(), Status::Ok);
    assert!(
        error.contains("no answer within 300 ms"),
        "the iteration failed on the window's limit: {error}"
    );
    // Persisted with the rest of the settings, and settings saved before it read back whole.
    let saved = serde_json::to_string(h.state().settings()).expect("the settings serialise");
    let back: spanprof::app::Settings = serde_json::from_str(&saved).expect("they read back");
    assert_eq!(back.connection.timeouts.first_response, "300ms");
    let older: spanprof::app::Settings =
        serde_json::from_str(r#"{"connection":{"kind":"Local"}}"#).expect("an old save reads");
    assert_eq!(
        older.connection.timeouts.timeouts(),
        Ok(spanprof::client::Timeouts::DEFAULT)
    );
}

#[test]
fn repeated_runs_of_a_client_program_get_distinct_labels() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 200", 1, "");
    client_program(&mut h);
    run_to_end(&mut h);
    run_to_end(&mut h);
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 200", 1, "mine");
    run_to_end(&mut h);
    run_to_end(&mut h);
    let programs: Vec<&str> = h
        .state()
        .runs()
        .iter()
        .filter(|r| !r.report.config.command.is_empty())
        .map(|r| r.report.config.label.as_str())
        .collect();
    assert_eq!(
        programs,
        ["spanprof driver", "spanprof driver (2)", "mine", "mine (2)"]
    );
}

#[test]
fn the_local_instance_s_stream_shape_is_a_knob_in_the_window() {
    let mut h = app();
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 300", 1, "");
    assert_eq!(
        h.state().settings().connection.local.knobs.shape,
        Shape::Production
    );
    h.get_by_label("Shape: production").click();
    h.run_steps(2);
    h.get_by_label("edge").click();
    h.run_steps(2);
    assert_eq!(
        h.state().settings().connection.local.knobs.shape,
        Shape::Edge
    );
    // The run streams in that shape (its record says so) and every row still checks.
    client_program(&mut h);
    run_to_end(&mut h);
    let program = &h.state().runs()[0].report;
    assert!(
        program
            .config
            .stream
            .iter()
            .any(|(name, value)| name == "shape" && value == "edge"),
        "{:?}",
        program.config.stream
    );
    for r in &program.iterations {
        assert_eq!(r.status(), Status::Ok, "{:?}", r.error());
        assert_eq!(
            (
                r.subject.and_then(|s| s.check).map(|c| c.as_str()),
                r.answer.rows
            ),
            (Some("values"), 300)
        );
    }
    h.get_by_label("Shape: edge").click();
    h.run_steps(2);
    h.get_by_label("emulator").click();
    h.run_steps(2);
    assert_eq!(
        h.state().settings().connection.local.knobs.shape,
        Shape::Emulator
    );
}

#[test]
fn the_local_instance_s_faults_are_folded_and_say_off_in_words() {
    let mut h = app();
    h.run_steps(2);
    // First launch: the SQL editor is not below five rows of faults; the header says none is on.
    assert!(h.query_by_label("Max message").is_none(), "folded");
    let value = |h: &egui_kittest::Harness<'static, spanprof::app::SpanprofApp>, label: &str| {
        h.get_by_label(label).accesskit_node().value()
    };
    assert_eq!(value(&h, "Seed23 rows").as_deref(), Some("10,000"));
    h.get_by_label("Fault injection: none").click();
    h.run_steps(2);
    assert_eq!(value(&h, "Max message").as_deref(), Some("1 MiB"));
    assert_eq!(value(&h, "Bandwidth").as_deref(), Some("unlimited"));
    assert_eq!(value(&h, "Fail every").as_deref(), Some("never"));
    assert!(h.query_by_value("no stall").is_some());
    assert!(
        h.query_by_value("at msg 1").is_none(),
        "no stall, no message to stall at"
    );
    // Turned on, the header says which, and the stall's pause and message appear.
    {
        let knobs = &mut h.state_mut().settings_mut().connection.local.knobs;
        knobs.bandwidth_bytes_per_s = 512 << 10;
        knobs.stall_every = 4;
    }
    h.run_steps(2);
    assert!(
        h.query_by_label("Fault injection: 512 KiB/s, stalls")
            .is_some(),
        "the header names what is on"
    );
    assert_eq!(value(&h, "Bandwidth").as_deref(), Some("512 KiB/s"));
    assert!(h.query_by_value("1 query in 4").is_some());
    assert!(h.query_by_value("at msg 1").is_some());
}
