//! Runs that last: `spanprof` processes against a fresh `XDG_DATA_HOME` save every
//! finished run without a flag; the ones of one query share a fingerprint; two at once both land;
//! one killed mid-run leaves the store readable; random bytes over the store are kept aside and a
//! fresh store started; `--baseline history:last` gates against the previous run of the same
//! query; and the team store in the real Spanner emulator.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value as Json;
use spanprof::client::error_chain;
use spanprof::emulator::Emulator;
use spanprof::export::read_json;

/// A query with a parameter whose value changes its cost and not its fingerprint.
const BY_ID: &str = "SELECT * FROM Seed23 WHERE Id < @n";

/// `spanprof` with its history in `data` (as `$XDG_DATA_HOME`) and nothing else chosen for it.
pub(crate) fn spanprof(data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env_remove("SPANPROF_HISTORY")
        .env_remove("SPANNER_EMULATOR_HOST");
    command
}

pub(crate) fn run(data: &Path, args: &[&str]) -> Output {
    spanprof(data, args).output().expect("spanprof runs")
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The arguments of a short profile of `sql` on the local instance, its CSV to `csv`.
fn profile<'a>(sql: &'a str, n: &'a str, csv: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "profile",
        "--local",
        "--rows",
        "30000",
        "--sql",
        sql,
        "--iterations",
        "5",
        "--warmup",
        "1",
        "--csv",
        csv,
    ];
    if !n.is_empty() {
        args.extend(["--param", n]);
    }
    args
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The runs `spanprof history --json` lists.
fn listed(data: &Path, extra: &[&str]) -> Vec<Json> {
    let mut args = vec!["history", "--json"];
    args.extend_from_slice(extra);
    let out = run(data, &args);
    ok(&out);
    let json: Json = serde_json::from_slice(&out.stdout).expect("history --json is JSON");
    json["runs"].as_array().expect("a runs array").clone()
}

/// The median of the timed, ok totals of a CSV export.
fn csv_median(path: &Path) -> f64 {
    let mut reader = csv::Reader::from_path(path).expect("a CSV");
    let headers = reader.headers().expect("a header").clone();
    let col = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let (total, warmup, status) = (col("total_ms"), col("warmup"), col("status"));
    let mut totals: Vec<f64> = reader
        .records()
        .map(|r| r.expect("a record"))
        .filter(|r| &r[warmup] == "false" && &r[status] == "ok")
        .map(|r| r[total].parse().expect("a number"))
        .collect();
    totals.sort_by(f64::total_cmp);
    let n = totals.len();
    assert!(n > 0, "no timed iteration in {}", path.display());
    if n % 2 == 1 {
        totals[n / 2]
    } else {
        (totals[n / 2 - 1] + totals[n / 2]) / 2.0
    }
}

pub(crate) fn store_file(data: &Path) -> PathBuf {
    data.join("spanprof").join("history.sqlite")
}

#[test]
fn five_finished_runs_are_listed_and_a_killed_one_is_not() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    let csv = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (c1, c2, c3, c4, c5) = (
        csv("1.csv"),
        csv("2.csv"),
        csv("3.csv"),
        csv("4.csv"),
        csv("5.csv"),
    );
    ok(&run(&data, &profile(BY_ID, "n:INT64=200", &c1)));
    // The same query written otherwise: its keywords' case and spacing do not count.
    let same = "select *\n  from Seed23   where Id < @n";
    ok(&run(&data, &profile(same, "n:INT64=200", &c2)));
    ok(&run(
        &data,
        &profile("SELECT Id FROM Seed23 LIMIT 100", "", &c3),
    ));
    // Two at once.
    let a = spanprof(&data, &profile(BY_ID, "n:INT64=300", &c4))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    let b = spanprof(&data, &profile(BY_ID, "n:INT64=400", &c5))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    for child in [a, b] {
        let status = child.wait_with_output().expect("waits").status;
        assert!(status.success(), "{status:?}");
    }
    // One killed mid-run (SIGKILL): a long profile, killed once it has started iterating.
    let mut long = spanprof(
        &data,
        &[
            "profile",
            "--local",
            "--rows",
            "30000",
            "--sql",
            "SELECT * FROM Seed23",
            "--iterations",
            "10000",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawns");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        long.try_wait().expect("polls").is_none(),
        "the long run ended by itself"
    );
    long.kill().expect("SIGKILL");
    long.wait().expect("waits");

    let runs = listed(&data, &[]);
    assert_eq!(runs.len(), 5, "{runs:#?}");
    for key in [
        "id",
        "started_at",
        "label",
        "target",
        "fingerprint",
        "iterations",
        "median_total_ms",
        "p90_total_ms",
    ] {
        assert!(
            runs.iter().all(|r| r.get(key).is_some()),
            "{key} missing: {runs:#?}"
        );
    }
    // Newest first: runs[4] is the first, runs[3] the second, runs[2] the other query.
    let fp = |r: &Json| r["fingerprint"].as_str().expect("a fingerprint").to_owned();
    assert_eq!(fp(&runs[4]), fp(&runs[3]));
    assert_ne!(fp(&runs[4]), fp(&runs[2]));
    let median = |r: &Json| r["median_total_ms"].as_f64().expect("a median");
    for (run, csv) in [(&runs[4], &c1), (&runs[3], &c2), (&runs[2], &c3)] {
        let want = csv_median(Path::new(csv));
        assert!(
            (median(run) - want).abs() <= 0.001,
            "{} against {want}",
            median(run)
        );
        assert_eq!(run["iterations"], 5);
    }
    // The two at once, found by their fingerprint with the first two.
    let same_query = listed(&data, &["--fingerprint", &fp(&runs[4])]);
    assert_eq!(same_query.len(), 4);
    assert_eq!(listed(&data, &["--sql", "limit 100"]).len(), 1);

    // `show` and `export` give the run back whole.
    let id = runs[2]["id"].as_str().expect("an id").to_owned();
    let shown = run(&data, &["history", "show", &id]);
    ok(&shown);
    assert!(
        text(&shown.stdout).contains("iterations 5, warm-up 1"),
        "{}",
        text(&shown.stdout)
    );
    let shown = run(&data, &["history", "show", &id, "--json"]);
    ok(&shown);
    let back = read_json(&shown.stdout).expect("show --json is a report");
    assert_eq!(back[0].config.sql, "SELECT Id FROM Seed23 LIMIT 100");
    let exported = dir.path().join("run.json");
    ok(&run(
        &data,
        &["history", "export", &id, "-o", &exported.to_string_lossy()],
    ));
    let back = read_json(&std::fs::read(&exported).expect("written")).expect("a report");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].config.sql, "SELECT Id FROM Seed23 LIMIT 100");
    let missing = run(&data, &["history", "show", "424242"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("no run 424242"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn random_bytes_over_the_store_are_kept_aside_and_the_baseline_gate_reads_the_past() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    let csv = dir.path().join("x.csv").to_string_lossy().into_owned();
    ok(&run(&data, &profile(BY_ID, "n:INT64=10", &csv)));
    let store = store_file(&data);
    let garbage: Vec<u8> = (0..65_536u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8)
        .collect();
    std::fs::write(&store, &garbage).expect("overwrites the store");
    for extra in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{extra}", store.display()));
    }
    let out = run(&data, &profile(BY_ID, "n:INT64=10", &csv));
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("kept as"), "{stderr}");
    let kept: Vec<PathBuf> = std::fs::read_dir(store.parent().expect("a directory"))
        .expect("lists")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.to_string_lossy().contains("history.sqlite.corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).expect("kept"), garbage);
    assert_eq!(listed(&data, &[]).len(), 1);

    // A much costlier value of the same query, gated against the last run of it: regressed.
    let mut slow = profile(BY_ID, "n:INT64=30000", &csv);
    slow.extend(["--baseline", "history:last", "--fail-if-slower", "50%"]);
    let out = run(&data, &slow);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("gate:"), "{}", text(&out.stdout));
    // Another, fast query in between is not the same query's past...
    ok(&run(&data, &profile("SELECT 1", "", &csv)));
    // ...so the same slow run gates against the previous slow one, and passes. Its bound is wide: two
    // runs of one query on a busy machine can differ by more than half, while against the 10-row
    // run (the wrong baseline) it is tens of times slower and fails this bound too.
    let mut again = profile(BY_ID, "n:INT64=30000", &csv);
    again.extend(["--baseline", "history:last", "--fail-if-slower", "400%"]);
    let out = run(&data, &again);
    ok(&out);
    assert!(text(&out.stdout).contains("gate:"), "{}", text(&out.stdout));
    // With no earlier run of a query, the gate says so, with its own exit code.
    let mut first = profile("SELECT 2", "", &csv);
    first.extend(["--baseline", "history:best", "--fail-if-slower", "50%"]);
    let out = run(&data, &first);
    assert_eq!(out.status.code(), Some(5));
    assert!(
        text(&out.stderr).contains("holds no earlier run"),
        "{}",
        text(&out.stderr)
    );
    // That run was saved all the same: 1 + 2 slow + SELECT 1 + SELECT 2.
    assert_eq!(listed(&data, &[]).len(), 5);
}

#[test]
fn an_unwritable_history_lets_the_run_finish_and_says_so_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, b"a file, not a directory").expect("writes");
    let store = blocker.join("history.sqlite");
    let csv = dir.path().join("x.csv").to_string_lossy().into_owned();
    let mut args = profile(BY_ID, "n:INT64=10", &csv);
    let store_arg = store.to_string_lossy().into_owned();
    args.extend(["--history", &store_arg]);
    let out = run(dir.path(), &args);
    ok(&out);
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.matches("history was not saved").count(),
        1,
        "{stderr}"
    );
    // And --no-history saves nothing at all.
    let data = dir.path().join("data");
    let mut args = profile(BY_ID, "n:INT64=10", &csv);
    args.push("--no-history");
    ok(&run(&data, &args));
    assert!(!store_file(&data).exists());
}

/// Starts the installed emulator; a missing one fails loudly (these tests never pass without it).
pub(crate) fn start_emulator() -> Emulator {
    Emulator::start("127.0.0.1:0").unwrap_or_else(|e| {
        let ci = if std::env::var("CI").is_ok_and(|v| v == "true") {
            "CI: "
        } else {
            ""
        };
        panic!(
            "{ci}the Cloud Spanner emulator did not start: {}",
            error_chain(&e)
        )
    })
}

#[test]
fn the_team_store_in_the_emulator_keeps_two_writers_runs_and_a_baseline() {
    let emulator = start_emulator();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let csv = dir.path().join("x.csv").to_string_lossy().into_owned();
    let team = "spanner://projects/team/instances/runs/databases/history";
    let with_team = |args: &[&str]| {
        let mut command = spanprof(dir.path(), args);
        command
            .env("SPANNER_EMULATOR_HOST", emulator.address())
            .env("SPANPROF_HISTORY", team);
        command
    };
    let children: Vec<_> = ["n:INT64=100", "n:INT64=200"]
        .into_iter()
        .map(|n| {
            with_team(&profile(BY_ID, n, &csv))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawns")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("waits");
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("not saved"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = with_team(&["history", "--json"]).output().expect("runs");
    ok(&out);
    let json: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let runs = json["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert_eq!(runs[0]["fingerprint"], runs[1]["fingerprint"]);
    assert_ne!(runs[0]["id"], runs[1]["id"]);
    // The local default store was not touched.
    assert!(!store_file(dir.path()).exists());
    // A baseline read back from the team's table.
    let mut gated = profile(BY_ID, "n:INT64=200", &csv);
    gated.extend(["--baseline", "history:best", "--fail-if-slower", "1000%"]);
    let out = with_team(&gated).output().expect("runs");
    ok(&out);
    assert!(text(&out.stdout).contains("gate:"), "{}", text(&out.stdout));
    let id = runs[1]["id"].as_str().expect("an id");
    let shown = with_team(&["history", "show", id, "--json"])
        .output()
        .expect("runs");
    ok(&shown);
    let back = read_json(&shown.stdout).expect("a report");
    assert_eq!(back[0].config.sql, BY_ID);
}

/// The History view's reads and changes on the team store, in the real emulator.
#[test]
fn the_team_store_lists_queries_and_trends_and_labels_pins_and_deletes_runs() {
    use spanprof::history::{HistoryStore, Location, StoredRun, spanner::SpannerStore};
    use spanprof::report::{IterationRecord, RunConfig, RunReport};
    let emulator = start_emulator();
    let Ok(Location::Spanner(database)) =
        Location::parse("spanner://projects/team/instances/runs/databases/view")
    else {
        panic!("a Spanner location");
    };
    let mut store =
        SpannerStore::open_at(emulator.address(), &database).expect("opens in the emulator");
    let run = |label: &str, sql: &str, day: u32, total: f64| {
        let started_at = format!("2026-03-{day:02}T10:00:00Z");
        let report = RunReport {
            config: RunConfig {
                label: label.into(),
                target: "local".into(),
                sql: sql.into(),
                ..RunConfig::default()
            },
            iterations: vec![IterationRecord {
                total_ms: total,
                ..IterationRecord::new(label, 0, false, started_at.as_str())
            }],
            started_at,
            plans: Default::default(),
            stopped: None,
        };
        StoredRun::new(&report, "db").expect("serialises")
    };
    let ids = store
        .save(&[
            run("before", "SELECT 1", 1, 10.0),
            run("after", "SELECT 1", 2, 4.0),
            run("other", "SELECT 2", 3, 1.0),
        ])
        .expect("saves");
    let queries = store.queries("", 10).expect("lists");
    assert_eq!(queries.len(), 2);
    assert_eq!((queries[0].sql.as_str(), queries[1].runs), ("SELECT 2", 2));
    let found = store.queries("befo", 10).expect("lists");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].runs, 2, "found by a label, counted whole");
    let trend = store.trend(&found[0].fingerprint, 10).expect("reads");
    let labels: Vec<&str> = trend.iter().map(|p| p.summary.label.as_str()).collect();
    assert_eq!(labels, ["before", "after"]);
    assert_eq!(trend[1].measures[0].median, 4.0);
    assert!(
        store
            .set_label(&ids[0], "before the index")
            .expect("relabels")
    );
    assert!(store.set_pinned(&ids[0], true).expect("pins"));
    assert!(!store.set_pinned("no-such-run", true).expect("no such run"));
    let trend = store.trend(&found[0].fingerprint, 10).expect("reads");
    assert_eq!(trend[0].summary.label, "before the index");
    assert!(trend[0].pinned && !trend[1].pinned);
    assert!(store.set_pinned(&ids[0], false).expect("unpins"));
    assert!(store.delete(&ids[1]).expect("deletes"));
    assert!(!store.delete(&ids[1]).expect("gone already"));
    let trend = store.trend(&found[0].fingerprint, 10).expect("reads");
    assert_eq!(trend.len(), 1);
    assert!(!trend[0].pinned);
}
