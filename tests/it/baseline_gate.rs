//! A gate never costs the run. When `--baseline` cannot give a baseline (an empty
//! history, the README's own CI recipe on its first run; a stored report that does not parse; a
//! newer schema; a row with iterations -1; a locked store; a report file that is not there),
//! `profile` exited 1 before printing the summary or writing `--json`/`--csv`, and with the newer
//! schema or the lock the run was not saved either. Now the summary is printed, the exports
//! written and the run handed to the history first, and the exit code is 5: no baseline.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::history::{run, spanprof, store_file, text};

/// The exit code of a gate without a baseline.
const NO_BASELINE: i32 = 5;

/// A short profile of `SELECT 1` on the local instance gated by `baseline`, its JSON and CSV
/// written in `dir`.
fn gated(dir: &Path, baseline: &str) -> Vec<String> {
    [
        "profile",
        "--local",
        "--rows",
        "100",
        "--sql",
        "SELECT 1",
        "--label",
        "one",
        "--iterations",
        "3",
        "--warmup",
        "0",
        "--json",
        &dir.join("new.json").to_string_lossy(),
        "--csv",
        &dir.join("new.csv").to_string_lossy(),
        "--baseline",
        baseline,
        "--fail-if-slower",
        "10%",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Asserts `out` is the no-baseline outcome with the run kept: exit 5, the summary on stdout,
/// the reason named (containing `why`), both exports written.
fn assert_run_kept_without_a_baseline(out: &Output, dir: &Path, why: &str) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(NO_BASELINE),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("| part | mean | median |"),
        "the summary: {stdout}"
    );
    assert!(stdout.contains("gate: no baseline: "), "{stdout}");
    assert!(stderr.contains("no baseline to gate against"), "{stderr}");
    assert!(stderr.contains(why), "{why:?} in {stderr}");
    let json = std::fs::read(dir.join("new.json")).expect("--json was written");
    let runs = ::spanprof::export::read_json(&json).expect("a report");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].iterations.len(), 3);
    let csv = std::fs::read_to_string(dir.join("new.csv")).expect("--csv was written");
    assert_eq!(
        csv.lines().count(),
        4,
        "a header and three iterations: {csv}"
    );
}

/// The runs in the store, counted straight from its file.
fn stored_runs(data: &Path) -> i64 {
    let db = rusqlite::Connection::open(store_file(data)).expect("the store opens");
    db.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .expect("counted")
}

/// The store with one run of the gated query in it, changed by `sql`.
fn one_run_then(dir: &Path, sql: &str) -> PathBuf {
    let data = dir.join("data");
    let mut first = gated(dir, "unused");
    first.truncate(first.len() - 4);
    let out = run(&data, &strs(&first));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let db = rusqlite::Connection::open(store_file(&data)).expect("the store opens");
    db.execute_batch(sql).expect("the store is changed");
    data
}

/// The case that matters most: the README's CI recipe on its first run, against an empty history.
#[test]
fn history_last_on_an_empty_store_prints_exports_saves_and_exits_no_baseline() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    let out = run(&data, &strs(&gated(dir.path(), "history:last")));
    assert_run_kept_without_a_baseline(&out, dir.path(), "holds no earlier run of \"one\"");
    assert_eq!(stored_runs(&data), 1, "the run was saved");
    // The next run has its baseline: the gate decides (exit 0 or 4, never 5).
    let out = run(&data, &strs(&gated(dir.path(), "history:last")));
    assert!(
        matches!(out.status.code(), Some(0 | 4)),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // A verdict of the two, each called by when it started ("one · 10:00:05 is 1.10× ± ...
    // than one · 10:00:01", or "no significant difference between one · ... and one · ..."),
    // then the gate's decision.
    let stdout = text(&out.stdout);
    assert!(
        (stdout.contains("gate: one · ")
            || stdout.contains("gate: no significant difference between one · "))
            && stdout.contains("the gate "),
        "{stdout}"
    );
    assert_eq!(stored_runs(&data), 2);
}

#[test]
fn a_stored_report_that_does_not_parse_gives_no_baseline_and_keeps_the_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = one_run_then(
        dir.path(),
        "UPDATE runs SET report = '{\"not\": \"a report\"'",
    );
    let out = run(&data, &strs(&gated(dir.path(), "history:last")));
    assert_run_kept_without_a_baseline(&out, dir.path(), "does not read back");
    assert_eq!(stored_runs(&data), 2, "the run was saved");
}

#[test]
fn a_row_with_negative_iterations_gives_no_baseline_and_keeps_the_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = one_run_then(dir.path(), "UPDATE runs SET iterations = -1");
    let out = run(&data, &strs(&gated(dir.path(), "history:last")));
    // The bad row is skipped and named, not fatal: no earlier run is left to gate against.
    assert_run_kept_without_a_baseline(&out, dir.path(), "holds no earlier run");
    assert!(
        text(&out.stderr).contains("skipped row 1")
            && text(&out.stderr).contains("iterations is -1"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(stored_runs(&data), 2, "the run was saved");
}

/// A store of a newer spanprof cannot take this run (writing it could break the newer schema):
/// the run is printed and exported, the history says it was not saved, the exit code is 5.
#[test]
fn a_newer_schema_gives_no_baseline_and_keeps_the_run_s_exports() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = one_run_then(dir.path(), "PRAGMA user_version = 99");
    let out = run(&data, &strs(&gated(dir.path(), "history:last")));
    assert_run_kept_without_a_baseline(&out, dir.path(), "schema version 99");
    assert!(
        text(&out.stderr).contains("history was not saved"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        stored_runs(&data),
        1,
        "nothing written into the newer store"
    );
}

/// A history locked by another process for longer than the store waits: the baseline is given
/// up after the wait, and the run is saved once the lock goes (here, when the gate has said so).
#[test]
fn a_locked_store_gives_no_baseline_after_its_wait_and_the_run_is_saved() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = one_run_then(dir.path(), "SELECT 1");
    let lock = rusqlite::Connection::open(store_file(&data)).expect("the store opens");
    lock.execute_batch(
        "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE runs SET label = label",
    )
    .expect("the lock is taken");
    let started = Instant::now();
    let mut child = spanprof(&data, &strs(&gated(dir.path(), "history:last")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spanprof starts");
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        std::io::Read::read_to_end(&mut { stdout }, &mut all).expect("stdout read");
        all
    });
    let mut stderr = String::new();
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut lock = Some(lock);
    for line in lines.by_ref() {
        let line = line.expect("a line");
        stderr.push_str(&line);
        stderr.push('\n');
        if line.contains("no baseline to gate against") {
            // Let go (closed, as an exclusive locking mode holds until then): the save waiting
            // behind the lock lands.
            drop(lock.take());
        }
    }
    drop(lock);
    let status = child.wait().expect("spanprof ends");
    let out = Output {
        status,
        stdout: reader.join().expect("the reader"),
        stderr: stderr.into_bytes(),
    };
    eprintln!("the gated run ended after {:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(120));
    assert_run_kept_without_a_baseline(&out, dir.path(), "could not be read");
    assert_eq!(
        stored_runs(&data),
        2,
        "the run was saved once the lock went"
    );
}

/// A baseline report that is not there (the first run of a recipe that keeps one in the
/// repository) was an error before the run; now the run happens and says there was no baseline.
#[test]
fn a_missing_baseline_file_gives_no_baseline_and_keeps_the_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    let missing = dir.path().join("ci").join("baseline.json");
    let out = run(&data, &strs(&gated(dir.path(), &missing.to_string_lossy())));
    assert_run_kept_without_a_baseline(&out, dir.path(), "cannot read the baseline report");
    assert_eq!(stored_runs(&data), 1, "the run was saved");
}
