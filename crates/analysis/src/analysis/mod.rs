//! What a run's timings say, computed once for every front end: the command line and the app
//! print what this module found, and neither computes a statistic of its own.
//!
//! - [`findings`](mod@findings): a run's slow (or harmless) first iteration, its outlying
//!   iterations, and statistics asked for and not returned, as typed data.
//! - [`causes`](mod@causes): why an iteration was slower than the median one, its extra time
//!   split into causes (first byte, a stream gap at a message, decode, descheduling, resumes).
//! - [`comparison`](mod@comparison): two runs side by side, the bootstrap comparison of their
//!   totals with its verdict in words under one set of [`BootstrapSettings`], and the change of
//!   each part's mean (adding up to the total's).
//! - [`conflicts`](mod@conflicts): the conflict view of a read-write run: who blocked whom
//!   (each lock wait and wound, mapped to the run's attempts by transaction id), on what, for
//!   how long, and the keys waited on most.
//! - [`distribution`](mod@distribution): the five-number summary of a run's totals (box plots).
//! - [`gate`](mod@gate): whether a new run regressed against a baseline, for CI.
//! - [`load_variants`](mod@load_variants): load runs of one workload that differ in one setting
//!   (`load --vary`), step level by step level, and what changed in words.
//! - [`names`](mod@names): the distinct names runs are called by side by side.
//! - [`run_diff`](mod@run_diff): two runs as a diff: each measure's means, their change with its
//!   bootstrap interval, and the settings the runs differ in.
//! - [`refusal`](mod@refusal): where in the SQL a server's refusal points.
//! - [`parts`](mod@parts): the parts of a run's time, summarised (means that add up to the mean
//!   total), its headline, and two runs' parts compared (changes that add up).
//! - [`subject`](mod@subject): a subject's profile (`spanprof client`): the program against
//!   spanprof's decoder and the wire floor, and how much of what it adds the server spent
//!   waiting on it.
//! - [`sweep`](mod@sweep): the runs of a parameter sweep as a table per value and a cost model of
//!   the total and each part (fixed ms, ms per 1,000 rows, MB/s).
//!
//! Pure functions of plain data built on [`stats`](crate::stats) and [`report`](crate::report):
//! no I/O, no clocks, no UI, no command line.

pub mod causes;
pub mod comparison;
pub mod conflicts;
pub mod distribution;
pub mod findings;
pub mod gate;
pub mod load_variants;
pub mod names;
pub mod parts;
pub mod refusal;
pub mod retry_check;
pub mod run_diff;
pub mod server_stats;
pub mod subject;
pub mod sweep;
pub mod transactions;

pub use causes::{Cause, ExplainError, Explanation, IterationCauses, Location, RunCauses, explain};
pub use comparison::{
    BootstrapSettings, PairNames, RunComparison, TotalComparison, compare_measure,
    compare_measure_named, compare_runs, compare_runs_named,
};
pub use conflicts::{ConflictKind, ConflictPair, RunConflicts};
pub use distribution::{Distribution, totals_distribution};
pub use findings::{
    Busy, BusyWindow, Findings, FirstIteration, MissingStatistics, Outlier, WINDOW_CORES, findings,
    missing_statistics,
};
pub use gate::{Gate, GateError, GateOutcome, gate, gate_named, parse_slowdown};
pub use load_variants::{VariantComparison, VariantRow, compare_variants};
pub use names::{RunIdentity, run_names, run_names_utc};
pub use parts::{Headline, PartChange, PartComparison, PartStats, PartSummary};
pub use refusal::sql_span;
pub use retry_check::retry_check;
pub use run_diff::{Deltas, MeasureDelta, SettingChange, deltas, setting_changes};
pub use subject::{SubjectComparison, subject_comparison};
pub use sweep::{Band, CostModel, Sweep, SweepRow, sweep};
pub use transactions::Transactions;
