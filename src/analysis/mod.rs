//! What a run's timings say, computed once for every front end: the command line and the app
//! print what this module found, and neither computes a statistic of its own.
//!
//! - [`findings`](mod@findings): a run's slow (or harmless) first iteration, its outlying
//!   iterations, and statistics asked for and not returned, as typed data.
//! - [`comparison`](mod@comparison): two runs side by side, the per-phase medians and the
//!   bootstrap comparison of their totals with its verdict in words, under one set of
//!   [`BootstrapSettings`].
//! - [`distribution`](mod@distribution): the five-number summary of a run's totals (box plots).
//!
//! Pure functions of plain data built on [`stats`](crate::stats) and [`report`](crate::report):
//! no I/O, no clocks, no UI, no command line.

pub mod comparison;
pub mod distribution;
pub mod findings;

pub use comparison::{
    BootstrapSettings, PhaseMedians, RunComparison, TotalComparison, compare_runs,
};
pub use distribution::{Distribution, totals_distribution};
pub use findings::{
    Findings, FirstIteration, MissingStatistics, Outlier, findings, missing_statistics,
};
