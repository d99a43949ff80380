//! `spanprof load --vary SETTING=V1,V2`: the whole load run once per value of one setting, in
//! turn, each through the path a single run takes ([`super::load::measure`]), labelled
//! `<label> · <setting>=<value>` and saved in the history as any load run is; then the runs
//! compared (`analysis::load_variants`, each against the first) in a table and in words, and
//! written as one JSON document, one CSV or one page. With the default local target each run
//! starts its own local instance, so each begins from the same data. Ctrl-C stops the run in
//! progress and the ones after it; what was measured is still printed and written.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use clap::ValueEnum as _;

use super::load::{LoadArgs, measure, prepared, stop_on_signal};
use super::load_draws::LoadParam;
use super::load_summary::summary;
use super::load_vary::{Setting, Vary};
use super::read_write::{IsolationArg, LockModeArg, parse_delay};
use crate::engine::Canceller;
use crate::export::{
    Format, LoadVariants, load_variants_csv, load_variants_html, load_variants_json,
    write_atomically,
};
use crate::load::LoadReport;
use crate::load::draw::Dist;

/// Whether `--vary` can run with the other arguments: a transaction's setting asks for
/// `--read-write`, and not for its own flag too; skew asks for a zipf-drawn parameter; the HDR
/// log holds one run's latencies and is refused.
fn check(args: &LoadArgs, vary: &Vary) -> anyhow::Result<()> {
    let setting = vary.setting;
    if let Some(flag) = setting.flag() {
        anyhow::ensure!(
            args.read_write.read_write,
            "--vary {flag} varies a read-write transaction's setting: give --read-write"
        );
        let given = match setting {
            Setting::LockMode => args.read_write.lock_mode.is_some(),
            Setting::Isolation => args.read_write.isolation.is_some(),
            Setting::MaxCommitDelay => args.read_write.max_commit_delay.is_some(),
            Setting::Skew => false,
        };
        anyhow::ensure!(
            !given,
            "--vary {flag} sets each run's {flag}: leave out --{flag}"
        );
    } else {
        let zipf = args
            .query
            .params
            .iter()
            .any(|p| matches!(p, LoadParam::Drawn(d) if matches!(d.dist, Dist::Zipf { .. })));
        anyhow::ensure!(
            zipf,
            "--vary skew sets the exponent of every --param drawn by zipf \
             (NAME=zipf:LO..HI[:S]): none is"
        );
    }
    if args.out.path(Format::HdrLog).is_some() {
        anyhow::bail!(
            "--hdr-log holds one load run's latencies: with --vary write --json, --csv or --html \
             (each run's own JSON is in the history)"
        );
    }
    Ok(())
}

/// `args` for the run of `value`: its setting set, labelled `<label> · <setting>=<value>`.
fn variant_args(args: &LoadArgs, setting: Setting, value: &str) -> anyhow::Result<LoadArgs> {
    let mut a = args.clone();
    a.vary = None;
    a.label = format!("{} · {}={value}", args.label, setting.name());
    let bad = |e: String| anyhow::anyhow!(e);
    match setting {
        Setting::LockMode => {
            a.read_write.lock_mode = Some(LockModeArg::from_str(value, true).map_err(bad)?)
        }
        Setting::Isolation => {
            a.read_write.isolation = Some(IsolationArg::from_str(value, true).map_err(bad)?)
        }
        Setting::MaxCommitDelay => {
            a.read_write.max_commit_delay = Some(parse_delay(value).map_err(bad)?)
        }
        Setting::Skew => {
            let exponent: f64 = value.parse().context("a Zipf exponent")?;
            for p in &mut a.query.params {
                if let LoadParam::Drawn(d) = p
                    && let Dist::Zipf { s, .. } = &mut d.dist
                {
                    *s = exponent;
                }
            }
        }
    }
    Ok(a)
}

/// Runs the load once per value of `vary`, in turn; prints each run's summary, then the
/// comparison; writes the files asked for and saves each run in the history. The last run's
/// report.
pub fn run_variants(
    args: &LoadArgs,
    vary: &Vary,
    mut out: impl Write,
) -> anyhow::Result<LoadReport> {
    check(args, vary)?;
    // Every run's spec first: a value that cannot run stops the command before any run.
    let runs = vary
        .values
        .iter()
        .map(|value| {
            let a = variant_args(args, vary.setting, value)?;
            let (target, spec) =
                prepared(&a).with_context(|| format!("--vary {}={value}", vary.setting.name()))?;
            Ok((value.clone(), target, spec))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let current: Arc<Mutex<Option<Canceller>>> = Arc::default();
    let stopped = Arc::new(AtomicBool::new(false));
    {
        let (current, stopped) = (Arc::clone(&current), Arc::clone(&stopped));
        stop_on_signal(move || {
            stopped.store(true, Ordering::SeqCst);
            if let Some(run) = current.lock().ok().and_then(|mut c| c.take()) {
                run.cancel();
            }
        });
    }
    let total = runs.len();
    let mut values = Vec::new();
    let mut reports = Vec::new();
    for (i, (value, target, spec)) in runs.into_iter().enumerate() {
        if stopped.load(Ordering::SeqCst) {
            eprintln!("stopped: {} of {total} variants ran", reports.len());
            break;
        }
        let variant = format!("{}={value}", vary.setting.name());
        eprintln!("variant {} of {total}: {variant}", i + 1);
        let report = measure(target, spec, |run| {
            if let Ok(mut c) = current.lock() {
                *c = Some(run.clone());
            }
            // A signal between the check above and now found no run to cancel.
            if stopped.load(Ordering::SeqCst) {
                run.cancel();
            }
        })?;
        if let Ok(mut c) = current.lock() {
            *c = None;
        }
        writeln!(out, "== {variant} ==")?;
        out.write_all(summary(&report).as_bytes())?;
        super::history::save_load(&args.history, &report);
        values.push(value);
        reports.push(report);
    }
    anyhow::ensure!(!reports.is_empty(), "no variant ran: nothing was measured");
    let doc = LoadVariants::new(vary.setting.name(), values, reports);
    out.write_all(comparison_text(&doc).as_bytes())?;
    write_files(args, &doc)?;
    doc.runs
        .last()
        .cloned()
        .context("no variant ran: nothing was measured")
}

/// Writes `doc` in each format asked for (the HDR log was refused before any run).
fn write_files(args: &LoadArgs, doc: &LoadVariants) -> anyhow::Result<()> {
    let redaction = args.out.redaction();
    if redaction.any() {
        super::outputs::say_what_is_not_redacted(Some("JSON or CSV"));
    }
    let redacted = doc.redacted(redaction);
    for format in [Format::Csv, Format::Json, Format::Html] {
        let Some(path) = args.out.path(format) else {
            continue;
        };
        let bytes = match format {
            Format::Csv => load_variants_csv(&redacted)?,
            Format::Json => load_variants_json(&redacted)?,
            _ => load_variants_html(doc, redaction)?,
        };
        write_atomically(path, &bytes)?;
    }
    Ok(())
}

/// The comparison as printed: a row per (step level, run), then the words.
pub fn comparison_text(doc: &LoadVariants) -> String {
    let opt = |v: Option<f64>, d: usize| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.d$}"));
    let mut t = format!(
        "\n{} compared ({} runs, each against the first):\n",
        doc.setting,
        doc.runs.len()
    );
    t.push_str(&format!(
        "  {:<16} {:<18} {:>9} {:>10} {:>11} {:>14} {:>12} {:>9} {:>9}\n",
        "step",
        "variant",
        "goodput/s",
        "attempts/s",
        "aborts/txn",
        "at commit/txn",
        "lock wait ms",
        "p50 ms",
        "p99 ms"
    ));
    for r in &doc.comparison.rows {
        t.push_str(&format!(
            "  {:<16} {:<18} {:>9.1} {:>10} {:>11} {:>14} {:>12} {:>9} {:>9}\n",
            r.level_words,
            crate::report::printable(&r.value),
            r.goodput_per_s,
            opt(r.attempts_per_s, 1),
            opt(r.aborts_per_transaction, 2),
            opt(r.commit_aborts_per_transaction, 2),
            opt(r.lock_wait_ms, 2),
            opt(r.p50_ms, 1),
            opt(r.p99_ms, 1),
        ));
    }
    for words in &doc.comparison.words {
        t.push_str(&format!("  {words}\n"));
    }
    t
}
