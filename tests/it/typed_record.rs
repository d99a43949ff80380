//! The files the release before the typed record wrote (commit 82f5ec2, where a record was 51
//! flat fields with its status, error code and check as strings) read back by this one: a warm
//! run, a cold and warm run with its six cold-start steps, and a run that bad SQL stopped, as
//! `spanprof profile --json/--csv` wrote them, and the history store those runs were saved in
//! (`tests/data/before-typed-record/`). Each report reads into typed records and writes back the
//! same JSON and the same CSV, byte for byte where the CSV is concerned; the store lists and
//! exports its runs with the same figures.
//!
//! Since read-write transactions, reports name a query call's RPC attempt count `rpc_attempts`
//! (`attempts` is a transaction's list) and the CSV has the transaction's parts and figures in
//! columns of their own: the files are read with that rename, and the CSV compared column by
//! column, every new column empty.

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

/// A report of the release before, its RPC attempt counts under today's name (`rpc_attempts`).
fn renamed(mut doc: Value) -> Value {
    for run in doc["runs"].as_array_mut().into_iter().flatten() {
        for it in run["iterations"].as_array_mut().into_iter().flatten() {
            if let Some(it) = it.as_object_mut()
                && let Some(count) = it.remove("attempts")
            {
                assert!(count.is_number(), "an RPC attempt count: {count}");
                it.insert("rpc_attempts".into(), count);
            }
        }
    }
    doc
}

/// The rows of a CSV, each as its columns by name.
fn csv_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("a header").clone();
    reader
        .records()
        .map(|row| {
            let row = row.expect("a row");
            headers
                .iter()
                .zip(row.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// The iterations of a JSON report, as values (a run's list of records).
fn iterations(json: &[u8]) -> Vec<Value> {
    let doc: Value = renamed(serde_json::from_slice(json).expect("JSON"));
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
            renamed(serde_json::from_slice(&bytes).expect("old JSON")),
            serde_json::from_slice(&again).expect("new JSON"),
        );
        assert_eq!(
            old["runs"], new["runs"],
            "{name}.json: the runs written back differ from those read"
        );
        let csv = Csv.export(&runs).expect("CSV written");
        let old_csv = std::fs::read_to_string(data(&format!("{name}.csv"))).expect("old CSV");
        let (old_rows, new_rows) = (
            csv_rows(&old_csv),
            csv_rows(&String::from_utf8(csv).expect("UTF-8")),
        );
        assert_eq!(old_rows.len(), new_rows.len(), "{name}: rows");
        for (i, (old, new)) in old_rows.iter().zip(&new_rows).enumerate() {
            for (column, value) in old {
                let now = if column == "attempts" {
                    "rpc_attempts"
                } else {
                    column
                };
                assert_eq!(
                    new.get(now),
                    Some(value),
                    "{name}.csv row {i}: {column} is not what the old release wrote"
                );
            }
            for (column, value) in new {
                if !old.contains_key(column) && column != "rpc_attempts" {
                    assert_eq!(
                        value, "",
                        "{name}.csv row {i}: a new column {column} is empty"
                    );
                }
            }
        }
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
