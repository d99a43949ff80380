//! `spanprof compare A.json B.json`: is B faster or slower than A, where, and is the difference
//! real? With `--fail-if-slower 10%` it is a CI gate: exit code 4 when B regressed.

use std::io::Write;
use std::path::PathBuf;

use super::profile::parse_phase;
use super::reports::load_reports;
use super::summary;
use crate::analysis::{BootstrapSettings, Gate, compare_runs, parse_slowdown};
use crate::report::{Phase, RunReport, printable};

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
    /// The phase the gate compares: total (default), ttfb, network, server, wire-decode,
    /// row-decode or other.
    #[arg(long, value_name = "PHASE", value_parser = parse_phase, requires = "fail_if_slower")]
    pub phase: Option<Phase>,
}

/// The runs to compare: every run of `b` against `a`'s one run, or the runs of both paired by
/// label.
fn pairs<'a>(a: &'a [RunReport], b: &'a [RunReport]) -> Vec<(&'a RunReport, &'a RunReport)> {
    match a {
        [one] => b.iter().map(|run| (one, run)).collect(),
        _ => summary::pairs(a, b),
    }
}

/// Prints, for each pair of runs, the median of each phase in both with their ratio and then the
/// verdict of [`compare_runs`] under [`BootstrapSettings::DEFAULT`] (a 95% bootstrap confidence
/// interval) with the phases the difference is in, and the two plans matched operator by operator;
/// with `--fail-if-slower`, the gate's decision.
/// Returns whether the gate failed.
pub fn run_compare(args: &CompareArgs, mut out: impl Write) -> anyhow::Result<bool> {
    let (a, b) = (load_reports(&args.a)?, load_reports(&args.b)?);
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
    for (i, (base, other)) in pairs.iter().enumerate() {
        let comparison = compare_runs(base, other, BootstrapSettings::DEFAULT);
        if i > 0 {
            writeln!(out)?;
        }
        // The change of each phase is the verdict's last part: the table keeps to the medians.
        out.write_all(summary::phase_table(&comparison, false).as_bytes())?;
        match comparison.verdict_with_deltas() {
            Some(verdict) => writeln!(out, "\n{}", printable(&verdict))?,
            None => anyhow::bail!("cannot compare: a run's median total time is not positive"),
        }
        out.write_all(super::operators::plan_diff_text(base, other).as_bytes())?;
    }
    let Some(max_slowdown) = args.fail_if_slower else {
        return Ok(false);
    };
    let gate = Gate {
        max_slowdown,
        phase: args.phase.unwrap_or(Phase::Total),
    };
    let mut regressed = false;
    for (base, other) in pairs {
        let outcome = crate::analysis::gate(base, other, gate, BootstrapSettings::DEFAULT)?;
        regressed |= outcome.failed;
        writeln!(out, "\ngate: {}", printable(&outcome.reason))?;
    }
    Ok(regressed)
}
