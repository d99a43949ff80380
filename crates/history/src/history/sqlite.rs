//! The local store: one SQLite file in WAL mode (readers never wait for a writer, a killed
//! process leaves the last committed state), writers waiting on each other through a busy
//! timeout, the schema versioned by `PRAGMA user_version` and migrated forward in a transaction.
//! A file SQLite cannot read as a database is moved aside (kept, named in a notice) and a fresh
//! store started in its place; any other failure is an error for the caller to say.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

use self::fallback::Numbered;
use super::location::parent_of;
use super::stored::{
    Filter, MAX_STORED_REPORT_BYTES, NotARun, RunSummary, StoredRun, check_sizes, now_ms,
};
use super::trend::{QuerySummary, TrendPoint, like_pattern};
use super::{HistoryError, HistoryStore, LoadSummary, StoredLoad};
use crate::load::LoadReport;
use crate::report::RunReport;

/// The schema, one step per version: version N is reached by running `MIGRATIONS[N - 1]`.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        started_ms INTEGER NOT NULL,
        saved_ms INTEGER NOT NULL,
        label TEXT NOT NULL,
        target TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        sql TEXT NOT NULL,
        iterations INTEGER NOT NULL,
        median_total_ms REAL,
        p90_total_ms REAL,
        report TEXT NOT NULL
    );
    CREATE INDEX runs_by_time ON runs (started_ms);
    CREATE INDEX runs_by_fingerprint ON runs (fingerprint, started_ms);",
    // 2: runs can be pinned (retention leaves them).
    "ALTER TABLE runs ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;",
    // 3: load runs, in a table of their own (`loads.rs`).
    "CREATE TABLE load_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        started_ms INTEGER NOT NULL,
        saved_ms INTEGER NOT NULL,
        label TEXT NOT NULL,
        target TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        sql TEXT NOT NULL,
        model TEXT NOT NULL,
        steps INTEGER NOT NULL,
        requests INTEGER NOT NULL,
        knee REAL,
        report TEXT NOT NULL
    );
    CREATE INDEX load_runs_by_time ON load_runs (started_ms);
    CREATE INDEX load_runs_by_fingerprint ON load_runs (fingerprint, started_ms);",
];

/// How long a writer waits for another before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// What the store keeps: the newest `max_runs`, none older than `max_age_days`, and every
/// pinned run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// The most runs kept (the oldest go first).
    pub max_runs: u64,
    /// Runs saved longer ago than this are dropped.
    pub max_age_days: u64,
}

impl Default for Retention {
    /// 20,000 runs, 180 days.
    fn default() -> Self {
        Retention {
            max_runs: 20_000,
            max_age_days: 180,
        }
    }
}

/// A history in a SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    connection: Connection,
    retention: Retention,
    notices: Vec<String>,
    /// Opened for reading only (the file or its directory cannot be written): listed, never saved.
    read_only: bool,
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, migrating its schema; an unreadable file is moved
    /// aside and a fresh one started (said by [`HistoryStore::take_notices`]).
    pub fn open(path: &Path, retention: Retention) -> Result<SqliteStore, HistoryError> {
        if let Some(dir) = parent_of(path) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
        let mut notices = Vec::new();
        let mut read_only = false;
        let connection = match connect(path) {
            Ok(c) => c,
            Err(e) if is_read_only(&e) && path.exists() => {
                read_only = true;
                fallback::read_only(path).map_err(|source| sqlite_error(path, source))?
            }
            Err(e) if is_corrupt(&e) => {
                let aside = move_aside(path)?;
                let fresh = connect(path).map_err(|source| sqlite_error(path, source))?;
                // A damaged page rather than a file that is no database: what reads is kept.
                let copied = fallback::salvage(&fresh, &aside).map_or(0, |s| s.copied);
                notices.push(format!(
                    "the history store {} could not be read ({e}); it is kept as {} and a fresh \
                     store was started with the {copied} runs that could be read",
                    path.display(),
                    aside.display()
                ));
                fresh
            }
            Err(e) => return Err(sqlite_error(path, e)),
        };
        let found: i64 = connection
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| sqlite_error(path, e))?;
        if found > MIGRATIONS.len() as i64 {
            return Err(HistoryError::NewerSchema {
                path: path.display().to_string(),
                found,
                known: MIGRATIONS.len() as i64,
            });
        }
        Ok(SqliteStore {
            path: path.to_owned(),
            connection,
            retention,
            notices,
            read_only,
        })
    }

    fn error(&self, source: rusqlite::Error) -> HistoryError {
        sqlite_error(&self.path, source)
    }

    /// Inserts `runs` in one transaction, with the ids SQLite gives or, when `ids` says, those.
    fn insert(
        &mut self,
        runs: &[StoredRun],
        ids_given: Option<&[i64]>,
    ) -> Result<Vec<String>, rusqlite::Error> {
        let tx = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut ids = Vec::with_capacity(runs.len());
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO runs (id, started_at, started_ms, saved_ms, label, target,
                 fingerprint, sql, iterations, median_total_ms, p90_total_ms, report)
                 VALUES (?12, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            let saved = now_ms();
            for (n, run) in runs.iter().enumerate() {
                let s = &run.summary;
                let id = ids_given.and_then(|given| given.get(n).copied());
                insert.execute(params![
                    s.started_at,
                    run.started_ms,
                    saved,
                    s.label,
                    s.target,
                    s.fingerprint,
                    s.sql,
                    s.iterations,
                    s.median_total_ms,
                    s.p90_total_ms,
                    run.report_json,
                    id,
                ])?;
                ids.push(tx.last_insert_rowid().to_string());
            }
            let cutoff = saved - (self.retention.max_age_days as i64).saturating_mul(86_400_000);
            tx.execute(
                "DELETE FROM runs WHERE saved_ms < ?1 AND pinned = 0",
                [cutoff],
            )?;
            tx.execute(
                "DELETE FROM runs WHERE pinned = 0
                 AND id <= (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1)",
                [self.retention.max_runs as i64],
            )?;
        }
        tx.commit()?;
        Ok(ids)
    }
}

impl HistoryStore for SqliteStore {
    fn save(&mut self, runs: &[StoredRun]) -> Result<Vec<String>, HistoryError> {
        check_sizes(runs)?;
        if self.read_only {
            return Err(HistoryError::ReadOnly {
                path: self.path.display().to_string(),
            });
        }
        match self.insert(runs, None) {
            Ok(ids) => Ok(ids),
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DiskFull)
                    && fallback::ids_spent(&self.connection, Numbered::Runs) =>
            {
                let free = fallback::free_ids(&self.connection, Numbered::Runs, runs.len())
                    .map_err(|e| self.error(e))?;
                self.notices.push(format!(
                    "the history store {} has a run numbered {}, the last id SQLite gives: this \
                     run took a free id below it",
                    self.path.display(),
                    i64::MAX
                ));
                self.insert(runs, Some(&free)).map_err(|e| self.error(e))
            }
            Err(e) if is_corrupt(&e) => self.save_after_salvage(runs, &e),
            Err(e) => Err(self.error(e)),
        }
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, HistoryError> {
        let limit = filter.limit.map_or(-1, |n| n.min(i64::MAX as usize) as i64);
        let sql_like = filter.sql_contains.as_deref().map(like_pattern);
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT id, started_at, label, target, fingerprint, iterations, median_total_ms,
                        p90_total_ms, sql
                 FROM runs
                 WHERE (?1 IS NULL OR fingerprint = ?1)
                   AND (?2 IS NULL OR target = ?2)
                   AND (?3 IS NULL OR started_ms >= ?3)
                   AND (?4 IS NULL OR sql LIKE ?4 ESCAPE '\\')
                 ORDER BY started_ms DESC, id DESC
                 LIMIT ?5",
            )
            .map_err(|e| sqlite_error(&self.path, e))?;
        let rows = statement
            .query_map(
                params![
                    filter.fingerprint,
                    filter.target,
                    filter.since_ms,
                    sql_like,
                    limit
                ],
                summary_of,
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| sqlite_error(&self.path, e))?;
        drop(statement);
        Ok(self.runs_of(rows))
    }

    fn get(&mut self, id: &str) -> Result<Option<RunReport>, HistoryError> {
        let Ok(number) = id.parse::<i64>() else {
            return Ok(None);
        };
        let Some(json) = self.report_text("runs", number, id)? else {
            return Ok(None);
        };
        serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| HistoryError::BadRecord {
                id: id.to_owned(),
                reason: e.to_string(),
            })
    }

    fn queries(&mut self, search: &str, limit: usize) -> Result<Vec<QuerySummary>, HistoryError> {
        let pattern = (!search.trim().is_empty()).then(|| like_pattern(search.trim()));
        let limit = limit.min(i64::MAX as usize) as i64;
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT fingerprint, sql, COUNT(*), MAX(started_at), MAX(started_ms) AS last
                 FROM runs
                 WHERE ?1 IS NULL OR fingerprint IN (SELECT fingerprint FROM runs
                     WHERE sql LIKE ?1 ESCAPE '\\' OR label LIKE ?1 ESCAPE '\\')
                 GROUP BY fingerprint
                 ORDER BY last DESC
                 LIMIT ?2",
            )
            .map_err(|e| sqlite_error(&self.path, e))?;
        let rows = statement
            .query_map(params![pattern, limit], |row| {
                // Whatever a bad row holds, a query's line is text or empty.
                let text = |i: usize| row.get::<_, String>(i).unwrap_or_default();
                Ok(QuerySummary {
                    fingerprint: text(0),
                    sql: text(1),
                    runs: row.get::<_, i64>(2).unwrap_or(0).max(0) as u64,
                    last_started_at: text(3),
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
        rows.map_err(|e| sqlite_error(&self.path, e))
    }

    fn trend(&mut self, fingerprint: &str, limit: usize) -> Result<Vec<TrendPoint>, HistoryError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT id, started_at, label, target, fingerprint, iterations, median_total_ms,
                        p90_total_ms, sql, pinned, report
                 FROM runs WHERE fingerprint = ?1
                 ORDER BY started_ms DESC, id DESC LIMIT ?2",
            )
            .map_err(|e| sqlite_error(&self.path, e))?;
        let rows = statement
            .query_map(params![fingerprint, limit], |row| {
                Ok((
                    summary_of(row)?,
                    row.get::<_, bool>(9).unwrap_or(false),
                    row.get::<_, String>(10).unwrap_or_default(),
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| sqlite_error(&self.path, e))?;
        drop(statement);
        let mut points = Vec::with_capacity(rows.len());
        for (summary, pinned, json) in rows.into_iter().rev() {
            match summary {
                Ok(summary) => points.push(TrendPoint::from_stored(summary, pinned, &json)),
                Err(bad) => self.notices.push(bad.notice(&self.described())),
            }
        }
        Ok(points)
    }

    fn set_label(&mut self, id: &str, label: &str) -> Result<bool, HistoryError> {
        self.change("UPDATE runs SET label = ?2 WHERE id = ?1", id, label)
    }

    fn set_pinned(&mut self, id: &str, pinned: bool) -> Result<bool, HistoryError> {
        self.change("UPDATE runs SET pinned = ?2 WHERE id = ?1", id, pinned)
    }

    fn delete(&mut self, id: &str) -> Result<bool, HistoryError> {
        if super::is_load_id(id) {
            return self.delete_load(id);
        }
        let Ok(number) = id.parse::<i64>() else {
            return Ok(false);
        };
        let deleted = self
            .connection
            .execute("DELETE FROM runs WHERE id = ?1", [number])
            .map_err(|e| self.error(e))?;
        Ok(deleted > 0)
    }

    fn save_load(&mut self, run: &StoredLoad) -> Result<String, HistoryError> {
        self.insert_load(run)
    }

    fn list_loads(&mut self, filter: &Filter) -> Result<Vec<LoadSummary>, HistoryError> {
        self.load_listing(filter)
    }

    fn get_load(&mut self, id: &str) -> Result<Option<LoadReport>, HistoryError> {
        self.load_report(id)
    }

    fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn notice(&mut self, notice: String) {
        self.notices.push(notice);
    }
}

impl SqliteStore {
    /// How a notice names the store.
    fn described(&self) -> String {
        format!("the history store {}", self.path.display())
    }

    /// The runs of listing `rows`; a row that is not one is named in a notice and skipped.
    fn runs_of(&mut self, rows: Vec<Result<RunSummary, NotARun>>) -> Vec<RunSummary> {
        let store = self.described();
        let mut runs = Vec::with_capacity(rows.len());
        for row in rows {
            match row {
                Ok(run) => runs.push(run),
                Err(bad) => self.notices.push(bad.notice(&store)),
            }
        }
        runs
    }

    /// The stored report of row `number` of `table` (run `id`, as errors name it); `None` when
    /// there is no such row. Its size is read first (from the record's header, without reading
    /// it): a report is read back only within the bound a report file has.
    fn report_text(
        &self,
        table: &str,
        number: i64,
        id: &str,
    ) -> Result<Option<String>, HistoryError> {
        let bad = |reason: String| HistoryError::BadRecord {
            id: id.to_owned(),
            reason,
        };
        let bytes: Option<Option<i64>> = self
            .connection
            .query_row(
                &format!("SELECT octet_length(report) FROM {table} WHERE id = ?1"),
                [number],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let Some(bytes) = bytes else {
            return Ok(None);
        };
        if bytes.unwrap_or(0) as u64 > MAX_STORED_REPORT_BYTES {
            return Err(bad(format!(
                "its stored report is {} MiB, more than the {} MiB a report may be",
                bytes.unwrap_or(0) >> 20,
                MAX_STORED_REPORT_BYTES >> 20
            )));
        }
        let json: String = self
            .connection
            .query_row(
                &format!("SELECT report FROM {table} WHERE id = ?1"),
                [number],
                |row| row.get(0),
            )
            .map_err(|e| bad(format!("its stored report is not text ({e})")))?;
        Ok(Some(json))
    }

    /// A save that found a damaged page: the readable runs are copied into a fresh store (the
    /// damaged file kept aside, named), and `runs` saved there. Never the whole history lost
    /// for one page.
    fn save_after_salvage(
        &mut self,
        runs: &[StoredRun],
        damage: &rusqlite::Error,
    ) -> Result<Vec<String>, HistoryError> {
        let aside = move_aside(&self.path)?;
        let mut fresh = SqliteStore::open(&self.path, self.retention)?;
        let salvaged = fallback::salvage(&fresh.connection, &aside).map_err(|e| self.error(e))?;
        self.notices.push(format!(
            "the history store {} has a damaged page ({damage}): its {} readable runs were copied \
             into a fresh store ({} could not be read), and the damaged file is kept as {}",
            self.path.display(),
            salvaged.copied,
            salvaged.lost,
            aside.display()
        ));
        let ids = fresh.insert(runs, None).map_err(|e| self.error(e))?;
        self.connection = fresh.connection;
        Ok(ids)
    }

    /// Runs `sql` (a change of one run: `?1` its id, `?2` `value`); whether a row changed.
    fn change(
        &mut self,
        sql: &str,
        id: &str,
        value: impl rusqlite::ToSql,
    ) -> Result<bool, HistoryError> {
        let Ok(number) = id.parse::<i64>() else {
            return Ok(false);
        };
        let changed = self
            .connection
            .execute(sql, params![number, value])
            .map_err(|e| self.error(e))?;
        Ok(changed > 0)
    }
}

/// Opens `path`, sets WAL and the busy timeout, and brings the schema to the newest version.
fn connect(path: &Path) -> Result<Connection, rusqlite::Error> {
    let mut c = Connection::open(path)?;
    c.busy_timeout(BUSY_TIMEOUT)?;
    // Reading the schema first is what finds a file that is not a database.
    c.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    c.pragma_update(None, "journal_mode", "WAL")?;
    c.pragma_update(None, "synchronous", "NORMAL")?;
    migrate(&mut c)?;
    Ok(c)
}

/// Runs the migrations the file lacks, in one transaction that holds the write lock (two
/// processes opening a new file at once migrate it once).
fn migrate(c: &mut Connection) -> Result<(), rusqlite::Error> {
    let version: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version >= MIGRATIONS.len() as i64 {
        return Ok(());
    }
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    for (i, step) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tx.execute_batch(step)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()
}

/// A listing line from a row whose first nine columns are `id, started_at, label, target,
/// fingerprint, iterations, median_total_ms, p90_total_ms, sql`, in that order; or, when a column
/// holds what a run cannot (a negative count, a text median), why not. `Err` only for SQLite's own
/// failures.
fn summary_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<RunSummary, NotARun>> {
    let id = row.get::<_, i64>(0)?.to_string();
    Ok(fields_of(row, &id).map_err(|why| NotARun { id, why }))
}

fn fields_of(row: &rusqlite::Row<'_>, id: &str) -> Result<RunSummary, String> {
    use rusqlite::types::ValueRef;
    const NAMES: [&str; 9] = [
        "id",
        "started_at",
        "label",
        "target",
        "fingerprint",
        "iterations",
        "median_total_ms",
        "p90_total_ms",
        "sql",
    ];
    let text = |i: usize| {
        row.get::<_, String>(i)
            .map_err(|_| format!("{} is not text", NAMES[i]))
    };
    let ms = |i: usize| match row.get_ref(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Real(x)) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        Ok(ValueRef::Integer(n)) if n >= 0 => Ok(Some(n as f64)),
        _ => Err(format!("{} is not a duration in milliseconds", NAMES[i])),
    };
    let iterations = match row.get_ref(5) {
        Ok(ValueRef::Integer(n)) => {
            u32::try_from(n).map_err(|_| format!("iterations is {n}, not a count of iterations"))?
        }
        _ => return Err("iterations is not a number".into()),
    };
    Ok(RunSummary {
        id: id.to_owned(),
        started_at: text(1)?,
        label: text(2)?,
        target: text(3)?,
        fingerprint: text(4)?,
        iterations,
        median_total_ms: ms(6)?,
        p90_total_ms: ms(7)?,
        sql: text(8)?,
    })
}

/// The schema version of the store at `path` (`user_version`).
pub fn schema_version(path: &Path) -> Result<i64, HistoryError> {
    let c = Connection::open(path).map_err(|e| sqlite_error(path, e))?;
    c.pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| sqlite_error(path, e))
}

/// The file or its directory cannot be written (or its shared memory made): it can be read.
fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied)
    )
}

fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    )
}

/// Renames `path` (and its WAL and shared-memory files) to `path.corrupt-<ms>`; returns the
/// new name of the file itself.
fn move_aside(path: &Path) -> Result<PathBuf, HistoryError> {
    let suffix = format!("corrupt-{}", now_ms());
    let renamed = |p: &Path| {
        let mut name = p.as_os_str().to_owned();
        name.push(".");
        name.push(&suffix);
        PathBuf::from(name)
    };
    let aside = renamed(path);
    std::fs::rename(path, &aside).map_err(|source| HistoryError::Io {
        path: path.display().to_string(),
        source,
    })?;
    for extra in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(extra);
        let p = PathBuf::from(name);
        if p.exists() {
            let _ = std::fs::rename(&p, renamed(&p));
        }
    }
    Ok(aside)
}

fn sqlite_error(path: &Path, source: rusqlite::Error) -> HistoryError {
    HistoryError::Sqlite {
        path: path.display().to_string(),
        source,
    }
}

mod fallback;
mod loads;

#[cfg(test)]
mod tests;
