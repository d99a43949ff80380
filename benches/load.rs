//! The load generator on this machine: its scheduling lag (how late it woke for starts it was on
//! time for) at 500 req/s, and the process's resident memory after each step of a run at
//! 1,000 req/s (it should stay flat after the first: a step keeps histograms, not requests).
//!
//! `cargo bench --bench load` (optionally `-- SECONDS`, each step's length, default 10; the
//! 10-minute run is `-- 60` with its ten steps; `lag`, `wide` or `memory` runs that section
//! alone). Under `cargo test` (no `--bench`) it only checks that it works, on 1-second steps.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use spanprof::engine::load::LoadSpec;
use spanprof::engine::{
    DatabasePath, Engine, HeaderOptions, Job, LoadEvent, ProfileSpec, QueryMode, Target, Timeouts,
    Variant,
};
use spanprof::load::{LoadReport, LoadSteps, Model, StepLevel};
use spanprof::server::{KnobSettings, ServerConfig};
use spanprof::wire::DecoderKind;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated and not yet freed, whatever the allocator keeps besides: what tells a growing
/// structure from an allocator holding on to pages (resident memory counts both).
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// mimalloc, counting the bytes live.
struct Counting;

// SAFETY: every call is passed to mimalloc unchanged; only a counter is kept beside.
#[allow(unsafe_code)] // A global allocator is an unsafe trait; this one only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is mimalloc's.
        let p = unsafe { mimalloc::MiMalloc.alloc(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is mimalloc's.
        let p = unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is mimalloc's.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is mimalloc's.
        let p = unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

fn live_mib() -> f64 {
    LIVE_BYTES.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0)
}

/// What a generator on an idle machine should keep to: a millisecond of lag at p99.
const LAG_BUDGET_MS: f64 = 1.0;

fn spec(levels: Vec<StepLevel>, step: Duration) -> LoadSpec {
    spec_of("SELECT 1", levels, step)
}

fn spec_of(sql: &str, levels: Vec<StepLevel>, step: Duration) -> LoadSpec {
    LoadSpec {
        database: DatabasePath::default(),
        variant: Variant {
            mode: QueryMode::WithStats,
            ..Variant::new("bench", sql)
        },
        plan: LoadSteps {
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
        stop_at_knee: false,
        draws: Default::default(),
        server_stats: None,
    }
}

/// The built-in instance with `rows` rows of Seed23.
fn local(rows: u64) -> Target {
    Target::Local(ServerConfig {
        port: 0,
        seed23_rows: rows,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
}

/// Runs `spec` on the built-in instance, calling `each` after every step; the report.
fn run(spec: LoadSpec, each: impl FnMut(usize)) -> anyhow::Result<LoadReport> {
    run_on(local(100), spec, each)
}

/// Runs `spec` on `target`, calling `each` after every step; the report.
fn run_on(
    target: Target,
    spec: LoadSpec,
    mut each: impl FnMut(usize),
) -> anyhow::Result<LoadReport> {
    let run = Engine::start(Job::Load(target, spec), Arc::new(|| {}))?;
    let mut step = 0;
    for event in run.load_events() {
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

/// The median decode CPU of `profile`'s iterations of `sql` on `target` (ms): what one
/// iteration's wire and row decode took of the client's thread.
fn profile_decode_cpu_ms(
    target: Target,
    sql: &str,
    iterations: u32,
    decoder: DecoderKind,
) -> anyhow::Result<f64> {
    let spec = ProfileSpec {
        variants: vec![Variant {
            mode: QueryMode::WithStats,
            ..Variant::new("wide", sql)
        }],
        iterations,
        warmup: 1,
        decoder,
        ..ProfileSpec::default()
    };
    let engine = Engine::start(Job::Profile(target, spec), Arc::new(|| {}))?;
    let reports = engine
        .reports()?
        .ok_or_else(|| anyhow::anyhow!("the engine ended without a report"))?;
    let mut cpu: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.timed())
        .map(|it| {
            it.query.wire_decode_cpu_ms.unwrap_or(0.0) + it.query.row_decode_cpu_ms.unwrap_or(0.0)
        })
        .collect();
    spanprof::stats::median(&mut cpu).ok_or_else(|| anyhow::anyhow!("no timed iteration"))
}

/// A wide answer read by `decoder`: the decode capacity `load` states against the one
/// `profile`'s iterations give, and whether the step where the client's CPU saturates is named.
/// The local instance serves `SELECT * FROM Seed23 LIMIT 10000` with about 15-19 ms of CPU, so
/// beside the reference decoder (about 45 ms) the server is fast and the client saturates first;
/// beside the fast one (about 12 ms) the server is the limit on this machine's two cores.
#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn wide_query(measuring: bool, decoder: DecoderKind) -> anyhow::Result<()> {
    let rows: u64 = if measuring { 10_000 } else { 300 };
    let sql = format!("SELECT * FROM Seed23 LIMIT {rows}");
    let iterations = if measuring { 10 } else { 2 };
    let profiled = profile_decode_cpu_ms(local(rows), &sql, iterations, decoder)?;
    let capacity = 1e3 / profiled;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // From a tenth of one core's capacity to past every core's.
    let levels = [0.1, 0.5, 1.0, 1.5, 2.0, 3.0]
        .iter()
        .map(|f| StepLevel::Rate((capacity * cores * f).max(1.0).round()))
        .collect();
    let step = Duration::from_secs(if measuring { 3 } else { 1 });
    let spec = LoadSpec {
        decoder,
        ..spec_of(&sql, levels, step)
    };
    let report = run_on(local(rows), spec, |_| {})?;
    let stated = report.decode_capacity_per_core.unwrap_or(f64::NAN);
    println!(
        "wide query ({rows} rows), {} decoder: load states one core decodes {stated:.0}/s; \
         profile's median decode CPU {profiled:.2} ms gives {capacity:.0}/s: {:.2}x",
        decoder.as_str(),
        stated / capacity
    );
    println!(
        "  the client's CPU saturates at {}; knee: {}",
        report
            .client_saturated_at
            .map_or_else(|| "no step".to_owned(), |r| format!("{r:.0} req/s")),
        report.knee_words
    );
    Ok(())
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = args
        .iter()
        .find(|a| a.chars().all(|c| c.is_ascii_digit()))
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10);
    // Sections may be named (`lag`, `wide`, `memory`); none named runs all three.
    let named: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| ["lag", "wide", "memory"].contains(a))
        .collect();
    let runs = |section: &str| named.is_empty() || named.contains(&section);
    let measuring = std::env::args().any(|a| a == "--bench");
    let step = Duration::from_secs(if measuring { seconds.max(1) } else { 1 });
    if runs("lag") {
        lag(step)?;
    }
    if runs("wide") {
        wide_query(measuring, DecoderKind::Reference)?;
        wide_query(measuring, DecoderKind::Fast)?;
    }
    if runs("memory") {
        memory(measuring, step)?;
    }
    Ok(())
}

/// The generator's scheduling lag at 500 req/s for one step.
#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn lag(step: Duration) -> anyhow::Result<()> {
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
    Ok(())
}

/// The process's resident memory after each step of a run at 1,000 req/s.
#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn memory(measuring: bool, step: Duration) -> anyhow::Result<()> {
    let steps = if measuring { 10 } else { 2 };
    let mut rss = Vec::new();
    let mut live = Vec::new();
    run(spec(vec![StepLevel::Rate(1000.0); steps], step), |_| {
        rss.push(rss_mib());
        live.push(live_mib());
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
    let each = |v: &[f64]| {
        v.iter()
            .map(|m| format!("{m:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("  resident after each step (MiB): {}", each(&rss));
    println!(
        "  allocated and live after each step (MiB): {}",
        each(&live)
    );
    Ok(())
}
