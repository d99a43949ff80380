//! `spanprof compare A.json B.json`: is B faster or slower than A, where, and is the difference
//! real? With `--fail-if-slower 10%` it is a CI gate: exit code 4 when B regressed.

use std::io::Write;
use std::path::PathBuf;

use super::profile::parse_measure;
use super::reports::read_report_file;
use super::summary;
use crate::analysis::{
    BootstrapSettings, Gate, PairNames, RunComparison, compare_runs_named, gate_named,
    parse_slowdown,
};
use crate::part::Measure;
use crate::report::{RunReport, printable};

/// Arguments of `spanprof compare`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CompareArgs {
    /// The baseline's JSON report (from `spanprof profile --json`).
    pub a: PathBuf,
    /// The other JSON report. When either holds several runs (variants), runs are paired by label;
    /// a baseline of one run is compared with every run of the other.
    pub b: PathBuf,
    /// Exit with code 4 when B is slower than A by more than this (e.g. 10%) and the difference
    /// is significant; 0 otherwise.
    #[arg(long, value_name = "PERCENT", value_parser = parse_slowdown)]
    pub fail_if_slower: Option<f64>,
    /// What the gate compares: total (the default) or a part (server, network, wire-decode,
    /// row-decode, client-work, descheduled, untimed, a cold start's dns... session).
    #[arg(long, value_name = "PART", value_parser = parse_measure, requires = "fail_if_slower")]
    pub phase: Option<Measure>,
    /// Print the verdicts as JSON (`verdict`, `ratio`, `ci`, `significant`, `total_change_ms`,
    /// `part_changes` {part: ms}, per pair) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The HTML report: both files' runs, each pair's verdict at the top.
    #[command(flatten)]
    pub html: super::outputs::Outputs<super::outputs::RunPage>,
}

/// The runs to compare: every run of `b` against `a`'s one run, or the runs of both paired by
/// label.
fn pairs<'a>(a: &'a [RunReport], b: &'a [RunReport]) -> Vec<(&'a RunReport, &'a RunReport)> {
    match a {
        [one] => b.iter().map(|run| (one, run)).collect(),
        _ => summary::pairs(a, b),
    }
}

/// Prints, for each pair of runs, the mean of the total and of each part in both with the changes
/// (which add up to the total's), then the verdict of [`compare_runs`] under
/// [`BootstrapSettings::DEFAULT`] (a 95% bootstrap confidence interval on the ratio of the
/// medians) with the parts the difference is in, and the two plans matched operator by operator;
/// with `--json`, the verdicts as one JSON document; with `--fail-if-slower`, the gate's decision.
/// Returns whether the gate failed.
pub fn run_compare(args: &CompareArgs, mut out: impl Write) -> anyhow::Result<bool> {
    let (a, b) = (read_report_file(&args.a)?, read_report_file(&args.b)?);
    for (runs, path) in [(&a, &args.a), (&b, &args.b)] {
        for run in runs {
            anyhow::ensure!(
                run.timed().next().is_some(),
                "cannot compare: {} ({}) has no successful timed iteration",
                path.display(),
                printable(&run.config.label)
            );
        }
    }
    let pairs = pairs(&a, &b);
    anyhow::ensure!(
        !pairs.is_empty(),
        "cannot compare: no run of {} is labelled like a run of {}",
        args.b.display(),
        args.a.display()
    );
    let files = [file_name(&args.a), file_name(&args.b)];
    let names: Vec<[String; 2]> = pairs
        .iter()
        .map(|(base, other)| super::names::pair_names([base, other], files.clone()))
        .collect();
    let comparisons: Vec<RunComparison> = pairs
        .iter()
        .zip(&names)
        .map(|((base, other), [a, b])| {
            compare_runs_named(base, other, PairNames { a, b }, BootstrapSettings::DEFAULT)
        })
        .collect();
    if comparisons.iter().any(|c| c.verdict().is_none()) {
        anyhow::bail!("cannot compare: a run's median total time is not positive");
    }
    if args.html.path(crate::export::Format::Html).is_some() {
        write_html(&args.html, &a, &b, &pairs)?;
    }
    if args.json {
        let document = serde_json::json!({
            "comparisons": comparisons.iter().map(comparison_json).collect::<Vec<_>>()
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&document)?)?;
    } else {
        for (i, (((base, other), comparison), [a, b])) in
            pairs.iter().zip(&comparisons).zip(&names).enumerate()
        {
            if i > 0 {
                writeln!(out)?;
            }
            out.write_all(summary::part_table(comparison).as_bytes())?;
            if let Some(verdict) = comparison.verdict_with_deltas() {
                writeln!(out, "\n{}", printable(&verdict))?;
            }
            let names = PairNames { a, b };
            out.write_all(super::plan::plan_diff_text(base, other, names).as_bytes())?;
        }
    }
    let Some(max_slowdown) = args.fail_if_slower else {
        return Ok(false);
    };
    let gate = Gate {
        max_slowdown,
        measure: args.phase.unwrap_or(Measure::Total),
    };
    let mut regressed = false;
    for ((base, other), [a, b]) in pairs.iter().zip(&names) {
        let names = PairNames { a, b };
        let outcome = gate_named(base, other, names, gate, BootstrapSettings::DEFAULT)?;
        regressed |= outcome.failed;
        writeln!(out, "\ngate: {}", printable(&outcome.reason))?;
    }
    Ok(regressed)
}

/// The name of the file at `path`, to tell apart runs alike in label and time.
fn file_name(path: &std::path::Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The HTML report of both files' runs (A's first), the pairs compared at its top.
fn write_html(
    html: &super::outputs::Outputs<super::outputs::RunPage>,
    a: &[RunReport],
    b: &[RunReport],
    pairs: &[(&RunReport, &RunReport)],
) -> anyhow::Result<()> {
    let runs: Vec<RunReport> = a.iter().chain(b).cloned().collect();
    let position =
        |run: &RunReport, from: usize| runs[from..].iter().position(|r| r == run).map(|i| i + from);
    let positions = pairs
        .iter()
        .filter_map(|(base, other)| Some((position(base, 0)?, position(other, a.len())?)))
        .collect();
    html.write(crate::export::Reports::Profile(&runs), Some(positions))
}

/// One comparison as `compare --json` prints it: the verdict, the ratio of the medians with its
/// interval, and the change of the mean total with the parts' changes, which add up to it.
fn comparison_json(c: &RunComparison) -> serde_json::Value {
    let total = c.total.as_ref().map(|t| &t.comparison);
    let parts = c.parts.as_ref();
    serde_json::json!({
        "a": c.a_name,
        "b": c.b_name,
        "verdict": c.verdict(),
        "ratio": total.map(|t| t.ratio),
        "ci": total.map(|t| [t.ci_low, t.ci_high]),
        "confidence": total.map(|t| t.confidence),
        "significant": total.map(|t| t.significant),
        "a_mean_ms": parts.map(|p| p.a_mean),
        "b_mean_ms": parts.map(|p| p.b_mean),
        "total_change_ms": parts.map(|p| p.total_change()),
        "part_changes": parts.map(|p| {
            p.parts
                .iter()
                .map(|c| (c.part.key().to_owned(), serde_json::json!(c.change())))
                .collect::<serde_json::Map<String, serde_json::Value>>()
        }),
    })
}
