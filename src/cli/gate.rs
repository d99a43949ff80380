//! The `--baseline` gate of `profile`: what the run is gated against (a JSON report, or an earlier
//! run of the history), read without ever costing the run, and the gate's outcome.
//!
//! A gate never costs the run: the baseline is read after the timed iterations and before the run
//! is saved (so `history:last` is an earlier run, not this one), and whatever keeps it from being
//! read (no earlier run, a stored report that does not read back, a newer schema, a bad row, a
//! store locked past its wait) is a [`NoBaseline`]: the summary is printed, the exports written
//! and the run saved all the same, and `profile` ends with its own exit code (5).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analysis::Gate;
use crate::history::{self, Baseline, HistoryError, Location};
use crate::report::{RunReport, printable};

use super::history::HistoryArgs;
use super::reports::read_report_file;

/// Where `--baseline` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaselineSource {
    /// A JSON report file.
    File(PathBuf),
    /// An earlier run (`history:last`, `history:best`, `history:ID`) of the history at `location`.
    History {
        /// Which run.
        which: Baseline,
        /// The store (never [`Location::Off`]).
        location: Location,
    },
}

/// Why there is no baseline to gate against: its own outcome, not an error of the run.
#[derive(Debug, thiserror::Error)]
pub enum NoBaseline {
    /// The baseline report could not be read.
    #[error("cannot read the baseline report {}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why, in words (the reader's error and its causes).
        reason: String,
    },
    /// The history holds no earlier run of this query on this target.
    #[error(
        "the history {location} holds no earlier run of \"{label}\" (fingerprint {fingerprint}) \
         on {target}"
    )]
    NoEarlierRun {
        /// The store, described.
        location: String,
        /// The run's label.
        label: String,
        /// Its fingerprint.
        fingerprint: String,
        /// Its target.
        target: String,
    },
    /// The history holds no run with the id asked for.
    #[error("the history {location} holds no run {id}")]
    NoSuchRun {
        /// The store, described.
        location: String,
        /// The id asked for.
        id: String,
    },
    /// The history is off: no store to read.
    #[error("the history is off (--no-history)")]
    HistoryOff,
    /// The history could not be read (a newer schema, a locked store, a row or a stored report
    /// that does not read back).
    #[error("the history {location} could not be read: {source}")]
    Unreadable {
        /// The store, described.
        location: String,
        /// What the store said.
        source: HistoryError,
    },
}

impl BaselineSource {
    /// What a `--baseline` value names; for the history, the store `history` chooses, refused
    /// here (before anything runs) when there is none (`--no-history`, a bad `--history`).
    pub fn parse(path: &Path, history: &HistoryArgs) -> anyhow::Result<BaselineSource> {
        let Some(which) = path.to_str().and_then(Baseline::parse) else {
            return Ok(BaselineSource::File(path.to_owned()));
        };
        let location = history.location()?;
        anyhow::ensure!(
            location != Location::Off,
            "--baseline history:... reads the run history: drop --no-history"
        );
        Ok(BaselineSource::History { which, location })
    }

    /// The baseline of each of `reports` (of the database named `database`): the file's runs, or
    /// for the history the earlier run it picks for each report, labelled as the report so the
    /// gate pairs them. Notices of the store go to stderr.
    pub fn read(
        &self,
        reports: &[RunReport],
        database: &str,
    ) -> Result<Vec<RunReport>, NoBaseline> {
        match self {
            BaselineSource::File(path) => read_report_file(path).map_err(|e| NoBaseline::File {
                path: path.clone(),
                reason: format!("{e:#}"),
            }),
            BaselineSource::History { which, location } => {
                from_history(location, which, reports, database)
            }
        }
    }
}

/// For each of `reports`, the earlier run `which` picks from the history at `location`.
fn from_history(
    location: &Location,
    which: &Baseline,
    reports: &[RunReport],
    database: &str,
) -> Result<Vec<RunReport>, NoBaseline> {
    let described = location.describe();
    let unreadable = |source| NoBaseline::Unreadable {
        location: described.clone(),
        source,
    };
    // `parse` refused the history being off, the one location without a store.
    let mut store = history::open(location)
        .map_err(unreadable)?
        .ok_or(NoBaseline::HistoryOff)?;
    let mut found = Vec::with_capacity(reports.len());
    for report in reports {
        let fingerprint = history::fingerprint(&report.config, database);
        let target = &report.config.target;
        let wanted = history::Wanted {
            fingerprint: &fingerprint,
            report,
        };
        let found_one = history::baseline(&mut *store, which, &wanted);
        for notice in store.take_notices() {
            eprintln!("{}", printable(&notice));
        }
        let mut base = found_one.map_err(unreadable)?.ok_or_else(|| match which {
            Baseline::Id(id) => NoBaseline::NoSuchRun {
                location: described.clone(),
                id: id.clone(),
            },
            Baseline::Last | Baseline::Best => NoBaseline::NoEarlierRun {
                location: described.clone(),
                label: report.config.label.clone(),
                fingerprint: fingerprint.clone(),
                target: target.clone(),
            },
        })?;
        base.config.label = report.config.label.clone();
        found.push(base);
    }
    for notice in store.take_notices() {
        eprintln!("{}", printable(&notice));
    }
    Ok(found)
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not slower than allowed (or no gate was asked for).
    Passed,
    /// Slower than the baseline by more than allowed.
    Regressed,
    /// There was no baseline to gate against.
    NoBaseline,
}

/// Gates `reports` against `baseline` under `gate` and prints the decision on `out` (and, when
/// there is no baseline, why, on stderr too).
pub fn decide(
    out: &mut impl Write,
    baseline: Result<Vec<RunReport>, NoBaseline>,
    reports: &[RunReport],
    gate: Gate,
) -> anyhow::Result<Verdict> {
    match baseline {
        Ok(base) => Ok(if super::summary::gate(out, &base, reports, gate)? {
            Verdict::Regressed
        } else {
            Verdict::Passed
        }),
        Err(why) => {
            let why = why.to_string();
            let text = printable(&why);
            writeln!(out, "\ngate: no baseline: {text}; nothing was gated")?;
            eprintln!("spanprof: no baseline to gate against: {text}");
            Ok(Verdict::NoBaseline)
        }
    }
}
