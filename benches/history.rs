//! Listing the run history: a store of N runs (default 100,000; listing them all should take
//! under a second), listed whole through the library and through `spanprof history
//! --json --limit N` as a process, against the one-second budget; and one run read back whole,
//! against its listing line.
//!
//! Then the window's History tab on that store (through egui_kittest, no GPU): the time of each
//! frame's work (the app's logic and drawing) with a query of 2,000 runs chosen, against a
//! 60 Hz frame's 16.7 ms, to show the view's work per frame does not grow with the store.
//!
//! `cargo bench --bench history` (optionally `-- RUNS`). Under `cargo test` (no `--bench`
//! argument) it only checks that it works, on 500 runs.

use std::process::Command;
use std::time::Instant;

use egui_kittest::Harness;
use spanprof::app::{AppOptions, SpanprofApp, Tab};
use spanprof::history::{Filter, HistoryStore, Location, Retention, SqliteStore, StoredRun};
use spanprof::report::{IterationRecord, RunConfig, RunReport};

/// A small run of `SELECT * FROM Seed23 WHERE Id < {i % 50}` (50 fingerprints).
fn run(i: u64) -> RunReport {
    let started_at = format!("2026-{:02}-{:02}T10:00:00Z", 1 + i % 12, 1 + i % 28);
    let label = format!("run {i}");
    RunReport {
        config: RunConfig {
            label: label.clone(),
            target: "local".into(),
            sql: format!("SELECT * FROM Seed23 WHERE Id < {}", i % 50),
            query_mode: spanprof::kind::QueryMode::WithStats,
            iterations: 3,
            ..RunConfig::default()
        },
        iterations: (0..3)
            .map(|k| IterationRecord {
                total_ms: 10.0 + (i % 7) as f64 + f64::from(k),
                ..IterationRecord::new(label.as_str(), k, false, started_at.as_str())
            })
            .collect(),
        started_at,
        plans: Default::default(),
        stopped: None,
    }
}

fn seconds(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let measuring = std::env::args().any(|a| a == "--bench");
    let runs: u64 = match std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        Some(n) => n.parse()?,
        None if measuring => 100_000,
        None => 500,
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("history.sqlite");
    let keep_all = Retention {
        max_runs: runs * 2,
        max_age_days: 1_000_000,
    };
    let mut store = SqliteStore::open(&path, keep_all)?;
    let filling = Instant::now();
    for chunk in (0..runs).collect::<Vec<_>>().chunks(5_000) {
        let batch: Vec<StoredRun> = chunk
            .iter()
            .map(|&i| StoredRun::new(&run(i), "db"))
            .collect::<Result<_, _>>()?;
        store.save(&batch)?;
    }
    let size = std::fs::metadata(&path)?.len();
    println!(
        "stored {runs} runs in {:.1} s ({:.1} MB)",
        filling.elapsed().as_secs_f64(),
        size as f64 / 1e6
    );

    let all = Filter {
        limit: Some(runs as usize),
        ..Filter::default()
    };
    let rounds = if measuring { 5 } else { 1 };
    let mut library = Vec::new();
    let mut process = Vec::new();
    let mut one = Vec::new();
    let mut listed = 0;
    let bin = env!("CARGO_BIN_EXE_spanprof");
    let limit = runs.to_string();
    for _ in 0..rounds {
        library.push(seconds(|| listed = store.list(&all).map_or(0, |r| r.len())));
        let mut bytes = 0;
        process.push(seconds(|| {
            bytes = Command::new(bin)
                .args(["history", "--json", "--limit", &limit, "--history"])
                .arg(&path)
                .output()
                .map_or(0, |o| {
                    if o.status.success() {
                        o.stdout.len()
                    } else {
                        0
                    }
                });
        }));
        anyhow::ensure!(bytes > 0, "spanprof history failed");
        one.push(seconds(|| {
            let _ = store.get(&(runs / 2).to_string());
        }));
    }
    anyhow::ensure!(listed as u64 == runs, "listed {listed} of {runs}");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (lib, proc_, get) = (median(&mut library), median(&mut process), median(&mut one));
    println!(
        "list {runs} runs (library):           {:8.1} ms, {:.2} of the 1 s budget",
        lib * 1e3,
        lib
    );
    println!(
        "spanprof history --json --limit {runs}: {:8.1} ms, {:.2} of the 1 s budget",
        proc_ * 1e3,
        proc_
    );
    println!(
        "one run read back whole:             {:8.3} ms ({:.0}x a listing line's share)",
        get * 1e3,
        get / (lib / runs as f64)
    );
    frames(&path, if measuring { 600 } else { 20 })
}

/// Waits (drawing frames) until `done`, at most 30 s; how many frames that took.
fn until(
    h: &mut Harness<'static, SpanprofApp>,
    done: impl Fn(&mut SpanprofApp) -> bool,
) -> anyhow::Result<u32> {
    let start = Instant::now();
    let mut frames = 0;
    while !done(h.state_mut()) {
        anyhow::ensure!(
            start.elapsed().as_secs() < 30,
            "the History tab did not load"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
        frames += 1;
    }
    Ok(frames)
}

/// The History tab's frame times on the store at `path`: `count` frames with a query chosen.
#[allow(clippy::print_stdout)]
fn frames(path: &std::path::Path, count: usize) -> anyhow::Result<()> {
    let location = Location::File(path.to_owned());
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                history: location.clone(),
                tab: Some(Tab::History),
                ..AppOptions::in_memory(1_000)
            };
            SpanprofApp::new(cc, options)
        });
    let waited = Instant::now();
    until(&mut h, |app| !app.history_view().queries().is_empty())?;
    let listed = waited.elapsed();
    // The query with the most runs (2,000 of 100,000).
    let view = h.state_mut().history_view();
    let most = view
        .queries()
        .iter()
        .max_by_key(|q| q.runs)
        .map(|q| q.key.clone());
    view.choose(most.unwrap_or_default());
    let waited = Instant::now();
    until(&mut h, |app| !app.history_view().points().is_empty())?;
    let trend = waited.elapsed();
    let points = h.state_mut().history_view().points().len();
    let mut times: Vec<f64> = (0..count)
        .map(|_| {
            let t = Instant::now();
            h.step();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "History tab: queries read in {:.0} ms, a trend of {points} runs in {:.0} ms (off the UI thread)",
        listed.as_secs_f64() * 1e3,
        trend.as_secs_f64() * 1e3
    );
    println!(
        "History tab frame work over {count} frames: median {:.2} ms, p99 {:.2} ms, max {:.2} ms (budget 16.7 ms)",
        at(0.5),
        at(0.99),
        at(1.0)
    );
    Ok(())
}
