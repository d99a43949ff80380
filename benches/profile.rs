//! End to end: what `spanprof profile` measures for `SELECT * FROM Seed23 LIMIT N` against the built-in
//! local instance (in-process, as `profile` runs it), with the fast and the reference decoder in the
//! same run, beside the floor of a client that only receives the bytes. It also prices the timing
//! instrumentation: the clock reads an iteration makes, at what one read costs here, against the
//! iteration's total. And the window's way to the same instance, kept serving across runs on a
//! runtime of its own (`Target::Kept`), against the command line's (started for the run): a kept
//! instance must not change what is measured.
//!
//! `cargo bench --bench profile` (optionally `-- ROWS`, default 10000). Under `cargo test` (no `--bench`
//! argument) it only checks that it works, on 200 rows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use spanprof::client::connect_plaintext;
use spanprof::engine::{Engine, Job, LocalKeeper, ProfileSpec, QueryMode, Target, Variant};
use spanprof::report::{IterationRecord, RunReport, Status};
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof::stats::median;
use spanprof::wire::DecoderKind;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let (rows, measuring) = support::rows_and_mode(10_000)?;
    let (rows, rounds, iterations) = if measuring { (rows, 5, 6) } else { (200, 1, 1) };
    let sql = format!("SELECT * FROM Seed23 LIMIT {rows}");
    let config = ServerConfig {
        port: 0,
        seed23_rows: rows.max(1000),
        knobs: KnobSettings::default(),
        connections: Default::default(),
    };

    // Rounds alternate the decoders so that both see the same machine.
    let mut totals: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut decode: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut messages = 0u64;
    let mut fast_records = Vec::new();
    let keeper = LocalKeeper::default();
    let mut kept = Vec::new();
    for _ in 0..rounds {
        for it in profile(
            Target::Kept(keeper.clone(), config.clone()),
            &sql,
            DecoderKind::Fast,
            iterations,
        )? {
            kept.push(it.total_ms);
        }
        for (i, decoder) in [DecoderKind::Fast, DecoderKind::Reference]
            .into_iter()
            .enumerate()
        {
            let target = Target::Local(config.clone());
            for it in profile(target, &sql, decoder, iterations)? {
                totals[i].push(it.total_ms);
                decode[i].push(
                    it.query.wire_decode_wall_ms.unwrap_or(0.0)
                        + it.query.row_decode_wall_ms.unwrap_or(0.0),
                );
                messages = it.answer.messages;
                anyhow::ensure!(
                    it.answer.rows == rows,
                    "{} rows, not {rows}",
                    it.answer.rows
                );
                if decoder == DecoderKind::Fast {
                    fast_records.push(it);
                }
            }
        }
    }
    let floor = bytes_only(&config, &sql, rounds * iterations)?;

    let [fast, reference] = totals.map(|mut t| median(&mut t).unwrap_or(f64::NAN));
    let [fast_decode, reference_decode] = decode.map(|mut t| median(&mut t).unwrap_or(f64::NAN));
    println!(
        "profile: {sql}, local instance in-process, medians of {} iterations each",
        rounds * iterations
    );
    println!("  bytes-only client   {floor:8.2} ms");
    println!(
        "  fast decoder        {fast:8.2} ms  (decoding {fast_decode:.2} ms)  {:.2}x the floor",
        fast / floor
    );
    println!(
        "  reference decoder   {reference:8.2} ms  (decoding {reference_decode:.2} ms)  {:.2}x the floor",
        reference / floor
    );
    println!(
        "  fast vs reference: {:.2}x faster end to end, {:.2}x faster decoding",
        reference / fast,
        reference_decode / fast_decode
    );
    let kept = median(&mut kept).unwrap_or(f64::NAN);
    println!(
        "  fast decoder on the window's kept instance {kept:8.2} ms  {:.2}x the command line's",
        kept / fast
    );

    // Each message costs the iteration six wall-clock reads (network wait, wire decode, row
    // decode) and four of its thread's CPU clock (the two decode spans), and the local instance
    // two (its wait for room in the transport's queue); the call, the first byte and the end add
    // a handful. The timeline's own bookkeeping is in the medians above.
    let reads = 8 * messages + 8;
    let cpu_reads = 4 * messages + 2;
    let per_read = clock_read_ns();
    let per_cpu_read = cpu_clock_read_ns();
    let overhead_ms = (reads as f64 * per_read + cpu_reads as f64 * per_cpu_read) / 1e6;
    println!(
        "  instrumentation: {reads} clock reads x {per_read:.1} ns + {cpu_reads} thread CPU clock reads x {per_cpu_read:.1} ns = {overhead_ms:.3} ms, {:.3}% of the fast median",
        overhead_ms / fast * 100.0
    );
    let accounting_ms = accounting_ms(&fast_records);
    println!(
        "  accounting: {:.2} µs to account for an iteration and summarise the run over it ({} iterations), {:.4}% of the fast median",
        accounting_ms * 1e3,
        fast_records.len(),
        accounting_ms / fast * 100.0
    );
    Ok(())
}

/// What accounting for one iteration costs, in milliseconds: each record's parts and the run's
/// part statistics over them (what every view reads), repeated and divided by the records.
fn accounting_ms(records: &[IterationRecord]) -> f64 {
    const REPEATS: u32 = 200;
    let start = Instant::now();
    for _ in 0..REPEATS {
        std::hint::black_box(spanprof::analysis::PartStats::of(std::hint::black_box(
            records,
        )));
    }
    start.elapsed().as_secs_f64() * 1e3 / f64::from(REPEATS) / records.len().max(1) as f64
}

/// Runs the engine as `spanprof profile` does; returns the timed iterations.
fn profile(
    target: Target,
    sql: &str,
    decoder: DecoderKind,
    iterations: u32,
) -> anyhow::Result<Vec<IterationRecord>> {
    let spec = ProfileSpec {
        variants: vec![Variant {
            mode: QueryMode::WithStats,
            ..Variant::new("run", sql)
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
    let timed: Vec<_> = reports.iter().flat_map(RunReport::timed).cloned().collect();
    if let Some(bad) = timed.iter().find(|it| it.status() != Status::Ok) {
        anyhow::bail!("an iteration failed: {:?}", bad.error());
    }
    Ok(timed)
}

/// The median time for a client that only receives the bytes of the same answer.
fn bytes_only(config: &ServerConfig, sql: &str, iterations: u32) -> anyhow::Result<f64> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let instance = LocalInstance::start(config.clone()).await?;
        let channel = connect_plaintext(&instance.host_port()).await?;
        let session = support::session(&channel).await?;
        let mut times = Vec::new();
        for i in 0..=iterations {
            let received = support::receive(&channel, &session, sql).await?;
            anyhow::ensure!(
                received.bytes > 0 && received.last.is_some(),
                "the bytes-only client received nothing"
            );
            // The first is a warm-up, as in the profiles.
            if i > 0 {
                times.push(received.seconds * 1e3);
            }
        }
        instance.stop(Duration::from_secs(1)).await;
        anyhow::Ok(median(&mut times).unwrap_or(f64::NAN))
    })
}

/// What one read of the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`) costs here, in
/// nanoseconds.
fn cpu_clock_read_ns() -> f64 {
    const READS: u32 = 200_000;
    let start = Instant::now();
    for _ in 0..READS {
        std::hint::black_box(cpu_time::ThreadTime::try_now().ok());
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(READS)
}

/// What one `Instant::now()` costs here, in nanoseconds.
fn clock_read_ns() -> f64 {
    const READS: u32 = 1_000_000;
    let start = Instant::now();
    let mut last = start;
    for _ in 0..READS {
        last = std::hint::black_box(Instant::now());
    }
    (last - start).as_secs_f64() * 1e9 / f64::from(READS)
}
