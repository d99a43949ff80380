//! The HTML report of a long run: a real run of N iterations (default 10,000) of a small query in
//! PROFILE mode on the local instance (every iteration's plan and timeline kept), exported as
//! HTML and as JSON. Prints the HTML file's size against the JSON report's (the page adds its
//! drawing to the embedded report, bounded by `MAX_BARS` bars and `MAX_TABLE_ROWS` rows), the
//! export's time, and, with headless Chromium installed, the time it takes to open the page and
//! paint its first screen, against the time it takes to open an empty page.
//!
//! `cargo bench --bench html` (optionally `-- ITERATIONS`). Under `cargo test` it only checks that
//! it works, on 40 iterations.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use spanprof::engine::{Engine, Job, ProfileSpec, QueryMode, Target, Variant};
use spanprof::export::{Exporter, Html, Json, MAX_BARS, MAX_TABLE_ROWS, read_reports};
use spanprof::report::RunReport;
use spanprof::server::{KnobSettings, ServerConfig};

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; `cargo test` does not, and then this only checks it works.
    let measuring = std::env::args().any(|a| a == "--bench");
    let asked: Option<u64> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse())
        .transpose()?;
    let iterations = if measuring {
        asked.unwrap_or(10_000)
    } else {
        40
    };
    let started = Instant::now();
    let reports = run(u32::try_from(iterations)?)?;
    let run_s = started.elapsed().as_secs_f64();

    let t = Instant::now();
    let html = Html::default().export(&reports)?;
    let html_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let json = Json.export(&reports)?;
    let json_s = t.elapsed().as_secs_f64();
    anyhow::ensure!(read_reports(&html)? == spanprof::export::read_json(&json)?);
    println!(
        "html: {iterations} iterations of SELECT * FROM Seed23 LIMIT 10 in PROFILE mode (run in {run_s:.1} s)"
    );
    println!(
        "  HTML file {:.2} MB (exported in {:.0} ms) against the JSON report's {:.2} MB ({:.0} ms): {:.2}x",
        html.len() as f64 / 1e6,
        html_s * 1e3,
        json.len() as f64 / 1e6,
        json_s * 1e3,
        html.len() as f64 / json.len() as f64
    );
    let embedded = Json::compact(&reports)?.len();
    println!(
        "  the embedded report (compact JSON) {:.2} MB; the page around it {:.0} KB, at most \
         {MAX_BARS} bars and {MAX_TABLE_ROWS} table rows whatever the iteration count",
        embedded as f64 / 1e6,
        html.len().saturating_sub(embedded) as f64 / 1e3
    );
    if let Some(chromium) = chromium() {
        let dir = tempfile::tempdir()?;
        let page = dir.path().join("run.html");
        std::fs::write(&page, &html)?;
        let empty = dir.path().join("empty.html");
        std::fs::write(&empty, "<!DOCTYPE html><html><body></body></html>")?;
        let open_empty = open_s(&chromium, &empty)?;
        let open_page = open_s(&chromium, &page)?;
        println!(
            "  headless Chromium opens it and paints its first screen in {:.2} s against {:.2} s for \
             an empty page ({:.2} s for the report itself)",
            open_page,
            open_empty,
            (open_page - open_empty).max(0.0)
        );
    } else {
        println!("  (headless Chromium is not installed: no render time)");
    }
    Ok(())
}

/// A real run on the local instance in this process.
fn run(iterations: u32) -> anyhow::Result<Vec<RunReport>> {
    let config = ServerConfig {
        port: 0,
        seed23_rows: 1000,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    };
    let spec = ProfileSpec {
        variants: vec![Variant {
            mode: QueryMode::Profile,
            ..Variant::new("long run", "SELECT * FROM Seed23 LIMIT 10")
        }],
        iterations,
        warmup: 1,
        ..ProfileSpec::default()
    };
    let engine = Engine::start(Job::Profile(Target::Local(config), spec), Arc::new(|| {}))?;
    engine
        .reports()?
        .ok_or_else(|| anyhow::anyhow!("the engine ended without a report"))
}

fn chromium() -> Option<String> {
    ["chromium-headless-shell", "chromium"]
        .into_iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        })
}

/// Seconds for headless Chromium to open `page`, run its script, lay it out and paint its first
/// screen (a screenshot of 1280x900), best of 3.
fn open_s(chromium: &str, page: &Path) -> anyhow::Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let profile = tempfile::tempdir()?;
        let t = Instant::now();
        let out = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=1280,900",
            ])
            .arg(format!(
                "--screenshot={}",
                profile.path().join("shot.png").display()
            ))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("file://{}", page.display()))
            .output()?;
        anyhow::ensure!(out.status.success(), "chromium failed");
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}
