//! `spanprof compare A.json B.json`: is B faster or slower than A, and is the difference real?

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::analysis::{BootstrapSettings, compare_runs};
use crate::export::read_json;
use crate::report::{RunReport, printable};

/// Arguments of `spanprof compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The baseline run's JSON report (from `spanprof profile --json`).
    pub a: PathBuf,
    /// The other run's JSON report.
    pub b: PathBuf,
}

fn load(path: &PathBuf) -> anyhow::Result<RunReport> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut runs = read_json(&bytes)
        .with_context(|| format!("{} is not a spanprof report", path.display()))?;
    anyhow::ensure!(!runs.is_empty(), "{} holds no run", path.display());
    Ok(runs.swap_remove(0))
}

/// Prints the median of each phase in both runs with their ratio and, for the total, the verdict
/// of [`compare_runs`] under [`BootstrapSettings::DEFAULT`] (a 95% bootstrap confidence interval).
pub fn run_compare(args: &CompareArgs, mut out: impl Write) -> anyhow::Result<()> {
    let (a, b) = (load(&args.a)?, load(&args.b)?);
    for (run, path) in [(&a, &args.a), (&b, &args.b)] {
        anyhow::ensure!(
            run.timed().next().is_some(),
            "cannot compare: {} ({}) has no successful timed iteration",
            path.display(),
            printable(&run.config.label)
        );
    }
    let comparison = compare_runs(&a, &b, BootstrapSettings::DEFAULT);
    writeln!(
        out,
        "| phase | {} median ms | {} median ms | ratio |",
        printable(&comparison.a_label),
        printable(&comparison.b_label)
    )?;
    writeln!(out, "| --- | ---: | ---: | ---: |")?;
    for p in &comparison.phases {
        let ratio = p
            .ratio
            .map_or_else(|| "–".to_owned(), |r| format!("{r:.2}×"));
        writeln!(
            out,
            "| {} | {:.2} | {:.2} | {ratio} |",
            p.phase.label(),
            p.a_ms,
            p.b_ms
        )?;
    }
    match comparison.verdict() {
        Some(verdict) => writeln!(out, "\n{}", printable(verdict))?,
        None => anyhow::bail!("cannot compare: a run's median total time is not positive"),
    }
    out.write_all(super::plan::plan_diff_text(&a, &b).as_bytes())?;
    Ok(())
}
