//! The load generator on this machine: its scheduling lag (how late it woke for starts it was on
//! time for) at 500 req/s, and the process's resident memory after each step of a run at
//! 1,000 req/s (it should stay flat after the first: a step keeps histograms, not requests).
//!
//! `cargo bench --bench load` (optionally `-- SECONDS`, each step's length, default 10; the
//! issue's 10-minute run is `-- 60` with its ten steps). Under `cargo test` (no `--bench`) it only
//! checks that it works, on 1-second steps.

use std::sync::Arc;
use std::time::Duration;

use spanprof::engine::load::{LoadEvent, LoadRun, LoadSpec};
use spanprof::engine::{DatabasePath, HeaderOptions, QueryMode, Target, Timeouts, Variant};
use spanprof::load::{LoadPlan, LoadReport, Model, StepLevel};
use spanprof::server::{KnobSettings, ServerConfig};
use spanprof::wire::DecoderKind;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What a generator on an idle machine should keep to: a millisecond of lag at p99.
const LAG_BUDGET_MS: f64 = 1.0;

fn spec(levels: Vec<StepLevel>, step: Duration) -> LoadSpec {
    LoadSpec {
        database: DatabasePath::default(),
        variant: Variant {
            mode: QueryMode::WithStats,
            ..Variant::new("bench", "SELECT 1")
        },
        plan: LoadPlan {
            model: Model::Open,
            levels,
            step_duration: step,
            max_in_flight: 1000,
            drain: Duration::from_secs(10),
        },
        decoder: DecoderKind::default(),
        timeouts: Timeouts::DEFAULT,
        headers: HeaderOptions::default(),
        notices: Vec::new(),
    }
}

/// Runs `spec` on the built-in instance, calling `each` after every step; the report.
fn run(spec: LoadSpec, mut each: impl FnMut(usize)) -> anyhow::Result<LoadReport> {
    let target = Target::Local(ServerConfig {
        port: 0,
        seed23_rows: 100,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    });
    let run = LoadRun::start(target, spec, Arc::new(|| {}))?;
    let mut step = 0;
    while let Some(event) = run.next() {
        match event {
            LoadEvent::StepDone(_) => {
                each(step);
                step += 1;
            }
            LoadEvent::Finished(report) => return Ok(*report),
            LoadEvent::Failed(e) => return Err(e.into()),
            _ => {}
        }
    }
    anyhow::bail!("the run ended without a report")
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let seconds: u64 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10);
    let measuring = std::env::args().any(|a| a == "--bench");
    let step = Duration::from_secs(if measuring { seconds.max(1) } else { 1 });
    let lagged = run(spec(vec![StepLevel::Rate(500.0)], step), |_| {})?;
    let s = &lagged.steps[0];
    let lag = s.generator_lag_p99_ms.unwrap_or(f64::NAN);
    println!(
        "load generator at 500 req/s for {:?}: scheduling lag p99 {:.3} ms, max {:.3} ms \
         ({:.2}x a {LAG_BUDGET_MS} ms budget); generator CPU {:.0} ms; achieved {:.1}/s",
        step,
        lag,
        s.generator_lag_max_ms.unwrap_or(f64::NAN),
        lag / LAG_BUDGET_MS,
        s.generator_cpu_ms.unwrap_or(f64::NAN),
        s.achieved_rate
    );
    let steps = if measuring { 10 } else { 2 };
    let mut rss = Vec::new();
    run(spec(vec![StepLevel::Rate(1000.0); steps], step), |_| {
        rss.push(rss_mib())
    })?;
    let first = rss.first().copied().unwrap_or(f64::NAN);
    let last = rss.last().copied().unwrap_or(f64::NAN);
    println!(
        "memory at 1,000 req/s, {steps} steps of {step:?}: {:.1} MiB after the first, {:.1} MiB \
         after the last ({:.3}x)",
        first,
        last,
        last / first
    );
    Ok(())
}
