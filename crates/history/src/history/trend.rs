//! What the window's History view reads from a store: the queries it holds (one line per
//! fingerprint, with how many runs) and one query's runs as points of a trend (per-measure median
//! and p90, the plan each ran with, whether it failed, whether it is pinned, and the settings it
//! ran with: mode, decoder, options). A point is made from the stored report on the store's
//! thread, so a store keeps no figures beyond a listing's.

use crate::analysis::PartStats;
use crate::part::Measure;
use crate::report::{QueryMode, Reader, RunReport, Status};

use super::HistoryError;
use super::stored::RunSummary;

/// A query the store holds runs of.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySummary {
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its SQL (of its latest run).
    pub sql: String,
    /// How many runs of it are stored.
    pub runs: u64,
    /// When the latest started, RFC 3339 UTC.
    pub last_started_at: String,
}

/// One run of a query, as the trend draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    /// Its listing line.
    pub summary: RunSummary,
    /// Whether retention leaves it alone.
    pub pinned: bool,
    /// Whether an iteration failed, or none ended ok.
    pub failed: bool,
    /// The signature of the plan most of its iterations ran with (none without plans).
    pub plan: Option<String>,
    /// Median and p90 of the total and of each part some iteration had, ms, the total first.
    pub measures: Vec<MeasureFigures>,
    /// How it was asked (none when its report does not read back): runs of one SQL in other
    /// modes or with other options are told apart by these, not by the query they are listed under.
    pub settings: Option<RunSettings>,
}

/// The settings a run was asked with, beside its SQL.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// Its query mode.
    pub mode: QueryMode,
    /// What read the answer.
    pub decoder: Reader,
    /// Its request options, (name, value) in the command line's spelling.
    pub options: Vec<(String, String)>,
}

/// The median and p90 of the total or of a part in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasureFigures {
    /// The total, or the part.
    pub measure: Measure,
    /// Its median, ms.
    pub median: f64,
    /// Its 90th percentile, ms.
    pub p90: f64,
}

impl TrendPoint {
    /// The point of the run `summary` lists, its figures read from `report_json`.
    pub fn new(
        summary: RunSummary,
        pinned: bool,
        report_json: &str,
    ) -> Result<TrendPoint, HistoryError> {
        let report: RunReport =
            serde_json::from_str(report_json).map_err(|e| HistoryError::BadRecord {
                id: summary.id.clone(),
                reason: e.to_string(),
            })?;
        let failed = report.timed().next().is_none()
            || report
                .iterations
                .iter()
                .any(|i| i.status() == Status::Error);
        let plan = main_plan(&report);
        let measures = PartStats::of_run(&report)
            .map(|stats| {
                std::iter::once((Measure::Total, stats.total))
                    .chain(
                        stats
                            .parts
                            .iter()
                            .map(|p| (Measure::Part(p.part), p.summary)),
                    )
                    .map(|(measure, s)| MeasureFigures {
                        measure,
                        median: s.median,
                        p90: s.p90,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let settings = Some(RunSettings {
            mode: report.config.query_mode,
            decoder: report.config.decoder.clone(),
            options: report.config.options.clone(),
        });
        Ok(TrendPoint {
            summary,
            pinned,
            failed,
            plan,
            measures,
            settings,
        })
    }

    /// Like [`TrendPoint::new`], a report that does not read back drawn as a failed run
    /// without figures (one bad record never hides the others).
    pub fn from_stored(summary: RunSummary, pinned: bool, report_json: &str) -> TrendPoint {
        TrendPoint::new(summary.clone(), pinned, report_json).unwrap_or(TrendPoint {
            summary,
            pinned,
            failed: true,
            plan: None,
            measures: Vec::new(),
            settings: None,
        })
    }

    /// The figures of `measure`, if the run had it.
    pub fn figures(&self, measure: Measure) -> Option<MeasureFigures> {
        self.measures.iter().copied().find(|f| f.measure == measure)
    }
}

/// The plan signature most of `report`'s iterations returned (the first seen of equals).
fn main_plan(report: &RunReport) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for f in report
        .plans
        .iterations
        .iter()
        .filter_map(|i| i.signature.as_deref())
    {
        match counts.iter_mut().find(|(seen, _)| *seen == f) {
            Some((_, n)) => *n += 1,
            None => counts.push((f, 1)),
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max()?;
    counts
        .into_iter()
        .find(|(_, n)| *n == most)
        .map(|(f, _)| f.to_owned())
}

/// `text` as a LIKE pattern matching it anywhere (`\` escapes).
pub(super) fn like_pattern(text: &str) -> String {
    format!(
        "%{}%",
        text.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{IterationRecord, RunConfig};

    fn report(statuses: &[Status]) -> String {
        let iterations = statuses
            .iter()
            .enumerate()
            .map(|(k, &status)| {
                let mut r = IterationRecord::new("r", k as u32, false, "2026-01-01T00:00:00Z");
                r.total_ms = 10.0 + k as f64;
                r.outcome = crate::report::Outcome::from_stored(status, None, None);
                r
            })
            .collect();
        let report = RunReport {
            config: RunConfig::default(),
            started_at: "2026-01-01T00:00:00Z".into(),
            iterations,
            plans: Default::default(),
            stopped: None,
        };
        serde_json::to_string(&report).expect("serialises")
    }

    fn summary() -> RunSummary {
        RunSummary {
            id: "7".into(),
            started_at: String::new(),
            label: String::new(),
            target: String::new(),
            fingerprint: String::new(),
            iterations: 0,
            median_total_ms: None,
            p90_total_ms: None,
            sql: String::new(),
        }
    }

    #[test]
    fn a_point_has_each_measure_figured_and_says_whether_the_run_failed() {
        let ok = TrendPoint::new(summary(), false, &report(&[Status::Ok; 3])).expect("reads");
        assert!(!ok.failed);
        let settings = ok.settings.as_ref().expect("read from the report");
        assert_eq!(settings.mode, RunConfig::default().query_mode);
        let total = ok.figures(Measure::Total).expect("total measured");
        assert_eq!(total.median, 11.0);
        assert!(total.p90 >= total.median);
        assert_eq!(ok.figures(Measure::Part(crate::part::Part::Server)), None);
        let failed =
            TrendPoint::new(summary(), true, &report(&[Status::Ok, Status::Error])).expect("reads");
        assert!(failed.failed && failed.pinned);
        let none_ok = TrendPoint::new(summary(), false, &report(&[Status::Cancelled]));
        assert!(none_ok.expect("reads").failed);
        assert!(matches!(
            TrendPoint::new(summary(), false, "{"),
            Err(HistoryError::BadRecord { id, .. }) if id == "7"
        ));
        let bad = TrendPoint::from_stored(summary(), false, "{");
        assert!(bad.failed && bad.measures.is_empty() && bad.settings.is_none());
    }

    #[test]
    fn like_patterns_match_their_text_literally() {
        assert_eq!(like_pattern("a_b%c\\"), "%a\\_b\\%c\\\\%");
    }
}
