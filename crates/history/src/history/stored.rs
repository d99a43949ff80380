//! A run as the history keeps it: the report whole (as JSON) beside the few figures a listing
//! shows, so that listing never reads a report.

use serde::Serialize;

use crate::part::Measure;
use crate::report::RunReport;
use crate::wire::Timestamp;

use super::HistoryError;
use super::fingerprint::fingerprint;

/// A run ready to be saved.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// The run's listing line (its `id` empty until saved).
    pub summary: RunSummary,
    /// When it started, milliseconds since the Unix epoch (0 when its `started_at` is unreadable).
    pub started_ms: i64,
    /// The report, serialized whole.
    pub report_json: String,
}

/// A run's line in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The store's id of the run.
    pub id: String,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// Its label.
    pub label: String,
    /// Where it ran (`local`, `endpoint HOST:PORT`, `cloud ...`).
    pub target: String,
    /// What it measured ([`fingerprint`]).
    pub fingerprint: String,
    /// Its timed iterations that ended ok.
    pub iterations: u32,
    /// The median of their totals, ms.
    pub median_total_ms: Option<f64>,
    /// Their 90th percentile, ms.
    pub p90_total_ms: Option<f64>,
    /// The SQL it ran.
    pub sql: String,
}

impl StoredRun {
    /// `report` as stored under the database its configuration names ([`database_of`]).
    pub fn of(report: &RunReport) -> Result<Self, serde_json::Error> {
        Self::new(report, &database_of(report))
    }

    /// `report` as stored, its fingerprint taken with `database` (the database's name).
    pub fn new(report: &RunReport, database: &str) -> Result<Self, serde_json::Error> {
        let total = crate::stats::summarize(&report.samples(Measure::Total));
        Ok(StoredRun {
            summary: RunSummary {
                id: String::new(),
                started_at: report.started_at.clone(),
                label: report.config.label.clone(),
                target: report.config.target.clone(),
                fingerprint: fingerprint(&report.config, database),
                iterations: report.timed().count() as u32,
                median_total_ms: total.as_ref().map(|s| s.median),
                p90_total_ms: total.as_ref().map(|s| s.p90),
                sql: report.config.sql.clone(),
            },
            started_ms: unix_ms(&report.started_at).unwrap_or(0),
            report_json: serde_json::to_string(report)?,
        })
    }
}

/// The database `report`'s run measured, by name: the one its configuration carries (the run
/// was started on it); an older report, which does not say, is taken as a live run of it would
/// have been: a Cloud target names it, the emulator and the local instance used the default one.
pub fn database_of(report: &RunReport) -> String {
    if !report.config.database.is_empty() {
        return report.config.database.clone();
    }
    match report.config.target.strip_prefix("cloud ") {
        Some(name) => name.trim().to_owned(),
        None => crate::client::DatabasePath::default().name(),
    }
}

/// A stored row that is not a run: its id and why. Readers skip it and name it in a notice,
/// never failing the whole listing for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotARun {
    /// Its id.
    pub id: String,
    /// What is wrong with it.
    pub why: String,
}

impl NotARun {
    /// The notice that names it, skipped, in `store` (how the store is described).
    pub fn notice(&self, store: &str) -> String {
        format!(
            "skipped row {} of {store}, not a run: {}",
            self.id, self.why
        )
    }
}

/// The most a stored report may be: what a report file may be (`export::MAX_REPORT_BYTES`), so
/// that reading one back holds a bounded amount.
pub const MAX_STORED_REPORT_BYTES: u64 = crate::export::MAX_REPORT_BYTES;

/// Every one of `runs` within [`MAX_STORED_REPORT_BYTES`]; else the first that is not.
pub fn check_sizes(runs: &[StoredRun]) -> Result<(), HistoryError> {
    runs.iter()
        .try_for_each(|run| check_size(&run.summary.label, &run.report_json))
}

/// A report of the run labelled `label` within [`MAX_STORED_REPORT_BYTES`].
pub fn check_size(label: &str, report_json: &str) -> Result<(), HistoryError> {
    if report_json.len() as u64 > MAX_STORED_REPORT_BYTES {
        return Err(HistoryError::TooLarge {
            label: label.to_owned(),
            bytes: report_json.len() as u64,
        });
    }
    Ok(())
}

/// Milliseconds since the Unix epoch of an RFC 3339 time.
pub fn unix_ms(rfc3339: &str) -> Option<i64> {
    let t = Timestamp::parse(rfc3339).ok()?;
    Some(t.seconds() * 1000 + i64::from(t.nanos() / 1_000_000))
}

/// Now, milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Which runs a listing shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Runs whose SQL contains this text (case-insensitive).
    pub sql_contains: Option<String>,
    /// Runs with this fingerprint.
    pub fingerprint: Option<String>,
    /// Runs on this target.
    pub target: Option<String>,
    /// Runs started at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

/// The earlier run a gate compares with: `history:last`, `history:best` or `history:ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Baseline {
    /// The latest earlier run of the same fingerprint and target.
    Last,
    /// The one of them with the lowest median total.
    Best,
    /// The run with this id.
    Id(String),
}

impl Baseline {
    /// `history:last`, `history:best` or `history:ID`; `None` for anything else (a file).
    pub fn parse(text: &str) -> Option<Baseline> {
        let rest = text.strip_prefix("history:")?;
        Some(match rest {
            "last" => Baseline::Last,
            "best" => Baseline::Best,
            id => Baseline::Id(id.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_database_is_the_one_its_config_names_else_its_cloud_targets_or_the_default() {
        let mut r = RunReport {
            config: Default::default(),
            started_at: String::new(),
            iterations: vec![],
            plans: Default::default(),
            stopped: None,
        };
        r.config.target = "cloud projects/p/instances/i/databases/d".into();
        assert_eq!(database_of(&r), "projects/p/instances/i/databases/d");
        r.config.target = "local".into();
        assert!(database_of(&r).ends_with("databases/test-db"));
        // A run that says (the emulator's, here) is kept under its own, whatever its target.
        r.config.target = "endpoint 127.0.0.1:9010".into();
        r.config.database = "projects/p/instances/i/databases/elsewhere".into();
        assert_eq!(database_of(&r), r.config.database);
        let stored = StoredRun::of(&r).expect("serializes");
        let named = StoredRun::new(&r, &r.config.database).expect("serializes");
        assert_eq!(stored.summary.fingerprint, named.summary.fingerprint);
    }

    #[test]
    fn baselines_are_read_from_their_history_spelling() {
        assert_eq!(Baseline::parse("history:last"), Some(Baseline::Last));
        assert_eq!(Baseline::parse("history:best"), Some(Baseline::Best));
        assert_eq!(
            Baseline::parse("history:42"),
            Some(Baseline::Id("42".into()))
        );
        assert_eq!(Baseline::parse("base.json"), None);
    }

    #[test]
    fn times_read_as_milliseconds_since_the_epoch() {
        assert_eq!(unix_ms("1970-01-01T00:00:01.250Z"), Some(1250));
        assert_eq!(unix_ms("yesterday"), None);
    }
}
