//! Two runs side by side: whether the difference in total time is real, by [`stats::compare`]'s
//! bootstrap under one set of [`BootstrapSettings`] for every front end, and where it is, as the
//! change of each part's mean ([`PartComparison`]: the changes add up to the change of the mean
//! total).

use super::parts::{PartComparison, PartStats};
use crate::part::Measure;
use crate::report::RunReport;
use crate::stats::{self, Comparison};

/// How the bootstrap comparison of two runs is made: the same settings give the same interval,
/// wherever it is shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapSettings {
    /// The confidence level of the interval, strictly between 0 and 1.
    pub confidence: f64,
    /// How many resamples the bootstrap draws.
    pub resamples: usize,
    /// The seed of its generator: a comparison is a pure function of the two runs.
    pub seed: u64,
}

impl BootstrapSettings {
    /// A 95% interval from 10,000 resamples, seeded with `0x5eed`: what `spanprof compare` and
    /// the app's compare view use.
    pub const DEFAULT: BootstrapSettings = BootstrapSettings {
        confidence: 0.95,
        resamples: 10_000,
        seed: 0x5eed,
    };
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The bootstrap comparison of the two runs' total times, and what it means in words.
#[derive(Debug, Clone, PartialEq)]
pub struct TotalComparison {
    /// The ratio of the medians with its confidence interval.
    pub comparison: Comparison,
    /// One line naming both runs, from [`stats::verdict`], e.g. "after is 1.80× ± 0.10 faster
    /// than before (95% CI 1.70–1.90): the difference is significant".
    pub verdict: String,
}

/// What a comparison calls its two runs: their labels, or the names that tell them apart
/// ([`run_names`](super::names::run_names)) when the labels may be alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairNames<'a> {
    /// Run A's (the baseline's) name.
    pub a: &'a str,
    /// Run B's name.
    pub b: &'a str,
}

impl<'a> PairNames<'a> {
    /// The runs' labels.
    pub fn labels(a: &'a RunReport, b: &'a RunReport) -> Self {
        PairNames {
            a: &a.config.label,
            b: &b.config.label,
        }
    }
}

/// Run B against run A (the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct RunComparison {
    /// What run A is called by (its label, or the name it was given).
    pub a_name: String,
    /// What run B is called by.
    pub b_name: String,
    /// Their parts compared: the changes of the parts' means add up to the change of the mean
    /// total. `None` when either run has no timed iteration.
    pub parts: Option<PartComparison>,
    /// The comparison of the totals; `None` when either run has no timed iteration with a
    /// positive median (see [`stats::compare`]).
    pub total: Option<TotalComparison>,
}

impl RunComparison {
    /// The verdict in words, when the totals could be compared.
    pub fn verdict(&self) -> Option<&str> {
        self.total.as_ref().map(|t| t.verdict.as_str())
    }

    /// The verdict followed by where the difference is, e.g. "narrow is 7.90× ± 0.60 faster than
    /// wide (95% CI 7.31–8.52): the difference is significant; −53.0 ms in the mean: server
    /// −31.2 ms, network −12.0 ms, row decode −9.80 ms".
    pub fn verdict_with_deltas(&self) -> Option<String> {
        let verdict = self.verdict()?;
        Some(match &self.parts {
            Some(parts) => format!("{verdict}; {}", parts.in_words()),
            None => verdict.to_owned(),
        })
    }
}

/// The bootstrap comparison of one measure (the total, or a part) of run `b` with run `a`, as
/// [`compare_runs`] compares their totals; `None` when either has no timed iteration (or their
/// medians are not positive). The verdict calls them by their labels.
pub fn compare_measure(
    a: &RunReport,
    b: &RunReport,
    measure: Measure,
    settings: BootstrapSettings,
) -> Option<TotalComparison> {
    compare_measure_named(a, b, PairNames::labels(a, b), measure, settings)
}

/// [`compare_measure`] with a verdict that calls the runs by `names`.
pub fn compare_measure_named(
    a: &RunReport,
    b: &RunReport,
    names: PairNames<'_>,
    measure: Measure,
    settings: BootstrapSettings,
) -> Option<TotalComparison> {
    let comparison = stats::compare(
        &a.samples(measure),
        &b.samples(measure),
        settings.confidence,
        settings.resamples,
        settings.seed,
    )?;
    let (a_label, b_label) = (names.a, names.b);
    let verdict = if measure == Measure::Total {
        stats::verdict(&comparison, a_label, b_label)
    } else {
        stats::verdict(
            &comparison,
            &format!("{a_label}'s {}", measure.label()),
            &format!("{b_label}'s {}", measure.label()),
        )
    };
    Some(TotalComparison {
        comparison,
        verdict,
    })
}

/// Compares run `b` with run `a` over their timed iterations. The cost is the bootstrap's, about
/// `settings.resamples · (a + b)` draws and sorted values: tens of milliseconds for two runs of
/// 100 iterations at the default settings, too long for a UI thread. The verdict calls them by
/// their labels.
pub fn compare_runs(a: &RunReport, b: &RunReport, settings: BootstrapSettings) -> RunComparison {
    compare_runs_named(a, b, PairNames::labels(a, b), settings)
}

/// [`compare_runs`] calling the runs by `names` (two runs of one label told apart).
pub fn compare_runs_named(
    a: &RunReport,
    b: &RunReport,
    names: PairNames<'_>,
    settings: BootstrapSettings,
) -> RunComparison {
    let parts = match (PartStats::of_run(a), PartStats::of_run(b)) {
        (Some(a), Some(b)) => Some(PartComparison::of(&a, &b)),
        _ => None,
    };
    RunComparison {
        a_name: names.a.to_owned(),
        b_name: names.b.to_owned(),
        parts,
        total: compare_measure_named(a, b, names, Measure::Total, settings),
    }
}

#[cfg(test)]
#[path = "comparison/tests.rs"]
mod tests;
