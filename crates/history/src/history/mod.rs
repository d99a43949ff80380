//! The history of runs: every finished run stored whole (its report) with a fingerprint of what
//! it measured, in a local SQLite file or a team's Spanner database, behind one small trait.
//! Load runs (`spanprof load`) are kept beside them, in a table of their own.
//! Saving runs on a worker thread ([`HistoryWorker`]) after the timed iterations, and never
//! fails a run: what could not be saved is said once.

pub mod baseline;
pub mod fingerprint;
pub mod location;
pub mod spanner;
pub mod sqlite;
pub mod stored;
pub mod stored_load;
pub mod trend;
pub mod worker;

pub use baseline::{Wanted, baseline};
pub use fingerprint::{fingerprint, normalize_sql, same_query};
pub use location::{Location, default_path};
pub use sqlite::{Retention, SqliteStore};
pub use stored::{Baseline, Filter, NotARun, RunSummary, StoredRun, database_of};
pub use stored_load::{LoadSummary, StoredLoad, is_load_id, load_fingerprint};
pub use trend::{MeasureFigures, QuerySummary, RunSettings, TrendPoint};
pub use worker::HistoryWorker;

use crate::load::LoadReport;
use crate::report::RunReport;

/// What went wrong with the history store.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The SQLite file could not be opened, read or written (a read-only directory, a full disk).
    #[error("history store {path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The directory of the store could not be made.
    #[error("history store {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The file's schema is newer than this spanprof knows.
    #[error("history store {path} has schema version {found}; this spanprof reads up to {known}")]
    NewerSchema {
        /// The file.
        path: String,
        /// Its `user_version`.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// A stored report that does not read back as a run.
    #[error("history run {id}: the stored report does not read back: {reason}")]
    BadRecord {
        /// The run's id.
        id: String,
        /// Why.
        reason: String,
    },
    /// The store can be read but not written (the file or its directory): nothing is saved.
    #[error("history store {path} is read-only: it can be listed, but nothing is saved in it")]
    ReadOnly {
        /// The file.
        path: String,
    },
    /// The Spanner store failed.
    #[error("history in Spanner {database}: {reason}")]
    Spanner {
        /// The database's resource name.
        database: String,
        /// What failed.
        reason: String,
    },
    /// A report larger than a stored report may be (what a report file may be).
    #[error(
        "the report of run {label:?} is {} MiB, more than the {} MiB a stored report may be: the \
         runs of this profile were not saved",
        bytes >> 20,
        stored::MAX_STORED_REPORT_BYTES >> 20
    )]
    TooLarge {
        /// The run's label.
        label: String,
        /// Its report's size.
        bytes: u64,
    },
    /// A `--history` value that names no store.
    #[error("--history {text:?}: {why}")]
    BadLocation {
        /// The text.
        text: String,
        /// Why.
        why: String,
    },
}

/// Where runs are kept: saved, listed newest first, read back whole.
pub trait HistoryStore: Send {
    /// Saves `runs` in one transaction; returns their ids in order.
    fn save(&mut self, runs: &[StoredRun]) -> Result<Vec<String>, HistoryError>;
    /// The runs `filter` asks for, newest first.
    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, HistoryError>;
    /// The run with this id, whole; `None` if there is none.
    fn get(&mut self, id: &str) -> Result<Option<RunReport>, HistoryError>;
    /// The queries with a run whose SQL or label contains `search` (case-insensitive; all when
    /// it is empty), the latest run first, at most `limit`.
    fn queries(&mut self, search: &str, limit: usize) -> Result<Vec<QuerySummary>, HistoryError>;
    /// The latest `limit` runs of `fingerprint` as trend points, oldest first.
    fn trend(&mut self, fingerprint: &str, limit: usize) -> Result<Vec<TrendPoint>, HistoryError>;
    /// Relabels run `id`; whether there was such a run.
    fn set_label(&mut self, id: &str, label: &str) -> Result<bool, HistoryError>;
    /// Pins run `id` (retention keeps it) or unpins it; whether there was such a run.
    fn set_pinned(&mut self, id: &str, pinned: bool) -> Result<bool, HistoryError>;
    /// Deletes run `id` (a load run's too); whether there was such a run.
    fn delete(&mut self, id: &str) -> Result<bool, HistoryError>;
    /// Saves a load run; returns its id (`L...`).
    fn save_load(&mut self, run: &StoredLoad) -> Result<String, HistoryError>;
    /// The load runs `filter` asks for, newest first.
    fn list_loads(&mut self, filter: &Filter) -> Result<Vec<LoadSummary>, HistoryError>;
    /// The load run with this id, whole; `None` if there is none.
    fn get_load(&mut self, id: &str) -> Result<Option<LoadReport>, HistoryError>;
    /// Notices the store has to give once (a corrupted file moved aside, a row skipped), taken.
    fn take_notices(&mut self) -> Vec<String>;
    /// Keeps `notice` to give with the others (a run a reader skipped, named).
    fn notice(&mut self, notice: String);
}

/// Opens the store `location` names (a Spanner store through `SPANNER_EMULATOR_HOST`); `None`
/// for [`Location::Off`].
pub fn open(location: &Location) -> Result<Option<Box<dyn HistoryStore>>, HistoryError> {
    Ok(match location {
        Location::Off => None,
        Location::File(path) => Some(Box::new(SqliteStore::open(path, Retention::default())?)),
        Location::Spanner(database) => Some(Box::new(spanner::SpannerStore::open(database)?)),
    })
}
