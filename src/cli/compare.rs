//! `spanprof compare A.json B.json`: is B faster or slower than A, and is the difference real?

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::export::read_json;
use crate::report::{Phase, RunReport};
use crate::stats::{compare, verdict};

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

/// Prints the median of each phase in both runs and, for the total, the ratio with a 95% bootstrap
/// confidence interval and a verdict.
pub fn run_compare(args: &CompareArgs, mut out: impl Write) -> anyhow::Result<()> {
    let (a, b) = (load(&args.a)?, load(&args.b)?);
    let (a_label, b_label) = (a.config.label.as_str(), b.config.label.as_str());
    writeln!(
        out,
        "| phase | {a_label} median ms | {b_label} median ms | ratio |"
    )?;
    writeln!(out, "| --- | ---: | ---: | ---: |")?;
    for phase in Phase::ALL {
        let (sa, sb) = (a.phase_samples(phase), b.phase_samples(phase));
        let (Some(ma), Some(mb)) = (
            crate::stats::summarize(&sa).map(|s| s.median),
            crate::stats::summarize(&sb).map(|s| s.median),
        ) else {
            continue;
        };
        let ratio = if ma > 0.0 {
            format!("{:.2}×", mb / ma)
        } else {
            "–".into()
        };
        writeln!(out, "| {} | {ma:.2} | {mb:.2} | {ratio} |", phase.label())?;
    }
    let totals = (a.phase_samples(Phase::Total), b.phase_samples(Phase::Total));
    match compare(&totals.0, &totals.1, 0.95, 10_000, 0x5eed) {
        Some(c) => writeln!(out, "\n{}", verdict(&c, a_label, b_label))?,
        None => writeln!(out, "\nno successful iterations to compare")?,
    }
    Ok(())
}
