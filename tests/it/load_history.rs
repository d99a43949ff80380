//! Load runs in the run history: every `spanprof load` saved with its fingerprint under an `L` id,
//! listed, shown and exported by `spanprof history`, and merged by `load merge history:ID ...`;
//! two processes saving to the team store in the real emulator, merged from it exactly.

use std::process::{Command, Output};

use serde_json::Value;
use spanprof::load::LoadReport;

use crate::history::start_emulator;
use crate::load::{assert_merged_exactly, load};
use crate::serve_process::ServeProcess;

/// `spanprof history ARGS` against the store `history`, with `SPANNER_EMULATOR_HOST` = `emulator`.
fn history(history: &str, emulator: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .arg("history")
        .args(args)
        .args(["--history", history])
        .env_remove("SPANPROF_HISTORY");
    match emulator {
        Some(host) => command.env("SPANNER_EMULATOR_HOST", host),
        None => command.env_remove("SPANNER_EMULATOR_HOST"),
    };
    command.output().expect("spanprof runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The id a load run said it was saved under.
fn saved_id(out: &Output) -> String {
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("saved as load run "))
        .unwrap_or_else(|| panic!("the run says where it was saved: {stderr}"));
    let id = line.split_whitespace().next().expect("an id").to_owned();
    assert!(id.starts_with('L'), "a load run's id begins with L: {id}");
    id
}

/// A load of `SELECT 1` at 20 then 40 req/s, a second a step, against `host`, saved in `store`.
fn load_saved(host: &str, store: &str, emulator: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command.args([
        "load",
        "--endpoint",
        host,
        "--query-mode",
        "normal",
        "--sql",
        "SELECT 1",
        "--rate",
        "20,40",
        "--step-duration",
        "1s",
        "--history",
        store,
    ]);
    match emulator {
        Some(e) => command.env("SPANNER_EMULATOR_HOST", e),
        None => command.env_remove("SPANNER_EMULATOR_HOST"),
    };
    command.output().expect("spanprof runs")
}

/// Two load processes at once, each saving in `store`: their ids.
fn two_at_once(host: &str, store: &str, emulator: Option<&str>) -> [String; 2] {
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (host, store) = (host.to_owned(), store.to_owned());
            let emulator = emulator.map(str::to_owned);
            std::thread::spawn(move || load_saved(&host, &store, emulator.as_deref()))
        })
        .collect();
    let ids: Vec<String> = runs
        .into_iter()
        .map(|r| saved_id(&r.join().expect("joins")))
        .collect();
    assert_ne!(ids[0], ids[1]);
    [ids[0].clone(), ids[1].clone()]
}

/// Load run `id` of `store`, exported as JSON into `dir` and read back.
fn exported(store: &str, emulator: Option<&str>, id: &str, dir: &std::path::Path) -> LoadReport {
    let path = dir.join(format!("{id}.json"));
    let out = history(
        store,
        emulator,
        &["export", id, "-o", path.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    LoadReport::from_json(&std::fs::read(&path).expect("written")).expect("a load report")
}

#[test]
fn two_load_processes_saving_to_the_team_store_merge_from_it_exactly() {
    let emulator = start_emulator();
    let host = emulator.address().to_owned();
    let server = ServeProcess::start(&["--query-threads", "2", "--service-ms", "2"]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let team = "spanner://projects/team/instances/runs/databases/loads";
    let ids = two_at_once(&server.host, team, Some(&host));

    // Both are listed, as load runs of one fingerprint.
    let out = history(team, Some(&host), &["--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let loads = listing["load_runs"].as_array().expect("load_runs");
    assert_eq!(loads.len(), 2, "{listing}");
    assert_eq!(loads[0]["fingerprint"], loads[1]["fingerprint"]);
    assert_eq!(loads[0]["steps"], 2);
    assert!(listing["runs"].as_array().expect("runs").is_empty());

    let merged_path = dir.path().join("merged.json");
    let out = load(&[
        "merge",
        &format!("history:{}", ids[0]),
        &format!("history:{}", ids[1]),
        "--history",
        team,
        "--json",
        merged_path.to_str().expect("utf-8"),
    ]);
    // `load` takes the emulator away: the merge must say it cannot reach the store.
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("SPANNER_EMULATOR_HOST"));
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(["load", "merge"])
        .args(ids.iter().map(|id| format!("history:{id}")))
        .args(["--history", team, "--json"])
        .arg(&merged_path)
        .env("SPANNER_EMULATOR_HOST", &host)
        .output()
        .expect("spanprof runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = ids
        .iter()
        .map(|id| exported(team, Some(&host), id, dir.path()))
        .collect::<Vec<_>>();
    let merged =
        LoadReport::from_json(&std::fs::read(&merged_path).expect("written")).expect("merged");
    assert_merged_exactly(&runs, &merged, &[40.0, 80.0]);
}

#[test]
fn a_load_run_in_the_local_store_is_listed_shown_and_exported_by_its_id() {
    let server = ServeProcess::start(&[]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("history.sqlite");
    let store = store.to_str().expect("utf-8");
    let id = saved_id(&load_saved(&server.host, store, None));
    assert_eq!(id, "L1");

    let out = history(store, None, &[]);
    let listing = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(listing.contains("load runs"), "{listing}");
    assert!(
        listing.lines().any(|l| l.trim_start().starts_with("L1 ")),
        "{listing}"
    );

    let out = history(store, None, &["show", "L1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("20 req/s"),
        "{}",
        text(&out.stdout)
    );

    let html = dir.path().join("l1.html");
    let out = history(
        store,
        None,
        &[
            "export",
            "L1",
            "--html",
            html.to_str().expect("utf-8"),
            "--redact",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read(&html).expect("the page");
    let report = spanprof::export::read_load_report(&page).expect("embedded");
    assert_eq!(report.steps.len(), 2);

    // A load run that is not there is named; an ordinary run's id never reaches a load run.
    let out = history(store, None, &["show", "L99"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no load run L99"),
        "{}",
        text(&out.stderr)
    );
    let out = history(store, None, &["show", "1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no run 1"),
        "{}",
        text(&out.stderr)
    );
}
