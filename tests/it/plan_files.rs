//! `spanprof plan` on files that are not what they claim: a report whose plan is
//! not a tree, and a file that starts as JSON and is not, each get one line that names the cause.

use std::process::{Command, Output};

use serde_json::{Value, json};

fn spanprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .output()
        .expect("the spanprof binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A real PROFILE report from the local instance, as `profile --json` writes it.
fn profile_report(dir: &std::path::Path) -> Value {
    let path = dir.join("report.json");
    let out = spanprof(&[
        "profile",
        "--local",
        "--rows",
        "100",
        "--sql",
        "SELECT * FROM Seed23 WHERE Id < 5",
        "--iterations",
        "1",
        "--warmup",
        "0",
        "--query-mode",
        "profile",
        "--no-history",
        "--json",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&std::fs::read(&path).expect("the report")).expect("valid JSON")
}

#[test]
fn a_report_whose_plan_is_not_a_tree_says_so() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut report = profile_report(dir.path());
    let nodes = report
        .pointer_mut("/runs/0/plans/plans/0/nodes")
        .and_then(Value::as_array_mut)
        .expect("the report keeps its plan's nodes");
    assert!(nodes.len() >= 2, "{nodes:?}");
    // The last node (a leaf) names the root as its child: a circle.
    let last = nodes.last_mut().expect("a node");
    last["child_links"] = json!([[0, "", ""]]);
    let path = dir.path().join("cyclic.json");
    std::fs::write(&path, serde_json::to_vec(&report).expect("serializes")).expect("writes");

    // The intact report prints its plan; the cyclic one fails with the cause named.
    let good = dir.path().join("report.json");
    let out = spanprof(&["plan", good.to_str().expect("a UTF-8 path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = spanprof(&["plan", path.to_str().expect("a UTF-8 path")]);
    assert!(!out.status.success(), "a cyclic plan was printed");
    let text = stderr(&out);
    assert!(text.contains("not a tree"), "{text}");
    assert!(!text.contains("holds no query plan"), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
}

#[test]
fn a_file_that_starts_as_json_and_is_not_says_so_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("broken.json");
    std::fs::write(&path, br#"{"spanprof_report": 1, "runs": [ {"config": "#).expect("writes");
    let out = spanprof(&["plan", path.to_str().expect("a UTF-8 path")]);
    assert!(!out.status.success(), "a broken file was accepted");
    let text = stderr(&out);
    assert!(text.contains("not valid JSON"), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    // serde's own words (with their line and column) appear once, not twice.
    assert_eq!(text.matches("EOF while parsing").count(), 1, "{text}");
}
