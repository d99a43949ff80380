//! `spanprof plan` read any JSON file whole as a generic value before
//! looking at what it was, and 63 MiB of small objects took it to 5.1 GB and an abort. Now the
//! file's kind is read without keeping anything, and a plan in Spanner's JSON (or a report's
//! plan nodes) is read into values within a budget (`wire::bounded_json`).

use std::process::{Command, Stdio};

use super::row_check::peak_of;

/// The file that did it: 63 MiB of `{"a":1}` objects, as a plan file (`shape` puts them in a top
/// array, or under a plan node's metadata).
fn small_objects(shape: &str) -> tempfile::NamedTempFile {
    let objects = r#"{"a":1},"#.repeat((63 << 20) / 8);
    let text = match shape {
        "array" => format!("[{objects}{{}}]"),
        _ => format!(
            r#"{{"planNodes": [{{"index": 0, "kind": "RELATIONAL", "displayName": "Scan", "metadata": {{"x": [{objects}{{}}]}}}}]}}"#
        ),
    };
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), text).expect("written");
    file
}

/// Measured (debug build): peak 265 MiB for either shape (the file itself is 63 MiB of it), where
/// the old reader took 5.1 GB; asserted under 400 MiB.
#[test]
fn sixty_three_mib_of_small_objects_are_refused_within_a_bound_of_memory() {
    const PEAK: u64 = 400 << 20;
    for shape in ["array", "metadata"] {
        let file = small_objects(shape);
        let child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
            .arg("plan")
            .arg(file.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spanprof starts");
        let (peak, output) = peak_of(child);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{shape}: {stderr}");
        assert!(
            stderr.contains("more JSON values than"),
            "{shape}: {stderr}"
        );
        assert!(peak < PEAK, "{shape}: peak {} MiB", peak >> 20);
    }
}

#[test]
fn a_plan_in_spanner_s_json_within_the_budget_is_still_read() {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    let text = r#"{"queryPlan": {"planNodes": [
        {"index": 0, "kind": "RELATIONAL", "displayName": "Distributed Union",
         "childLinks": [{"childIndex": 1}], "metadata": {"call_type": "Local"}},
        {"index": 1, "kind": "RELATIONAL", "displayName": "Table Scan",
         "metadata": {"scan_type": "TableScan", "scan_target": "Albums"}}]}}"#;
    std::fs::write(file.path(), text).expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .arg("plan")
        .arg(file.path())
        .output()
        .expect("spanprof runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("Table Scan (Albums)"), "{stdout}");
}
