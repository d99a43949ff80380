//! The files the release before the typed record wrote (commit 82f5ec2, where a record was 51
//! flat fields with its status, error code and check as strings) read back by this one: a warm
//! run, a cold and warm run with its six cold-start steps, and a run that bad SQL stopped, as
//! `spanprof profile --json/--csv` wrote them, and the history store those runs were saved in
//! (`tests/data/before-typed-record/`). Each report reads into typed records and writes back the
//! same JSON and the same CSV, byte for byte where the CSV is concerned; the store lists and
//! exports its runs with the same figures.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use spanprof::export::{Csv, Exporter, Json, read_json};
use spanprof::part::{ColdStep, Part};
use spanprof::report::{Code, Outcome, RunReport};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/before-typed-record")
        .join(name)
}

fn read(name: &str) -> (Vec<u8>, Vec<RunReport>) {
    let bytes = std::fs::read(data(name)).expect("the fixture");
    let runs = read_json(&bytes).unwrap_or_else(|e| panic!("{name} reads back: {e}"));
    (bytes, runs)
}

/// The iterations of a JSON report, as values (a run's list of records).
fn iterations(json: &[u8]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(json).expect("JSON");
    doc["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["iterations"].clone())
        .collect()
}

#[test]
fn each_report_reads_into_typed_records_and_writes_back_the_same_json_and_csv() {
    for name in ["warm", "cold", "failed"] {
        let (bytes, runs) = read(&format!("{name}.json"));
        let again = Json.export(&runs).expect("JSON written");
        let (old, new): (Value, Value) = (
            serde_json::from_slice(&bytes).expect("old JSON"),
            serde_json::from_slice(&again).expect("new JSON"),
        );
        assert_eq!(
            old["runs"], new["runs"],
            "{name}.json: the runs written back differ from those read"
        );
        let csv = Csv.export(&runs).expect("CSV written");
        let old_csv = std::fs::read_to_string(data(&format!("{name}.csv"))).expect("old CSV");
        assert_eq!(
            String::from_utf8(csv).expect("UTF-8"),
            old_csv,
            "{name}: the CSV of the report read back is not the CSV the old release wrote"
        );
    }
}

#[test]
fn a_stopped_run_s_error_is_typed_with_its_code_and_a_cold_run_s_steps_with_their_parts() {
    let (_, failed) = read("failed.json");
    let first = &failed[0].iterations[0];
    let Outcome::Failed(failure) = &first.outcome else {
        panic!("the bad SQL's iteration failed: {:?}", first.outcome);
    };
    assert_eq!(failure.code, Some(Code::InvalidArgument));
    assert!(
        failure.message.contains("Syntax error"),
        "{}",
        failure.message
    );
    assert!(first.failed_for_good(), "no retry fixes bad SQL");
    assert!(failed[0].stopped.is_some(), "the run says why it stopped");

    let (_, runs) = read("cold.json");
    let cold: Vec<_> = runs
        .iter()
        .flat_map(|r| r.timed())
        .filter(|r| r.cold.is_some())
        .collect();
    assert!(
        !cold.is_empty(),
        "the cold variant's iterations keep their steps"
    );
    for record in cold {
        let steps = record.cold.expect("steps");
        assert!(steps.ms(ColdStep::Session) > 0.0, "{steps:?}");
        let a = record.accounting();
        for (step, ms) in steps.iter() {
            let part = a.parts.get(Part::Cold(step)).expect("each step is a part");
            assert!(
                (part - ms).abs() <= 0.001,
                "{step:?}: part {part} against step {ms}"
            );
        }
        assert!((a.parts.sum_ms() - record.total_ms).abs() <= 0.001);
    }
}

#[test]
fn the_history_store_lists_and_exports_its_runs_with_the_figures_they_were_saved_with() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = dir.path().join("history.sqlite");
    std::fs::copy(data("history.sqlite"), &store).expect("a copy of the store");
    let spanprof = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
            .args(args)
            .env("SPANPROF_HISTORY", &store)
            .output()
            .expect("spanprof runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let listed: Value = serde_json::from_str(&spanprof(&["history", "--json"])).expect("JSON");
    let runs = listed["runs"].as_array().expect("runs");
    // The stopped run, the warm run, and the cold and warm run's two variants.
    assert_eq!(runs.len(), 4, "{listed}");
    let mut exported = Vec::new();
    for run in runs {
        let id = run["id"].as_str().expect("an id");
        let file = dir.path().join(format!("{id}.json"));
        spanprof(&[
            "history",
            "export",
            id,
            "-o",
            file.to_str().expect("a path"),
        ]);
        exported.extend(iterations(&std::fs::read(&file).expect("the export")));
    }
    // Every run the reports hold is in the store, record for record.
    for name in ["warm", "cold", "failed"] {
        let bytes = std::fs::read(data(&format!("{name}.json"))).expect("the fixture");
        for run in iterations(&bytes) {
            assert!(
                exported.contains(&run),
                "{name}.json: a run's records are not those the store exports"
            );
        }
    }
}
