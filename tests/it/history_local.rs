//! The local store under rows it did not write itself (a file edited, copied from a
//! colleague, or damaged): one bad row failed the whole listing, a row numbered 2^63-1 failed every
//! later save, a stored escape sequence reached the terminal, a run dated 9999-12-31 or another
//! query's run was the baseline, one bad page lost the whole store, a 400 MB stored report took
//! 1.67 GB to show, a read-only store could not be listed, and a misspelt `spanner://` made a file.

use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::{Connection, params};
use spanprof::history::{HistoryStore, Retention, SqliteStore, StoredRun};
use spanprof::report::{IterationRecord, RunConfig, RunReport};

use crate::history::{run, spanprof, text};

/// A run of `sql` on `local`, started on March `day` 2026, `n` iterations of about `total` ms.
fn report(sql: &str, day: u32, n: usize, total: f64) -> RunReport {
    let started_at = format!("2026-03-{day:02}T10:00:00Z");
    RunReport {
        config: RunConfig {
            label: format!("day {day}"),
            target: "local".into(),
            sql: sql.into(),
            ..RunConfig::default()
        },
        iterations: (0..n)
            .map(|i| IterationRecord {
                total_ms: total + i as f64 * 1e-3,
                ..IterationRecord::new("day", i as u32, false, started_at.as_str())
            })
            .collect(),
        started_at,
        plans: Default::default(),
        stopped: None,
    }
}

/// A store at `path` holding `reports`; their ids.
fn store_with(path: &Path, reports: &[RunReport]) -> Vec<String> {
    let mut store = SqliteStore::open(path, Retention::default()).expect("opens");
    let runs: Vec<StoredRun> = reports
        .iter()
        .map(|r| StoredRun::new(r, "db").expect("serialises"))
        .collect();
    store.save(&runs).expect("saves")
}

/// Writes `run` into the store's table as any program could, with `id` when given.
fn insert(path: &Path, id: Option<i64>, run: &StoredRun) {
    let c = Connection::open(path).expect("opens the file");
    let s = &run.summary;
    c.execute(
        "INSERT INTO runs (id, started_at, started_ms, saved_ms, label, target, fingerprint, sql,
         iterations, median_total_ms, p90_total_ms, report)
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            id,
            s.started_at,
            run.started_ms,
            s.label,
            s.target,
            s.fingerprint,
            s.sql,
            s.iterations,
            s.median_total_ms,
            s.p90_total_ms,
            run.report_json
        ],
    )
    .expect("inserted");
}

fn history_args(path: &Path) -> Vec<String> {
    vec!["--history".into(), path.to_string_lossy().into_owned()]
}

/// Against the tree before the fix (f94b0a1) `spanprof history` failed on the first bad row
/// (exit 1, no listing) and printed the fingerprint column as stored. Now the two bad rows are
/// skipped and named on stderr, and not one byte of an escape sequence reaches stdout.
#[test]
fn one_bad_row_is_skipped_and_named_and_every_column_is_escaped() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("h.sqlite");
    store_with(
        &path,
        &[report("SELECT 1", 1, 3, 5.0), report("SELECT 2", 2, 3, 5.0)],
    );
    let c = Connection::open(&path).expect("opens");
    c.execute_batch(
        "INSERT INTO runs (started_at, started_ms, saved_ms, label, target, fingerprint, sql,
           iterations, median_total_ms, p90_total_ms, report)
         SELECT started_at, started_ms, saved_ms, 'negative', target, fingerprint, sql, -1,
           median_total_ms, p90_total_ms, report FROM runs WHERE id = 1;
         INSERT INTO runs (started_at, started_ms, saved_ms, label, target, fingerprint, sql,
           iterations, median_total_ms, p90_total_ms, report)
         SELECT started_at, started_ms, saved_ms, 'text median', target, fingerprint, sql,
           iterations, 'fast', p90_total_ms, report FROM runs WHERE id = 1;
         UPDATE runs SET fingerprint = char(27) || ']0;owned' || char(7) || char(27) || '[2J'
           WHERE id = 2;",
    )
    .expect("bad rows written");
    drop(c);
    let mut args = vec!["history".to_owned()];
    args.extend(history_args(&path));
    let out = run(
        dir.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    eprintln!("{stdout}\n{stderr}");
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout.lines().count(),
        3,
        "a header and the two good runs: {stdout}"
    );
    assert!(
        !out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07),
        "{stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}"), "the escape shown as text");
    assert!(
        stderr.contains("skipped row 3 ") && stderr.contains("iterations is -1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("skipped row 4 ") && stderr.contains("median_total_ms"),
        "{stderr}"
    );
}

/// Against the tree before the fix (f94b0a1) every save after a row numbered 2^63-1 failed with
/// "database or disk is full" (AUTOINCREMENT had no id left). Now a save takes a free id below it.
#[test]
fn a_row_numbered_two_to_the_63_minus_1_does_not_stop_saves() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("h.sqlite");
    store_with(&path, &[report("SELECT 1", 1, 3, 5.0)]);
    insert(
        &path,
        Some(i64::MAX),
        &StoredRun::new(&report("SELECT 1", 2, 3, 5.0), "db").expect("ok"),
    );
    let ids = store_with(
        &path,
        &[report("SELECT 1", 3, 3, 5.0), report("SELECT 1", 4, 3, 5.0)],
    );
    assert_eq!(ids, ["2", "3"], "the lowest free ids");
    let again = store_with(&path, &[report("SELECT 1", 5, 3, 5.0)]);
    assert_eq!(again, ["4"]);
}

/// Against the tree before the fix (f94b0a1) `history:last` took the run dated 9999-12-31, and then
/// a newer run of another query stored under the same fingerprint: "10000.00x slower", exit 4.
/// Now both are passed over, named, and the gate compares with the earlier run of this query.
#[test]
fn the_baseline_is_an_earlier_run_of_the_same_query_never_one_from_the_future() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("h.sqlite");
    let store_arg = path.to_string_lossy().into_owned();
    let csv = dir.path().join("x.csv").to_string_lossy().into_owned();
    let profile = |extra: &[&str]| {
        let mut args = vec![
            "profile",
            "--local",
            "--rows",
            "2000",
            "--sql",
            "SELECT * FROM Seed23 LIMIT 500",
            "--iterations",
            "5",
            "--warmup",
            "1",
            "--csv",
            &csv,
            "--history",
            &store_arg,
        ];
        args.extend_from_slice(extra);
        run(dir.path(), &args)
    };
    let first = profile(&[]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let base = store.get("1").expect("reads").expect("the first run");
    let fingerprint = store.list(&Default::default()).expect("lists")[0]
        .fingerprint
        .clone();
    drop(store);
    let fast = |mut r: RunReport| {
        r.iterations.iter_mut().for_each(|it| it.total_ms *= 1e-4);
        r
    };
    let mut future = fast(base.clone());
    future.started_at = "9999-12-31T00:00:00Z".into();
    let mut other = fast(base.clone());
    other.config.sql = "SELECT * FROM Seed23 LIMIT 1".into();
    for hostile in [future, other] {
        let mut stored = StoredRun::new(&hostile, "db").expect("serialises");
        stored.summary.fingerprint = fingerprint.clone();
        if stored.started_ms < 253_402_214_400_000 {
            // Newer than the first run, older than the gated one.
            stored.started_ms += 1000;
        }
        insert(&path, None, &stored);
    }
    let gated = profile(&["--baseline", "history:last", "--fail-if-slower", "1000%"]);
    let (stdout, stderr) = (text(&gated.stdout), text(&gated.stderr));
    eprintln!("{stderr}");
    assert_eq!(gated.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("not before this run"),
        "the future run named: {stderr}"
    );
    assert!(
        stderr.contains("another query"),
        "the other query's run named: {stderr}"
    );
}

/// Scaled from 400 MB: a stored report of 70 MiB. Against the tree before the fix (f94b0a1) `history
/// show` read it whole (peak RSS ... MB) before failing to parse it. Now its size is read first and
/// past the 64 MiB a report file may be it is refused unread.
#[test]
fn a_stored_report_past_64_mib_is_refused_unread() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("h.sqlite");
    store_with(&path, &[report("SELECT 1", 1, 3, 5.0)]);
    let c = Connection::open(&path).expect("opens");
    c.execute(
        "UPDATE runs SET report = printf('%.*c', 73400320, 'x') WHERE id = 1",
        [],
    )
    .expect("a 70 MiB report");
    drop(c);
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak %M kB"])
        .arg(env!("CARGO_BIN_EXE_spanprof"))
        .args(["history", "show", "1", "--history"])
        .arg(&path)
        .output()
        .expect("runs");
    let stderr = text(&out.stderr);
    eprintln!("{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("70 MiB, more than the 64 MiB"), "{stderr}");
    let peak_kb: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak ")?.strip_suffix(" kB")?.parse().ok())
        .expect("time's line");
    assert!(peak_kb < 60_000, "peak {peak_kb} kB: the report was read");
}

/// `spanprof history` as a user who can read the store and not write it (root can write anything,
/// so as root it runs as `nobody`). Against the tree before the fix (f94b0a1): "attempt to write a
/// readonly database", exit 1. Now it is opened for reading and listed.
#[test]
fn a_read_only_store_can_be_listed() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("h.sqlite");
    store_with(&path, &[report("SELECT 1", 1, 3, 5.0)]);
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| text(&o.stdout))
        .unwrap_or_default();
    let mut command = if root.trim() == "0" {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("755");
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c.arg(env!("CARGO_BIN_EXE_spanprof"));
        c
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("444");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).expect("555");
        Command::new(env!("CARGO_BIN_EXE_spanprof"))
    };
    let out = command
        .args(["history", "--history"])
        .arg(&path)
        .env("HOME", dir.path())
        .output()
        .expect("runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("day 1"), "{stdout}");
}

/// Against the tree before the fix (f94b0a1) `--history spaner://...` saved into a new file under
/// `./spaner:/projects/...`. Now a scheme it does not know is an error, and nothing is made.
#[test]
fn a_misspelt_scheme_is_an_error_not_a_file() {
    let dir = tempfile::tempdir().expect("a directory");
    let typo = "spaner://projects/p/instances/i/databases/d";
    let listed = spanprof(dir.path(), &["history", "--history", typo])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(listed.status.code(), Some(1));
    assert!(text(&listed.stderr).contains("spaner:// is no store spanprof knows"));
    let profiled = spanprof(
        dir.path(),
        &[
            "profile",
            "--local",
            "--rows",
            "10",
            "--sql",
            "SELECT 1",
            "--iterations",
            "1",
            "--history",
            typo,
        ],
    )
    .current_dir(dir.path())
    .output()
    .expect("runs");
    assert!(
        profiled.status.success(),
        "the run itself goes on: {}",
        text(&profiled.stderr)
    );
    assert!(text(&profiled.stderr).contains("history was not saved"));
    assert!(
        !dir.path().join("spaner:").exists(),
        "no file made under ./spaner:"
    );
}

/// Overwrites page `page` (from 1) of the SQLite file at `path` with garbage.
fn damage_page(path: &Path, page: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("opens");
    file.seek(SeekFrom::Start((page - 1) * 4096))
        .expect("seeks");
    file.write_all(&[0xA5; 4096]).expect("writes");
}

/// Against the tree before the fix (f94b0a1) the next save after one damaged page moved the whole
/// store aside and started an empty one (1 run listed of 201). Now the readable runs are copied into
/// the fresh store and the damaged file is kept aside, named.
#[test]
fn one_bad_page_loses_what_it_holds_not_the_whole_store() {
    let dir = tempfile::tempdir().expect("a directory");
    let path: PathBuf = dir.path().join("h.sqlite");
    // Small reports, so that the table's own pages, not overflow pages, make most of the file.
    let reports: Vec<RunReport> = (0..200)
        .map(|i| report("SELECT 1", 1 + i % 28, 1, 5.0))
        .collect();
    let saved_first = store_with(&path, &reports);
    eprintln!(
        "first saved {} runs, the last {:?}",
        saved_first.len(),
        saved_first.last()
    );
    let pages = std::fs::metadata(&path).expect("a file").len() / 4096;
    damage_page(&path, pages / 2);
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let saved = store.save(&[StoredRun::new(&report("SELECT 1", 1, 3, 5.0), "db").expect("ok")]);
    let notices = store.take_notices().join("\n");
    eprintln!(
        "{pages} pages, page {} damaged: {saved:?}\n{notices}",
        pages / 2
    );
    assert!(saved.is_ok());
    let listed = store.list(&Default::default()).expect("lists").len();
    eprintln!("{listed} runs listed after the save");
    assert!(listed > 190, "{listed} runs of 201 kept");
    assert!(notices.contains("readable runs were copied"), "{notices}");
}
