//! Two runs of one label named apart on the command line. Two `profile --json` runs with the
//! default label, then `compare a.json b.json`, said "run is 6.48× ± 1.71 faster than run" under a
//! table headed "run mean | run mean"; now each is called by the time it started (in UTC), and
//! where that is alike too, by the file it came from, as the window names them.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn spanprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("spanprof runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A short profile of `SELECT 1` with the default label, its report written to `json`, with
/// `extra` arguments.
fn profile(json: &Path, extra: &[&str]) -> Output {
    let json = json.to_string_lossy();
    let mut args = vec![
        "profile",
        "--local",
        "--no-history",
        "--sql",
        "SELECT 1",
        "--iterations",
        "3",
        "--warmup",
        "0",
        "--json",
        &json,
    ];
    args.extend_from_slice(extra);
    spanprof(&args)
}

/// The two run names of the table's header (`| part | A mean | B mean | change |`).
fn header_names(table: &str) -> (String, String) {
    let header = table
        .lines()
        .find(|l| l.starts_with("| part | "))
        .unwrap_or_else(|| panic!("a table header in {table}"));
    let cells: Vec<&str> = header.split(" | ").collect();
    let name = |cell: &str| {
        cell.strip_suffix(" mean")
            .unwrap_or_else(|| panic!("a mean column: {header}"))
            .to_owned()
    };
    (name(cells[1]), name(cells[2]))
}

/// Asserts `verdict` names `a` and `b`, two different names, and not the bare default label.
fn assert_named_apart(verdict: &str, a: &str, b: &str) {
    assert_ne!(a, b, "{verdict}");
    assert!(
        verdict.contains(a) && verdict.contains(b),
        "{a:?} and {b:?} in {verdict}"
    );
    assert!(
        !verdict.starts_with("run is ") && !verdict.contains("between run and run"),
        "{verdict}"
    );
}

/// `compare a b` as text: the names of the header, checked against the verdict's.
fn compare_text(a: &Path, b: &Path) -> (String, String) {
    let table = ok(&spanprof(&[
        "compare",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
    ]));
    let (a_name, b_name) = header_names(&table);
    let verdict = table
        .lines()
        .find(|l| l.contains(" than ") || l.starts_with("no significant difference"))
        .unwrap_or_else(|| panic!("a verdict in {table}"));
    assert_named_apart(verdict, &a_name, &b_name);
    (a_name, b_name)
}

#[test]
fn compare_names_two_runs_of_the_default_label_apart_in_its_verdict_and_header() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    ok(&profile(&a, &[]));
    ok(&profile(&b, &[]));
    let (a_name, b_name) = compare_text(&a, &b);
    assert!(
        a_name.starts_with("run · ") && b_name.starts_with("run · "),
        "{a_name}, {b_name}"
    );
    let json: Value = serde_json::from_str(&ok(&spanprof(&[
        "compare",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
        "--json",
    ])))
    .expect("compare --json is JSON");
    let c = &json["comparisons"][0];
    let (a_json, b_json) = (
        c["a"].as_str().expect("a's name"),
        c["b"].as_str().expect("b's name"),
    );
    assert_eq!((a_json, b_json), (a_name.as_str(), b_name.as_str()));
    assert_named_apart(c["verdict"].as_str().expect("a verdict"), a_json, b_json);
}

#[test]
fn compare_names_runs_alike_in_label_and_time_by_their_files() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (a, copy) = (dir.path().join("a.json"), dir.path().join("copy.json"));
    ok(&profile(&a, &[]));
    std::fs::copy(&a, &copy).expect("copied");
    let (a_name, b_name) = compare_text(&a, &copy);
    assert!(a_name.ends_with(" (a.json)"), "{a_name}");
    assert!(b_name.ends_with(" (copy.json)"), "{b_name}");
}

#[test]
fn a_baseline_gate_names_the_baseline_and_this_run_apart() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let base = dir.path().join("base.json");
    ok(&profile(&base, &[]));
    let base_arg = base.to_string_lossy().into_owned();
    let out = profile(
        &dir.path().join("new.json"),
        &["--baseline", &base_arg, "--fail-if-slower", "1000%"],
    );
    let text = ok(&out);
    let gate = text
        .lines()
        .find_map(|l| l.strip_prefix("gate: "))
        .unwrap_or_else(|| panic!("a gate line in {text}"));
    assert!(gate.matches("run · ").count() >= 2, "{gate}");
    assert!(
        !gate.starts_with("run is ") && !gate.contains("between run and run"),
        "{gate}"
    );
}

#[test]
fn the_html_page_names_two_runs_of_one_label_apart() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    ok(&profile(&a, &[]));
    ok(&profile(&b, &[]));
    let page = dir.path().join("page.html");
    ok(&spanprof(&[
        "compare",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
        "--html",
        &page.to_string_lossy(),
    ]));
    let html = std::fs::read_to_string(&page).expect("the page");
    let heading = html
        .split("<h3>")
        .nth(1)
        .and_then(|h| h.split("</h3>").next())
        .unwrap_or_else(|| panic!("a comparison heading"));
    assert!(heading.matches("run · ").count() == 2, "{heading}");
}
