//! `spanprof load` drawing its parameters over a key space and mixing scripts, on the built-in
//! local instance: every committed increment lands on the key the run's seed drew for its request
//! (the hottest Zipf key growing most), a mix's per-script counts are the seed's picks and add up
//! to the step's, and malformed `--param` and `--mix` are refused before anything connects.

use std::process::Command;

use serde_json::Value as Json;
use spanprof::load::draw::WARM_UP;
use spanprof::load::{Drawer, Draws};
use spanprof::server::KnobSettings;
use spanprof::wire::Value;

use crate::load_read_write::{bookkeeping, count};
use crate::read_write::{balances, instance};

const BUMP: &str = "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = @id";

/// `spanprof load --read-write` on `host` with `args`: the JSON report and what it printed
/// (stderr, then the summary).
async fn load(host: &str, args: &[&str]) -> (Json, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("load.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["load", "--no-history", "--endpoint", host, "--read-write"])
        .args(["--json", json.to_str().expect("UTF-8")])
        .args(args);
    let out = tokio::task::spawn_blocking(move || command.output().expect("spanprof runs"))
        .await
        .expect("joins");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let printed = format!("{stderr}{}", String::from_utf8_lossy(&out.stdout));
    let report = serde_json::from_slice(&std::fs::read(&json).expect("the JSON report"));
    (report.expect("JSON"), printed)
}

/// The report's draws, and the drawer that repeats them.
fn drawer(report: &Json) -> (Draws, Drawer) {
    let draws: Draws = serde_json::from_value(report["draws"].clone()).expect("the draws");
    let drawer = Drawer::new(&draws);
    (draws, drawer)
}

fn key(value: &Value) -> usize {
    match value {
        Value::Int64(id) => usize::try_from(*id).expect("a positive key"),
        other => panic!("an INT64 key: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn zipf_keys_land_where_the_seed_drew_them_and_the_hottest_key_grows_most() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let ids: Vec<i64> = (1..=100).collect();
    let before = balances(&host, &ids).await;
    assert_eq!(before.len(), 100);
    let (report, stderr) = load(
        &host,
        &[
            "--sql",
            BUMP,
            "--param",
            "id=zipf:1..100",
            "--seed",
            "12",
            "--concurrency",
            "2",
            "--step-duration",
            "2s",
        ],
    )
    .await;
    assert!(
        stderr.contains("draws: seed 12; --param id=zipf:1..100:0.99"),
        "{stderr}"
    );
    let step = &report["steps"][0];
    let committed = bookkeeping(step);
    assert_eq!(count(&step["errors"]), 0, "{step}");
    assert_eq!(count(&step["unfinished"]), 0, "{step}");
    assert!(committed >= 50, "enough to see the skew: {step}");
    let after = balances(&host, &ids).await;
    let grew: Vec<i64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    // The warm-up's transaction commits too.
    assert_eq!(grew.iter().sum::<i64>(), committed as i64 + 1);
    // Seed 12's draws put AccountId 1 strictly ahead from the second draw on (checked to 20,000
    // draws), so this holds whatever the count; other seeds tie for the first few dozen.
    assert!(
        grew[1..].iter().all(|&g| g < grew[0]),
        "AccountId 1 grew most: {grew:?}"
    );
    // Requests 0..committed (every one started committed) and the warm-up drew exactly these.
    let (draws, drawer) = drawer(&report);
    assert_eq!(draws.seed, 12);
    let mut expected = vec![0i64; 100];
    for n in (0..committed).chain([WARM_UP]) {
        expected[key(&drawer.draw(n).values[0]) - 1] += 1;
    }
    assert_eq!(grew, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mix_runs_each_script_as_the_seed_picked_it_and_its_scripts_add_up_to_the_step() {
    let server = instance(KnobSettings::default()).await;
    let host = server.host_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let bump = dir.path().join("bump.sql");
    let read = dir.path().join("read.sql");
    std::fs::write(&bump, BUMP).expect("writes");
    std::fs::write(&read, "SELECT Balance FROM Accounts WHERE AccountId = @id").expect("writes");
    let mix = format!("{}:1,{}:3", bump.display(), read.display());
    let ids: Vec<i64> = (1..=100).collect();
    let before: i64 = balances(&host, &ids).await.iter().sum();
    let (report, stderr) = load(
        &host,
        &[
            "--mix",
            &mix,
            "--param",
            "id=uniform:1..100",
            "--concurrency",
            "2",
            "--step-duration",
            "1s",
        ],
    )
    .await;
    assert!(stderr.contains("mix bump:1,read:3"), "{stderr}");
    assert!(
        stderr.contains("↳ bump") && stderr.contains("↳ read"),
        "the summary's transactions table has a line per script: {stderr}"
    );
    let step = &report["steps"][0];
    let committed = bookkeeping(step);
    assert_eq!(count(&step["errors"]), 0, "{step}");
    assert!(committed >= 100, "enough to see the weights: {step}");
    let scripts = step["scripts"].as_array().expect("the step's scripts");
    let names: Vec<&str> = scripts
        .iter()
        .map(|s| s["script"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["bump", "read"]);
    let sum = |field: &str| scripts.iter().map(|s| count(&s[field])).sum::<u64>();
    assert_eq!(sum("committed"), committed, "{step}");
    assert_eq!(
        sum("requests"),
        committed + count(&step["errors"]),
        "{step}"
    );
    // Each request ran the script the seed picked for it.
    let (draws, drawer) = drawer(&report);
    assert_eq!(draws.mix.len(), 2);
    let picked = |script: usize| {
        (0..committed)
            .filter(|&n| drawer.draw(n).script == script)
            .count()
    };
    assert_eq!(count(&scripts[0]["committed"]), picked(0) as u64, "{step}");
    assert_eq!(count(&scripts[1]["committed"]), picked(1) as u64, "{step}");
    // A quarter of them bumped a balance, within four standard deviations.
    let share = picked(0) as f64 / committed as f64;
    let sigma = (0.25 * 0.75 / committed as f64).sqrt();
    assert!((share - 0.25).abs() < 4.0 * sigma, "{share} of {committed}");
    let warm_up = u64::from(drawer.draw(WARM_UP).script == 0);
    let after: i64 = balances(&host, &ids).await.iter().sum();
    assert_eq!(after - before, (picked(0) as u64 + warm_up) as i64);
    assert!(
        scripts.iter().all(|s| s["p50_ms"].as_f64().is_some()),
        "{step}"
    );
}

/// `load` with `args`, refused: what it said.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "load",
            "--no-history",
            "--endpoint",
            "127.0.0.1:9",
            "--concurrency",
            "1",
        ])
        .args(args)
        .output()
        .expect("spanprof runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} ran: {stderr}");
    stderr
}

#[test]
fn malformed_draws_and_mixes_are_refused_before_anything_connects() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let script = dir.path().join("s.sql");
    std::fs::write(&script, BUMP).expect("writes");
    let zero = format!("{}:0", script.display());
    let missing = format!("{}:1", dir.path().join("missing.sql").display());
    let cases: [(&[&str], &str); 8] = [
        (
            &["--sql", "SELECT 1", "--param", "id=uniform:1-5"],
            "is not a range LO..HI",
        ),
        (
            &["--sql", "SELECT 1", "--param", "id=uniform:9..1"],
            "HI < LO",
        ),
        (
            &["--sql", "SELECT 1", "--param", "id=gauss:1..5"],
            "unknown distribution",
        ),
        (
            &["--sql", "SELECT 1", "--param", "id=zipf:1..5:0"],
            "not a number above 0",
        ),
        (
            &["--sql", "SELECT 1", "--param", "id=zipf:1..5:-2"],
            "not a number above 0",
        ),
        (&["--read-write", "--mix", &zero], "a weight is 1 or more"),
        (
            &["--read-write", "--mix", &missing],
            "cannot read the script",
        ),
        (&["--mix", &zero], "--read-write"),
    ];
    for (args, says) in cases {
        let stderr = refused(args);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
