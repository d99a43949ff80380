//! What the command line calls runs side by side (`compare`, `explain`, a `--baseline` gate): the
//! names [`analysis::run_names_utc`] gives them, times in UTC (a report's own clock, the same on
//! every machine that reads it), so two runs of one label are never both called by it.

use crate::analysis::{self, RunIdentity};
use crate::report::RunReport;

/// The distinct names of `runs`, each told apart, where label and time are alike, by its source
/// (a file's name, or a word such as "baseline").
pub fn run_names(runs: &[&RunReport], sources: &[Option<String>]) -> Vec<String> {
    let identities: Vec<RunIdentity<'_>> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| RunIdentity {
            label: &run.config.label,
            started_at: &run.started_at,
            source: sources.get(i).and_then(Option::as_deref),
        })
        .collect();
    analysis::run_names_utc(&identities)
}

/// The names of two runs compared, the baseline's first.
pub fn pair_names(runs: [&RunReport; 2], sources: [Option<String>; 2]) -> [String; 2] {
    let mut names = run_names(&runs, &sources).into_iter();
    let mut next = || names.next().unwrap_or_default();
    [next(), next()]
}
