//! The earlier run a gate compares with (`history:last`, `history:best`, `history:ID`).
//!
//! Any writer of a team's store can write any row, and a local file can be edited: so a candidate
//! is taken only if its report reads back, is of the same query as the run being gated (its own
//! configuration, not only the fingerprint column, which a row could claim), and started before
//! that run did (never from the future). Each candidate passed over is named in a notice of the
//! store, and the next one is tried; one bad row never costs the gate.

use crate::report::RunReport;

use super::fingerprint::same_query;
use super::stored::{Baseline, Filter, RunSummary, unix_ms};
use super::{HistoryError, HistoryStore};

/// Candidates read at most before a gate gives up: what a store of hostile rows can cost it.
const MAX_TRIED: usize = 50;

/// What the baseline must be of: the run being gated.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// Its fingerprint.
    pub fingerprint: &'a str,
    /// Its report, whose configuration the baseline's must match and which it must precede.
    pub report: &'a RunReport,
}

/// The earlier run `which` picks for `wanted` (for `history:ID`, that run whatever it measured);
/// `None` when there is none. Candidates that do not qualify are skipped and named in the
/// store's notices.
pub fn baseline(
    store: &mut dyn HistoryStore,
    which: &Baseline,
    wanted: &Wanted<'_>,
) -> Result<Option<RunReport>, HistoryError> {
    if let Baseline::Id(id) = which {
        return store.get(id);
    }
    let filter = Filter {
        fingerprint: Some(wanted.fingerprint.to_owned()),
        target: Some(wanted.report.config.target.clone()),
        ..Filter::default()
    };
    let mut runs: Vec<RunSummary> = store
        .list(&filter)?
        .into_iter()
        .filter(|r| r.median_total_ms.is_some())
        .collect();
    if *which == Baseline::Best {
        let median = |r: &RunSummary| r.median_total_ms.unwrap_or(f64::INFINITY);
        runs.sort_by(|a, b| median(a).total_cmp(&median(b)));
    }
    let before = unix_ms(&wanted.report.started_at).unwrap_or_else(super::stored::now_ms);
    for run in runs.iter().take(MAX_TRIED) {
        match qualify(store, run, wanted, before) {
            Ok(report) => return Ok(Some(report)),
            Err(why) => store.notice(format!(
                "the baseline skipped history run {} ({}): {why}",
                run.id, run.started_at
            )),
        }
    }
    Ok(None)
}

/// The candidate's report, if it is a baseline for `wanted`: else why not.
fn qualify(
    store: &mut dyn HistoryStore,
    run: &RunSummary,
    wanted: &Wanted<'_>,
    before_ms: i64,
) -> Result<RunReport, String> {
    let report = match store.get(&run.id) {
        Ok(Some(report)) => report,
        Ok(None) => return Err("it is gone".into()),
        Err(HistoryError::BadRecord { reason, .. }) => {
            return Err(format!("its stored report does not read back ({reason})"));
        }
        Err(e) => return Err(e.to_string()),
    };
    if !same_query(&report.config, &wanted.report.config) {
        return Err("its report is of another query under the same fingerprint".into());
    }
    match unix_ms(&report.started_at) {
        Some(at) if at < before_ms => Ok(report),
        Some(_) => Err(format!(
            "it started at {}, not before this run ({})",
            report.started_at, wanted.report.started_at
        )),
        None => Err(format!("its start {:?} is not a time", report.started_at)),
    }
}
