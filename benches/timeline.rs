//! The window's frame work with an iteration's timeline open while a long run streams (it should
//! stay within the frame budget while a million rows stream), through egui_kittest
//! (no GPU: the app's logic and drawing, egui's layout, not the painting).
//!
//! The built-in instance with 1,000,000 rows in Seed23 and 16 KiB messages, so the first
//! iteration alone passes the report's limit of messages kept one by one (the rest are summed in
//! buckets); `SELECT * FROM Seed23` three times. Once the first iteration is in, its timeline is
//! opened and each frame's work is timed while the other two stream, a frame every 33 ms as the
//! window draws while a run streams; then the same with the timeline closed.
//!
//! `cargo bench --bench timeline` (optionally `-- ROWS`). Under `cargo test` (no `--bench`
//! argument) it only checks that it works, on 20,000 rows.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use spanprof::app::{AppOptions, SpanprofApp};

/// Steps frames (33 ms apart) until `done`, at most `limit`; the time of each frame's work, ms.
fn frames(
    h: &mut Harness<'static, SpanprofApp>,
    limit: Duration,
    done: impl Fn(&mut SpanprofApp) -> bool,
) -> anyhow::Result<Vec<f64>> {
    let start = Instant::now();
    let mut times = Vec::new();
    while !done(h.state_mut()) {
        anyhow::ensure!(start.elapsed() < limit, "the run did not get there in time");
        std::thread::sleep(Duration::from_millis(33));
        let t = Instant::now();
        h.step();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(times)
}

fn summary(what: &str, mut times: Vec<f64>) -> String {
    if times.is_empty() {
        return format!("{what}: no frames");
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    format!(
        "{what}: {} frames, median {:.2} ms, p99 {:.2} ms, max {:.2} ms (budget 16.7 ms)",
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let measuring = std::env::args().any(|a| a == "--bench");
    let rows: u64 = match std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        Some(n) => n.parse()?,
        None if measuring => 1_000_000,
        None => 20_000,
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| SpanprofApp::new(cc, AppOptions::in_memory(rows)));
    {
        let settings = h.state_mut().settings_mut();
        let q = &mut settings.query;
        q.first_mut().sql = "SELECT * FROM Seed23".into();
        q.iterations = 3;
        q.warmup = 0;
        settings.connection.local.knobs.max_message_bytes = 16_384;
    }
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    h.step();
    anyhow::ensure!(h.state().is_running(), "Ctrl+Enter started no run");
    let limit = Duration::from_secs(1_800);
    let before = frames(&mut h, limit, |app| app.iterations_view().bars_drawn() >= 1)?;
    let view = h.state_mut().iterations_view();
    let run = view.run().ok_or_else(|| anyhow::anyhow!("no run shown"))?;
    view.timeline().open(run, 0);
    let open = frames(&mut h, limit, |app| {
        app.iterations_view().bars_drawn() >= 2 || !app.is_running()
    })?;
    let (rects, ticks) = h.state_mut().iterations_view().timeline().shapes_drawn();
    let labels = h.state_mut().iterations_view().timeline().row_labels();
    anyhow::ensure!(
        h.state_mut().iterations_view().timeline().opened() == Some(0) && rects > 0,
        "the timeline of #0 was not drawn"
    );
    h.state_mut().iterations_view().timeline().close();
    let closed = frames(&mut h, limit, |app| !app.is_running())?;
    let report = &h.state().runs()[0].report;
    let first = &report.iterations[0];
    let (kept, buckets) = first.timeline.as_ref().map_or((0, 0), |t| {
        (
            t.lanes.iter().map(|l| l.messages.len()).sum::<usize>(),
            t.lanes.iter().map(|l| l.buckets.len()).sum::<usize>(),
        )
    });
    println!(
        "{rows} rows, 16 KiB messages: #0 had {} messages ({kept} kept one by one, {buckets} buckets), {:.0} ms",
        first.answer.messages, first.total_ms
    );
    println!(
        "timeline rows {labels:?}: {rects} rectangles and {ticks} ticks drawn in its last frame"
    );
    println!(
        "{}",
        summary("frames while #0 streamed (timeline not open)", before)
    );
    println!(
        "{}",
        summary("frames while #1 streamed, #0's timeline open", open)
    );
    println!(
        "{}",
        summary("frames while #2 streamed, timeline closed", closed)
    );
    Ok(())
}
